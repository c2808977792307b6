package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/vkops/vkops/ops"
)

func runTune(e *env, args []string) error {
	fs := newFlags(e, "tune", "tune [--json]", "vkops --device 0 tune")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return badInput("tune: unexpected argument %q", pos[0])
	}
	d, err := e.open()
	if err != nil {
		return err
	}
	defer d.Close()
	res, err := ops.Tune(d)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	fmt.Fprintf(e.stdout, "device: %s\n", d)
	writeVariants(e, res)
	fmt.Fprintln(e.stdout, "choices saved beside the pipeline cache")
	return nil
}

// writeVariants prints one line per kernel family: its variants, with the
// chosen one starred and the device time measured where there is one.
func writeVariants(e *env, vs []ops.VariantInfo) {
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "family\tvariants (* chosen)\t")
	for _, v := range vs {
		var cells []string
		for i, name := range v.Variants {
			cell := name
			if !contains(v.Eligible, name) {
				cell += " (n/a)"
			} else if i < len(v.TimesNS) && v.TimesNS[i] > 0 {
				cell += fmt.Sprintf(" %.3fms", v.TimesNS[i]/1e6)
			}
			if name == v.Chosen {
				cell = "*" + cell
			}
			cells = append(cells, cell)
		}
		switch {
		case v.Chosen == "":
			cells = append(cells, "(not measured yet: vkops tune)")
		case v.Default:
			cells = append(cells, "(driver default, not measured: vkops tune)")
		}
		fmt.Fprintf(tw, "%s\t%s\t\n", v.Family, strings.Join(cells, ", "))
	}
	tw.Flush()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
