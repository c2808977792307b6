package cpuref

import (
	"math"

	"github.com/vkops/vkops/tensor"
)

// IsNaN returns whether each element of a is a NaN, quiet or signalling,
// of any sign and payload (OpenVINO IsNaN-10, docs/specs.md#isnan). a
// must be f16, bf16, f32 or f64.
func IsNaN(a *tensor.Host) (*tensor.Host, error) {
	return classify("is-nan", a, math.IsNaN)
}

// IsInf returns whether each element of a is an infinity that the
// attributes select (IsInf-10): -inf when detectNegative, +inf when
// detectPositive.
func IsInf(a *tensor.Host, detectNegative, detectPositive bool) (*tensor.Host, error) {
	return classify("is-inf", a, func(f float64) bool {
		return detectNegative && math.IsInf(f, -1) || detectPositive && math.IsInf(f, 1)
	})
}

// IsFinite returns whether each element of a is neither NaN nor
// infinite (IsFinite-10).
func IsFinite(a *tensor.Host) (*tensor.Host, error) {
	return classify("is-finite", a, func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) })
}

func classify(op string, a *tensor.Host, f func(float64) bool) (*tensor.Host, error) {
	if err := checkFloat(op, a); err != nil {
		return nil, err
	}
	return unaryMask(a, func(x []byte) bool { return f(floatOf(a.DType, x)) }), nil
}
