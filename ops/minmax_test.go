package ops

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/tensor"
)

// minmaxEdges are docs/specs.md#maximum-minimum-and-clamp at their
// edges: a pair of elements and the bits Maximum and Minimum give.
var minmaxEdges = []struct {
	dt            tensor.DType
	a, b, max, mn uint64
	note          string
}{
	{tensor.F32, 0x80000000, 0x00000000, 0x00000000, 0x80000000, "-0 vs +0"},
	{tensor.F32, 0x00000000, 0x80000000, 0x00000000, 0x80000000, "+0 vs -0"},
	{tensor.F32, 0x7fc00001, 0x3f800000, 0x7fc00001, 0x7fc00001, "NaN vs 1: the NaN, payload kept"},
	{tensor.F32, 0x3f800000, 0xffc00002, 0xffc00002, 0xffc00002, "1 vs -NaN"},
	{tensor.F32, 0x7fc00001, 0xffc00002, 0x7fc00001, 0x7fc00001, "two NaNs: a's"},
	{tensor.F32, 0x7f800001, 0x7f800000, 0x7f800001, 0x7f800001, "signalling NaN vs +inf"},
	{tensor.F32, 0xff800000, 0x7f800000, 0x7f800000, 0xff800000, "-inf vs +inf"},
	{tensor.F32, 0x80000001, 0x00000001, 0x00000001, 0x80000001, "-subnormal vs +subnormal"},
	{tensor.F32, 0xbf800000, 0xbf800001, 0xbf800000, 0xbf800001, "-1 vs -(1+ulp)"},
	{tensor.F16, 0x8000, 0x0000, 0x0000, 0x8000, "f16 -0 vs +0"},
	{tensor.F16, 0x0000, 0x8000, 0x0000, 0x8000, "f16 +0 vs -0"},
	{tensor.F16, 0x7e01, 0x3c00, 0x7e01, 0x7e01, "f16 NaN vs 1"},
	{tensor.F16, 0xbc00, 0xfe02, 0xfe02, 0xfe02, "f16 -1 vs -NaN"},
	{tensor.F16, 0xfc00, 0x0001, 0x0001, 0xfc00, "f16 -inf vs subnormal"},
	{tensor.BF16, 0x8000, 0x0000, 0x0000, 0x8000, "bf16 -0 vs +0"},
	{tensor.BF16, 0x0000, 0x8000, 0x0000, 0x8000, "bf16 +0 vs -0"},
	{tensor.BF16, 0x7fc1, 0xff80, 0x7fc1, 0x7fc1, "bf16 NaN vs -inf"},
	{tensor.BF16, 0xbf80, 0x3f80, 0x3f80, 0xbf80, "bf16 -1 vs 1"},
	{tensor.F64, 1 << 63, 0, 0, 1 << 63, "f64 -0 vs +0"},
	{tensor.F64, 0x7ff0000000000001, 0x3ff0000000000000, 0x7ff0000000000001, 0x7ff0000000000001, "f64 NaN, payload in the low word"},
	{tensor.F64, 0xbff0000000000001, 0xbff0000000000000, 0xbff0000000000000, 0xbff0000000000001, "f64 -(1+ulp) vs -1"},
	{tensor.I64, 1<<53 + 1, 1 << 53, 1<<53 + 1, 1 << 53, "i64 2^53+1 vs 2^53"},
	{tensor.I64, 1 << 63, 1<<63 - 1, 1<<63 - 1, 1 << 63, "i64 min vs max"},
	{tensor.U64, 1<<64 - 1, 1<<64 - 2, 1<<64 - 1, 1<<64 - 2, "u64 max vs max-1"},
	{tensor.I32, 0x80000000, 0x7fffffff, 0x7fffffff, 0x80000000, "i32 min vs max"},
	{tensor.U32, 0xffffffff, 0, 0xffffffff, 0, "u32 max vs 0"},
	{tensor.I16, 0xffff, 1, 1, 0xffff, "i16 -1 vs 1"},
	{tensor.I8, 0x80, 0x7f, 0x7f, 0x80, "i8 -128 vs 127"},
	{tensor.U8, 0xff, 0, 0xff, 0, "u8 255 vs 0"},
	{tensor.Bool, 2, 1, 1, 1, "bool 2 vs 1: true, as 1"},
	{tensor.Bool, 0, 3, 1, 0, "bool 0 vs 3"},
}

// bitsHost returns a 1-D tensor of dt holding bits, repeated to n
// elements.
func bitsHost(dt tensor.DType, bits []uint64, n int) *tensor.Host {
	h, err := tensor.New(dt, tensor.Shape{n})
	if err != nil {
		panic(err)
	}
	var b [8]byte
	for i := range n {
		binary.LittleEndian.PutUint64(b[:], bits[i%len(bits)])
		copy(h.Data[i*dt.Size():], b[:dt.Size()])
	}
	return h
}

// TestMinMaxEdges checks minmaxEdges bit for bit, on the device (each
// type's pairs repeated to 37 elements, so that they meet the vector
// path and the element path), fused in an Expr, and in cpuref.
func TestMinMaxEdges(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	byType := map[tensor.DType][4][]uint64{}
	var order []tensor.DType
	for _, c := range minmaxEdges {
		v, ok := byType[c.dt]
		if !ok {
			order = append(order, c.dt)
		}
		byType[c.dt] = [4][]uint64{append(v[0], c.a), append(v[1], c.b), append(v[2], c.max), append(v[3], c.mn)}
	}
	const n = 37
	for _, dt := range order {
		v := byType[dt]
		a, b := bitsHost(dt, v[0], n), bitsHost(dt, v[1], n)
		ta, tb := upload(t, d, a), upload(t, d, b)
		for k, op := range []*maskOp{maximumOp, minimumOp} {
			want := bitsHost(dt, v[2+k], n)
			ref := map[*maskOp]func(a, b *tensor.Host, mode string) (*tensor.Host, error){maximumOp: cpuref.Maximum, minimumOp: cpuref.Minimum}[op]
			r, err := ref(a, b, "numpy")
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(r.Data, want.Data) {
				t.Errorf("cpuref %s %v: %x, want %x", op.name, dt, r.Data, want.Data)
			}
			y, err := op.binary(ta, tb, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkAgainst(t, fmt.Sprintf("%s %v", op.name, dt), y, want)
			// op(op(a, b), a) is op(a, b), bit for bit, as a chain that
			// fuses: one op alone runs as itself.
			var e Expr
			ea := e.Input(ta)
			y, err = e.Eval(e.binary(op, e.binary(op, ea, e.Input(tb), nil), ea, nil))
			if err != nil {
				t.Fatal(err)
			}
			if !e.compiled[0].fusedWhole() {
				t.Errorf("expr %s %v: not fused", op.name, dt)
			}
			checkAgainst(t, fmt.Sprintf("expr %s %v", op.name, dt), y, want)
		}
	}
}

// TestMinMaxTypes runs Maximum, Minimum and Clamp on every element type,
// special values among random bits, in several broadcasts, with scalars
// on either side, against cpuref bit for bit.
func TestMinMaxTypes(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	rng := rand.New(rand.NewPCG(70, 71))
	shapes := [][2]tensor.Shape{{{5, 67}, {5, 67}}, {{5, 1}, {1, 67}}, {{3, 4, 5}, {4, 1}}, {{}, {33}}, {{0, 3}, {3}}}
	for di, dt := range tensor.DTypes {
		for si, s := range shapes {
			if testing.Short() && (di+si)%2 != 0 {
				continue
			}
			a, b := specialHost(rng, dt, s[0]), specialHost(rng, dt, s[1])
			ta, tb := upload(t, d, a), upload(t, d, b)
			for _, op := range []*maskOp{maximumOp, minimumOp} {
				ref := map[*maskOp]func(a, b *tensor.Host, mode string) (*tensor.Host, error){maximumOp: cpuref.Maximum, minimumOp: cpuref.Minimum}[op]
				name := fmt.Sprintf("%s %v%v %v", op.name, dt, s[0], s[1])
				want, err := ref(a, b, "numpy")
				if err != nil {
					t.Fatal(err)
				}
				y, err := op.binary(ta, tb, nil)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				checkAgainst(t, name, y, want)
				// A scalar on either side: the first element of b.
				sc := tensor.Scalar{DType: dt, Bits: leBits(b.Data[:dt.Size()])}
				if len(b.Data) == 0 {
					continue
				}
				h0 := &tensor.Host{DType: dt, Shape: tensor.Shape{}, Data: b.Data[:dt.Size()]}
				for k, args := range [][2]any{{ta, sc}, {sc, ta}} {
					x, y := a, h0
					if k == 1 {
						x, y = h0, a
					}
					want, err := ref(x, y, "numpy")
					if err != nil {
						t.Fatal(err)
					}
					got, err := op.binary(args[0], args[1], nil)
					if err != nil {
						t.Fatalf("%s scalar %d: %v", name, k, err)
					}
					checkAgainst(t, fmt.Sprintf("%s, scalar %s", name, [...]string{"b", "a"}[k]), got, want)
				}
			}
			// Clamp between two of b's elements, in either order (min
			// above max too).
			if len(b.Data) >= 2*dt.Size() {
				lo := tensor.Scalar{DType: dt, Bits: leBits(b.Data[:dt.Size()])}
				hi := tensor.Scalar{DType: dt, Bits: leBits(b.Data[dt.Size() : 2*dt.Size()])}
				for _, bounds := range [][2]tensor.Scalar{{lo, hi}, {hi, lo}} {
					want, err := cpuref.Clamp(a, bounds[0], bounds[1])
					if err != nil {
						t.Fatal(err)
					}
					y, err := Clamp(ta, bounds[0], bounds[1])
					if err != nil {
						t.Fatalf("clamp %v%v: %v", dt, s[0], err)
					}
					checkAgainst(t, fmt.Sprintf("clamp %v%v [%#x, %#x]", dt, s[0], bounds[0].Bits, bounds[1].Bits), y, want)
				}
			}
		}
	}
}

// leBits reads little-endian bytes as an integer.
func leBits(b []byte) uint64 {
	var v uint64
	for k := len(b) - 1; k >= 0; k-- {
		v = v<<8 | uint64(b[k])
	}
	return v
}

// TestClampBounds checks Clamp's conversion of its bounds and its order:
// Minimum(Maximum(x, min), max), so a min above max gives max; into an
// integer type a fractional min rounds up and a max down (Clamp-1); NaN
// stays NaN and a NaN bound gives NaN.
func TestClampBounds(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	f32 := func(v ...float32) *tensor.Host {
		h, _ := tensor.New(tensor.F32, tensor.Shape{len(v)})
		for i, x := range v {
			binary.LittleEndian.PutUint32(h.Data[4*i:], math.Float32bits(x))
		}
		return h
	}
	i32 := func(v ...int32) *tensor.Host {
		h, _ := tensor.New(tensor.I32, tensor.Shape{len(v)})
		for i, x := range v {
			binary.LittleEndian.PutUint32(h.Data[4*i:], uint32(x))
		}
		return h
	}
	nan, negZero := float32(math.NaN()), float32(math.Copysign(0, -1))
	for _, c := range []struct {
		name      string
		x         *tensor.Host
		min, max  any
		want      *tensor.Host
		checkBits bool
	}{
		{"f32 in range", f32(-2, -0.5, 0.5, 2), -1, 1, f32(-1, -0.5, 0.5, 1), true},
		{"f32 min above max gives max", f32(-2, 0, 2), 1, -1, f32(-1, -1, -1), true},
		{"f32 NaN stays", f32(nan, 3), 0, 1, f32(nan, 1), false},
		{"f32 -0 against a min of +0", f32(negZero, 0), 0.0, 1, f32(0, 0), true},
		{"f32 NaN min gives NaN", f32(1, 2), math.NaN(), 5, f32(nan, nan), false},
		{"i32 fractional bounds: ceil min, floor max", i32(-5, 0, 5), -1.5, 2.7, i32(-1, 0, 2), true},
		{"i32 typed f32 bounds", i32(-5, 0, 5), Scalar(0.5, tensor.F32), Scalar(3.5, tensor.F32), i32(1, 1, 3), true},
	} {
		y, err := Clamp(upload(t, d, c.x), c.min, c.max)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := bridge.Tensor(y).Download()
		y.Free()
		if err != nil {
			t.Fatal(err)
		}
		if c.checkBits && !bytes.Equal(got.Data, c.want.Data) {
			t.Errorf("%s: got %x, want %x", c.name, got.Data, c.want.Data)
		}
		if !c.checkBits {
			for i := range len(got.Data) / 4 {
				g, w := math.Float32frombits(binary.LittleEndian.Uint32(got.Data[4*i:])), math.Float32frombits(binary.LittleEndian.Uint32(c.want.Data[4*i:]))
				if g != w && !(math.IsNaN(float64(g)) && math.IsNaN(float64(w))) {
					t.Errorf("%s: element %d is %v, want %v", c.name, i, g, w)
				}
			}
		}
	}
}

// TestMinMaxErrors checks the rules' messages, which match ErrInvalid
// and leave nothing allocated.
func TestMinMaxErrors(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	x := upload(t, d, randomHost(rand.New(rand.NewPCG(1, 1)), tensor.F32, tensor.Shape{2, 3}))
	u := upload(t, d, randomHost(rand.New(rand.NewPCG(1, 2)), tensor.U8, tensor.Shape{3}))
	r := upload(t, d, randomHost(rand.New(rand.NewPCG(1, 3)), tensor.F32, tensor.Shape{4}))
	for _, c := range []struct {
		run  func() (*device.Tensor, error)
		want string
	}{
		{func() (*device.Tensor, error) { return Maximum(x, u) }, "maximum: a is f32 but b is u8"},
		{func() (*device.Tensor, error) { return Minimum(x, r) }, "minimum: a shape [2 3] and b shape [4] do not broadcast (axis -1: 3 vs 4)"},
		{func() (*device.Tensor, error) { return Maximum(1, 2) }, "maximum: a and b are both scalars; one must be a tensor"},
		{func() (*device.Tensor, error) { return Minimum(u, -1) }, "minimum: b scalar -1 cannot be represented as u8"},
		{func() (*device.Tensor, error) { return Maximum(x, r, WithBroadcast(BroadcastNone)) }, "maximum: broadcast none needs equal shapes: a [2 3] b [4]"},
		{func() (*device.Tensor, error) { return Clamp(u, -1, 10) }, "clamp: min scalar -1 cannot be represented as u8"},
		{func() (*device.Tensor, error) { return Clamp(u, 0, 300) }, "clamp: max scalar 300 cannot be represented as u8"},
		{func() (*device.Tensor, error) { return Clamp(u, math.NaN(), 1) }, "clamp: min scalar NaN cannot be represented as u8"},
		{func() (*device.Tensor, error) { return Clamp(u, 255.5, 300) }, "clamp: min scalar 255.5, rounded up to 256, cannot be represented as u8"},
		{func() (*device.Tensor, error) { return Clamp(u, 0, float32(-0.5)) }, "clamp: max scalar -0.5, rounded down to -1, cannot be represented as u8"},
		{func() (*device.Tensor, error) { return Clamp(x, x, 1) }, "clamp: min is a tensor; it must be a scalar"},
		{func() (*device.Tensor, error) { return Clamp(nil, 0, 1) }, "clamp: x is nil"},
		{func() (*device.Tensor, error) { return Clamp(x, "a", 1) }, "clamp: min "},
	} {
		y, err := c.run()
		if err == nil {
			y.Free()
			t.Errorf("want %q, got no error", c.want)
			continue
		}
		if !errors.Is(err, ErrInvalid) || len(err.Error()) < len(c.want) || err.Error()[:len(c.want)] != c.want {
			t.Errorf("got %q, want %q", err, c.want)
		}
	}
	var e Expr
	if err := e.Clamp(e.Input(u), -1, 10).Err(); err == nil || err.Error() != "clamp: min scalar -1 cannot be represented as u8" {
		t.Errorf("Expr.Clamp: %v", err)
	}
	if err := e.Maximum(e.Input(x), e.Input(u)).Err(); err == nil || err.Error() != "maximum: a is f32 but b is u8" {
		t.Errorf("Expr.Maximum: %v", err)
	}
}
