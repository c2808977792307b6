package cpuref

import (
	"math"
	"testing"

	"github.com/vkops/vkops/tensor"
)

// The mask ops by hand, from docs/specs.md#mask-ops: values, broadcasting
// and errors.
func TestMaskOps(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	x := mk([]int{2, 3}, []float32{1, float32(nan), float32(math.Copysign(0, -1)), float32(inf), float32(-inf), 3})
	y := mk([]int{3}, []float32{0, float32(nan), 3})
	// x vs y broadcast along rows: [1 nan -0] vs [0 nan 3], [inf -inf 3] vs [0 nan 3].
	type binary func(a, b *tensor.Host, mode string) (*tensor.Host, error)
	for _, c := range []struct {
		name string
		f    binary
		want string
	}{
		{"equal", Equal, "FFFFFT"},
		{"not-equal", NotEqual, "TTTTTF"},
		{"less", Less, "FFTFFF"},
		{"less-equal", LessEqual, "FFTFFT"},
		{"greater", Greater, "TFFTFF"},
		{"greater-equal", GreaterEqual, "TFFTFT"},
	} {
		got, err := c.f(x, y, "numpy")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if want := mk([]int{2, 3}, bools(c.want)); !same(got, want) {
			t.Errorf("%s: got %v, want %s", c.name, got.Data, c.want)
		}
	}
	// -0 == +0; i64 and u64 exactly.
	if got, _ := Equal(mk(nil, []float64{math.Copysign(0, -1)}), mk(nil, []float64{0}), ""); got.Data[0] != 1 {
		t.Error("-0 == +0 is false")
	}
	if got, _ := Greater(mk(nil, []int64{1<<53 + 1}), mk(nil, []int64{1 << 53}), ""); got.Data[0] != 1 {
		t.Error("2^53+1 > 2^53 is false")
	}
	if got, _ := Less(mk(nil, []uint64{math.MaxUint64 - 1}), mk(nil, []uint64{math.MaxUint64}), ""); got.Data[0] != 1 {
		t.Error("2^64-2 < 2^64-1 is false")
	}
	// Logical ops read any nonzero byte as true.
	a, b := raw(tensor.Bool, []int{4}, 0, 0, 2, 0xff), raw(tensor.Bool, []int{4}, 0, 7, 0, 1)
	for _, c := range []struct {
		name string
		f    binary
		want string
	}{{"and", LogicalAnd, "FFFT"}, {"or", LogicalOr, "FTTT"}, {"xor", LogicalXor, "FTTF"}} {
		if got, err := c.f(a, b, "none"); err != nil || !same(got, mk([]int{4}, bools(c.want))) {
			t.Errorf("logical %s: %v %v, want %s", c.name, got, err, c.want)
		}
	}
	if got, _ := LogicalNot(a); !same(got, mk([]int{4}, bools("TTFF"))) {
		t.Errorf("logical-not: %v", got.Data)
	}
	// Classifiers, IsInf's attributes.
	for _, c := range []struct {
		name string
		got  func() (*tensor.Host, error)
		want string
	}{
		{"is-nan", func() (*tensor.Host, error) { return IsNaN(x) }, "FTFFFF"},
		{"is-finite", func() (*tensor.Host, error) { return IsFinite(x) }, "TFTFFT"},
		{"is-inf", func() (*tensor.Host, error) { return IsInf(x, true, true) }, "FFFTTF"},
		{"is-inf -", func() (*tensor.Host, error) { return IsInf(x, true, false) }, "FFFFTF"},
		{"is-inf +", func() (*tensor.Host, error) { return IsInf(x, false, true) }, "FFFTFF"},
		{"is-inf none", func() (*tensor.Host, error) { return IsInf(x, false, false) }, "FFFFFF"},
	} {
		if got, err := c.got(); err != nil || !same(got, mk([]int{2, 3}, bools(c.want))) {
			t.Errorf("%s: %v %v, want %s", c.name, got, err, c.want)
		}
	}
	// Errors name the op, the operand and the rule.
	for _, c := range []struct {
		err  func() error
		want string
	}{
		{func() error { _, err := Greater(x, mk([]int{3}, []int32{1, 2, 3}), ""); return err }, "greater: a is f32 but b is i32"},
		{func() error { _, err := Less(x, mk([]int{2}, []float32{1, 2}), ""); return err },
			"less: a shape [2 3] and b shape [2] do not broadcast (axis -1: 3 vs 2)"},
		{func() error { _, err := Equal(y, x, "pdpd"); return err },
			"equal: b shape [2 3] cannot be broadcast one way to [3] (rank 2 > 1)"},
		{func() error { _, err := Equal(x, y, "none"); return err }, "equal: broadcast none needs equal shapes: a [2 3] b [3]"},
		{func() error { _, err := Equal(x, y, "both"); return err }, `equal: unknown broadcast "both" (want none, numpy or pdpd)`},
		{func() error { _, err := LogicalAnd(x, x, ""); return err }, "logical-and: a must be bool, got f32"},
		{func() error { _, err := LogicalNot(x); return err }, "logical-not: a must be bool, got f32"},
		{func() error { _, err := IsNaN(a); return err }, "is-nan: a must be f16, bf16, f32 or f64, got bool"},
		{func() error { _, err := IsInf(nil, true, true); return err }, "is-inf: a is nil"},
	} {
		if err := c.err(); err == nil || err.Error() != c.want {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}

func same(a, b *tensor.Host) bool {
	return a != nil && b != nil && a.DType == b.DType && a.Shape.Equal(b.Shape) && string(a.Data) == string(b.Data)
}
