package cpuref

import (
	"testing"

	"github.com/vkops/vkops/tensor"
)

// ten and sc make Where operands.
func ten(h *tensor.Host) Operand { return Operand{T: h} }

func sc(v any, dt tensor.DType) Operand {
	s, err := tensor.NewScalar(v, dt)
	if err != nil {
		panic(err)
	}
	return Operand{S: &s}
}

type whereCase struct {
	name         string
	cond         *tensor.Host
	input, other Operand
	want         *tensor.Host
	err          string
}

func runWhereCases(t *testing.T, cases []whereCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Where(c.cond, c.input, c.other)
			checkResult(t, got, err, c.want, c.err)
		})
	}
}

// PyPTO where, "调用示例" (call examples): out1, out2 and out3 with the
// values the text prints.
func TestWherePyPTOExamples(t *testing.T) {
	cond1 := mk([]int{4}, bools("TFTF"))
	cond2 := mk([]int{2, 2}, bools("TFFT"))
	runWhereCases(t, []whereCase{
		{
			name:  "out1",
			cond:  cond1,
			input: ten(mk([]int{4}, []float32{1, 2, 3, 4})),
			other: ten(mk([]int{4}, []float32{10, 20, 30, 40})),
			want:  mk([]int{4}, []float32{1, 20, 3, 40}),
		},
		{
			// Only cond is a tensor: the output has cond's shape. The
			// text prints floats, so the scalars are f32 Elements.
			name:  "out2",
			cond:  cond1,
			input: sc(1, tensor.F32),
			other: sc(0, tensor.F32),
			want:  mk([]int{4}, []float32{1, 0, 1, 0}),
		},
		{
			name:  "out3",
			cond:  cond2,
			input: ten(mk([]int{2}, []float32{1, 2})),
			other: sc(0.0, tensor.F32),
			want:  mk([]int{2, 2}, []float32{1, 0, 0, 2}),
		},
	})
}

// PyPTO where, "功能说明" (description), cases 1-3, and
// docs/specs.md#where: the output is the broadcast of all tensor
// operands, cond included. Expected values come from nested loops written out by hand.
func TestWherePyPTOBroadcast(t *testing.T) {
	const n = 20
	cond := make([]bool, n*n)     // [20,20,1]
	input := make([]float32, n*n) // [1,20,20]
	other := make([]float32, n*n) // [20,1,20]
	for a := range n {
		for b := range n {
			cond[a*n+b] = (a+2*b)%3 != 0
			input[a*n+b] = float32(a*n + b)
			other[a*n+b] = -float32(a*n + b)
		}
	}
	all := make([]float32, n*n*n)
	inputOnly := make([]float32, n*n*n) // other is the scalar 0.5
	otherOnly := make([]float32, n*n*n) // input is the scalar 0.5
	for i := range n {
		for j := range n {
			for k := range n {
				o := (i*n+j)*n + k
				if cond[i*n+j] { // cond[i][j][0]
					all[o] = input[j*n+k] // input[0][j][k]
					inputOnly[o] = input[j*n+k]
					otherOnly[o] = 0.5
				} else {
					all[o] = other[i*n+k] // other[i][0][k]
					inputOnly[o] = 0.5
					otherOnly[o] = other[i*n+k]
				}
			}
		}
	}
	c := mk([]int{n, n, 1}, cond)
	in := mk([]int{1, n, n}, input)
	ot := mk([]int{n, 1, n}, other)
	runWhereCases(t, []whereCase{
		{name: "three tensors", cond: c, input: ten(in), other: ten(ot), want: mk([]int{n, n, n}, all)},
		{name: "input and cond", cond: c, input: ten(in), other: sc(0.5, tensor.F32), want: mk([]int{n, n, n}, inputOnly)},
		{name: "other and cond", cond: c, input: sc(0.5, tensor.F32), other: ten(ot), want: mk([]int{n, n, n}, otherOnly)},
	})
}

// README.md, "Where": unlike Select, cond takes part in the broadcast and
// may widen the output; numpy rank extension is allowed.
func TestWhereBroadcast(t *testing.T) {
	runWhereCases(t, []whereCase{
		{
			name:  "cond widens",
			cond:  mk([]int{2, 1}, bools("TF")),
			input: ten(mk([]int{3}, []int16{1, 2, 3})),
			other: ten(mk([]int{3}, []int16{-1, -2, -3})),
			want:  mk([]int{2, 3}, []int16{1, 2, 3, -1, -2, -3}),
		},
		{
			name:  "rank extension of cond",
			cond:  mk([]int{3}, bools("FTF")),
			input: ten(mk([]int{2, 3}, []int16{1, 2, 3, 4, 5, 6})),
			other: sc(-7, tensor.I16),
			want:  mk([]int{2, 3}, []int16{-7, 2, -7, -7, 5, -7}),
		},
		{
			name:  "0-D cond and scalars",
			cond:  mk(nil, bools("T")),
			input: sc(3, tensor.U32),
			other: sc(4, tensor.U32),
			want:  mk(nil, []uint32{3}),
		},
		{
			name:  "0-D everything",
			cond:  mk(nil, bools("F")),
			input: ten(mk(nil, []int64{1})),
			other: ten(mk(nil, []int64{2})),
			want:  mk(nil, []int64{2}),
		},
		{
			name:  "0-D cond widened by a tensor",
			cond:  mk(nil, bools("F")),
			input: ten(mk([]int{2}, []int64{1, 2})),
			other: sc(9, tensor.I64),
			want:  mk([]int{2}, []int64{9, 9}),
		},
		{
			name:  "zero-size",
			cond:  mk([]int{0, 1}, []bool{}),
			input: ten(mk([]int{4}, []uint16{1, 2, 3, 4})),
			other: sc(0, tensor.U16),
			want:  mk([]int{0, 4}, []uint16{}),
		},
		{
			name:  "zero-size with scalars",
			cond:  mk([]int{3, 0}, []bool{}),
			input: sc(1, tensor.U16),
			other: sc(0, tensor.U16),
			want:  mk([]int{3, 0}, []uint16{}),
		},
		{
			name:  "nonzero cond bytes are true",
			cond:  raw(tensor.Bool, []int{3}, 0x80, 0, 3),
			input: sc(1, tensor.I8),
			other: sc(-1, tensor.I8),
			want:  mk([]int{3}, []int8{1, -1, 1}),
		},
		{
			name:  "cond and input clash",
			cond:  mk([]int{2, 3}, bools("TTTFFF")),
			input: ten(mk([]int{4}, []float32{1, 2, 3, 4})),
			other: sc(0, tensor.F32),
			err:   "where: cond shape [2 3] and input shape [4] do not broadcast (axis -1: 3 vs 4)",
		},
		{
			name:  "cond and other clash",
			cond:  mk([]int{2, 3}, bools("TTTFFF")),
			input: sc(0, tensor.F32),
			other: ten(mk([]int{3, 1}, []float32{1, 2, 3})),
			err:   "where: cond shape [2 3] and other shape [3 1] do not broadcast (axis -2: 2 vs 3)",
		},
		{
			// The clash is between the broadcast so far, [2 3], and other.
			name:  "third tensor clashes",
			cond:  mk([]int{2, 1}, bools("TF")),
			input: ten(mk([]int{1, 3}, []float32{1, 2, 3})),
			other: ten(mk([]int{4}, []float32{1, 2, 3, 4})),
			err:   "where: cond shape [2 1], input shape [1 3] and other shape [4] do not broadcast (axis -1: 3 vs 4)",
		},
	})
}

// README.md, "Where": scalars carry an element type, converted exactly by
// tensor.NewScalar; round to nearest even for f16 and bf16.
func TestWhereScalarConversion(t *testing.T) {
	// 0.1 is 0x2e66 in f16 and 0x3dcd in bf16, each rounded once from
	// float64 (numpy: np.float16(0.1).view(np.uint16) == 0x2e66).
	runWhereCases(t, []whereCase{
		{
			name:  "f16",
			cond:  mk([]int{2}, bools("TF")),
			input: ten(raw(tensor.F16, []int{2}, 0x00, 0x3c, 0x01, 0x7c)),
			other: sc(0.1, tensor.F16),
			want:  raw(tensor.F16, []int{2}, 0x00, 0x3c, 0x66, 0x2e),
		},
		{
			name:  "bf16",
			cond:  mk([]int{2}, bools("FT")),
			input: sc(0.1, tensor.BF16),
			other: ten(raw(tensor.BF16, []int{2}, 0x81, 0xff, 0x80, 0x3f)),
			want:  raw(tensor.BF16, []int{2}, 0x81, 0xff, 0xcd, 0x3d),
		},
		{
			name:  "-0.0 into f32",
			cond:  mk([]int{1}, bools("T")),
			input: sc(negZero(), tensor.F32),
			other: ten(mk([]int{1}, []float32{1})),
			want:  raw(tensor.F32, []int{1}, 0, 0, 0, 0x80),
		},
	})
}

func negZero() float64 {
	z := 0.0
	return -z
}

// README.md, "Where": any element type; bits are copied, not converted.
func TestWhereEveryDType(t *testing.T) {
	for _, dt := range tensor.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			size := dt.Size()
			input := operandBytes(dt, 0)
			one, err := tensor.NewScalar(1, dt)
			if err != nil {
				t.Fatal(err)
			}
			cond := raw(tensor.Bool, []int{4}, 1, 0, 0, 0xff)
			oneBytes := one.Bytes()
			want := append(append(append(append([]byte{}, input[:size]...), oneBytes...), oneBytes...), input[3*size:]...)
			got, err := Where(cond, ten(raw(dt, []int{4}, input...)), Operand{S: &one})
			checkResult(t, got, err, raw(dt, []int{4}, want...), "")

			other := operandBytes(dt, 1)
			want = append(append(append(append([]byte{}, input[:size]...), other[size:2*size]...), other[2*size:3*size]...), input[3*size:]...)
			got, err = Where(cond, ten(raw(dt, []int{4}, input...)), ten(raw(dt, []int{4}, other...)))
			checkResult(t, got, err, raw(dt, []int{4}, want...), "")
		})
	}
}

// README.md, "Where": errors for types and malformed operands.
func TestWhereErrors(t *testing.T) {
	c := mk([]int{2}, bools("TF"))
	f := ten(mk([]int{2}, []float32{1, 2}))
	i := ten(mk([]int{2}, []int32{1, 2}))
	s32 := tensor.Scalar{DType: tensor.F32}
	runWhereCases(t, []whereCase{
		{name: "cond f32", cond: mk([]int{2}, []float32{1, 0}), input: f, other: f, err: "where: cond must be bool, got f32"},
		{name: "nil cond", cond: nil, input: f, other: f, err: "where: cond is nil"},
		{name: "malformed cond", cond: raw(tensor.Bool, []int{2}, 1), input: f, other: f, err: "where: cond: bool tensor of shape [2] holds 1 bytes, want 2"},
		{name: "input i32 other f32", cond: c, input: i, other: f, err: "where: input is i32 but other is f32"},
		{name: "scalar beside tensor", cond: c, input: f, other: sc(1, tensor.F64), err: "where: input is f32 but other scalar is f64"},
		{name: "tensor beside scalar", cond: c, input: sc(1, tensor.I64), other: i, err: "where: input scalar is i64 but other is i32"},
		{name: "two scalars", cond: c, input: sc(1, tensor.I32), other: sc(1, tensor.F32), err: "where: input scalar is i32 but other scalar is f32"},
		{name: "neither", cond: c, input: Operand{}, other: f, err: "where: input is neither a tensor nor a scalar (set one of T and S)"},
		{name: "both", cond: c, input: f, other: Operand{T: f.T, S: &s32}, err: "where: other is both a tensor and a scalar (set one of T and S)"},
		{name: "malformed tensor", cond: c, input: f, other: ten(raw(tensor.F32, []int{2}, 1)), err: "where: other: f32 tensor of shape [2] holds 1 bytes, want 8"},
		{name: "invalid scalar type", cond: c, input: Operand{S: &tensor.Scalar{}}, other: f, err: "where: input scalar has invalid element type invalid"},
		{name: "scalar bits too wide", cond: c, input: Operand{S: &tensor.Scalar{DType: tensor.U8, Bits: 0x1ff}}, other: sc(1, tensor.U8), err: "where: input scalar bits 0x1ff do not fit u8"},
	})
}
