package main

import (
	"fmt"
	"path/filepath"

	"github.com/vkops/vkops/bench"
)

// sweepDir holds, in a results directory, the sweep over sizes that the
// plot draws: `vkops bench --sweep --json` and `peers.py --sweep --json`.
const sweepDir = "sweep"

// plot draws the sweep in dir into file, with the copy
// baseline each vkops case was measured beside.
func plot(dir string, m meta, file string) error {
	files, err := filepath.Glob(filepath.Join(dir, sweepDir, "*.json"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("%s: no sweep to plot", filepath.Join(dir, sweepDir))
	}
	var all, copies []bench.Result
	for _, f := range files {
		ss, _, err := readLines(f)
		if err != nil {
			return err
		}
		for _, s := range ss {
			all = append(all, s.Result)
			if s.Peer == "" && s.CopyGBps > 0 {
				copies = append(copies, bench.Result{Bytes: s.Bytes, GBps: s.CopyGBps})
			}
		}
	}
	title := fmt.Sprintf("vkops bench --sweep: %s, commit %s, %s", m.deviceName(), m.Commit, m.Date)
	return bench.Plot(file, title, all, copies)
}
