package ops

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/tensor"
)

// TestScalarValue checks that a typed scalar's Go value converts back to
// the same bits, so that converting it to another type starts from its
// exact value. NaNs are left out: between types only their NaN-ness is
// kept, and within a type Where keeps the bits themselves.
func TestScalarValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dt := range tensor.DTypes {
		for range 1000 {
			bits := rng.Uint64()
			if size := dt.Size(); size < 8 {
				bits &= 1<<(8*size) - 1
			}
			if dt == tensor.Bool {
				bits &= 1
			}
			s := tensor.Scalar{DType: dt, Bits: bits}
			v := scalarValue(s)
			if f, ok := toFloat(v); ok && math.IsNaN(f) {
				continue
			}
			back, err := tensor.NewScalar(v, dt)
			if err != nil || back != s {
				t.Fatalf("%v bits %#x: value %v (%T) converts back to %#x, %v", dt, bits, v, v, back.Bits, err)
			}
		}
	}
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float32:
		return float64(x), true
	case float64:
		return x, true
	case tensor.Float16:
		return float64(x.Float32()), true
	case tensor.BFloat16:
		return float64(x.Float32()), true
	}
	return 0, false
}

// TestWhereScalarBits checks that a tensor.Scalar of the output's own
// type is used bit for bit, NaN payloads and signalling NaNs included,
// and that other scalars are converted as tensor.NewScalar converts their
// value: exactly, or to nearest even.
func TestWhereScalarBits(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	cond, err := device.FromSlice(d, []bool{true, false})
	if err != nil {
		t.Fatal(err)
	}
	defer cond.Free()
	for _, c := range []struct {
		dt   tensor.DType
		v    any
		want uint64
	}{
		{tensor.F32, tensor.Scalar{DType: tensor.F32, Bits: 0x7f800001}, 0x7f800001},
		{tensor.F64, tensor.Scalar{DType: tensor.F64, Bits: 0xfff0000000000123}, 0xfff0000000000123},
		{tensor.F16, tensor.Scalar{DType: tensor.F16, Bits: 0x7c01}, 0x7c01},
		{tensor.BF16, Scalar(tensor.BFloat16(0xff81), tensor.BF16), 0xffc0}, // a value: NaN, quiet, sign kept
		{tensor.F16, 0.1, 0x2e66},                                            // 0.1 to nearest f16
		{tensor.BF16, 1.00390625, 0x3f80},                                    // a tie: to even
		{tensor.BF16, Scalar(1.01171875, tensor.F32), 0x3f82},                // typed f32, then to bf16: a tie to even
		{tensor.F32, Scalar(tensor.Float16(0x3555), tensor.F16), 0x3eaaa000}, // f16 widened exactly
		{tensor.I64, uint64(math.MaxInt64), math.MaxInt64},
		{tensor.U64, Scalar(uint64(math.MaxUint64), tensor.U64), math.MaxUint64},
		{tensor.I8, Scalar(-128, tensor.I32), 0x80},
		{tensor.Bool, 1.0, 1},
	} {
		other, err := bridge.Device(d).Empty(c.dt, tensor.Shape{2})
		if err != nil {
			t.Fatal(err)
		}
		zero := make([]byte, other.Bytes())
		if err := other.Write(zero); err != nil {
			t.Fatal(err)
		}
		y, err := Where(cond, c.v, other)
		other.Free()
		if err != nil {
			t.Fatalf("%v beside %v: %v", c.v, c.dt, err)
		}
		h, err := bridge.Tensor(y).Download()
		y.Free()
		if err != nil {
			t.Fatal(err)
		}
		var got uint64
		for k := range c.dt.Size() {
			got |= uint64(h.Data[k]) << (8 * k)
		}
		if got != c.want || h.DType != c.dt {
			t.Errorf("%v beside %v: got %v bits %#x, want %#x", c.v, c.dt, h.DType, got, c.want)
		}
	}
}

// TestWhereScalarTypes checks the output type of Where of two scalars
// (docs/specs.md#where): the typed scalar's, f32 for two plain numbers,
// bool for two Go bools, and the values the output holds.
func TestWhereScalarTypes(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	cond, err := device.FromSlice(d, []bool{true, false})
	if err != nil {
		t.Fatal(err)
	}
	defer cond.Free()
	for _, c := range []struct {
		a, b any
		dt   tensor.DType
		want []byte
	}{
		{true, false, tensor.Bool, []byte{1, 0}},
		{false, true, tensor.Bool, []byte{0, 1}},
		{true, 0, tensor.F32, []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0}},
		{2, 1, tensor.F32, []byte{0, 0, 0, 0x40, 0, 0, 0x80, 0x3f}},
		{true, Scalar(7, tensor.U8), tensor.U8, []byte{1, 7}},
		{Scalar(true, tensor.Bool), 0, tensor.Bool, []byte{1, 0}},
	} {
		for _, eval := range []bool{false, true} {
			var y *device.Tensor
			if eval {
				var e Expr
				y, err = e.Eval(e.Where(cond, c.a, c.b))
			} else {
				y, err = Where(cond, c.a, c.b)
			}
			if err != nil {
				t.Fatalf("where(c, %v, %v): %v", c.a, c.b, err)
			}
			h, err := bridge.Tensor(y).Download()
			y.Free()
			if err != nil {
				t.Fatal(err)
			}
			if h.DType != c.dt || !bytes.Equal(h.Data, c.want) {
				t.Errorf("where(c, %v, %v) (Expr %v): %v %x, want %v %x", c.a, c.b, eval, h.DType, h.Data, c.dt, c.want)
			}
		}
	}
}
