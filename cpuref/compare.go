package cpuref

import "github.com/vkops/vkops/tensor"

// Equal returns a == b element by element (OpenVINO Equal-1,
// docs/specs.md#equal): a and b share an element type, bool or any
// numeric one, and broadcast under mode as binaryShape describes. Floats
// compare as IEEE 754 does: NaN is equal to nothing, -0 == +0.
func Equal(a, b *tensor.Host, mode string) (*tensor.Host, error) {
	return compare("equal", a, b, mode, func(x, y value) bool { return equal(x, y) })
}

// NotEqual returns a != b element by element (NotEqual-1): true wherever
// Equal is false, NaNs included.
func NotEqual(a, b *tensor.Host, mode string) (*tensor.Host, error) {
	return compare("not-equal", a, b, mode, func(x, y value) bool { return !equal(x, y) })
}

// Less returns a < b element by element (Less-1); false for NaNs.
func Less(a, b *tensor.Host, mode string) (*tensor.Host, error) {
	return compare("less", a, b, mode, less)
}

// LessEqual returns a <= b element by element (LessEqual-1); false for
// NaNs.
func LessEqual(a, b *tensor.Host, mode string) (*tensor.Host, error) {
	return compare("less-equal", a, b, mode, func(x, y value) bool { return less(x, y) || equal(x, y) })
}

// Greater returns a > b element by element (Greater-1); false for NaNs.
func Greater(a, b *tensor.Host, mode string) (*tensor.Host, error) {
	return compare("greater", a, b, mode, func(x, y value) bool { return less(y, x) })
}

// GreaterEqual returns a >= b element by element (GreaterEqual-1); false
// for NaNs.
func GreaterEqual(a, b *tensor.Host, mode string) (*tensor.Host, error) {
	return compare("greater-equal", a, b, mode, func(x, y value) bool { return less(y, x) || equal(x, y) })
}

func compare(op string, a, b *tensor.Host, mode string, f func(x, y value) bool) (*tensor.Host, error) {
	out, err := binaryShape(op, a, b, mode, false)
	if err != nil {
		return nil, err
	}
	dt := a.DType
	return binaryMask(op, out, a, b, func(x, y []byte) bool { return f(valueOf(dt, x), valueOf(dt, y)) })
}
