package cpuref

import (
	"fmt"

	"github.com/vkops/vkops/tensor"
)

// LogicalAnd returns a && b element by element (OpenVINO LogicalAnd-1,
// docs/specs.md#logicaland): a and b are bool, broadcast under mode as
// binaryShape describes; any nonzero byte is true.
func LogicalAnd(a, b *tensor.Host, mode string) (*tensor.Host, error) {
	return logical("logical-and", a, b, mode, func(x, y bool) bool { return x && y })
}

// LogicalOr returns a || b element by element (LogicalOr-1).
func LogicalOr(a, b *tensor.Host, mode string) (*tensor.Host, error) {
	return logical("logical-or", a, b, mode, func(x, y bool) bool { return x || y })
}

// LogicalXor returns a != b element by element for bools (LogicalXor-1).
func LogicalXor(a, b *tensor.Host, mode string) (*tensor.Host, error) {
	return logical("logical-xor", a, b, mode, func(x, y bool) bool { return x != y })
}

// LogicalNot returns !a element by element (LogicalNot-1); a is bool.
func LogicalNot(a *tensor.Host) (*tensor.Host, error) {
	const op = "logical-not"
	if err := checkBool(op, "a", a); err != nil {
		return nil, err
	}
	return unaryMask(a, func(x []byte) bool { return !boolOf(x) }), nil
}

func logical(op string, a, b *tensor.Host, mode string, f func(x, y bool) bool) (*tensor.Host, error) {
	out, err := binaryShape(op, a, b, mode, true)
	if err != nil {
		return nil, err
	}
	return binaryMask(op, out, a, b, func(x, y []byte) bool { return f(boolOf(x), boolOf(y)) })
}

func checkBool(op, name string, h *tensor.Host) error {
	if err := checkHost(op, name, h); err != nil {
		return err
	}
	if h.DType != tensor.Bool {
		return fmt.Errorf("%s: %s must be bool, got %v", op, name, h.DType)
	}
	return nil
}
