package ops

import "github.com/vkops/vkops/device"

// The comparisons of docs/specs.md#comparisons (OpenVINO opset 1). Each
// returns a new bool tensor. a and b are each a *device.Tensor or a
// scalar as Where takes them (a Go number, an Element or a
// tensor.Scalar), at least one a tensor; a scalar is converted exactly to
// the tensor's element type, or refused, and then stands for a 0-D
// tensor. Tensors must share an element type, which may be bool or any
// numeric type, and a device. The option is Select's WithBroadcast:
// numpy (the default) broadcasts a and b to each other, none requires
// equal shapes, pdpd gives the output a's shape.
//
// Floats compare as IEEE 754 does: every comparison with a NaN is false
// but NotEqual, which is true, and -0 == +0; f16 and bf16 compare their
// values. Integers compare exactly over their whole range, i64 and u64
// included. Every rule is checked before anything runs; a rejected input
// gives an error matching ErrInvalid whose message is cpuref's.

var (
	equalOp        = &maskOp{name: "equal", code: opEQ}
	notEqualOp     = &maskOp{name: "not-equal", code: opNE}
	lessOp         = &maskOp{name: "less", code: opLT}
	lessEqualOp    = &maskOp{name: "less-equal", code: opLE}
	greaterOp      = &maskOp{name: "greater", code: opLT, swap: true}
	greaterEqualOp = &maskOp{name: "greater-equal", code: opLE, swap: true}
)

// Equal returns a == b element by element (Equal-1).
func Equal(a, b any, opts ...SelectOption) (*device.Tensor, error) {
	return equalOp.binary(a, b, opts)
}

// NotEqual returns a != b element by element (NotEqual-1).
func NotEqual(a, b any, opts ...SelectOption) (*device.Tensor, error) {
	return notEqualOp.binary(a, b, opts)
}

// Less returns a < b element by element (Less-1).
func Less(a, b any, opts ...SelectOption) (*device.Tensor, error) {
	return lessOp.binary(a, b, opts)
}

// LessEqual returns a <= b element by element (LessEqual-1).
func LessEqual(a, b any, opts ...SelectOption) (*device.Tensor, error) {
	return lessEqualOp.binary(a, b, opts)
}

// Greater returns a > b element by element (Greater-1).
func Greater(a, b any, opts ...SelectOption) (*device.Tensor, error) {
	return greaterOp.binary(a, b, opts)
}

// GreaterEqual returns a >= b element by element (GreaterEqual-1).
func GreaterEqual(a, b any, opts ...SelectOption) (*device.Tensor, error) {
	return greaterEqualOp.binary(a, b, opts)
}
