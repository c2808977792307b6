package ops

import (
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/tensor"
)

// The float classifiers of docs/specs.md#float-classifiers (OpenVINO
// opset 10): a must be f16, bf16, f32 or f64 (anything else is an error
// matching ErrInvalid); the output is a bool tensor of a's shape.
// Elements are classified by their bits, so every NaN counts, quiet or
// signalling, of any sign and payload.

var (
	isNaNOp    = &maskOp{name: "is-nan", code: opIsNaN, types: "f16, bf16, f32 or f64", accept: tensor.DType.IsFloat}
	isInfOp    = &maskOp{name: "is-inf", code: opIsInf, types: "f16, bf16, f32 or f64", accept: tensor.DType.IsFloat}
	isFiniteOp = &maskOp{name: "is-finite", code: opIsFinite, types: "f16, bf16, f32 or f64", accept: tensor.DType.IsFloat}
)

// IsNaN returns whether each element of a is a NaN (IsNaN-10).
func IsNaN(a *device.Tensor) (*device.Tensor, error) { return isNaNOp.unary(a, 0) }

// IsInf returns whether each element of a is an infinity (IsInf-10):
// -inf counts when detectNegative is set and +inf when detectPositive
// is; OpenVINO's defaults are both true.
func IsInf(a *device.Tensor, detectNegative, detectPositive bool) (*device.Tensor, error) {
	return isInfOp.unary(a, b2u(detectNegative)|b2u(detectPositive)<<1)
}

// IsFinite returns whether each element of a is neither NaN nor infinite
// (IsFinite-10).
func IsFinite(a *device.Tensor) (*device.Tensor, error) { return isFiniteOp.unary(a, 0) }
