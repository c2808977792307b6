package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/npy"
	"github.com/vkops/vkops/tensor"
)

// selHost builds a host tensor from Go values.
func selHost[T tensor.Element](t *testing.T, shape []int, data ...T) *tensor.Host {
	t.Helper()
	h, err := tensor.FromSlice(data, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// selRun runs vkops with args and returns the tensor it wrote to out.
func selRun(t *testing.T, out string, args ...string) *tensor.Host {
	t.Helper()
	stdout, stderr, code := vkops(t, nil, args...)
	if err := missingDevice(code, stderr); err != nil {
		t.Skip(devtest.SkipLine(err))
	}
	if code != 0 || stdout != "" || stderr != "" {
		t.Fatalf("vkops %q: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
	}
	h, err := npy.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(out); err != nil {
		t.Fatal(err)
	}
	return h
}

// selSame fails t unless got and want are identical.
func selSame(t *testing.T, name string, got, want *tensor.Host) {
	t.Helper()
	if got.DType != want.DType || !got.Shape.Equal(want.Shape) || string(got.Data) != string(want.Data) {
		t.Errorf("%s: got %v%v % x, want %v%v % x", name, got.DType, got.Shape, got.Data, want.DType, want.Shape, want.Data)
	}
}

// OpenVINO Select-1's worked 3x2 example (its older text) under each
// --broadcast, and a broadcast that only pdpd accepts, against cpuref.
func TestSelectCommand(t *testing.T) {
	dir := t.TempDir()
	cond := selHost(t, []int{3, 2}, false, false, true, false, true, true)
	then := selHost(t, []int{3, 2}, int32(-1), 0, 1, 2, 3, 4)
	els := selHost(t, []int{3, 2}, int32(11), 10, 9, 8, 7, 6)
	c, a, b := writeNpy(t, dir, "c.npy", cond), writeNpy(t, dir, "a.npy", then), writeNpy(t, dir, "b.npy", els)
	out := filepath.Join(dir, "out.npy")
	want := selHost(t, []int{3, 2}, int32(11), 10, 1, 8, 3, 4)
	selSame(t, "default", selRun(t, out, "select", c, a, b, "-o", out), want)
	for _, mode := range []string{"numpy", "none", "pdpd"} {
		selSame(t, mode, selRun(t, out, "select", "--broadcast", mode, c, a, b, "-o", out), want)
	}
	row := writeNpy(t, dir, "row.npy", selHost(t, []int{2}, int32(5), 6))
	want, err := cpuref.Select(cond, then, selHost(t, []int{2}, int32(5), 6), "pdpd")
	if err != nil {
		t.Fatal(err)
	}
	selSame(t, "pdpd", selRun(t, out, "select", c, a, row, "-o", out, "--broadcast=pdpd"), want)
}

// PyPTO where's out1, out2 and out3, then the scalar rules of
// docs/specs.md#where, as the command applies them.
func TestWhereCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.npy")
	cond1 := writeNpy(t, dir, "cond1.npy", selHost(t, []int{4}, true, false, true, false))
	a1 := writeNpy(t, dir, "a1.npy", selHost(t, []int{4}, float32(1), 2, 3, 4))
	b1 := writeNpy(t, dir, "b1.npy", selHost(t, []int{4}, float32(10), 20, 30, 40))
	cond2 := writeNpy(t, dir, "cond2.npy", selHost(t, []int{2, 2}, true, false, false, true))
	a2 := writeNpy(t, dir, "a2.npy", selHost(t, []int{2}, float32(1), 2))
	u8 := writeNpy(t, dir, "u8.npy", selHost(t, []int{4}, uint8(1), 2, 3, 4))
	// 1 + 2^-8 and 1 + 3*2^-8 are ties between bfloat16 neighbours.
	f32 := writeNpy(t, dir, "f32.npy", selHost(t, []int{4}, float32(1.00390625), 1.01171875, float32(math.Inf(-1)), 3))
	tenth, err := tensor.NewScalar(0.1, tensor.BF16)
	if err != nil {
		t.Fatal(err)
	}
	bf := tensor.BFloat16(tenth.Bits).Float32()
	qnan := math.Float64frombits(0x7ff8000000000000) // the canonical NaN, math.NaN's without its payload bit
	for _, c := range []struct {
		args []string
		want *tensor.Host
	}{
		{[]string{"where", cond1, a1, b1}, selHost(t, []int{4}, float32(1), 20, 3, 40)},
		{[]string{"where", cond1, "1", "0"}, selHost(t, []int{4}, float32(1), 0, 1, 0)},
		{[]string{"where", cond2, a2, "0.0"}, selHost(t, []int{2, 2}, float32(1), 0, 0, 2)},
		{[]string{"where", cond1, "7", "-1", "--dtype", "i8"}, selHost(t, []int{4}, int8(7), -1, 7, -1)},
		{[]string{"where", "--dtype", "i8", cond1, "-2", "-0x7f"}, selHost(t, []int{4}, int8(-2), -127, -2, -127)},
		{[]string{"where", cond1, u8, "255"}, selHost(t, []int{4}, uint8(1), 255, 3, 255)},
		{[]string{"where", cond1, "0x10", u8, "--dtype", "u8"}, selHost(t, []int{4}, uint8(16), 2, 16, 4)},
		{[]string{"where", cond1, "nan", "-inf", "--dtype", "f64"}, selHost(t, []int{4}, qnan, math.Inf(-1), qnan, math.Inf(-1))},
		{[]string{"where", cond1, f32, "0.1", "--dtype", "bf16"},
			selHost(t, []int{4}, 1, bf, float32(math.Inf(-1)), bf)},
		{[]string{"where", cond1, "1.01171875", f32, "--dtype", "bf16"}, selHost(t, []int{4}, float32(1.015625), 1.015625, 1.015625, 3)},
		{[]string{"select", cond1, f32, b1, "--dtype", "bf16"}, selHost(t, []int{4}, 1, 20, float32(math.Inf(-1)), 40)},
		// Negative numbers in each place, before or after the flags.
		{[]string{"where", cond1, "-2.5", a1}, selHost(t, []int{4}, float32(-2.5), 2, -2.5, 4)},
		{[]string{"where", "--dtype", "f64", cond1, "-0x1p-2", "-1e-400"}, selHost(t, []int{4}, -0.25, math.Copysign(0, -1), -0.25, math.Copysign(0, -1))},
		{[]string{"where", cond1, a1, "-1e3"}, selHost(t, []int{4}, float32(1), -1000, 3, -1000)},
		{[]string{"where", cond1, "-1e1", "-0x80", "--dtype", "i8"}, selHost(t, []int{4}, int8(-10), -128, -10, -128)},
		// Float spellings of integers convert exactly, beyond float64's
		// 53 bits too.
		{[]string{"where", cond1, "18446744073709551615.0", "1e19", "--dtype", "u64"},
			selHost(t, []int{4}, uint64(math.MaxUint64), 1e19, math.MaxUint64, 1e19)},
		{[]string{"where", cond1, "-9223372036854775807.0e0", "0x1_0p0", "--dtype", "i64"},
			selHost(t, []int{4}, int64(-math.MaxInt64), 16, -math.MaxInt64, 16)},
	} {
		selSame(t, strings.Join(c.args, " "), selRun(t, out, append(c.args, "-o", out)...), c.want)
	}
}

// Bad input is one line and exit 2, a missing device exit 1; neither
// leaves an output file.
func TestSelectCommandErrors(t *testing.T) {
	dir := t.TempDir()
	c := writeNpy(t, dir, "c.npy", selHost(t, []int{3, 5}, make([]bool, 15)...))
	a := writeNpy(t, dir, "a.npy", selHost(t, []int{2, 3, 4, 5}, make([]float32, 120)...))
	u8 := writeNpy(t, dir, "u8.npy", selHost(t, []int{2}, uint8(1), 2))
	f32 := writeNpy(t, dir, "f32.npy", selHost(t, []int{2}, float32(1), 2))
	i16 := writeNpy(t, dir, "i16.npy", selHost(t, []int{2}, int16(1), 2))
	b2 := writeNpy(t, dir, "b2.npy", selHost(t, []int{2}, true, false))
	out := filepath.Join(dir, "out.npy")
	var cases []hardCase
	for _, x := range []struct {
		env  []string
		args []string
		code int
		msg  string
	}{
		{nil, []string{"select", c, a, a, "-o", out}, 2,
			"vkops: select: cond shape [3 5] cannot be broadcast one way to [2 3 4 5] (axis -2: 3 vs 4)"},
		{nil, []string{"select", c, a, a, "-o", out, "--broadcast", "none"}, 2,
			"vkops: select: broadcast none needs equal shapes: cond [3 5] then [2 3 4 5] else [2 3 4 5]"},
		{nil, []string{"select", b2, u8, f32, "-o", out}, 2, "vkops: select: then is u8 but else is f32"},
		{nil, []string{"select", u8, u8, u8, "-o", out}, 2, "vkops: select: cond must be bool, got u8"},
		{nil, []string{"select", c, a, a, "-o", out, "--broadcast", "bidirectional"}, 2, `vkops: select: unknown --broadcast "bidirectional"`},
		{nil, []string{"select", b2, u8, u8, "-o", out, "--dtype", "bf16"}, 2, "vkops: select: --dtype bf16 takes float32 files, " + u8 + " is u8"},
		{nil, []string{"select", b2, f32, f32, "-o", out, "--dtype", "f16"}, 2, "vkops: select: --dtype f16: select takes its type"},
		{nil, []string{"select", b2, f32, f32, "-o", out, "--dtype", "f8"}, 2, "vkops: select: --dtype: unknown element type"},
		{nil, []string{"select", c, a, "-o", out}, 2, "vkops: select: want COND THEN ELSE files, got 2 arguments"},
		{nil, []string{"select", c, a, a}, 2, "vkops: select: -o OUT is required"},
		{nil, []string{"select", c, a, filepath.Join(dir, "missing.npy"), "-o", out}, 2, "vkops: select: npy: open"},
		{nil, []string{"select", b2, u8, u8, "-o", filepath.Join(dir, "no", "dir.npy")}, 2,
			"vkops: select: -o " + filepath.Join(dir, "no", "dir.npy") + ": directory " + filepath.Join(dir, "no") + " does not exist"},
		{nil, []string{"select", b2, u8, u8, "-o", out, "--mode", "none"}, 2, "vkops: select: flag provided but not defined"},
		{noDevice, []string{"select", b2, u8, u8, "-o", out}, 1, "vkops: "},
		{nil, []string{"where", b2, u8, "-1", "-o", out}, 2, "vkops: where: other scalar -1 cannot be represented as u8"},
		{nil, []string{"where", b2, "300", "0", "-o", out, "--dtype", "i8"}, 2, "vkops: where: input scalar 300 cannot be represented as i8"},
		{nil, []string{"where", b2, "1.5", i16, "-o", out}, 2, "vkops: where: input scalar 1.5 cannot be represented as i16"},
		{nil, []string{"where", b2, u8, f32, "-o", out}, 2, "vkops: where: input is u8 but other is f32"},
		{nil, []string{"where", b2, u8, "1", "-o", out, "--dtype", "i8"}, 2, "vkops: where: --dtype i8, but " + u8 + " is u8"},
		{nil, []string{"where", b2, u8, "1", "-o", out, "--dtype", "bf16"}, 2, "vkops: where: --dtype bf16 takes float32 files, " + u8 + " is u8"},
		{nil, []string{"where", b2, "1", "0", "-o", out, "--dtype", "f8"}, 2, "vkops: where: --dtype: unknown element type"},
		{nil, []string{"where", "1", "1", "0", "-o", out}, 2, "vkops: where: COND must be a .npy file, got the number 1"},
		// Numbers beyond every type's range, and fractions that float64
		// rounds to integers, negative ones included.
		{nil, []string{"where", b2, "1e400", "0", "-o", out}, 2, "vkops: where: input scalar 1e400 cannot be represented as f32"},
		{nil, []string{"where", b2, "0", "-1e400", "-o", out, "--dtype", "f64"}, 2, "vkops: where: other scalar -1e400 cannot be represented as f64"},
		{nil, []string{"where", b2, u8, "-1e400", "-o", out}, 2, "vkops: where: other scalar -1e400 cannot be represented as u8"},
		{nil, []string{"where", b2, "-1e400", f32, "-o", out, "--dtype", "bf16"}, 2, "vkops: where: input scalar -1e400 cannot be represented as bf16"},
		{nil, []string{"where", b2, "1e-400", i16, "-o", out}, 2, "vkops: where: input scalar 1e-400 cannot be represented as i16"},
		{nil, []string{"where", b2, "-nan", "0", "-o", out, "--dtype", "i8"}, 2, "vkops: where: input scalar -nan cannot be represented as i8"},
		// Neither a number nor a file; a number where only a file goes.
		{nil, []string{"where", b2, f32, "abc", "-o", out}, 2, `vkops: where: operand other: "abc" is neither a number nor an existing file`},
		{nil, []string{"where", "-1", "1", "0", "-o", out}, 2, "vkops: where: COND must be a .npy file, got the number -1"},
		{nil, []string{"select", b2, u8, "-1", "-o", out}, 2, "vkops: select: ELSE must be a .npy file, got the number -1"},
		{nil, []string{"select", "-1e400", u8, u8, "-o", out}, 2, "vkops: select: COND must be a .npy file, got the number -1e400"},
		{nil, []string{"reduce-or", "-1", "--axes", "0", "-o", out}, 2, "vkops: reduce-or: DATA must be a .npy file, got the number -1"},
		{nil, []string{"where", c, a, "0", "-o", out}, 2, "vkops: where: cond shape [3 5] and input shape [2 3 4 5] do not broadcast (axis -2: 3 vs 4)"},
		{nil, []string{"where", b2, "1", "-o", out}, 2, "vkops: where: want COND INPUT OTHER"},
		{nil, []string{"where", b2, "1", "0"}, 2, "vkops: where: -o OUT is required"},
		{noDevice, []string{"where", b2, "1", "0", "-o", out}, 1, "vkops: "},
	} {
		cases = append(cases, hardCase{args: x.args, env: x.env, code: x.code, msg: x.msg})
	}
	hardRunAll(t, cases, out, []string{dir})
	for _, name := range []string{"select", "where"} {
		stdout, _, code := vkops(t, nil, name, "--help")
		if code != 0 || !strings.Contains(stdout, "example:") || !strings.Contains(stdout, "-o") {
			t.Errorf("%s --help: exit %d, %q", name, code, stdout)
		}
	}
}
