package cpuref

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vkops/vkops/tensor"
)

// mk builds a host tensor from data; a nil shape means 0-D (FromSlice
// alone would make it 1-D). It panics on error, as the tables that call it
// are built before any test runs.
func mk[T tensor.Element](shape []int, data []T) *tensor.Host {
	if shape == nil {
		shape = []int{}
	}
	h, err := tensor.FromSlice(data, shape...)
	if err != nil {
		panic(err)
	}
	return h
}

// bools turns "TF.." into []bool, which keeps masks in tables readable.
func bools(s string) []bool {
	b := make([]bool, len(s))
	for i, c := range s {
		b[i] = c == 'T'
	}
	return b
}

// raw builds a host tensor straight from its bytes, for bit patterns that
// Go values cannot spell (NaN payloads) and for malformed tensors.
func raw(dt tensor.DType, shape []int, data ...byte) *tensor.Host {
	return &tensor.Host{DType: dt, Shape: shape, Data: data}
}

// iota32 returns n int32s counting up from start.
func iota32(start, n int) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = int32(start + i)
	}
	return s
}

// sameHost reports how got differs from want (element type, shape, or
// bytes), or "" when they are identical. Comparing bytes makes every check
// bit-exact.
func sameHost(got, want *tensor.Host) string {
	switch {
	case got == nil:
		return "got nil tensor"
	case got.DType != want.DType:
		return "dtype " + got.DType.String() + ", want " + want.DType.String()
	case !got.Shape.Equal(want.Shape):
		return "shape " + got.Shape.String() + ", want " + want.Shape.String()
	case !bytes.Equal(got.Data, want.Data):
		return "data differs"
	}
	return ""
}

type selectCase struct {
	name            string
	cond, then, els *tensor.Host
	mode            string
	want            *tensor.Host // nil when an error is wanted
	err             string       // the exact message, or a prefix ending in "..."
}

func runSelectCases(t *testing.T, cases []selectCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Select(c.cond, c.then, c.els, c.mode)
			checkResult(t, got, err, c.want, c.err)
		})
	}
}

// checkResult compares an op's result with the wanted tensor or error.
func checkResult(t *testing.T, got *tensor.Host, err error, want *tensor.Host, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if err == nil {
			t.Fatalf("got %v %v, want error %q", got.DType, got.Shape, wantErr)
		}
		if p, ok := strings.CutSuffix(wantErr, "..."); ok {
			if !strings.HasPrefix(err.Error(), p) {
				t.Fatalf("error %q, want prefix %q", err, p)
			}
		} else if err.Error() != wantErr {
			t.Fatalf("error\n  %q\nwant\n  %q", err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if d := sameHost(got, want); d != "" {
		t.Fatalf("%s\n got %v %v %v\nwant %v %v %v", d, got.DType, got.Shape, got.Data, want.DType, want.Shape, want.Data)
	}
}

// OpenVINO Select-1's older text, "Example": the worked 3x2 case.
func TestSelectLegacyExample(t *testing.T) {
	cond := mk([]int{3, 2}, bools("FFTFTT"))
	then := []int32{-1, 0, 1, 2, 3, 4}
	els := []int32{11, 10, 9, 8, 7, 6}
	want := []int32{11, 10, 1, 8, 3, 4}
	for _, mode := range []string{"", "numpy", "none", "pdpd"} {
		got, err := Select(cond, mk([]int{3, 2}, then), mk([]int{3, 2}, els), mode)
		checkResult(t, got, err, mk([]int{3, 2}, want), "")
	}
	// The same values as floats: T2 in oneDNN Graph's Select-1 is
	// f32/f16/bf16.
	f := func(s []int32) []float32 {
		out := make([]float32, len(s))
		for i, v := range s {
			out[i] = float32(v)
		}
		return out
	}
	got, err := Select(cond, mk([]int{3, 2}, f(then)), mk([]int{3, 2}, f(els)), "numpy")
	checkResult(t, got, err, mk([]int{3, 2}, f(want)), "")
}

// oneDNN Graph's Select-1, "Broadcasting rules", step 2
// (docs/specs.md#select): cond {4,5} and {3,1,5} fit {2,3,4,5} one way.
// The expected values come from nested loops over the four dimensions,
// written out by hand.
func TestSelectCondOneWay(t *testing.T) {
	shape := []int{2, 3, 4, 5}
	then := mk(shape, iota32(0, 120))
	els := mk(shape, iota32(1000, 120))

	c45 := make([]bool, 4*5)
	for k := range 4 {
		for l := range 5 {
			c45[k*5+l] = (k*5+l)%3 == 0
		}
	}
	c315 := make([]bool, 3*5)
	for j := range 3 {
		for l := range 5 {
			c315[j*5+l] = (j+l)%2 == 0
		}
	}
	want45 := make([]int32, 120)
	want315 := make([]int32, 120)
	for i := range 2 {
		for j := range 3 {
			for k := range 4 {
				for l := range 5 {
					n := ((i*3+j)*4+k)*5 + l
					want45[n], want315[n] = int32(1000+n), int32(1000+n)
					if c45[k*5+l] {
						want45[n] = int32(n)
					}
					if c315[j*5+l] {
						want315[n] = int32(n)
					}
				}
			}
		}
	}
	runSelectCases(t, []selectCase{
		{name: "cond{4,5}", cond: mk([]int{4, 5}, c45), then: then, els: els, mode: "numpy", want: mk(shape, want45)},
		{name: "cond{3,1,5}", cond: mk([]int{3, 1, 5}, c315), then: then, els: els, mode: "numpy", want: mk(shape, want315)},
		{name: "cond{3,1,5} pdpd", cond: mk([]int{3, 1, 5}, c315), then: then, els: els, mode: "pdpd", want: mk(shape, want315)},
		{
			name: "cond{3,5} invalid",
			cond: mk([]int{3, 5}, make([]bool, 15)), then: then, els: els, mode: "numpy",
			err: "select: cond shape [3 5] cannot be broadcast one way to [2 3 4 5] (axis -2: 3 vs 4)",
		},
	})
}

// README.md, "Select", auto_broadcast = "numpy": then and else broadcast
// each other; cond fits the result one way and never widens it.
func TestSelectNumpy(t *testing.T) {
	runSelectCases(t, []selectCase{
		{
			name: "then and else widen each other",
			cond: mk([]int{3}, bools("TFT")),
			then: mk([]int{2, 1}, []int32{10, 20}),
			els:  mk([]int{1, 3}, []int32{1, 2, 3}),
			want: mk([]int{2, 3}, []int32{10, 2, 10, 20, 2, 20}),
		},
		{
			name: "else rank-extended",
			cond: mk([]int{2, 2}, bools("TFFT")),
			then: mk([]int{2, 2}, []int32{1, 2, 3, 4}),
			els:  mk([]int{2}, []int32{-1, -2}),
			want: mk([]int{2, 2}, []int32{1, -2, -1, 4}),
		},
		{
			name: "cond rank-extended and size-1",
			cond: mk([]int{2, 1}, bools("FT")),
			then: mk([]int{2, 3}, iota32(0, 6)),
			els:  mk([]int{2, 3}, iota32(10, 6)),
			want: mk([]int{2, 3}, []int32{10, 11, 12, 3, 4, 5}),
		},
		{
			name: "then and else clash",
			cond: mk(nil, bools("T")),
			then: mk([]int{2, 3}, iota32(0, 6)),
			els:  mk([]int{4}, iota32(0, 4)),
			err:  "select: then shape [2 3] and else shape [4] do not broadcast (axis -1: 3 vs 4)",
		},
		{
			name: "clash reported innermost first",
			cond: mk(nil, bools("T")),
			then: mk([]int{2, 3}, iota32(0, 6)),
			els:  mk([]int{4, 5}, iota32(0, 20)),
			err:  "select: then shape [2 3] and else shape [4 5] do not broadcast (axis -1: 3 vs 5)",
		},
		{
			// numpy would give [2 3]; the text makes cond one way.
			name: "cond may not widen the rank",
			cond: mk([]int{1, 3}, bools("TFT")),
			then: mk([]int{3}, iota32(0, 3)),
			els:  mk([]int{3}, iota32(0, 3)),
			err:  "select: cond shape [1 3] cannot be broadcast one way to [3] (rank 2 > 1)",
		},
		{
			name: "cond may not widen a dimension",
			cond: mk([]int{2, 3}, bools("TFTFTF")),
			then: mk([]int{1, 3}, iota32(0, 3)),
			els:  mk([]int{1, 3}, iota32(0, 3)),
			err:  "select: cond shape [2 3] cannot be broadcast one way to [1 3] (axis -2: 2 vs 1)",
		},
		{
			name: "empty mode is numpy",
			cond: mk([]int{2}, bools("FT")),
			then: mk(nil, []int32{7}),
			els:  mk([]int{2}, []int32{8, 9}),
			mode: "",
			want: mk([]int{2}, []int32{8, 7}),
		},
	})
}

// README.md, "Select", auto_broadcast = "none" and "pdpd".
func TestSelectNoneAndPDPD(t *testing.T) {
	runSelectCases(t, []selectCase{
		{
			name: "none equal shapes",
			cond: mk([]int{2}, bools("TF")), then: mk([]int{2}, []int8{1, 2}), els: mk([]int{2}, []int8{3, 4}),
			mode: "none", want: mk([]int{2}, []int8{1, 4}),
		},
		{
			name: "none 0-D",
			cond: mk(nil, bools("F")), then: mk(nil, []int8{1}), els: mk(nil, []int8{3}),
			mode: "none", want: mk(nil, []int8{3}),
		},
		{
			name: "none cond differs",
			cond: mk([]int{2}, bools("TF")), then: mk([]int{3}, []int8{1, 2, 3}), els: mk([]int{3}, []int8{4, 5, 6}),
			mode: "none", err: "select: broadcast none needs equal shapes: cond [2] then [3] else [3]",
		},
		{
			name: "none else differs",
			cond: mk([]int{3}, bools("TFT")), then: mk([]int{3}, []int8{1, 2, 3}), els: mk([]int{1}, []int8{4}),
			mode: "none", err: "select: broadcast none needs equal shapes: cond [3] then [3] else [1]",
		},
		{
			name: "pdpd else and cond fit then",
			cond: mk([]int{2, 1}, bools("TF")),
			then: mk([]int{2, 3}, iota32(0, 6)),
			els:  mk([]int{3}, []int32{-1, -2, -3}),
			mode: "pdpd", want: mk([]int{2, 3}, []int32{0, 1, 2, -1, -2, -3}),
		},
		{
			name: "pdpd 0-D then",
			cond: mk(nil, bools("F")), then: mk(nil, []int32{1}), els: mk(nil, []int32{2}),
			mode: "pdpd", want: mk(nil, []int32{2}),
		},
		{
			// numpy would give [2 3]; pdpd keeps then's shape.
			name: "pdpd else may not widen then",
			cond: mk(nil, bools("T")), then: mk([]int{3}, iota32(0, 3)), els: mk([]int{2, 3}, iota32(0, 6)),
			mode: "pdpd", err: "select: else shape [2 3] cannot be broadcast one way to [3] (rank 2 > 1)",
		},
		{
			name: "pdpd else dimension",
			cond: mk(nil, bools("T")), then: mk([]int{1, 3}, iota32(0, 3)), els: mk([]int{2, 3}, iota32(0, 6)),
			mode: "pdpd", err: "select: else shape [2 3] cannot be broadcast one way to [1 3] (axis -2: 2 vs 1)",
		},
		{
			name: "pdpd cond checked after else",
			cond: mk([]int{4}, bools("TTTT")), then: mk([]int{3}, iota32(0, 3)), els: mk([]int{3}, iota32(0, 3)),
			mode: "pdpd", err: "select: cond shape [4] cannot be broadcast one way to [3] (axis -1: 4 vs 3)",
		},
	})
}

// README.md, "Select": 0-D tensors are valid everywhere, zero-size
// dimensions give an empty output, and a nonzero cond byte is true
// ("Element types": any nonzero byte read as true).
func TestSelectEdgeShapes(t *testing.T) {
	runSelectCases(t, []selectCase{
		{
			name: "0-D cond true selects then entirely",
			cond: mk(nil, bools("T")), then: mk([]int{2, 2}, iota32(0, 4)), els: mk([]int{2, 2}, iota32(10, 4)),
			want: mk([]int{2, 2}, iota32(0, 4)),
		},
		{
			name: "0-D cond false selects else entirely",
			cond: mk(nil, bools("F")), then: mk([]int{2, 2}, iota32(0, 4)), els: mk([]int{2, 2}, iota32(10, 4)),
			want: mk([]int{2, 2}, iota32(10, 4)),
		},
		{
			name: "all 0-D",
			cond: mk(nil, bools("T")), then: mk(nil, []float64{1.5}), els: mk(nil, []float64{2.5}),
			want: mk(nil, []float64{1.5}),
		},
		{
			name: "0-D then and else, cond shapes nothing",
			cond: mk([]int{2}, bools("TF")), then: mk(nil, []int32{1}), els: mk(nil, []int32{2}),
			err: "select: cond shape [2] cannot be broadcast one way to [] (rank 1 > 0)",
		},
		{
			name: "0-D else",
			cond: mk([]int{3}, bools("FTF")), then: mk([]int{3}, iota32(1, 3)), els: mk(nil, []int32{0}),
			want: mk([]int{3}, []int32{0, 2, 0}),
		},
		{
			name: "zero-size then",
			cond: mk([]int{1}, bools("T")), then: mk([]int{0, 3}, []int32{}), els: mk([]int{3}, iota32(0, 3)),
			want: mk([]int{0, 3}, []int32{}),
		},
		{
			name: "zero-size beside size 1",
			cond: mk([]int{2, 0}, []bool{}), then: mk([]int{2, 1}, iota32(0, 2)), els: mk([]int{2, 0}, []int32{}),
			want: mk([]int{2, 0}, []int32{}),
		},
		{
			name: "zero does not broadcast with 3",
			cond: mk(nil, bools("T")), then: mk([]int{2, 0}, []int32{}), els: mk([]int{2, 3}, iota32(0, 6)),
			err: "select: then shape [2 0] and else shape [2 3] do not broadcast (axis -1: 0 vs 3)",
		},
		{
			name: "nonzero cond bytes are true",
			cond: raw(tensor.Bool, []int{4}, 0, 2, 0xff, 1),
			then: mk([]int{4}, []uint8{1, 2, 3, 4}), els: mk([]int{4}, []uint8{5, 6, 7, 8}),
			want: mk([]int{4}, []uint8{5, 2, 3, 4}),
		},
	})
}

// README.md, "Select": errors for types, modes and malformed operands.
func TestSelectErrors(t *testing.T) {
	f := mk([]int{2}, []float32{1, 2})
	i := mk([]int{2}, []int32{1, 2})
	c := mk([]int{2}, bools("TF"))
	runSelectCases(t, []selectCase{
		{name: "cond f32", cond: f, then: f, els: f, err: "select: cond must be bool, got f32"},
		{name: "then i32 else f32", cond: c, then: i, els: f, err: "select: then is i32 but else is f32"},
		{name: "unknown mode", cond: c, then: f, els: f, mode: "foo", err: `select: unknown broadcast "foo" (want none, numpy or pdpd)`},
		{name: "mode is case-sensitive", cond: c, then: f, els: f, mode: "NUMPY", err: `select: unknown broadcast "NUMPY" (want none, numpy or pdpd)`},
		{name: "nil cond", cond: nil, then: f, els: f, err: "select: cond is nil"},
		{name: "nil then", cond: c, then: nil, els: f, err: "select: then is nil"},
		{name: "nil else", cond: c, then: f, els: nil, err: "select: else is nil"},
		{name: "short data", cond: c, then: raw(tensor.F32, []int{2}, 0, 0, 0), els: f, err: "select: then: f32 tensor of shape [2] holds 3 bytes, want 8"},
		{name: "invalid dtype", cond: c, then: f, els: raw(tensor.Invalid, []int{2}), err: "select: else: invalid element type invalid"},
		{name: "negative dim", cond: raw(tensor.Bool, []int{-1}), then: f, els: f, err: "select: cond: shape [-1]: dimension 0 is negative (-1)"},
		{
			// [2^30 2^30 0] is a valid zero-size shape: 2^60 fits an int.
			name: "huge zero-size output",
			cond: mk(nil, bools("T")),
			then: raw(tensor.Bool, []int{1 << 30, 1, 0}), els: raw(tensor.Bool, []int{1, 1 << 30, 0}),
			want: raw(tensor.Bool, []int{1 << 30, 1 << 30, 0}),
		},
		{
			// Valid operands can broadcast to a shape that is not: 2^80.
			name: "output too large to hold",
			cond: mk(nil, bools("T")),
			then: raw(tensor.Bool, []int{1 << 40, 1, 0}), els: raw(tensor.Bool, []int{1, 1 << 40, 0}),
			err: "select: output: shape [1099511627776 1099511627776 0]: element count overflows",
		},
	})
}

// floatSpecials maps each float type to four bit patterns per operand
// that a conversion would disturb: NaN payloads (signaling ones
// included), -0.0, subnormals and infinities. Select must copy them.
var floatSpecials = map[tensor.DType][2][]uint64{
	tensor.F16:  {{0x7c01, 0x8000, 0xfe55, 0x0001}, {0x7c00, 0xfc01, 0x3c00, 0x8001}},
	tensor.BF16: {{0xff81, 0x8000, 0x7fc1, 0x0001}, {0x7f80, 0xff81, 0x3f80, 0x8001}},
	tensor.F32:  {{0x7fa00001, 0x80000000, 0xffc12345, 0x00000001}, {0x7f800000, 0xff800001, 0x3f800000, 0x80000001}},
	tensor.F64: {
		{0x7ff0000000000001, 0x8000000000000000, 0xfff8dead0000beef, 0x0000000000000001},
		{0x7ff0000000000000, 0xfff0000000000001, 0x3ff0000000000000, 0x8000000000000001},
	},
}

// operandBytes returns four elements of dt as bytes: the float specials
// where dt has them, else distinct bytes (0/1 for bool), side 0 or 1
// choosing which of two distinct sets.
func operandBytes(dt tensor.DType, side int) []byte {
	size := dt.Size()
	b := make([]byte, 4*size)
	switch {
	case floatSpecials[dt][side] != nil:
		for k, bits := range floatSpecials[dt][side] {
			for j := range size {
				b[k*size+j] = byte(bits >> (8 * j))
			}
		}
	case dt == tensor.Bool:
		for k := range b {
			b[k] = byte((k + side) % 2)
		}
	default:
		for k := range b {
			b[k] = byte(0xa0 + 0x40*side + k)
		}
	}
	return b
}

// README.md, "Select": any element type, and select copies bits.
func TestSelectEveryDType(t *testing.T) {
	for _, dt := range tensor.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			size := dt.Size()
			then, els := operandBytes(dt, 0), operandBytes(dt, 1)
			cond := raw(tensor.Bool, []int{4}, 1, 0, 0, 0xff)
			want := make([]byte, 0, 4*size)
			for k, fromThen := range []bool{true, false, false, true} {
				src := els
				if fromThen {
					src = then
				}
				want = append(want, src[k*size:(k+1)*size]...)
			}
			for _, mode := range []string{"none", "numpy", "pdpd"} {
				got, err := Select(cond, raw(dt, []int{4}, then...), raw(dt, []int{4}, els...), mode)
				checkResult(t, got, err, raw(dt, []int{4}, want...), "")
			}

			// A 0-D else repeats its one element: its first special.
			got, err := Select(cond, raw(dt, []int{4}, then...), raw(dt, nil, els[:size]...), "numpy")
			want = append(append(append(append([]byte{}, then[:size]...), els[:size]...), els[:size]...), then[3*size:]...)
			checkResult(t, got, err, raw(dt, []int{4}, want...), "")
		})
	}
}

// Select must return a fresh tensor that aliases none of its inputs, so a
// caller may write to it.
func TestSelectDoesNotAlias(t *testing.T) {
	then := mk([]int{2}, []float32{1, 2})
	els := mk([]int{2}, []float32{3, 4})
	cond := mk([]int{2}, bools("TT"))
	got, err := Select(cond, then, els, "none")
	if err != nil {
		t.Fatal(err)
	}
	for i := range got.Data {
		got.Data[i] = 0xff
	}
	got.Shape[0] = 7
	if v, _ := tensor.ToSlice[float32](then); v[0] != 1 || v[1] != 2 || then.Shape[0] != 2 {
		t.Fatalf("writing the output changed then: %v %v", then.Shape, v)
	}
}
