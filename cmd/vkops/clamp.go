package main

import (
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/ops"
	"github.com/vkops/vkops/tensor"
)

// runClamp is `vkops clamp A --min LO --max HI -o OUT [--dtype bf16]`:
// ops.Clamp on a .npy file, its bounds number literals converted as
// Clamp converts them (into an integer type a fractional min rounds up
// and a fractional max down), from their exact values as the other ops'
// numbers. The output has A's type, bf16 as float32.
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
	var bounds [2]literal
	for i, s := range []*string{lo, hi} {
		flagName := [...]string{"--min", "--max"}[i]
		l, ok := parseNumber(*s)
		switch {
		case *s == "":
			return badInput("%s: %s is required", name, flagName)
		case !ok:
			return badInput("%s: %s %q is not a number", name, flagName, *s)
		case l.huge:
			return badInput("%s: %s %s cannot be represented as any element type", name, flagName, *s)
		}
		bounds[i] = l
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
	// The bounds convert here, from their exact values, as ops.Clamp
	// converts a number (ceil for min and floor for max into an integer
	// type): a float64 would have rounded 1e-400 to 0 before the ceil.
	xt := operands[0].(*tensor.Host).DType
	var scalars [2]tensor.Scalar
	for i, l := range bounds {
		role, arg := [...]string{"min", "max"}[i], [...]string{*lo, *hi}[i]
		var ok bool
		if scalars[i], ok = l.boundScalar(xt, i == 0); !ok {
			return badInput("%s: %s scalar %s cannot be represented as %v", name, role, arg, xt)
		}
	}
	return runOnDevice(e, name, operands, func(x []any) (*device.Tensor, error) {
		return ops.Clamp(x[0].(*device.Tensor), scalars[0], scalars[1])
	}, *outPath, dt == tensor.BF16)
}
