package cpuref

import (
	"testing"

	"github.com/vkops/vkops/tensor"
)

type reduceCase struct {
	name     string
	and      bool // ReduceLogicalAnd rather than ReduceLogicalOr
	data     *tensor.Host
	axes     []int
	keepDims bool
	want     *tensor.Host
	err      string
}

func runReduceCases(t *testing.T, cases []reduceCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := ReduceLogicalOr
			if c.and {
				f = ReduceLogicalAnd
			}
			got, err := f(c.data, c.axes, c.keepDims)
			checkResult(t, got, err, c.want, c.err)
		})
	}
}

// OpenVINO ReduceLogicalOr-1, "Examples", and
// docs/specs.md#reducelogicalor: the four [6,12,10,24] shapes, with data.
//
// data[a,b,c,d] = a%2 == 0 && b%3 == 0 && c == d%10. For every d some c
// in 0..9 equals d%10, and b = 0 passes b%3 == 0, so the expected values
// have closed forms that do not depend on how the reduction is computed.
// ReduceLogicalAnd of the negation is the negation of each result (De
// Morgan).
func TestReduceSpecExamples(t *testing.T) {
	const A, B, C, D = 6, 12, 10, 24
	p := func(a, b, c, d int) bool { return a%2 == 0 && b%3 == 0 && c == d%10 }
	data := make([]bool, 0, A*B*C*D)
	neg := make([]bool, 0, A*B*C*D)
	for a := range A {
		for b := range B {
			for c := range C {
				for d := range D {
					data = append(data, p(a, b, c, d))
					neg = append(neg, !p(a, b, c, d))
				}
			}
		}
	}
	var ab, acd, abd []bool // the closed forms, in output order
	for a := range A {
		for b := range B {
			ab = append(ab, a%2 == 0 && b%3 == 0)
		}
	}
	for a := range A {
		for c := range C {
			for d := range D {
				acd = append(acd, a%2 == 0 && c == d%10)
			}
		}
	}
	for a := range A {
		for b := range B {
			for range D {
				abd = append(abd, a%2 == 0 && b%3 == 0)
			}
		}
	}
	not := func(s []bool) []bool {
		out := make([]bool, len(s))
		for i, v := range s {
			out[i] = !v
		}
		return out
	}
	in := mk([]int{A, B, C, D}, data)
	inNeg := mk([]int{A, B, C, D}, neg)
	runReduceCases(t, []reduceCase{
		{name: "axes [2,3] keep_dims", data: in, axes: []int{2, 3}, keepDims: true, want: mk([]int{6, 12, 1, 1}, ab)},
		{name: "axes [2,3]", data: in, axes: []int{2, 3}, want: mk([]int{6, 12}, ab)},
		{name: "axes [1]", data: in, axes: []int{1}, want: mk([]int{6, 10, 24}, acd)},
		{name: "axes [-2]", data: in, axes: []int{-2}, want: mk([]int{6, 12, 24}, abd)},
		{name: "axes [3,2] order does not matter", data: in, axes: []int{3, 2}, want: mk([]int{6, 12}, ab)},
		{name: "axes [-1,-2]", data: in, axes: []int{-1, -2}, want: mk([]int{6, 12}, ab)},
		{name: "and axes [2,3] keep_dims", and: true, data: inNeg, axes: []int{2, 3}, keepDims: true, want: mk([]int{6, 12, 1, 1}, not(ab))},
		{name: "and axes [2,3]", and: true, data: inNeg, axes: []int{2, 3}, want: mk([]int{6, 12}, not(ab))},
		{name: "and axes [1]", and: true, data: inNeg, axes: []int{1}, want: mk([]int{6, 10, 24}, not(acd))},
		{name: "and axes [-2]", and: true, data: inNeg, axes: []int{-2}, want: mk([]int{6, 12, 24}, not(abd))},
	})
	// The closed forms must mix true and false, or they test little.
	for name, s := range map[string][]bool{"ab": ab, "acd": acd, "abd": abd} {
		var n int
		for _, v := range s {
			if v {
				n++
			}
		}
		if n == 0 || n == len(s) {
			t.Errorf("%s: %d of %d true; want a mix", name, n, len(s))
		}
	}
}

// OpenVINO ReduceLogicalOr-1, "Detailed Description": small cases
// worked by hand, Or against And, keep_dims and negative axes.
func TestReduceSmall(t *testing.T) {
	// [[T F F]
	//  [F F F]]
	or := mk([]int{2, 3}, bools("TFFFFF"))
	// [[T T F]
	//  [T T T]]
	and := mk([]int{2, 3}, bools("TTFTTT"))
	runReduceCases(t, []reduceCase{
		{name: "or axis 0", data: or, axes: []int{0}, want: mk([]int{3}, bools("TFF"))},
		{name: "or axis 1", data: or, axes: []int{1}, want: mk([]int{2}, bools("TF"))},
		{name: "or axis -1 keep_dims", data: or, axes: []int{-1}, keepDims: true, want: mk([]int{2, 1}, bools("TF"))},
		{name: "or axis -2 keep_dims", data: or, axes: []int{-2}, keepDims: true, want: mk([]int{1, 3}, bools("TFF"))},
		{name: "or all axes", data: or, axes: []int{0, 1}, want: mk(nil, bools("T"))},
		{name: "or all axes keep_dims", data: or, axes: []int{1, 0}, keepDims: true, want: mk([]int{1, 1}, bools("T"))},
		{name: "or all false", data: mk([]int{2, 2}, bools("FFFF")), axes: []int{0, 1}, want: mk(nil, bools("F"))},
		{name: "and axis 0", and: true, data: and, axes: []int{0}, want: mk([]int{3}, bools("TTF"))},
		{name: "and axis 1", and: true, data: and, axes: []int{1}, want: mk([]int{2}, bools("FT"))},
		{name: "and all axes", and: true, data: and, axes: []int{-2, -1}, want: mk(nil, bools("F"))},
		{name: "and all true", and: true, data: mk([]int{2, 2}, bools("TTTT")), axes: []int{0, 1}, want: mk(nil, bools("T"))},
		{name: "or over the And data", data: and, axes: []int{1}, want: mk([]int{2}, bools("TT"))},
		{name: "and over the Or data", and: true, data: or, axes: []int{0}, want: mk([]int{3}, bools("FFF"))},
		{
			// README.md, "Element types": any nonzero byte is true; the
			// output's bools are 0 or 1.
			name: "nonzero bytes", data: raw(tensor.Bool, []int{2, 2}, 0, 2, 0, 0), axes: []int{1},
			want: mk([]int{2}, bools("TF")),
		},
		{
			name: "and nonzero bytes", and: true, data: raw(tensor.Bool, []int{2, 2}, 0x80, 2, 0, 7), axes: []int{1},
			want: mk([]int{2}, bools("TF")),
		},
	})
}

// OpenVINO ReduceLogicalOr-1, "Particular cases" 1, and
// docs/specs.md#reducelogicalor: empty axes is the identity, 0-D
// included; keep_dims changes nothing.
func TestReduceEmptyAxes(t *testing.T) {
	in := mk([]int{2, 3}, bools("TFFTTF"))
	runReduceCases(t, []reduceCase{
		{name: "or", data: in, axes: nil, want: in},
		{name: "or keep_dims", data: in, axes: []int{}, keepDims: true, want: in},
		{name: "and", and: true, data: in, axes: nil, want: in},
		{name: "0-D", data: mk(nil, bools("T")), axes: nil, want: mk(nil, bools("T"))},
		{name: "0-D and", and: true, data: mk(nil, bools("F")), axes: nil, want: mk(nil, bools("F"))},
		{name: "zero-size", data: mk([]int{0, 2}, []bool{}), axes: nil, want: mk([]int{0, 2}, []bool{})},
		{name: "bytes become 0 or 1", data: raw(tensor.Bool, []int{3}, 0, 9, 0xff), axes: nil, want: mk([]int{3}, bools("FTT"))},
	})
}

// README.md, "ReduceLogicalOr": reducing over an empty set gives false
// (Or) or true (And, its identity).
func TestReduceZeroSize(t *testing.T) {
	empty := mk([]int{2, 0, 3}, []bool{})
	runReduceCases(t, []reduceCase{
		{name: "or over the zero dim", data: empty, axes: []int{1}, want: mk([]int{2, 3}, bools("FFFFFF"))},
		{name: "and over the zero dim", and: true, data: empty, axes: []int{1}, want: mk([]int{2, 3}, bools("TTTTTT"))},
		{name: "or keep_dims", data: empty, axes: []int{-2}, keepDims: true, want: mk([]int{2, 1, 3}, bools("FFFFFF"))},
		{name: "or over another dim stays empty", data: empty, axes: []int{0}, want: mk([]int{0, 3}, []bool{})},
		{name: "and over another dim stays empty", and: true, data: empty, axes: []int{2}, keepDims: true, want: mk([]int{2, 0, 1}, []bool{})},
		{name: "or everything", data: empty, axes: []int{0, 1, 2}, want: mk(nil, bools("F"))},
		{name: "and everything", and: true, data: empty, axes: []int{2, 1, 0}, want: mk(nil, bools("T"))},
		{name: "1-D empty", data: mk([]int{0}, []bool{}), axes: []int{0}, want: mk(nil, bools("F"))},
		{name: "1-D empty and", and: true, data: mk([]int{0}, []bool{}), axes: []int{-1}, keepDims: true, want: mk([]int{1}, bools("T"))},
	})
}

// OpenVINO ReduceLogicalOr-1, "Inputs" (axes unique, in [-r, r-1], data
// T_BOOL) and docs/specs.md#reducelogicalor (a 0-D input has no axes).
func TestReduceErrors(t *testing.T) {
	r3 := mk([]int{1, 2, 3}, make([]bool, 6))
	runReduceCases(t, []reduceCase{
		{name: "axis 5 rank 3", data: r3, axes: []int{5}, err: "reduce_logical_or: axis 5 is out of range for rank 3 (want -3..2)"},
		{name: "axis 3 rank 3", data: r3, axes: []int{0, 3}, err: "reduce_logical_or: axis 3 is out of range for rank 3 (want -3..2)"},
		{name: "axis -4 rank 3", data: r3, axes: []int{-4}, err: "reduce_logical_or: axis -4 is out of range for rank 3 (want -3..2)"},
		{name: "and out of range", and: true, data: r3, axes: []int{5}, err: "reduce_logical_and: axis 5 is out of range for rank 3 (want -3..2)"},
		{name: "repeat after normalising", data: r3, axes: []int{2, -1}, err: "reduce_logical_or: axis -1 repeats axis 2 (after normalising)"},
		{name: "repeat as given", data: r3, axes: []int{0, 1, 0}, err: "reduce_logical_or: axis 0 repeats axis 0 (after normalising)"},
		{name: "and repeat", and: true, data: r3, axes: []int{-3, 0}, err: "reduce_logical_and: axis 0 repeats axis -3 (after normalising)"},
		{name: "0-D axis 0", data: mk(nil, bools("T")), axes: []int{0}, err: "reduce_logical_or: axis 0 is out of range for rank 0 (a 0-D tensor has no axes)"},
		{name: "0-D axis -1", data: mk(nil, bools("T")), axes: []int{-1}, err: "reduce_logical_or: axis -1 is out of range for rank 0 (a 0-D tensor has no axes)"},
		{name: "data i8", data: mk([]int{2}, []int8{0, 1}), axes: []int{0}, err: "reduce_logical_or: data must be bool, got i8"},
		{name: "and data f32", and: true, data: mk([]int{2}, []float32{0, 1}), axes: nil, err: "reduce_logical_and: data must be bool, got f32"},
		{name: "nil data", data: nil, axes: []int{0}, err: "reduce_logical_or: data is nil"},
		{name: "malformed data", data: raw(tensor.Bool, []int{2, 2}, 1), axes: []int{0}, err: "reduce_logical_or: data: bool tensor of shape [2 2] holds 1 bytes, want 4"},
		{
			// Reducing the zero dim makes [1 2^50], too many to hold.
			name: "output too large", data: raw(tensor.Bool, []int{0, 1 << 50}), axes: []int{0},
			err: "reduce_logical_or: output: shape [1 1125899906842624] of bool: 1125899906842624 elements are too many to address",
		},
	})
}

// The output must not alias data, even for the identity.
func TestReduceDoesNotAlias(t *testing.T) {
	in := mk([]int{2}, bools("TF"))
	got, err := ReduceLogicalOr(in, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	got.Data[1] = 1
	got.Shape[0] = 5
	if in.Data[1] != 0 || in.Shape[0] != 2 {
		t.Fatalf("writing the output changed data: %v %v", in.Shape, in.Data)
	}
}
