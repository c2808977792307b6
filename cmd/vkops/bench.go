package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/vkops/vkops/bench"
)

func runBench(e *env, args []string) error {
	fs := newFlags(e, "bench", "bench [--op OPS] [--size BYTES] [--runs N] [--json]", "vkops bench --op upload,download,copy --size 67108864")
	ops := fs.String("op", "", "comma-separated ops to run (default: all)")
	size := fs.Int("size", 64<<20, "bytes moved by the transfer cases")
	runs := fs.Int("runs", 7, "timed runs per case")
	asJSON := fs.Bool("json", false, "print one JSON object per case")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return badInput("bench: unexpected argument %q", pos[0])
	}
	if *size <= 0 || *runs <= 0 {
		return badInput("bench: --size and --runs must be positive")
	}
	cases := bench.Transfer(*size)
	if *ops != "" {
		want := map[string]bool{}
		for _, o := range strings.Split(*ops, ",") {
			want[strings.TrimSpace(o)] = true
		}
		var keep []*bench.Case
		for _, c := range cases {
			if want[c.Op] {
				keep = append(keep, c)
				delete(want, c.Op)
			}
		}
		for o := range want {
			return badInput("bench: unknown op %q", o)
		}
		cases = keep
	}
	d, err := e.open()
	if err != nil {
		return err
	}
	defer d.Close()
	opts := bench.Options{Runs: *runs}
	// Every case is also given as a fraction of the device's own copy
	// bandwidth, measured here on buffers of the same size.
	base, err := bench.Run(d, bench.Copy(*size), opts)
	if err != nil {
		return err
	}
	var tw *tabwriter.Writer
	enc := json.NewEncoder(e.stdout)
	if !*asJSON {
		fmt.Fprintf(e.stdout, "device: %s\ncopy bandwidth (vkCmdCopyBuffer, %d bytes): %.2f GB/s\n", d, *size, base.GBps)
		tw = tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "case\tmedian ms\tspread ms\twall ms\tGB/s\tof copy\t")
	}
	for _, c := range cases {
		r, err := bench.Run(d, c, opts)
		if err != nil {
			return err
		}
		if base.GBps > 0 {
			r.FractionOfCopy = r.GBps / base.GBps
		}
		if *asJSON {
			if err := enc.Encode(r); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.2f\t%.2f\t\n", c.Name(), r.MedianMS, r.SpreadMS, r.WallMS, r.GBps, r.FractionOfCopy)
	}
	if tw != nil {
		return tw.Flush()
	}
	return nil
}
