package main

import (
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/ops"
	"github.com/vkops/vkops/tensor"
)

// maskCommand is one mask op of docs/specs.md#mask-ops as a
// subcommand: binary ones take A and B (files or number literals) and
// --broadcast, unary ones a file A. The output is a bool .npy, or for
// the ops of values (Maximum, Minimum) of A's and B's type. The logical
// ops take bool files only, so they have no --dtype bf16.
type maskCommand struct {
	summary string
	values  bool
	logical bool
	binary  func(a, b any, opts ...ops.SelectOption) (*device.Tensor, error)
	unary   func(a *device.Tensor) (*device.Tensor, error)
}

var maskCommands = map[string]maskCommand{
	"equal":         {summary: "A == B element by element (OpenVINO Equal-1)", binary: ops.Equal},
	"not-equal":     {summary: "A != B element by element (NotEqual-1)", binary: ops.NotEqual},
	"less":          {summary: "A < B element by element (Less-1)", binary: ops.Less},
	"less-equal":    {summary: "A <= B element by element (LessEqual-1)", binary: ops.LessEqual},
	"greater":       {summary: "A > B element by element (Greater-1)", binary: ops.Greater},
	"greater-equal": {summary: "A >= B element by element (GreaterEqual-1)", binary: ops.GreaterEqual},
	"logical-and":   {summary: "A and B of bool .npy files (LogicalAnd-1)", binary: ops.LogicalAnd, logical: true},
	"logical-or":    {summary: "A or B of bool .npy files (LogicalOr-1)", binary: ops.LogicalOr, logical: true},
	"logical-xor":   {summary: "A xor B of bool .npy files (LogicalXor-1)", binary: ops.LogicalXor, logical: true},
	"logical-not":   {summary: "not A of a bool .npy file (LogicalNot-1)", unary: ops.LogicalNot, logical: true},
	"is-nan":        {summary: "which elements of a float .npy are NaN (IsNaN-10)", unary: ops.IsNaN},
	"is-finite":     {summary: "which elements of a float .npy are finite (IsFinite-10)", unary: ops.IsFinite},
	"is-inf":        {summary: "which elements of a float .npy are infinite (IsInf-10)"},
	"maximum":       {summary: "the greater of A and B element by element, NaN kept (OpenVINO Maximum-1)", binary: ops.Maximum, values: true},
	"minimum":       {summary: "the lesser of A and B element by element, NaN kept (OpenVINO Minimum-1)", binary: ops.Minimum, values: true},
}

func init() {
	for name, m := range maskCommands {
		commands[name] = command{func(e *env, args []string) error { return runMask(e, name, m, args) }, m.summary, ""}
	}
}

// runMask is `vkops NAME A B -o OUT [--broadcast numpy|none|pdpd] [--dtype bf16]`
// for a binary op, `vkops NAME A -o OUT [--dtype bf16]` for a unary one,
// without --dtype for a logical op, and is-inf's [--detect-negative=false]
// [--detect-positive=false].
func runMask(e *env, name string, m maskCommand, args []string) error {
	dtUsage := " [--dtype bf16]"
	if m.logical {
		dtUsage = ""
	}
	usage, example := name+" A B -o OUT [--broadcast numpy|none|pdpd]"+dtUsage, "vkops "+name+" x.npy 0 -o mask.npy"
	outHelp := "the output .npy file (bool)"
	if m.values {
		example, outHelp = "vkops "+name+" x.npy 0 -o y.npy", "the output .npy file, of A's and B's type (bf16 as float32)"
	}
	if m.binary == nil {
		usage, example = name+" A -o OUT"+dtUsage, "vkops "+name+" x.npy -o mask.npy"
	}
	if name == "is-inf" {
		usage = "is-inf A -o OUT [--dtype bf16] [--detect-negative=false] [--detect-positive=false]"
	}
	var notes []string
	if m.binary != nil {
		notes = append(notes, numberRule("A and B")+"\nOne of them must be a file; a number takes its type.")
	}
	fs := newFlags(e, name, usage, example, notes...)
	mode := new(string)
	if m.binary != nil {
		mode = fs.String("broadcast", "numpy", "auto_broadcast: numpy, none or pdpd")
	}
	dtArg := new(string)
	if !m.logical {
		dtArg = fs.String("dtype", "", "bf16: read float32 files as bfloat16 (rounded to nearest even)")
	}
	outPath := fs.String("o", "", outHelp)
	var detectNeg, detectPos *bool
	if name == "is-inf" {
		detectNeg = fs.Bool("detect-negative", true, "map -inf to true")
		detectPos = fs.Bool("detect-positive", true, "map +inf to true")
	}
	pos, err := parseNumberArgs(fs, args)
	if err != nil {
		return err
	}
	want := 2
	if m.binary == nil {
		want = 1
	}
	switch {
	case len(pos) != want && want == 2:
		return badInput("%s: want A B (.npy files or numbers), got %d arguments", name, len(pos))
	case len(pos) != want:
		return badInput("%s: want one .npy file A, got %d arguments", name, len(pos))
	case *outPath == "":
		return badInput("%s: -o OUT is required", name)
	}
	if err := checkOutputDir(name, "-o", *outPath); err != nil {
		return err
	}
	b := ops.BroadcastNumpy // also for unary ops, which have no --broadcast
	if *mode != "" {
		if b, err = parseBroadcast(name, *mode); err != nil {
			return err
		}
	}
	dt, err := bf16Flag(name, *dtArg, "the files")
	if err != nil {
		return err
	}
	operands, err := maskOperands(name, pos, dt)
	if err != nil {
		return err
	}

	return runOnDevice(e, name, operands, func(x []any) (*device.Tensor, error) {
		switch {
		case m.binary != nil:
			return m.binary(x[0], x[1], ops.WithBroadcast(b))
		case name == "is-inf":
			return ops.IsInf(x[0].(*device.Tensor), *detectNeg, *detectPos)
		}
		return m.unary(x[0].(*device.Tensor))
	}, *outPath, m.values && dt == tensor.BF16)
}

// maskOperands reads a mask op's operands: A alone, a file, for a unary
// op; A and B, each a file or a number but not both numbers, for a
// binary one, a number as its value for the other's element type.
func maskOperands(name string, pos []string, dt tensor.DType) ([]any, error) {
	if len(pos) == 1 {
		h, err := readFile(name, "A", pos[0])
		if err != nil {
			return nil, err
		}
		if h, err = asType(name, pos[0], h, dt); err != nil {
			return nil, err
		}
		return []any{h}, nil
	}
	roles := []string{"a", "b"}
	operands := make([]any, 2)
	for i, arg := range pos {
		var err error
		if operands[i], err = readOperand(name, roles[i], arg, dt); err != nil {
			return nil, err
		}
	}
	_, aFile := operands[0].(*tensor.Host)
	_, bFile := operands[1].(*tensor.Host)
	if !aFile && !bFile {
		return nil, badInput("%s: A and B are both numbers; one must be a .npy file", name)
	}
	return operands, settleNumbers(name, roles, operands, tensor.Invalid)
}

// bf16Flag reads the mask ops' and clamp's --dtype: empty, or bf16 for
// float32 files read as bf16; other types come from the files, which
// from names.
func bf16Flag(name, arg, from string) (tensor.DType, error) {
	switch arg {
	case "":
		return tensor.Invalid, nil
	case "bf16":
		return tensor.BF16, nil
	}
	return tensor.Invalid, badInput("%s: --dtype %q: only bf16 is taken (other types come from %s)", name, arg, from)
}
