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
	var (
		f       float64
		i       int64
		u       uint64
		isFloat bool
		isUint  bool
	)
	switch x := v.(type) {
	case bool:
		if x {
			i = 1
		}
	case int:
		i = int64(x)
	case int8:
		i = int64(x)
	case int16:
		i = int64(x)
	case int32:
		i = int64(x)
	case int64:
		i = x
	case uint:
		u, isUint = uint64(x), true
	case uint8:
		u, isUint = uint64(x), true
	case uint16:
		u, isUint = uint64(x), true
	case uint32:
		u, isUint = uint64(x), true
	case uint64:
		u, isUint = x, true
	case float32:
		f, isFloat = float64(x), true
	case float64:
		f, isFloat = x, true
	case Float16:
		f, isFloat = float64(x.Float32()), true
	case BFloat16:
		f, isFloat = float64(x.Float32()), true
	default:
		return Scalar{}, fmt.Errorf("scalar of Go type %T is not a number", v)
	}
	fail := func() (Scalar, error) {
		return Scalar{}, fmt.Errorf("scalar %v cannot be represented as %v", v, dt)
	}
	if isUint && u <= math.MaxInt64 {
		i, isUint = int64(u), false
	}
	if dt.IsFloat() {
		if !isFloat {
			f = intToFloat64(i, u, isUint, dt == F64)
		}
		var bits uint64
		ok := true
		switch dt {
		case F64:
			bits = math.Float64bits(f)
		case F32:
			f32 := float32(f)
			if math.IsInf(float64(f32), 0) && !math.IsInf(f, 0) {
				ok = false
			}
			bits = uint64(math.Float32bits(f32))
		case F16:
			bits, ok = roundBinary(f, 5, 10)
		case BF16:
			bits, ok = roundBinary(f, 8, 7)
		}
		if !ok {
			return fail()
		}
		return Scalar{dt, bits}, nil
	}
	// Integer and bool targets: the value must be integral and in range.
	if isFloat {
		if f != math.Trunc(f) || math.IsInf(f, 0) || math.IsNaN(f) {
			return fail()
		}
		switch {
		case f >= -(1<<63) && f < 1<<63:
			i = int64(f)
		case f >= 0 && f < 1<<64:
			u, isUint = uint64(f), true
		default:
			return fail()
		}
	}
	if isUint { // above MaxInt64: only u64 holds it
		if dt != U64 {
			return fail()
		}
		return Scalar{dt, u}, nil
	}
	var lo, hi int64
	switch dt {
	case Bool:
		lo, hi = 0, 1
	case I8:
		lo, hi = math.MinInt8, math.MaxInt8
	case U8:
		lo, hi = 0, math.MaxUint8
	case I16:
		lo, hi = math.MinInt16, math.MaxInt16
	case U16:
		lo, hi = 0, math.MaxUint16
	case I32:
		lo, hi = math.MinInt32, math.MaxInt32
	case U32:
		lo, hi = 0, math.MaxUint32
	case I64:
		lo, hi = math.MinInt64, math.MaxInt64
	case U64:
		lo, hi = 0, math.MaxInt64
	}
	if i < lo || i > hi {
		return fail()
	}
	mask := uint64(1)<<(8*dt.Size()) - 1
	if dt.Size() == 8 {
		mask = math.MaxUint64
	}
	return Scalar{dt, uint64(i) & mask}, nil
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
