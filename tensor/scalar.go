package tensor

import (
	"fmt"
	"math"
	"math/bits"
)

// Scalar is one typed element, held as its bit pattern (little-endian in
// the low Size bytes). Bool is 0 or 1.
type Scalar struct {
	DType DType
	Bits  uint64
}

// NewScalar converts v (a Go bool, integer or float) to the element type
// dt, exactly: integers must be in range, floats destined for an integer
// type must be integral, and floats round to nearest even into f16, bf16
// and f32. A value the type cannot hold is an error: -1 for u8, 300 for
// i8, NaN for an integer, 1e6 for f16.
func NewScalar(v any, dt DType) (Scalar, error) {
	if !dt.Valid() {
		return Scalar{}, fmt.Errorf("invalid element type %v", dt)
	}
	n, err := numberOf(v)
	if err != nil {
		return Scalar{}, err
	}
	var bits uint64
	ok := false
	if dt.IsFloat() {
		bits, ok = n.floatBits(dt)
	} else {
		bits, ok = n.intBits(dt)
	}
	if !ok {
		return Scalar{}, fmt.Errorf("scalar %v cannot be represented as %v", v, dt)
	}
	return Scalar{dt, bits}, nil
}

// A number is a Go value of a numeric type as NewScalar reads it: a
// float, or an integer held in i, or in u where it passes MaxInt64.
type number struct {
	f       float64
	i       int64
	u       uint64
	isFloat bool
	isUint  bool
}

// numberOf reads v, of a Go numeric type or bool.
func numberOf(v any) (number, error) {
	var n number
	switch x := v.(type) {
	case bool:
		if x {
			n.i = 1
		}
	case int:
		n.i = int64(x)
	case int8:
		n.i = int64(x)
	case int16:
		n.i = int64(x)
	case int32:
		n.i = int64(x)
	case int64:
		n.i = x
	case uint:
		n.u, n.isUint = uint64(x), true
	case uint8:
		n.u, n.isUint = uint64(x), true
	case uint16:
		n.u, n.isUint = uint64(x), true
	case uint32:
		n.u, n.isUint = uint64(x), true
	case uint64:
		n.u, n.isUint = x, true
	case float32:
		n.f, n.isFloat = float64(x), true
	case float64:
		n.f, n.isFloat = x, true
	case Float16:
		n.f, n.isFloat = float64(x.Float32()), true
	case BFloat16:
		n.f, n.isFloat = float64(x.Float32()), true
	default:
		return n, fmt.Errorf("scalar of Go type %T is not a number", v)
	}
	if n.isUint && n.u <= math.MaxInt64 {
		n.i, n.isUint = int64(n.u), false
	}
	return n, nil
}

// floatBits returns n's bits as floating-point type dt, rounded to
// nearest even; false where it overflows dt's range.
func (n number) floatBits(dt DType) (bits uint64, ok bool) {
	f := n.f
	if !n.isFloat {
		f = intToFloat64(n.i, n.u, n.isUint, dt == F64)
	}
	switch dt {
	case F64:
		return math.Float64bits(f), true
	case F32:
		f32 := float32(f)
		return uint64(math.Float32bits(f32)), !math.IsInf(float64(f32), 0) || math.IsInf(f, 0)
	case F16:
		return roundBinary(f, 5, 10)
	case BF16:
		return roundBinary(f, 8, 7)
	}
	return 0, false
}

// intBits returns n's bits as integer or bool type dt; false where n is
// not integral or lies outside dt's range.
func (n number) intBits(dt DType) (bits uint64, ok bool) {
	if n.isFloat {
		f := n.f
		switch {
		case f != math.Trunc(f) || math.IsInf(f, 0) || math.IsNaN(f):
			return 0, false
		case f >= -(1<<63) && f < 1<<63:
			n.i = int64(f)
		case f >= 0 && f < 1<<64:
			n.u, n.isUint = uint64(f), true
		default:
			return 0, false
		}
	}
	if n.isUint { // above MaxInt64: only u64 holds it
		return n.u, dt == U64
	}
	lo, hi := intRange(dt)
	if n.i < lo || n.i > hi {
		return 0, false
	}
	mask := uint64(1)<<(8*dt.Size()) - 1
	if dt.Size() == 8 {
		mask = math.MaxUint64
	}
	return uint64(n.i) & mask, true
}

// intRange returns the least and greatest values of integer or bool
// type dt, U64's capped at MaxInt64 (intBits holds larger ones apart).
func intRange(dt DType) (lo, hi int64) {
	switch dt {
	case Bool:
		return 0, 1
	case I8:
		return math.MinInt8, math.MaxInt8
	case U8:
		return 0, math.MaxUint8
	case I16:
		return math.MinInt16, math.MaxInt16
	case U16:
		return 0, math.MaxUint16
	case I32:
		return math.MinInt32, math.MaxInt32
	case U32:
		return 0, math.MaxUint32
	case I64:
		return math.MinInt64, math.MaxInt64
	case U64:
		return 0, math.MaxInt64
	}
	return 0, -1 // no other type: an empty range
}

// intToFloat64 converts the integer i (or u when isUint) to float64. With
// nearest it rounds to nearest even, the final rounding for f64. Otherwise
// it rounds to odd: a value beyond 2^53 that float64 cannot hold keeps a
// sticky lowest bit, so that the caller's second rounding, to a format of
// at most 51 mantissa bits (f32, bf16, f16), gives the correctly rounded
// result. Rounding to nearest twice would not: 2^60 + 2^36 + 1 would become
// the f32 tie 2^60 + 2^36 first, and then 2^60 rather than 2^60 + 2^37.
func intToFloat64(i int64, u uint64, isUint, nearest bool) float64 {
	mag, neg := u, false
	if !isUint {
		mag, neg = uint64(i), i < 0
		if neg {
			mag = -mag // two's complement: right for MinInt64 too
		}
	}
	var f float64
	if shift := bits.Len64(mag) - 53; nearest || shift <= 0 {
		f = float64(mag) // exact, or the one rounding f64 needs
	} else {
		odd := mag >> shift
		if mag&(1<<shift-1) != 0 {
			odd |= 1
		}
		f = math.Ldexp(float64(odd), shift) // odd < 2^53: exact
	}
	if neg {
		f = -f
	}
	return f
}

// Bytes returns the scalar's element as little-endian bytes, Size long.
func (s Scalar) Bytes() []byte {
	b := make([]byte, s.DType.Size())
	for k := range b {
		b[k] = byte(s.Bits >> (8 * k))
	}
	return b
}
