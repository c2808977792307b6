package tensor

import (
	"math"

	"github.com/x448/float16"
)

// Float16 is an IEEE binary16 value, as github.com/x448/float16 defines it.
type Float16 = float16.Float16

// BFloat16 is a bfloat16 value: the upper 16 bits of an IEEE binary32.
type BFloat16 uint16

// BF16FromFloat32 rounds f to bfloat16, to nearest with ties to even. NaN
// stays NaN (quiet, sign kept) and infinities stay infinite.
func BF16FromFloat32(f float32) BFloat16 {
	b := math.Float32bits(f)
	if f != f {
		return BFloat16(b>>16 | 0x0040)
	}
	// Adding 0x7fff plus the lowest kept bit rounds half to even; a carry
	// into the exponent is the correct result, up to infinity.
	b += 0x7fff + (b>>16)&1
	return BFloat16(b >> 16)
}

// Float32 returns b widened exactly to float32.
func (b BFloat16) Float32() float32 { return math.Float32frombits(uint32(b) << 16) }

// roundBinary rounds v to the binary format with ebits exponent bits and
// mbits stored mantissa bits, to nearest with ties to even, and returns its
// bit pattern. It rounds once, from float64, so there is no double rounding
// through float32. ok is false when a finite v overflows the format.
func roundBinary(v float64, ebits, mbits uint) (bits uint64, ok bool) {
	bias := 1<<(ebits-1) - 1
	emin, emax := 1-bias, bias
	var sign uint64
	if math.Signbit(v) {
		sign = 1 << (ebits + mbits)
		v = -v
	}
	expAll := uint64(1)<<ebits - 1
	switch {
	case math.IsNaN(v):
		return sign | expAll<<mbits | 1<<(mbits-1), true
	case math.IsInf(v, 0):
		return sign | expAll<<mbits, true
	case v == 0:
		return sign, true
	}
	_, e := math.Frexp(v) // v = f * 2^e, f in [0.5, 1)
	e--
	e = max(e, emin)
	quantum := math.Ldexp(1, e-int(mbits))
	r := math.RoundToEven(v/quantum) * quantum
	if r >= math.Ldexp(1, emax+1) {
		return 0, false
	}
	if r < math.Ldexp(1, emin) { // subnormal or zero
		return sign | uint64(r/math.Ldexp(1, emin-int(mbits))), true
	}
	_, e = math.Frexp(r)
	e--
	mant := uint64((r/math.Ldexp(1, e) - 1) * math.Ldexp(1, int(mbits)))
	return sign | uint64(e+bias)<<mbits | mant, true
}
