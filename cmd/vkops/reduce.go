package main

import (
	"errors"
	"flag"
	"strconv"
	"strings"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/ops"
	"github.com/vkops/vkops/tensor"
)

// reduceOp is ops.ReduceLogicalOr or ops.ReduceLogicalAnd.
type reduceOp func(*device.Tensor, []int, ...ops.ReduceOption) (*device.Tensor, error)

// runReduceOr is `vkops reduce-or DATA --axes 2,3 [--keep-dims] -o OUT`.
func runReduceOr(e *env, args []string) error {
	return runReduce(e, "reduce-or", ops.ReduceLogicalOr, args)
}

// runReduceAnd is `vkops reduce-and DATA --axes 2,3 [--keep-dims] -o OUT`.
func runReduceAnd(e *env, args []string) error {
	return runReduce(e, "reduce-and", ops.ReduceLogicalAnd, args)
}

// runReduceXor is `vkops reduce-xor DATA --axes 2,3 [--keep-dims] -o OUT`.
func runReduceXor(e *env, args []string) error {
	return runReduce(e, "reduce-xor", ops.ReduceLogicalXor, args)
}

// runReduce reads a bool .npy file, reduces it on the device and writes
// the result. Nothing is written unless the whole op succeeds.
func runReduce(e *env, name string, op reduceOp, args []string) error {
	fs := newFlags(e, name, name+" DATA --axes A[,B...] [--keep-dims] -o OUT",
		"vkops "+name+" data.npy --axes 2,3 --keep-dims -o out.npy")
	axesArg := fs.String("axes", "", "comma-separated axes to reduce, negative ones counting from the end; '' reduces none (a copy)")
	keepDims := fs.Bool("keep-dims", false, "keep each reduced dimension, with size 1")
	outPath := fs.String("o", "", "the output .npy file")
	pos, err := parseNumberArgs(fs, args) // "-1" is a file name here, not a flag
	if err != nil {
		return err
	}
	axesSet := false
	fs.Visit(func(f *flag.Flag) { axesSet = axesSet || f.Name == "axes" })
	switch {
	case len(pos) != 1:
		return badInput("%s: want one DATA file, got %d arguments", name, len(pos))
	case !axesSet:
		return badInput("%s: --axes is required (--axes '' reduces no axis)", name)
	case *outPath == "":
		return badInput("%s: -o OUT is required", name)
	}
	if err := checkOutputDir(name, "-o", *outPath); err != nil {
		return err
	}
	axes, err := parseAxes(*axesArg)
	if err != nil {
		return badInput("%s: --axes %q: %v", name, *axesArg, err)
	}
	h, err := readFile(name, "DATA", pos[0])
	if err != nil {
		return err
	}
	if h.DType != tensor.Bool {
		return badInput("%s: %s: data must be bool, got %v", name, pos[0], h.DType)
	}

	return runOnDevice(e, name, []any{h}, func(x []any) (*device.Tensor, error) {
		return op(x[0].(*device.Tensor), axes, ops.KeepDims(*keepDims))
	}, *outPath, false)
}

// parseAxes parses "2,-1": integers separated by commas, spaces allowed;
// "" is no axes.
func parseAxes(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var axes []int
	for _, f := range strings.Split(s, ",") {
		a, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, errors.New("want integers separated by commas")
		}
		axes = append(axes, a)
	}
	return axes, nil
}
