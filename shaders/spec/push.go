package spec

import (
	"fmt"
	"reflect"
	"strings"
	"unicode"
)

// A kernel family's push constants are declared once, here, as a Go
// struct of uint32 fields, arrays of them and arrays of [2]uint32
// (uvec2s, at offsets that are multiples of 8): Go fills the struct, and
// make shaders writes the GLSL block's members from it into spec.glsl
// (PUSH_NAME), so that neither side counts words by hand and
// check-shaders proves them in step. Push-constant blocks use std430
// layout, where uint members and uint arrays pack as the Go struct does.

// Grid is what every reduction kernel's push constants begin with: the
// invocations the dispatch runs and the width of its grid, which the
// recording sets once it has spread the workgroups.
type Grid struct {
	N       uint32 // invocations
	GroupsX uint32 // workgroups in X of the grid
}

// ReduceInnerPush is reduce_inner.glsl's push constants.
type ReduceInnerPush struct {
	Grid
	FirstWord  uint32 // the binding word of invocation 0 (vector with PATH_TINY)
	Words      uint32 // output words covered (vectors with PATH_TINY)
	PerInv     uint32 // words per invocation, 1 when Chunks > 1
	Chunks     uint32 // invocations per word, each taking one chunk of every row
	ChunkBytes uint32 // bytes per chunk, a multiple of 16
	InSkip     uint32 // binding byte where row 0 starts
	RowLen     uint32 // bytes of each row inside this dispatch
	Rows       uint32 // rows in this dispatch
	OutSkip    uint32 // binding byte of row 0's output
	Tail       uint32 // rows from row 0 that exist at all (padding after)
	Whole      uint32 // 1: every row lies entirely in this dispatch
}

// ReduceOuterPush is reduce_outer.glsl's push constants.
type ReduceOuterPush struct {
	Grid
	FirstUnit   uint32 // the binding unit of invocation 0
	Units       uint32 // output units covered
	PerInv      uint32 // units per invocation, a multiple of 4 (of VECS with VEC)
	Blocks      uint32 // row blocks per unit
	BlockRows   uint32 // rows per block
	Rows        uint32 // rows in this dispatch
	CSpan       uint32 // output bytes per batch in this dispatch
	Batches     uint32 // batches in this dispatch
	RowStride   uint32 // input bytes from one row to the next
	BatchStride uint32 // input bytes from one batch to the next
	InSkip      uint32 // binding byte of batch 0, row 0, column 0
	OutSkip     uint32 // binding byte of batch 0, column 0's output
	Tail        uint32 // output bytes from OutSkip that exist at all
	Whole       uint32 // 1: the batches' rows all lie in this dispatch
}

// ReduceSmallPush is reduce_small.glsl's push constants: a whole pass,
// its input viewed as [B, Rows, Cols] bytes from its binding's first
// byte, and its output as [B, Cols].
type ReduceSmallPush struct {
	Grid
	Outputs uint32 // output bytes, B * Cols
	Rows    uint32 // rows folded into each output byte
	Cols    uint32 // output bytes per batch, and input bytes per row
}

// GeneralRank is the most dimensions reduce_general.glsl takes.
const GeneralRank = 16

// ReduceGeneralPush is reduce_general.glsl's push constants.
type ReduceGeneralPush struct {
	Grid
	First    uint32              // the dispatch's first input element
	InSkip   uint32              // binding byte of input element First
	OutFirst uint32              // the first output element the output binding holds
	OutCount uint32              // output elements the output binding holds
	OutSkip  uint32              // binding byte of output element OutFirst
	Rank     uint32              // dimensions of the data, innermost first in Dims
	Reduced  uint32              // bit d: dimension d is reduced
	Dims     [GeneralRank]uint32 // the data's shape, innermost first
}

// MaxRank is the most dimensions of an elementwise kernel's piece.
const MaxRank = 8

// MaxOperands is the most operands of an elementwise kernel: its inputs
// and its output.
const MaxOperands = 5

// ElementwisePush is elementwise.glsl's push constants, for every op and
// number of inputs: Base has room for the most operands, and FoldLen and
// FoldKeep are there for the ops that do not fold too, so that one
// layout serves all.
type ElementwisePush struct {
	Dims     [MaxRank]uint32     // the piece's shape, innermost first
	Magic    [MaxRank]uint32     // Dims[d] as a reciprocal: see div
	Shifts   [2]uint32           // and its shift, byte d%4 of word d/4
	Masks    uint32              // bit 8*x+d: input x is broadcast in dimension d
	Base     [MaxOperands]uint32 // first element of each input, then the output, in their bindings
	GroupsX  uint32              // workgroups in X of the grid
	Skip     uint32              // elements of the piece before the dispatch's first block
	Scalar   [2][2]uint32        // uvec2s: the last two inputs' bits when they are pushed
	FoldLen  uint32              // FOLD_ROWS: element e folds into output (e / FoldLen) % FoldKeep
	FoldKeep uint32              // FOLD_ROWS: the outputs
}

// ExpandPush is expand.glsl's push constants.
type ExpandPush struct {
	Vecs    uint32 // output vectors this dispatch writes
	GroupsX uint32 // workgroups in X of the grid
	First   uint32 // the element of the output at the binding's first byte
	R       uint32 // elements in a row
	Magic   uint32 // R as a reciprocal, with Shift: see div
	Shift   uint32
	Base    uint32 // source element 0's index in its binding
	Last    uint32 // the source's last element
}

// CopyPush is copy.glsl's push constants: N vectors to copy.
type CopyPush struct{ Grid }

// pushLayouts are the push-constant structs by their GLSL macro's name.
var pushLayouts = []struct {
	name string
	v    any
}{
	{"PUSH_REDUCE_INNER", ReduceInnerPush{}},
	{"PUSH_REDUCE_OUTER", ReduceOuterPush{}},
	{"PUSH_REDUCE_SMALL", ReduceSmallPush{}},
	{"PUSH_REDUCE_GENERAL", ReduceGeneralPush{}},
	{"PUSH_ELEMENTWISE", ElementwisePush{}},
	{"PUSH_EXPAND", ExpandPush{}},
	{"PUSH_COPY", CopyPush{}},
}

// pushMembers returns the GLSL members of struct v, embedded structs
// flattened, each named as its Go field with a lower-case first letter.
func pushMembers(v reflect.Type) string {
	var b strings.Builder
	for i := range v.NumField() {
		f := v.Field(i)
		name := []rune(f.Name)
		name[0] = unicode.ToLower(name[0])
		switch {
		case f.Anonymous:
			b.WriteString(pushMembers(f.Type))
		case f.Type.Kind() == reflect.Uint32:
			fmt.Fprintf(&b, " uint %s;", string(name))
		case f.Type.Kind() == reflect.Array && f.Type.Elem().Kind() == reflect.Uint32:
			fmt.Fprintf(&b, " uint %s[%d];", string(name), f.Type.Len())
		case f.Type.Kind() == reflect.Array && f.Type.Elem() == reflect.TypeOf([2]uint32{}):
			fmt.Fprintf(&b, " uvec2 %s[%d];", string(name), f.Type.Len())
		default:
			panic(fmt.Sprintf("spec: push field %s.%s is %v: want uint32, or an array of uint32 or [2]uint32", v.Name(), f.Name, f.Type))
		}
	}
	return b.String()
}
