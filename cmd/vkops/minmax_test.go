package main

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/tensor"
)

// maximum, minimum and clamp (docs/specs.md#maximum-minimum-and-clamp)
// against cpuref, with files and numbers, and their bad input.
func TestMinMaxCommands(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.npy")
	nan, inf, negZero := float32(math.NaN()), float32(math.Inf(1)), float32(math.Copysign(0, -1))
	x := selHost(t, []int{2, 3}, float32(1), nan, negZero, inf, -inf, 3)
	y := selHost(t, []int{3}, float32(0), nan, 3)
	xf, yf := writeNpy(t, dir, "x.npy", x), writeNpy(t, dir, "y.npy", y)
	type ref func(a, b *tensor.Host, mode string) (*tensor.Host, error)
	for name, f := range map[string]ref{"maximum": cpuref.Maximum, "minimum": cpuref.Minimum} {
		want, err := f(x, y, "numpy")
		if err != nil {
			t.Fatal(err)
		}
		selSame(t, name, selRun(t, out, name, xf, yf, "-o", out), want)
		want, _ = f(selHost(t, []int{}, float32(-1)), x, "numpy")
		selSame(t, name+" -1 x", selRun(t, out, name, "-1", xf, "-o", out), want)
	}
	lo, _ := tensor.NewScalar(-1, tensor.F32)
	hi, _ := tensor.NewScalar(2.5, tensor.F32)
	want, _ := cpuref.Clamp(x, lo, hi)
	selSame(t, "clamp", selRun(t, out, "clamp", xf, "--min", "-1", "--max", "2.5", "-o", out), want)
	// Into an integer type a fractional min rounds up, a max down.
	i := writeNpy(t, dir, "i.npy", selHost(t, []int{4}, int32(-5), -1, 2, 5))
	selSame(t, "clamp i32", selRun(t, out, "clamp", i, "--min", "-1.5", "--max", "2.5", "-o", out), selHost(t, []int{4}, int32(-1), -1, 2, 2))
	// bf16 results come back as float32.
	b := writeNpy(t, dir, "b.npy", selHost(t, []int{2}, float32(1+1.0/1024), -3))
	selSame(t, "maximum bf16", selRun(t, out, "maximum", b, "0", "--dtype", "bf16", "-o", out), selHost(t, []int{2}, float32(1), 0))

	u := writeNpy(t, dir, "u.npy", selHost(t, []int{2}, uint8(1), 2))
	var cases []hardCase
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"maximum", xf, u}, "vkops: maximum: a is f32 but b is u8"},
		{[]string{"minimum", u, "-1"}, "vkops: minimum: b scalar -1 cannot be represented as u8"},
		{[]string{"clamp", u, "--min", "0"}, "vkops: clamp: --max is required"},
		{[]string{"clamp", u, "--min", "0", "--max", "x"}, `vkops: clamp: --max "x" is not a number`},
		{[]string{"clamp", u, "--min", "-1", "--max", "3"}, "vkops: clamp: min scalar -1 cannot be represented as u8"},
		{[]string{"clamp", "--min", "0", "--max", "1"}, "vkops: clamp: want one .npy file A, got 0 arguments"},
	} {
		cases = append(cases, hardCase{args: append(c.args, "-o", "OUT"), msg: c.msg})
	}
	// A $VKOPS_VARIANT that no kernel family has is refused, as a bad
	// $VKOPS_PROFILE is, not run as if unset.
	cases = append(cases, hardCase{args: []string{"maximum", xf, "0", "-o", "OUT"}, env: []string{"VKOPS_VARIANT=bogus"}, code: 1,
		msg: `vkops: maximum: ops: $VKOPS_VARIANT is "bogus": want portable, `})
	hardRunAll(t, cases, out, nil)
}
