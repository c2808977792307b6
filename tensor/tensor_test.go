package tensor

import (
	"bytes"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/x448/float16"
)

// The table in docs/specs.md#element-types.
func TestDTypeNamesAndSizes(t *testing.T) {
	want := []struct {
		dt                      DType
		name                    string
		size                    int
		float, signed, unsigned bool
	}{
		{Bool, "bool", 1, false, false, false},
		{I8, "i8", 1, false, true, false},
		{U8, "u8", 1, false, false, true},
		{I16, "i16", 2, false, true, false},
		{U16, "u16", 2, false, false, true},
		{I32, "i32", 4, false, true, false},
		{U32, "u32", 4, false, false, true},
		{I64, "i64", 8, false, true, false},
		{U64, "u64", 8, false, false, true},
		{F16, "f16", 2, true, false, false},
		{BF16, "bf16", 2, true, false, false},
		{F32, "f32", 4, true, false, false},
		{F64, "f64", 8, true, false, false},
	}
	if len(DTypes) != len(want) {
		t.Fatalf("DTypes has %d entries, want %d", len(DTypes), len(want))
	}
	for i, w := range want {
		dt := DTypes[i]
		if dt != w.dt {
			t.Errorf("DTypes[%d] = %v, want %v", i, dt, w.dt)
		}
		if dt.String() != w.name || dt.Size() != w.size || !dt.Valid() ||
			dt.IsFloat() != w.float || dt.IsSigned() != w.signed || dt.IsUnsigned() != w.unsigned {
			t.Errorf("%v: name %q size %d valid %v float %v signed %v unsigned %v", w.name,
				dt.String(), dt.Size(), dt.Valid(), dt.IsFloat(), dt.IsSigned(), dt.IsUnsigned())
		}
	}
	for _, dt := range []DType{Invalid, F64 + 1, 200} {
		if dt.Valid() || dt.Size() != 0 {
			t.Errorf("%v: Valid %v Size %d, want false 0", dt, dt.Valid(), dt.Size())
		}
	}
	if s := Invalid.String(); s != "invalid" {
		t.Errorf("Invalid.String() = %q", s)
	}
	if s := DType(200).String(); s != "dtype(200)" {
		t.Errorf("DType(200).String() = %q", s)
	}
}

func TestParseDType(t *testing.T) {
	// Every short name round-trips.
	for _, dt := range DTypes {
		got, err := ParseDType(dt.String())
		if err != nil || got != dt {
			t.Errorf("ParseDType(%q) = %v, %v", dt.String(), got, err)
		}
	}
	for s, want := range map[string]DType{
		"float32": F32, "float": F32, "float64": F64, "double": F64,
		"float16": F16, "half": F16, "bfloat16": BF16,
		"int8": I8, "uint8": U8, "int16": I16, "uint16": U16,
		"int32": I32, "uint32": U32, "int64": I64, "uint64": U64,
		"b1": Bool, " Float32 ": F32, "BF16": BF16, "\tint8\n": I8,
	} {
		got, err := ParseDType(s)
		if err != nil || got != want {
			t.Errorf("ParseDType(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "f8", "int", "complex64", "invalid", "float 32"} {
		got, err := ParseDType(s)
		if err == nil || got != Invalid {
			t.Errorf("ParseDType(%q) = %v, %v; want an error", s, got, err)
		} else if !strings.Contains(err.Error(), "unknown element type") {
			t.Errorf("ParseDType(%q): error %q", s, err)
		}
	}
}

func TestShapeValidate(t *testing.T) {
	big := math.MaxInt/2 + 1
	for _, c := range []struct {
		s   Shape
		err string // "" for valid
	}{
		{nil, ""},
		{Shape{}, ""},
		{Shape{2, 3}, ""},
		{Shape{0}, ""},
		{Shape{math.MaxInt}, ""},
		{Shape{0, math.MaxInt}, ""},
		{Shape{math.MaxInt, 1, 1}, ""},
		{Shape{-1}, "shape [-1]: dimension 0 is negative (-1)"},
		{Shape{2, -3}, "shape [2 -3]: dimension 1 is negative (-3)"},
		{Shape{0, -3}, "shape [0 -3]: dimension 1 is negative (-3)"},
		{Shape{big, 2}, "shape [4611686018427387904 2]: element count overflows"},
		{Shape{1 << 32, 1 << 32}, "shape [4294967296 4294967296]: element count overflows"},
		// The overflow is an error wherever a zero dimension stands: the
		// shape's other dimensions must still mean something.
		{Shape{big, 2, 0}, "shape [4611686018427387904 2 0]: element count overflows"},
		{Shape{0, big, 2}, "shape [0 4611686018427387904 2]: element count overflows"},
	} {
		err := c.s.Validate()
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%v: unexpected error %v", c.s, err)
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("%v: error %v, want %q", c.s, err, c.err)
		}
	}
}

func TestNumElementsAndStrides(t *testing.T) {
	for _, c := range []struct {
		s       Shape
		n       int
		strides []int
	}{
		{nil, 1, []int{}},
		{Shape{}, 1, []int{}},
		{Shape{5}, 5, []int{1}},
		{Shape{2, 3, 4}, 24, []int{12, 4, 1}},
		{Shape{5, 0, 7}, 0, []int{0, 7, 1}},
		{Shape{1, 1}, 1, []int{1, 1}},
	} {
		if n := c.s.NumElements(); n != c.n {
			t.Errorf("%v.NumElements() = %d, want %d", c.s, n, c.n)
		}
		if st := c.s.Strides(); !Shape(st).Equal(c.strides) {
			t.Errorf("%v.Strides() = %v, want %v", c.s, st, c.strides)
		}
		if c.s.Rank() != len(c.s) {
			t.Errorf("%v.Rank() = %d", c.s, c.s.Rank())
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("NumElements of [-1] did not panic")
		}
	}()
	Shape{-1}.NumElements()
}

func TestShapeEqualCloneString(t *testing.T) {
	if !Shape(nil).Equal(Shape{}) || (Shape{1}).Equal(Shape{1, 1}) || (Shape{2, 3}).Equal(Shape{2, 4}) {
		t.Error("Equal is wrong")
	}
	s := Shape{2, 3}
	c := s.Clone()
	c[0] = 9
	if s[0] != 2 {
		t.Error("Clone aliases its receiver")
	}
	if c := Shape(nil).Clone(); c == nil || len(c) != 0 {
		t.Errorf("Shape(nil).Clone() = %#v, want an empty non-nil Shape", c)
	}
	if got := (Shape{2, 3, 4}).String(); got != "[2 3 4]" {
		t.Errorf("String() = %q", got)
	}
	if got := Shape(nil).String(); got != "[]" {
		t.Errorf("0-D String() = %q", got)
	}
}

// README.md, "Select" step 1 and "Where": numpy broadcasting; the clash
// axis counts from the end and the innermost clash comes first.
func TestBroadcast(t *testing.T) {
	for _, c := range []struct {
		in    []Shape
		want  Shape
		clash string
	}{
		{nil, Shape{}, ""},
		{[]Shape{{2, 3}}, Shape{2, 3}, ""},
		{[]Shape{{2, 3}, {3}}, Shape{2, 3}, ""},
		{[]Shape{{1}, {5}}, Shape{5}, ""},
		{[]Shape{{}, {2, 3}}, Shape{2, 3}, ""},
		{[]Shape{{}, {}}, Shape{}, ""},
		{[]Shape{{2, 1, 4}, {3, 1}}, Shape{2, 3, 4}, ""},
		{[]Shape{{2, 1}, {1, 3}}, Shape{2, 3}, ""},
		{[]Shape{{1, 20, 20}, {20, 1, 20}, {20, 20, 1}}, Shape{20, 20, 20}, ""}, // PyPTO where's example
		{[]Shape{{0}, {1}}, Shape{0}, ""},
		{[]Shape{{1}, {0}}, Shape{0}, ""},
		{[]Shape{{0, 3}, {3}}, Shape{0, 3}, ""},
		{[]Shape{{0}, {5}}, nil, "axis -1: 0 vs 5"},
		{[]Shape{{2, 3}, {4}}, nil, "axis -1: 3 vs 4"},
		{[]Shape{{2, 3}, {4, 3}}, nil, "axis -2: 2 vs 4"},
		{[]Shape{{2, 3}, {4, 5}}, nil, "axis -1: 3 vs 5"},
		{[]Shape{{7, 2, 3}, {4, 1}}, nil, "axis -2: 2 vs 4"},
		// A is the broadcast of the shapes before B: [2 3] here.
		{[]Shape{{2, 1}, {1, 3}, {4}}, nil, "axis -1: 3 vs 4"},
		{[]Shape{{3}, {2, 1}, {3, 3}}, nil, "axis -2: 2 vs 3"},
	} {
		got, clash := Broadcast(c.in...)
		switch {
		case c.clash == "" && clash != nil:
			t.Errorf("Broadcast%v: clash %v", c.in, clash)
		case c.clash == "" && (got == nil || !got.Equal(c.want)):
			t.Errorf("Broadcast%v = %v, want %v", c.in, got, c.want)
		case c.clash != "" && (clash == nil || clash.String() != c.clash || got != nil):
			t.Errorf("Broadcast%v = %v, %v; want clash %q", c.in, got, clash, c.clash)
		}
	}
	// The result never aliases an input.
	a := Shape{2, 3}
	got, _ := Broadcast(a)
	got[0] = 9
	if a[0] != 2 {
		t.Error("Broadcast aliases its input")
	}
	// The clash fields, not just the string.
	_, clash := Broadcast(Shape{5, 2, 3}, Shape{4, 1})
	if *clash != (Clash{Axis: -2, A: 2, B: 4}) {
		t.Errorf("clash = %+v", *clash)
	}
}

// Select-1's broadcasting rules, step 2 (oneDNN Graph's text, and
// docs/specs.md#broadcasting): one-way broadcasting.
func TestFitsOneWay(t *testing.T) {
	for _, c := range []struct {
		src, dst Shape
		clash    string // "" when it fits
	}{
		{Shape{4, 5}, Shape{2, 3, 4, 5}, ""},
		{Shape{3, 1, 5}, Shape{2, 3, 4, 5}, ""},
		{Shape{3, 5}, Shape{2, 3, 4, 5}, "axis -2: 3 vs 4"},
		{Shape{}, Shape{2, 3}, ""},
		{Shape{}, Shape{}, ""},
		{Shape{1}, Shape{0}, ""},
		{Shape{0}, Shape{0}, ""},
		{Shape{0}, Shape{1}, "axis -1: 0 vs 1"},
		{Shape{2, 3}, Shape{2, 3}, ""},
		{Shape{1, 3}, Shape{2, 3}, ""},
		{Shape{2, 3}, Shape{1, 3}, "axis -2: 2 vs 1"},
		{Shape{2, 4}, Shape{3, 5}, "axis -1: 4 vs 5"}, // innermost first
		// Rank excess never fits, even with all ones: one-way broadcasting
		// cannot remove dimensions.
		{Shape{2, 3}, Shape{3}, "rank 2 > 1"},
		{Shape{1, 1, 1}, Shape{5, 5}, "rank 3 > 2"},
		{Shape{1}, Shape{}, "rank 1 > 0"},
	} {
		clash := FitsOneWay(c.src, c.dst)
		switch {
		case c.clash == "" && clash != nil:
			t.Errorf("FitsOneWay(%v, %v) = %v, want nil", c.src, c.dst, clash)
		case c.clash != "" && (clash == nil || clash.String() != c.clash):
			t.Errorf("FitsOneWay(%v, %v) = %v, want %q", c.src, c.dst, clash, c.clash)
		}
	}
	if c := FitsOneWay(Shape{1, 1, 1}, Shape{5, 5}); !c.Rank || c.A != 3 || c.B != 2 {
		t.Errorf("rank clash = %+v", *c)
	}
}

func TestBroadcastStrides(t *testing.T) {
	for _, c := range []struct {
		src, dst Shape
		want     []int
	}{
		{Shape{3, 1, 5}, Shape{2, 3, 4, 5}, []int{0, 5, 0, 1}},
		{Shape{4, 5}, Shape{2, 3, 4, 5}, []int{0, 0, 5, 1}},
		{Shape{}, Shape{2, 3}, []int{0, 0}},
		{Shape{2, 3}, Shape{2, 3}, []int{3, 1}},
		{Shape{}, Shape{}, []int{}},
		{Shape{1, 1}, Shape{1, 1}, []int{0, 0}},
	} {
		if got := BroadcastStrides(c.src, c.dst); !Shape(got).Equal(c.want) {
			t.Errorf("BroadcastStrides(%v, %v) = %v, want %v", c.src, c.dst, got, c.want)
		}
	}
}

// README.md, "Element types": bf16 from f32 rounds to nearest even and
// keeps NaN a NaN.
func TestBF16FromFloat32(t *testing.T) {
	for _, c := range []struct {
		name string
		in   uint32
		want BFloat16
	}{
		{"one", 0x3f800000, 0x3f80},
		{"below half rounds down", 0x3f807fff, 0x3f80},
		{"above half rounds up", 0x3f808001, 0x3f81},
		{"tie to even stays (even)", 0x3f808000, 0x3f80},
		{"tie to even goes up (odd)", 0x3f818000, 0x3f82},
		{"negative tie to even stays", 0xbf808000, 0xbf80},
		{"negative tie to even goes up", 0xbf818000, 0xbf82},
		{"carry into exponent", 0x3fff8000, 0x4000},
		{"carry into exponent above half", 0x3fffc000, 0x4000},
		{"largest that stays finite", 0x7f7f7fff, 0x7f7f},
		{"MaxFloat32 overflows to Inf", 0x7f7fffff, 0x7f80},
		{"tie at the top overflows to Inf", 0x7f7f8000, 0x7f80},
		{"-MaxFloat32 overflows to -Inf", 0xff7fffff, 0xff80},
		{"Inf", 0x7f800000, 0x7f80},
		{"-Inf", 0xff800000, 0xff80},
		{"+0", 0x00000000, 0x0000},
		{"-0", 0x80000000, 0x8000},
		{"smallest subnormal rounds to 0", 0x00000001, 0x0000},
		{"smallest negative subnormal rounds to -0", 0x80000001, 0x8000},
		{"subnormal tie stays (even)", 0x00008000, 0x0000},
		{"subnormal tie goes up (odd)", 0x00018000, 0x0002},
		{"subnormal above half", 0x00008001, 0x0001},
		{"largest subnormal becomes smallest normal", 0x007fffff, 0x0080},
		{"quiet NaN", 0x7fc00000, 0x7fc0},
		{"negative quiet NaN", 0xffc00000, 0xffc0},
		// A NaN whose payload lies only in the dropped bits would
		// truncate to Inf; it must stay NaN, made quiet.
		{"signaling NaN, low payload", 0x7f800001, 0x7fc0},
		{"negative signaling NaN, low payload", 0xff800001, 0xffc0},
		{"NaN payload kept where it fits", 0x7fa12345, 0x7fe1},
		{"NaN that would round up into the sign", 0x7fffffff, 0x7fff},
	} {
		got := BF16FromFloat32(math.Float32frombits(c.in))
		if got != c.want {
			t.Errorf("%s: BF16FromFloat32(%#08x) = %#04x, want %#04x", c.name, c.in, uint16(got), uint16(c.want))
		}
	}
	// Every bf16 widens exactly to f32 and comes back unchanged, NaNs
	// apart (they come back quiet).
	for b := range 1 << 16 {
		bf := BFloat16(b)
		f := bf.Float32()
		if math.Float32bits(f) != uint32(b)<<16 {
			t.Fatalf("%#04x.Float32() = %#08x", b, math.Float32bits(f))
		}
		got := BF16FromFloat32(f)
		if f != f {
			if g := got.Float32(); g == g || math.Signbit(float64(g)) != math.Signbit(float64(f)) {
				t.Fatalf("NaN %#04x became %#04x", b, uint16(got))
			}
			continue
		}
		if got != bf {
			t.Fatalf("round trip of %#04x gave %#04x", b, uint16(got))
		}
	}
}

// float32Samples calls f with float32 bit patterns chosen to exercise a
// conversion to a format with mbits stored mantissa bits and the given
// exponent range: for every value of that format the value itself, the
// midpoint to its successor (a tie) and the float32s just either side,
// both signs; then a stride through all 2^32 patterns and random ones.
// A float32 holds each midpoint exactly, as both formats are narrower.
func float32Samples(t *testing.T, ebits, mbits uint, f func(uint32)) {
	nbits := 1 + ebits + mbits
	inf := uint64(1)<<(ebits+mbits) - uint64(1)<<mbits // +Inf's bits
	value := func(b uint64) float64 {                  // the format's value for b, b <= inf
		exp := int(b >> mbits)
		mant := float64(b & (1<<mbits - 1))
		bias := 1<<(ebits-1) - 1
		if exp == 0 {
			return math.Ldexp(mant, 1-bias-int(mbits))
		}
		// Inf's bit pattern evaluates to 2^(emax+1), the value that
		// would follow the largest finite one.
		return math.Ldexp(1+mant/math.Ldexp(1, int(mbits)), exp-bias)
	}
	for b := uint64(0); b < inf; b++ {
		lo, hi := value(b), value(b+1)
		for _, x := range []float64{lo, (lo + hi) / 2} {
			v := float32(x)
			if float64(v) != x {
				t.Fatalf("%d-bit format: %g (from %#x) is not exact in float32", nbits, x, b)
			}
			for _, w := range []float32{v, math.Nextafter32(v, float32(math.Inf(1))), math.Nextafter32(v, 0)} {
				f(math.Float32bits(w))
				f(math.Float32bits(w) | 1<<31)
			}
		}
	}
	step := uint64(997)
	if testing.Short() {
		step = 65521
	}
	for u := uint64(0); u < 1<<32; u += step {
		f(uint32(u))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 20 {
		f(r.Uint32())
	}
}

// roundBinary for f16 against github.com/x448/float16, whose Fromfloat32
// is checked against all 2^32 inputs upstream. A float32 converts exactly
// to float64, so the two must agree on every non-NaN float32, except that
// roundBinary reports overflow where float16 gives infinity.
func TestRoundBinaryF16(t *testing.T) {
	var n int
	float32Samples(t, 5, 10, func(u uint32) {
		f := math.Float32frombits(u)
		if f != f {
			return
		}
		n++
		want := float16.Fromfloat32(f)
		got, ok := roundBinary(float64(f), 5, 10)
		finite := !math.IsInf(float64(f), 0)
		switch {
		case !ok && !(finite && want.IsInf(0)):
			t.Fatalf("roundBinary(%g) overflowed; float16 gives %#04x", f, want.Bits())
		case ok && (uint64(want.Bits()) != got || finite && want.IsInf(0)):
			t.Fatalf("roundBinary(%g = %#08x) = %#04x, float16 gives %#04x", f, u, got, want.Bits())
		}
	})
	t.Logf("%d float32 values agree", n)
	// NaN stays NaN, quiet, with its sign.
	for _, v := range []float64{math.NaN(), -math.NaN(), math.Float64frombits(0x7ff0000000000001)} {
		got, ok := roundBinary(v, 5, 10)
		if !ok || !float16.Frombits(uint16(got)).IsNaN() || !float16.Frombits(uint16(got)).IsQuietNaN() ||
			(got>>15 == 1) != math.Signbit(v) {
			t.Errorf("roundBinary(NaN %#x) = %#04x, %v", math.Float64bits(v), got, ok)
		}
	}
	// Rounding once from float64 avoids double rounding: 1 + 2^-11 + 2^-40
	// is above the f16 tie, but float32 would round it to the tie itself,
	// and then to even, 1.0.
	v := 1 + math.Ldexp(1, -11) + math.Ldexp(1, -40)
	if got, _ := roundBinary(v, 5, 10); got != 0x3c01 {
		t.Errorf("roundBinary(1+2^-11+2^-40) = %#04x, want 0x3c01", got)
	}
	if float16.Fromfloat32(float32(v)).Bits() != 0x3c00 {
		t.Error("the double-rounding example no longer shows double rounding")
	}
}

// roundBinary for bf16 against BF16FromFloat32, which rounds the same way
// from float32 with integer arithmetic.
func TestRoundBinaryBF16(t *testing.T) {
	float32Samples(t, 8, 7, func(u uint32) {
		f := math.Float32frombits(u)
		if f != f {
			return
		}
		want := BF16FromFloat32(f)
		got, ok := roundBinary(float64(f), 8, 7)
		wantInf := math.IsInf(float64(want.Float32()), 0) && !math.IsInf(float64(f), 0)
		switch {
		case !ok && !wantInf:
			t.Fatalf("roundBinary(%g) overflowed; BF16FromFloat32 gives %#04x", f, uint16(want))
		case ok && (uint64(want) != got || wantInf):
			t.Fatalf("roundBinary(%g = %#08x) = %#04x, BF16FromFloat32 gives %#04x", f, u, got, uint16(want))
		}
	})
}

// README.md, "Where": a scalar converts exactly or is an error.
func TestNewScalar(t *testing.T) {
	negZero := math.Copysign(0, -1)
	for _, c := range []struct {
		v    any
		dt   DType
		want uint64
		err  bool
	}{
		// docs/specs.md#where's examples of values a type cannot hold.
		{-1, U8, 0, true},
		{300, I8, 0, true},
		{math.NaN(), I32, 0, true},
		{float32(math.NaN()), U8, 0, true},
		{1e6, F16, 0, true},
		{2.5, I32, 0, true},
		{2.5, Bool, 0, true},
		{math.Inf(1), I64, 0, true},
		// f16's range: 65504 is its largest finite value; 65520 is the
		// tie with 65536 and rounds to even, which overflows.
		{65504.0, F16, 0x7bff, false},
		{65519.0, F16, 0x7bff, false},
		{65520.0, F16, 0, true},
		{-65520.0, F16, 0, true},
		{math.Inf(-1), F16, 0xfc00, false},
		{0.1, F16, 0x2e66, false},
		{0.1, BF16, 0x3dcd, false},
		{float32(0.1), BF16, 0x3dcd, false},
		{negZero, F16, 0x8000, false},
		{negZero, F32, 0x80000000, false},
		{negZero, I32, 0, false}, // integral: -0 is 0
		{1e39, F32, 0, true},     // overflows f32
		{1 << 24, F32, 0x4b800000, false},
		{1<<24 + 1, F32, 0x4b800000, false}, // tie to even
		{1<<24 + 3, F32, 0x4b800002, false}, // tie to even, upwards
		{float32(1.5), F64, math.Float64bits(1.5), false},
		{Float16(0x3c00), F32, 0x3f800000, false},
		{BFloat16(0x4049), F64, math.Float64bits(float64(math.Float32frombits(0x40490000))), false},
		{1e300, BF16, 0, true},
		// Integers in and out of range, two's complement bits.
		{127, I8, 0x7f, false},
		{128, I8, 0, true},
		{-128, I8, 0x80, false},
		{-129, I8, 0, true},
		{-1, I8, 0xff, false},
		{int8(-5), I16, 0xfffb, false},
		{uint8(200), I8, 0, true},
		{255, U8, 0xff, false},
		{256, U8, 0, true},
		{math.MaxUint32, U32, 0xffffffff, false},
		{-1, I64, math.MaxUint64, false},
		{int64(math.MinInt64), I64, 1 << 63, false},
		{uint64(math.MaxUint64), U64, math.MaxUint64, false},
		{uint64(math.MaxUint64), I64, 0, true},
		{uint(1) << 63, U64, 1 << 63, false},
		{-1, U64, 0, true},
		{float64(1 << 63), U64, 1 << 63, false},
		{float64(1 << 63), I64, 0, true},
		{-float64(1 << 63), I64, 1 << 63, false},
		{float64(1 << 64), U64, 0, true},
		{3.0, U16, 3, false},
		{uint16(65535), F16, 0, true}, // rounds to 65536
		// Bool holds 0 and 1 only.
		{true, Bool, 1, false},
		{false, Bool, 0, false},
		{1, Bool, 1, false},
		{2, Bool, 0, true},
		{true, F32, 0x3f800000, false},
		// Not a number, or no type.
		{"1", F32, 0, true},
		{nil, F32, 0, true},
		{1, Invalid, 0, true},
	} {
		got, err := NewScalar(c.v, c.dt)
		switch {
		case c.err && err == nil:
			t.Errorf("NewScalar(%v %T, %v) = %#x, want an error", c.v, c.v, c.dt, got.Bits)
		case !c.err && err != nil:
			t.Errorf("NewScalar(%v %T, %v): %v", c.v, c.v, c.dt, err)
		case !c.err && (got.Bits != c.want || got.DType != c.dt):
			t.Errorf("NewScalar(%v %T, %v) = %v %#x, want %#x", c.v, c.v, c.dt, got.DType, got.Bits, c.want)
		}
	}
	// NaN into a float type stays NaN.
	for _, dt := range []DType{F16, BF16, F32, F64} {
		s, err := NewScalar(math.NaN(), dt)
		if err != nil {
			t.Fatalf("NaN into %v: %v", dt, err)
		}
		h := &Host{DType: dt, Shape: Shape{}, Data: s.Bytes()}
		if isNaN := map[DType]func() bool{
			F16:  func() bool { v, _ := ToSlice[Float16](h); return v[0].IsNaN() },
			BF16: func() bool { v, _ := ToSlice[BFloat16](h); f := v[0].Float32(); return f != f },
			F32:  func() bool { v, _ := ToSlice[float32](h); return v[0] != v[0] },
			F64:  func() bool { v, _ := ToSlice[float64](h); return v[0] != v[0] },
		}[dt]; !isNaN() {
			t.Errorf("NaN into %v gave %#x", dt, s.Bits)
		}
	}
}

// An integer converts to a float type with one rounding, to nearest even,
// however large it is. math/big rounds the exact value once to the
// format's precision; the tests stay below f16's overflow and, as integers,
// clear of every subnormal range.
func TestNewScalarIntegersRoundOnce(t *testing.T) {
	formats := []struct {
		dt   DType
		prec uint
		bits func(*big.Float) uint64
	}{
		{F16, 11, func(x *big.Float) uint64 { f, _ := x.Float32(); return uint64(float16.Fromfloat32(f).Bits()) }},
		{BF16, 8, func(x *big.Float) uint64 { f, _ := x.Float32(); return uint64(math.Float32bits(f) >> 16) }},
		{F32, 24, func(x *big.Float) uint64 { f, _ := x.Float32(); return uint64(math.Float32bits(f)) }},
		{F64, 53, func(x *big.Float) uint64 { f, _ := x.Float64(); return math.Float64bits(f) }},
	}
	check := func(v any, exact *big.Int) {
		t.Helper()
		for _, fm := range formats {
			r := new(big.Float).SetMode(big.ToNearestEven).SetPrec(fm.prec).SetInt(exact)
			if fm.dt == F16 && new(big.Float).Abs(r).Cmp(big.NewFloat(65504)) > 0 {
				continue // overflow: covered in TestNewScalar
			}
			want := fm.bits(r) // r has prec bits: it converts exactly
			got, err := NewScalar(v, fm.dt)
			if err != nil || got.Bits != want {
				t.Errorf("NewScalar(%v %T, %v) = %#x, %v; want %#x", v, v, fm.dt, got.Bits, err, want)
			}
		}
	}
	// Double rounding through float64 would get these wrong: each is just
	// above a tie of the narrow format by less than float64 resolves.
	check(int64(1<<60+1<<36+1), big.NewInt(1<<60+1<<36+1))         // f32 0x5d800001
	check(-int64(1<<60+1<<36+1), big.NewInt(-(1<<60 + 1<<36 + 1))) // f32 0xdd800001
	check(int64(1<<60+1<<52+1), big.NewInt(1<<60+1<<52+1))         // bf16 0x5d81
	check(uint64(1<<63+1<<39+1), new(big.Int).SetUint64(1<<63+1<<39+1))
	check(int64(math.MinInt64), big.NewInt(math.MinInt64))
	check(uint64(math.MaxUint64), new(big.Int).SetUint64(math.MaxUint64))
	check(int64(math.MaxInt64), big.NewInt(math.MaxInt64))
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		u := r.Uint64() >> r.IntN(64) // every magnitude
		check(u, new(big.Int).SetUint64(u))
		i := int64(r.Uint64()) >> r.IntN(64)
		check(i, big.NewInt(i))
	}
	if got, _ := NewScalar(int64(1<<60+1<<36+1), F32); got.Bits != 0x5d800001 {
		t.Errorf("2^60+2^36+1 to f32 = %#x, want 0x5d800001", got.Bits)
	}
}

func TestScalarBytes(t *testing.T) {
	for _, c := range []struct {
		s    Scalar
		want []byte
	}{
		{Scalar{I32, 0x01020304}, []byte{4, 3, 2, 1}},
		{Scalar{Bool, 1}, []byte{1}},
		{Scalar{F16, 0x3c00}, []byte{0x00, 0x3c}},
		{Scalar{U64, math.MaxUint64}, bytes.Repeat([]byte{0xff}, 8)},
		{Scalar{Invalid, 7}, []byte{}},
	} {
		if got := c.s.Bytes(); !bytes.Equal(got, c.want) {
			t.Errorf("%v.Bytes() = %v, want %v", c.s, got, c.want)
		}
	}
}

// roundTrip checks FromSlice and ToSlice for one element type: the
// element type, the shape, the little-endian bytes of the first element,
// and that the values come back bit for bit.
func roundTrip[T Element](t *testing.T, dt DType, vals []T, first []byte) {
	t.Helper()
	if got := DTypeOf[T](); got != dt {
		t.Errorf("DTypeOf = %v, want %v", got, dt)
	}
	h, err := FromSlice(vals, 2, len(vals)/2)
	if err != nil {
		t.Fatalf("%v: FromSlice: %v", dt, err)
	}
	if h.DType != dt || !h.Shape.Equal(Shape{2, len(vals) / 2}) || len(h.Data) != len(vals)*dt.Size() {
		t.Fatalf("%v: FromSlice gave %v %v with %d bytes", dt, h.DType, h.Shape, len(h.Data))
	}
	if err := h.Check(); err != nil {
		t.Fatalf("%v: %v", dt, err)
	}
	if !bytes.Equal(h.Data[:dt.Size()], first) {
		t.Errorf("%v: first element's bytes %v, want %v", dt, h.Data[:dt.Size()], first)
	}
	got, err := ToSlice[T](h)
	if err != nil {
		t.Fatalf("%v: ToSlice: %v", dt, err)
	}
	// Compare through the bytes so that NaNs compare by their bits.
	again, err := FromSlice(got, len(got))
	if err != nil || !bytes.Equal(again.Data, h.Data) {
		t.Errorf("%v: round trip gave %v, want %v", dt, again.Data, h.Data)
	}
	// The copies are independent of the caller's slices.
	h.Data[0] ^= 1
	if again2, _ := FromSlice(vals, len(vals)); bytes.Equal(again2.Data, h.Data) {
		t.Errorf("%v: FromSlice aliases its input", dt)
	}
}

// README.md, "Element types and their host form": little-endian, bool as
// one byte 0 or 1.
func TestFromSliceToSlice(t *testing.T) {
	roundTrip(t, Bool, []bool{true, false, false, true}, []byte{1})
	roundTrip(t, I8, []int8{-2, 127, -128, 0}, []byte{0xfe})
	roundTrip(t, U8, []uint8{0xab, 0, 255, 1}, []byte{0xab})
	roundTrip(t, I16, []int16{-2, 1, math.MaxInt16, math.MinInt16}, []byte{0xfe, 0xff})
	roundTrip(t, U16, []uint16{0x1234, 0, 1, 0xffff}, []byte{0x34, 0x12})
	roundTrip(t, I32, []int32{-2, 1, 2, 3}, []byte{0xfe, 0xff, 0xff, 0xff})
	roundTrip(t, U32, []uint32{0x01020304, 5, 6, 7}, []byte{4, 3, 2, 1})
	roundTrip(t, I64, []int64{-2, math.MaxInt64, math.MinInt64, 0}, []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	roundTrip(t, U64, []uint64{0x0102030405060708, 0, 1, math.MaxUint64}, []byte{8, 7, 6, 5, 4, 3, 2, 1})
	roundTrip(t, F16, []Float16{0x3c00, 0x7e01, 0x8000, 0x7c00}, []byte{0x00, 0x3c})
	roundTrip(t, BF16, []BFloat16{0x3f80, 0xff81, 0x8000, 0x0001}, []byte{0x80, 0x3f})
	roundTrip(t, F32, []float32{1, math.Float32frombits(0x7fa00001), float32(math.Copysign(0, -1)), float32(math.Inf(-1))}, []byte{0, 0, 0x80, 0x3f})
	roundTrip(t, F64, []float64{1, math.Float64frombits(0xfff0000000000001), math.Copysign(0, -1), 5e-324}, []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f})
}

func TestFromSliceToSliceEdges(t *testing.T) {
	// No shape means 1-D; an explicit empty one means 0-D.
	h, err := FromSlice([]float32{7})
	if err != nil || !h.Shape.Equal(Shape{1}) {
		t.Errorf("FromSlice without shape: %v, %v", h, err)
	}
	h, err = FromSlice([]float32{7}, []int{}...)
	if err != nil || h.Shape == nil || h.Shape.Rank() != 0 || h.Len() != 1 {
		t.Errorf("FromSlice 0-D: %v, %v", h, err)
	}
	h, err = FromSlice([]int32{}, 0, 3)
	if err != nil || !h.Shape.Equal(Shape{0, 3}) || len(h.Data) != 0 {
		t.Errorf("FromSlice zero-size: %v, %v", h, err)
	}
	if v, err := ToSlice[int32](h); err != nil || len(v) != 0 {
		t.Errorf("ToSlice zero-size: %v, %v", v, err)
	}
	if _, err := FromSlice([]int32{1, 2, 3}, 2, 2); err == nil || err.Error() != "3 elements do not fill shape [2 2]" {
		t.Errorf("FromSlice too short: %v", err)
	}
	if _, err := FromSlice([]int32{1}, -1); err == nil {
		t.Error("FromSlice accepted a negative dimension")
	}
	// Any nonzero byte reads as a true bool.
	b, err := ToSlice[bool](&Host{DType: Bool, Shape: Shape{3}, Data: []byte{0, 2, 0xff}})
	if err != nil || b[0] || !b[1] || !b[2] {
		t.Errorf("ToSlice bool: %v, %v", b, err)
	}
	if _, err := ToSlice[float32](&Host{DType: F64, Shape: Shape{1}, Data: make([]byte, 8)}); err == nil || err.Error() != "tensor holds f64, not f32" {
		t.Errorf("ToSlice wrong type: %v", err)
	}
	if _, err := ToSlice[float32](&Host{DType: F32, Shape: Shape{2}, Data: make([]byte, 4)}); err == nil {
		t.Error("ToSlice accepted a short tensor")
	}
}

func TestNewAndCheck(t *testing.T) {
	shape := Shape{2, 3}
	h, err := New(F32, shape)
	if err != nil || len(h.Data) != 24 || h.Check() != nil || h.Len() != 6 {
		t.Fatalf("New(f32, [2 3]) = %v, %v", h, err)
	}
	shape[0] = 9
	if h.Shape[0] != 2 {
		t.Error("New aliases its shape")
	}
	for _, c := range []struct {
		h   *Host
		err string
	}{
		{&Host{DType: Invalid, Shape: Shape{1}, Data: []byte{0}}, "invalid element type invalid"},
		{&Host{DType: I16, Shape: Shape{2}, Data: []byte{0, 0, 0}}, "i16 tensor of shape [2] holds 3 bytes, want 4"},
		{&Host{DType: I16, Shape: Shape{-2}}, "shape [-2]: dimension 0 is negative (-2)"},
		{&Host{DType: F64, Shape: Shape{1 << 46}}, "shape [70368744177664] of f64: 70368744177664 elements are too many to address"},
	} {
		if err := c.h.Check(); err == nil || err.Error() != c.err {
			t.Errorf("Check() = %v, want %q", err, c.err)
		}
	}
}

// CanonicalBools makes every nonzero byte 1 and leaves zeros, at every
// position of a word and in the tail past the last whole word.
func TestCanonicalBools(t *testing.T) {
	for n := range 20 {
		for v := range 256 {
			for at := range n {
				b := make([]byte, n)
				for i := range b {
					b[i] = byte(i % 2)
				}
				b[at] = byte(v)
				CanonicalBools(b)
				for i, got := range b {
					want := byte(i % 2)
					if i == at {
						want = min(byte(v), 1)
					}
					if got != want {
						t.Fatalf("n=%d, byte %d set to %d: byte %d is %d, want %d", n, at, v, i, got, want)
					}
				}
			}
		}
	}
}

// Bytes views a slice's memory in place, little-endian.
func TestBytes(t *testing.T) {
	s := []uint32{0x04030201, 0x08070605}
	b := Bytes(s)
	if !bytes.Equal(b, []byte{1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Fatalf("Bytes = %v", b)
	}
	b[0] = 9
	if s[0] != 0x04030209 {
		t.Error("Bytes is a copy, not a view")
	}
	if Bytes([]float64{}) != nil {
		t.Error("Bytes of an empty slice is not nil")
	}
}

// BenchmarkFromSliceBool is the conversion the issue found at 45-86x a
// memmove on random bools: now a copy of the bytes.
func BenchmarkFromSliceBool(b *testing.B) {
	data := make([]bool, 16<<20)
	for i := range data {
		data[i] = i*2654435761>>13&1 == 1
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := FromSlice(data); err != nil {
			b.Fatal(err)
		}
	}
}
