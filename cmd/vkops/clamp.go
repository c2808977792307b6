package main

import (
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/ops"
	"github.com/vkops/vkops/tensor"
)

// runClamp is `vkops clamp A --min LO --max HI -o OUT [--dtype bf16]`:
// ops.Clamp on a .npy file, its bounds number literals converted as
// Clamp converts them (into an integer type a fractional min rounds up
// and a fractional max down). The output has A's type, bf16 as float32.
func runClamp(e *env, args []string) error {
	const name = "clamp"
	fs := newFlags(e, name, "clamp A --min LO --max HI -o OUT [--dtype bf16]", "vkops clamp x.npy --min -1 --max 1 -o y.npy",
		"Each element becomes Minimum(Maximum(A, LO), HI): a LO above HI gives HI everywhere, and a NaN stays a NaN.")
	lo := fs.String("min", "", "the lower bound, a number (required)")
	hi := fs.String("max", "", "the upper bound, a number (required)")
	dtArg := fs.String("dtype", "", "bf16: read float32 files as bfloat16 (rounded to nearest even)")
	outPath := fs.String("o", "", "the output .npy file, of A's type (bf16 as float32)")
	pos, err := parseNumberArgs(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) != 1:
		return badInput("%s: want one .npy file A, got %d arguments", name, len(pos))
	case *outPath == "":
		return badInput("%s: -o OUT is required", name)
	}
	var bounds [2]any
	for i, s := range []*string{lo, hi} {
		flagName := [...]string{"--min", "--max"}[i]
		v, ok := parseNumber(*s)
		switch {
		case *s == "":
			return badInput("%s: %s is required", name, flagName)
		case !ok:
			return badInput("%s: %s %q is not a number", name, flagName, *s)
		case v == nil:
			return badInput("%s: %s %s cannot be represented as any element type", name, flagName, *s)
		}
		bounds[i] = v
	}
	if err := checkOutputDir(name, "-o", *outPath); err != nil {
		return err
	}
	dt, err := bf16Flag(name, *dtArg, "the file")
	if err != nil {
		return err
	}
	operands, err := maskOperands(name, pos, dt)
	if err != nil {
		return err
	}
	return runOnDevice(e, name, operands, func(x []any) (*device.Tensor, error) {
		return ops.Clamp(x[0].(*device.Tensor), bounds[0], bounds[1])
	}, *outPath, dt == tensor.BF16)
}
