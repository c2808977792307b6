package main

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/tensor"
)

// Every mask subcommand (docs/specs.md#mask-ops, spelled as README.md's
// "The CLI" lists them) against cpuref.
func TestMaskCommands(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.npy")
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	x := selHost(t, []int{2, 3}, float32(1), nan, float32(math.Copysign(0, -1)), inf, -inf, 3)
	y := selHost(t, []int{3}, float32(0), nan, 3)
	m := selHost(t, []int{2, 3}, true, false, true, false, false, true)
	n := selHost(t, []int{3}, true, true, false)
	xf, yf, mf, nf := writeNpy(t, dir, "x.npy", x), writeNpy(t, dir, "y.npy", y), writeNpy(t, dir, "m.npy", m), writeNpy(t, dir, "n.npy", n)
	zero := selHost[float32](t, []int{}, 0)
	type ref func(a, b *tensor.Host, mode string) (*tensor.Host, error)
	for name, f := range map[string]ref{
		"equal": cpuref.Equal, "not-equal": cpuref.NotEqual, "less": cpuref.Less, "less-equal": cpuref.LessEqual,
		"greater": cpuref.Greater, "greater-equal": cpuref.GreaterEqual,
	} {
		want, err := f(x, y, "numpy")
		if err != nil {
			t.Fatal(err)
		}
		selSame(t, name, selRun(t, out, name, xf, yf, "-o", out), want)
		want, _ = f(x, y, "pdpd")
		selSame(t, name+" pdpd", selRun(t, out, name, xf, yf, "-o", out, "--broadcast", "pdpd"), want)
		want, _ = f(zero, x, "numpy")
		selSame(t, name+" 0 x", selRun(t, out, name, "0", xf, "-o", out), want)
		// Negative numbers in either place, before or after the flags.
		for _, n := range []struct {
			arg string
			v   float32
		}{{"-1", -1}, {"-2.5", -2.5}, {"-0x1p-2", -0.25}, {"-inf", -inf}, {"-nan", nan}, {"+NaN", nan}, {"-1e-400", 0}} {
			num := selHost(t, []int{}, n.v)
			want, _ = f(x, num, "numpy")
			selSame(t, name+" x "+n.arg, selRun(t, out, name, xf, n.arg, "-o", out, "--broadcast", "numpy"), want)
			want, _ = f(num, y, "numpy")
			selSame(t, name+" "+n.arg+" y", selRun(t, out, name, "--broadcast=numpy", "-o", out, n.arg, yf), want)
		}
	}
	for name, f := range map[string]ref{"logical-and": cpuref.LogicalAnd, "logical-or": cpuref.LogicalOr, "logical-xor": cpuref.LogicalXor} {
		want, _ := f(m, n, "numpy")
		selSame(t, name, selRun(t, out, name, mf, nf, "-o", out), want)
	}
	want, _ := cpuref.LogicalNot(m)
	selSame(t, "logical-not", selRun(t, out, "logical-not", mf, "-o", out), want)
	want, _ = cpuref.IsNaN(x)
	selSame(t, "is-nan", selRun(t, out, "is-nan", xf, "-o", out), want)
	want, _ = cpuref.IsFinite(x)
	selSame(t, "is-finite", selRun(t, out, "is-finite", xf, "-o", out), want)
	want, _ = cpuref.IsInf(x, false, true)
	selSame(t, "is-inf", selRun(t, out, "is-inf", xf, "-o", out, "--detect-negative=false"), want)
	// --dtype bf16: 1+2^-10 rounds to 1 in bfloat16, so it equals 1.
	b := writeNpy(t, dir, "b.npy", selHost(t, []int{2}, float32(1+1.0/1024), 2))
	selSame(t, "bf16", selRun(t, out, "equal", b, "1", "--dtype", "bf16", "-o", out), selHost(t, []int{2}, true, false))
	selSame(t, "f32", selRun(t, out, "equal", b, "1", "-o", out), selHost(t, []int{2}, false, false))
}

// Bad input exits 2 with one vkops: line, and writes no file.
func TestMaskCommandErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.npy")
	xf := writeNpy(t, dir, "x.npy", selHost(t, []int{3}, float32(1), 2, 3))
	i := writeNpy(t, dir, "i.npy", selHost(t, []int{3}, int32(1), 2, 3))
	u := writeNpy(t, dir, "u.npy", selHost(t, []int{2}, uint8(1), 2))
	var cases []hardCase
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"greater", xf, i}, "vkops: greater: a is f32 but b is i32"},
		{[]string{"greater", i, "1.5"}, "vkops: greater: b scalar 1.5 cannot be represented as i32"},
		{[]string{"less", u, "-1"}, "vkops: less: b "},
		{[]string{"equal", "1", "2"}, "vkops: equal: A and B are both numbers; one must be a .npy file"},
		{[]string{"is-nan", i}, "vkops: is-nan: a must be f16, bf16, f32 or f64, got i32"},
		{[]string{"is-nan", "1"}, "vkops: is-nan: A must be a .npy file, got the number 1"},
		{[]string{"logical-and", xf, xf}, "vkops: logical-and: a must be bool, got f32"},
		{[]string{"logical-or", xf, xf, "--dtype", "bf16"}, "vkops: logical-or: flag provided but not defined: -dtype"},
		{[]string{"less", xf, u, "--broadcast", "none"}, "vkops: less: a is f32 but b is u8"},
		{[]string{"less", xf, xf, "--broadcast", "foo"}, "vkops: less: unknown --broadcast \"foo\""},
		{[]string{"equal", i, i, "--dtype", "bf16"}, "vkops: equal: --dtype bf16 takes float32 files"},
		{[]string{"equal", xf, xf, "--dtype", "i32"}, "vkops: equal: --dtype \"i32\""},
		{[]string{"greater", xf}, "vkops: greater: want A B"},
		{[]string{"is-inf", xf, xf}, "vkops: is-inf: want one .npy file A"},
		{[]string{"greater", xf, filepath.Join(dir, "missing.npy")},
			`vkops: greater: operand b: "` + filepath.Join(dir, "missing.npy") + `" is neither a number nor an existing file`},
		// Numbers beyond every type's range, and fractions that float64
		// rounds to integers, in either place, negative ones included.
		{[]string{"greater", xf, "1e400"}, "vkops: greater: b scalar 1e400 cannot be represented as f32"},
		{[]string{"greater", xf, "-1e400"}, "vkops: greater: b scalar -1e400 cannot be represented as f32"},
		{[]string{"less-equal", "-1e400", i}, "vkops: less-equal: a scalar -1e400 cannot be represented as i32"},
		{[]string{"equal", u, "0x1p2000"}, "vkops: equal: b scalar 0x1p2000 cannot be represented as u8"},
		{[]string{"not-equal", xf, "-0x1p2000", "--dtype", "bf16"}, "vkops: not-equal: b scalar -0x1p2000 cannot be represented as bf16"},
		{[]string{"greater", i, "1e-400"}, "vkops: greater: b scalar 1e-400 cannot be represented as i32"},
		{[]string{"greater-equal", "-1.0000000000000000001", i}, "vkops: greater-equal: a scalar -1.0000000000000000001 cannot be represented as i32"},
		{[]string{"less", u, "-nan"}, "vkops: less: b scalar -nan cannot be represented as u8"},
		// Neither a number nor a file; a number where only a file goes.
		{[]string{"greater", xf, "abc"}, `vkops: greater: operand b: "abc" is neither a number nor an existing file`},
		{[]string{"equal", "1e400x", xf}, `vkops: equal: operand a: "1e400x" is neither a number nor an existing file`},
		{[]string{"is-inf", "-1e400"}, "vkops: is-inf: A must be a .npy file, got the number -1e400"},
		{[]string{"greater", xf, writeNpy(t, dir, "r.npy", selHost(t, []int{2}, float32(1), 2))}, "vkops: greater: a shape [3] and b shape [2] do not broadcast"},
	} {
		cases = append(cases, hardCase{args: append(c.args, "-o", out), msg: c.want})
	}
	hardRunAll(t, cases, out, []string{dir})
}

// A mask command's --help offers --dtype bf16 only where bf16 works: not
// for the logical ops, which take bool files only.
func TestMaskHelpDtype(t *testing.T) {
	for _, c := range []struct {
		name  string
		dtype bool
	}{
		{"logical-and", false},
		{"logical-or", false},
		{"logical-xor", false},
		{"logical-not", false},
		{"equal", true},
		{"is-nan", true},
		{"is-inf", true},
		{"maximum", true},
	} {
		stdout, _, code := vkops(t, nil, c.name, "--help")
		usage, _, _ := strings.Cut(stdout, "\n")
		if code != 0 || strings.Contains(usage, "--dtype bf16") != c.dtype || strings.Contains(stdout, "\n  -dtype ") != c.dtype {
			t.Errorf("vkops %s --help: exit %d; want --dtype bf16 offered: %v\n%s", c.name, code, c.dtype, stdout)
		}
	}
}
