package cpuref

import (
	"math"
	"testing"

	"github.com/vkops/vkops/tensor"
)

// Maximum, Minimum and Clamp by hand, from
// docs/specs.md#maximum-minimum-and-clamp: NaN propagates (a's first),
// -0 < +0 in either order, bools give 0 or 1, Clamp's min above max
// gives max, and the errors.
func TestMinMax(t *testing.T) {
	nan1, nan2 := math.Float32frombits(0x7fc00001), math.Float32frombits(0xffc00002)
	negZero := float32(math.Copysign(0, -1))
	x := mk([]int{2, 3}, []float32{1, nan1, negZero, 0, nan1, -2})
	y := mk([]int{3}, []float32{nan2, 5, 0})
	// Rows: [1 nan1 -0] vs [nan2 5 0]; [0 nan1 -2] vs [nan2 5 0].
	for _, c := range []struct {
		name string
		f    func(a, b *tensor.Host, mode string) (*tensor.Host, error)
		want []float32
	}{
		{"maximum", Maximum, []float32{nan2, nan1, 0, nan2, nan1, 0}},
		{"minimum", Minimum, []float32{nan2, nan1, negZero, nan2, nan1, -2}},
	} {
		got, err := c.f(x, y, "numpy")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if want := mk([]int{2, 3}, c.want); !same(got, want) {
			t.Errorf("%s: got %x, want %x", c.name, got.Data, want.Data)
		}
		// The order of a signed zero pair does not matter.
		a, b := mk(nil, []float32{0}), mk(nil, []float32{negZero})
		ab, _ := c.f(a, b, "")
		ba, _ := c.f(b, a, "")
		if !same(ab, ba) {
			t.Errorf("%s: +0, -0 gives %x; -0, +0 gives %x", c.name, ab.Data, ba.Data)
		}
	}
	bx, by := &tensor.Host{DType: tensor.Bool, Shape: tensor.Shape{3}, Data: []byte{2, 0, 0}}, mk([]int{3}, bools("TTF"))
	if got, _ := Maximum(bx, by, ""); !same(got, mk([]int{3}, bools("TTF"))) {
		t.Errorf("bool maximum: got %v", got.Data)
	}
	if got, _ := Minimum(bx, by, ""); !same(got, mk([]int{3}, bools("TFF"))) {
		t.Errorf("bool minimum: got %v", got.Data)
	}
	if got, _ := Maximum(mk(nil, []int64{1<<53 + 1}), mk(nil, []int64{1 << 53}), ""); !same(got, mk(nil, []int64{1<<53 + 1})) {
		t.Error("i64 maximum is not exact")
	}

	s := func(v any) tensor.Scalar {
		sc, err := tensor.NewScalar(v, tensor.F32)
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	c := mk([]int{4}, []float32{-3, nan1, 0.5, 3})
	if got, _ := Clamp(c, s(-1), s(1)); !same(got, mk([]int{4}, []float32{-1, nan1, 0.5, 1})) {
		t.Errorf("clamp: got %x", got.Data)
	}
	if got, _ := Clamp(c, s(1), s(-1)); !same(got, mk([]int{4}, []float32{-1, nan1, -1, -1})) {
		t.Errorf("clamp, min above max: got %x", got.Data)
	}

	for _, e := range []struct {
		err  error
		want string
	}{
		{func() error { _, err := Maximum(x, mk(nil, []int32{1}), ""); return err }(), "maximum: a is f32 but b is i32"},
		{func() error { _, err := Minimum(x, mk([]int{4}, []float32{1, 2, 3, 4}), ""); return err }(), "minimum: a shape [2 3] and b shape [4] do not broadcast (axis -1: 3 vs 4)"},
		{func() error { _, err := Clamp(c, tensor.Scalar{DType: tensor.I32}, s(1)); return err }(), "clamp: min scalar is i32 but x is f32"},
		{func() error { _, err := Clamp(c, s(0), tensor.Scalar{DType: tensor.F32, Bits: 1 << 32}); return err }(), "clamp: max scalar bits 0x100000000 do not fit f32"},
	} {
		if e.err == nil || e.err.Error() != e.want {
			t.Errorf("got %v, want %q", e.err, e.want)
		}
	}
}
