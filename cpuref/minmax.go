package cpuref

import (
	"fmt"
	"math"

	"github.com/vkops/vkops/tensor"
)

// The ops of values of docs/specs.md#maximum-minimum-and-clamp: each
// element of the output is one of the operands' elements, bit for bit,
// or for bools the byte 0 or 1.

// Maximum returns the greater of a and b element by element (OpenVINO
// Maximum-1): a and b share an element type, any, and broadcast under
// mode as binaryShape describes. A NaN wins, a's where both are NaNs;
// +0 is greater than -0.
func Maximum(a, b *tensor.Host, mode string) (*tensor.Host, error) {
	return pickBinary("maximum", a, b, mode, true)
}

// Minimum returns the lesser of a and b element by element (Minimum-1),
// as Maximum does: a NaN wins, a's first, and -0 is less than +0.
func Minimum(a, b *tensor.Host, mode string) (*tensor.Host, error) {
	return pickBinary("minimum", a, b, mode, false)
}

// Clamp returns Minimum(Maximum(x, min), max) (Clamp-1): with min above
// max every element is max. min and max must already have x's element
// type: the conversion of Clamp-1's float attributes is the ops'.
func Clamp(x *tensor.Host, min, max tensor.Scalar) (*tensor.Host, error) {
	const op = "clamp"
	if err := checkHost(op, "x", x); err != nil {
		return nil, err
	}
	for _, s := range []struct {
		name string
		s    tensor.Scalar
	}{{"min", min}, {"max", max}} {
		if err := checkScalar(op, s.name, s.s); err != nil {
			return nil, err
		}
		if s.s.DType != x.DType {
			return nil, fmt.Errorf("%s: %s scalar is %v but x is %v", op, s.name, s.s.DType, x.DType)
		}
	}
	lo, hi := min.Bytes(), max.Bytes()
	res := &tensor.Host{DType: x.DType, Shape: x.Shape.Clone(), Data: make([]byte, len(x.Data))}
	size := x.DType.Size()
	for n := range x.Len() {
		v := pick(x.DType, x.Data[n*size:(n+1)*size], lo, true)
		copy(res.Data[n*size:], pick(x.DType, v, hi, false))
	}
	return res, nil
}

func pickBinary(op string, a, b *tensor.Host, mode string, greater bool) (*tensor.Host, error) {
	out, err := binaryShape(op, a, b, mode, false)
	if err != nil {
		return nil, err
	}
	res, err := tensor.New(a.DType, out)
	if err != nil {
		return nil, fmt.Errorf("%s: output: %v", op, err)
	}
	size := a.DType.Size()
	aStride := tensor.BroadcastStrides(a.Shape, out)
	bStride := tensor.BroadcastStrides(b.Shape, out)
	idx := make([]int, len(out))
	for n := range res.Len() {
		multiIndex(idx, n, out)
		i, j := dot(idx, aStride), dot(idx, bStride)
		copy(res.Data[n*size:], pick(a.DType, a.Data[i*size:(i+1)*size], b.Data[j*size:(j+1)*size], greater))
	}
	return res, nil
}

// pick returns the greater (or, unless greater, the lesser) of the
// elements x and y of type dt, as their bytes: a NaN if either is one,
// x where both are; of two zeros, +0 is the greater; a bool is 0 or 1.
func pick(dt tensor.DType, x, y []byte, greater bool) []byte {
	vx, vy := valueOf(dt, x), valueOf(dt, y)
	if dt == tensor.Bool {
		if vx.u > vy.u == greater {
			return []byte{byte(vx.u)}
		}
		return []byte{byte(vy.u)}
	}
	switch {
	case vx.float && math.IsNaN(vx.f):
		return x
	case vx.float && math.IsNaN(vy.f):
		return y
	case vx.float && vx.f == vy.f:
		// Equal floats differ only in the sign of a zero.
		if math.Signbit(vx.f) == greater {
			return y
		}
		return x
	case equal(vx, vy):
		return x
	}
	if less(vy, vx) == greater {
		return x
	}
	return y
}
