package ops

import "github.com/vkops/vkops/device"

// The logical ops of docs/specs.md#logical-ops (OpenVINO opset 1). Inputs
// must be bool; a byte 0 is false and any other true, and the output's
// bools are 0 or 1. The binary ones take operands and options as the
// comparisons do (see Equal), a scalar being a Go bool or a bool
// Element; a non-bool input is an error matching ErrInvalid.

var (
	logicalAndOp = &maskOp{name: "logical-and", code: opAnd, types: "bool", accept: isBool}
	logicalOrOp  = &maskOp{name: "logical-or", code: opOr, types: "bool", accept: isBool}
	logicalXorOp = &maskOp{name: "logical-xor", code: opXor, types: "bool", accept: isBool}
	logicalNotOp = &maskOp{name: "logical-not", code: opNot, types: "bool", accept: isBool}
)

// LogicalAnd returns a && b element by element (LogicalAnd-1).
func LogicalAnd(a, b any, opts ...SelectOption) (*device.Tensor, error) {
	return logicalAndOp.binary(a, b, opts)
}

// LogicalOr returns a || b element by element (LogicalOr-1).
func LogicalOr(a, b any, opts ...SelectOption) (*device.Tensor, error) {
	return logicalOrOp.binary(a, b, opts)
}

// LogicalXor returns a != b element by element (LogicalXor-1).
func LogicalXor(a, b any, opts ...SelectOption) (*device.Tensor, error) {
	return logicalXorOp.binary(a, b, opts)
}

// LogicalNot returns !a element by element (LogicalNot-1).
func LogicalNot(a *device.Tensor) (*device.Tensor, error) {
	return logicalNotOp.unary(a, 0)
}
