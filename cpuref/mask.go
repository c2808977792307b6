package cpuref

import (
	"fmt"
	"math"

	"github.com/vkops/vkops/tensor"
)

// The mask ops of docs/specs.md#mask-ops: comparisons, logical ops and
// float classifiers, each making a bool tensor from its inputs.

// binaryShape checks a and b for a binary mask op under the
// auto_broadcast mode and returns the output's shape. a and b must share
// an element type, bool when boolOnly. The shapes:
//
//   - "none": a and b must have equal shapes.
//   - "numpy" (also ""): a and b broadcast each other, numpy style.
//   - "pdpd": the output has a's shape; b must broadcast one way to it.
func binaryShape(op string, a, b *tensor.Host, mode string, boolOnly bool) (tensor.Shape, error) {
	mode, err := checkMode(op, mode)
	if err != nil {
		return nil, err
	}
	if err := checkHosts(op, []string{"a", "b"}, a, b); err != nil {
		return nil, err
	}
	if a.DType != b.DType {
		return nil, fmt.Errorf("%s: a is %v but b is %v", op, a.DType, b.DType)
	}
	if boolOnly && a.DType != tensor.Bool {
		return nil, fmt.Errorf("%s: a must be bool, got %v", op, a.DType)
	}
	switch mode {
	case "none":
		if !a.Shape.Equal(b.Shape) {
			return nil, fmt.Errorf("%s: broadcast none needs equal shapes: a %v b %v", op, a.Shape, b.Shape)
		}
		return a.Shape, nil
	case "pdpd":
		if err := fitsOneWay(op, "b", b.Shape, a.Shape); err != nil {
			return nil, err
		}
		return a.Shape, nil
	}
	out, clash := tensor.Broadcast(a.Shape, b.Shape)
	if clash != nil {
		return nil, fmt.Errorf("%s: a shape %v and b shape %v do not broadcast (%v)", op, a.Shape, b.Shape, clash)
	}
	return out, nil
}

// binaryMask returns the bool tensor of shape out whose element at each
// multi-index is f of a's and b's elements there (their bytes).
func binaryMask(op string, out tensor.Shape, a, b *tensor.Host, f func(x, y []byte) bool) (*tensor.Host, error) {
	res, err := tensor.New(tensor.Bool, out)
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
		if f(a.Data[i*size:(i+1)*size], b.Data[j*size:(j+1)*size]) {
			res.Data[n] = 1
		}
	}
	return res, nil
}

// unaryMask returns the bool tensor of a's shape whose elements are f of
// a's elements (their bytes).
func unaryMask(a *tensor.Host, f func(x []byte) bool) *tensor.Host {
	res := &tensor.Host{DType: tensor.Bool, Shape: a.Shape.Clone(), Data: make([]byte, a.Len())}
	size := a.DType.Size()
	for n := range res.Data {
		if f(a.Data[n*size : (n+1)*size]) {
			res.Data[n] = 1
		}
	}
	return res
}

// value is one element read as what it means: a float (f16, bf16 and f32
// widen to float64 exactly), a signed or an unsigned integer (bool is the
// unsigned 0 or 1).
type value struct {
	f     float64
	i     int64
	u     uint64
	float bool
	sign  bool
}

func valueOf(dt tensor.DType, b []byte) value {
	var raw uint64
	for k := len(b) - 1; k >= 0; k-- {
		raw = raw<<8 | uint64(b[k])
	}
	switch dt {
	case tensor.Bool:
		if raw != 0 {
			return value{u: 1}
		}
		return value{}
	case tensor.F16:
		return value{f: float64(tensor.Float16(raw).Float32()), float: true}
	case tensor.BF16:
		return value{f: float64(tensor.BFloat16(raw).Float32()), float: true}
	case tensor.F32:
		return value{f: float64(math.Float32frombits(uint32(raw))), float: true}
	case tensor.F64:
		return value{f: math.Float64frombits(raw), float: true}
	case tensor.I8:
		return value{i: int64(int8(raw)), sign: true}
	case tensor.I16:
		return value{i: int64(int16(raw)), sign: true}
	case tensor.I32:
		return value{i: int64(int32(raw)), sign: true}
	case tensor.I64:
		return value{i: int64(raw), sign: true}
	}
	return value{u: raw}
}

// less and equal compare two values of one element type exactly: floats
// as IEEE 754 does (NaN neither less nor equal to anything, -0 == +0),
// integers over their whole range.
func less(x, y value) bool {
	switch {
	case x.float:
		return x.f < y.f
	case x.sign:
		return x.i < y.i
	}
	return x.u < y.u
}

func equal(x, y value) bool {
	switch {
	case x.float:
		return x.f == y.f
	case x.sign:
		return x.i == y.i
	}
	return x.u == y.u
}

// checkFloat checks the input of a float classifier.
func checkFloat(op string, a *tensor.Host) error {
	if err := checkHost(op, "a", a); err != nil {
		return err
	}
	if !a.DType.IsFloat() {
		return fmt.Errorf("%s: a must be f16, bf16, f32 or f64, got %v", op, a.DType)
	}
	return nil
}

// floatOf reads a float element as float64, exactly.
func floatOf(dt tensor.DType, b []byte) float64 { return valueOf(dt, b).f }

// boolOf reads a bool element: any nonzero byte is true.
func boolOf(b []byte) bool { return b[0] != 0 }
