package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/core"
	"github.com/vkops/vkops/ops"
)

func runInfo(e *env, args []string) error {
	fs := newFlags(e, "info", "info [--json]", "vkops info --json")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return badInput("info: unexpected argument %q", pos[0])
	}
	infos, chosen, err := device.Devices(device.Options{Device: e.device})
	if errors.Is(err, device.ErrNoSuchDevice) {
		return &inputError{err}
	}
	if err != nil {
		return err
	}
	// The kernel variants chosen so far for the chosen device.
	var variants []ops.VariantInfo
	if d, err := e.open(); err == nil {
		variants = ops.Variants(d)
		d.Close()
	}
	if *asJSON {
		out := struct {
			Chosen   int               `json:"chosen"`
			Devices  []*device.Info    `json:"devices"`
			Variants []ops.VariantInfo `json:"variants"`
		}{chosen, infos, variants}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	for i, info := range infos {
		mark := ""
		if i == chosen {
			mark = "  (chosen)"
		}
		fmt.Fprintf(e.stdout, "device %d%s\n", i, mark)
		core.WriteInfo(e.stdout, info)
	}
	if len(variants) > 0 {
		fmt.Fprintf(e.stdout, "kernel variants of device %d:\n", chosen)
		writeVariants(e, variants)
	}
	return nil
}
