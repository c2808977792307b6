// Package spec is what Go and the GLSL shaders share: the ids of the
// elementwise kernels' specialization constants, their modes, and the
// list of modules that make shaders writes and compiles. It is a package
// of its own so that the generator (shaders/gen) builds before any
// SPIR-V exists.
package spec

import "fmt"

// ID is the id of a specialization constant that Go and GLSL share:
// the elementwise skeleton (elementwise.glsl) declares each by the name
// Names gives it, and make shaders writes spec.glsl, which defines
// SPEC_NAME as the id, from this table. Nothing else numbers them.
type ID uint32

// The elementwise kernels' specialization constants. The op's own
// follow from Op.
const (
	Group     ID = iota // invocations per workgroup in X
	Rank                // dimensions of the piece, 1 to 8
	Pushed              // bit x: input x is a scalar in the push constants, not read
	Chunks              // 16-element chunks per block
	Aligned             // bit x: every vector load of input x is 16-byte aligned
	Inner               // bit x: input x is broadcast in dimension 0
	Mode                // which blocks a dispatch runs: MODE_ALL, ...
	RowChunks           // MODE_WHOLE: chunks per row where blocks hold several rows
	RowLen              // MODE_ROWS: the rows' length, 2 to 15
	Gather              // MODE_ROWS: bit x, input x is read row by row
	Two                 // MODE_ROWS: bit x, input x is read as two runs; bit 8+x, step 0
	RunOn               // MODE_SEAMS: bit x, input x runs on from row to row
	Op                  // the first of the op's own constants
)

// Names are the GLSL names of the shared constants, by id.
var Names = [...]string{
	Group:     "GROUP",
	Rank:      "RANK",
	Pushed:    "PUSHED",
	Chunks:    "CHUNKS",
	Aligned:   "ALIGNED",
	Inner:     "INNER",
	Mode:      "MODE",
	RowChunks: "ROWCH",
	RowLen:    "ROWLEN",
	Gather:    "GATHER",
	Two:       "TWO",
	RunOn:     "RUNON",
	Op:        "OP0",
}

// The elementwise modes: which blocks of a piece one dispatch runs
// (elementwise.glsl, MODE).
const (
	ModeAll   = 0 // every block, element by element: the general path
	ModeWhole = 1 // the blocks that lie whole in one innermost run, by vectors
	ModeSeams = 2 // beside ModeWhole, the blocks a row begins inside, by vectors
	ModeRows  = 3 // rows shorter than 16 elements, in blocks of whole rows
	ModeEnds  = 4 // beside ModeWhole, the piece's partial first and last blocks
)

// modeNames are the modes' GLSL names, by value.
var modeNames = [...]string{ModeAll: "MODE_ALL", ModeWhole: "MODE_WHOLE", ModeSeams: "MODE_SEAMS", ModeRows: "MODE_ROWS", ModeEnds: "MODE_ENDS"}

// The element ops' codes (OP_ in GLSL): the mask ops (shaders/maskops.glsl),
// the fused kernels' select, and the ops of values
// (shaders/minmaxops.glsl). The fused kernels' instructions hold a code
// in four bits: 16 codes at most.
const (
	OpEQ = iota
	OpNE
	OpLT
	OpLE
	OpAnd
	OpOr
	OpXor
	OpNot
	OpIsNaN
	OpIsInf
	OpIsFinite
	OpSelect
	OpMax   // Maximum: a or b, the greater
	OpMin   // Minimum: a or b, the lesser
	OpClamp // Clamp: Minimum(Maximum(a, b), c)
)

// opNames are the ops' GLSL names, by code.
var opNames = [...]string{OpEQ: "OP_EQ", OpNE: "OP_NE", OpLT: "OP_LT", OpLE: "OP_LE", OpAnd: "OP_AND", OpOr: "OP_OR",
	OpXor: "OP_XOR", OpNot: "OP_NOT", OpIsNaN: "OP_ISNAN", OpIsInf: "OP_ISINF", OpIsFinite: "OP_ISFINITE", OpSelect: "OP_SELECT",
	OpMax: "OP_MAX", OpMin: "OP_MIN", OpClamp: "OP_CLAMP"}

// How an op reads its elements (KEY_ in GLSL).
const (
	KeyUint = iota
	KeyInt
	KeyBool
	KeyF16
	KeyBF16
	KeyF32
	KeyF64
)

// keyNames are the keys' GLSL names, by value.
var keyNames = [...]string{KeyUint: "KEY_UINT", KeyInt: "KEY_INT", KeyBool: "KEY_BOOL", KeyF16: "KEY_F16",
	KeyBF16: "KEY_BF16", KeyF32: "KEY_F32", KeyF64: "KEY_F64"}

// RID is the id of a specialization constant of the reduction kernels
// (reduce_inner.glsl, reduce_outer.glsl, reduce_small.glsl,
// reduce_general.glsl), which declare each as SPEC_R_NAME from RNames.
// Each kernel uses the ids it needs; Go passes every id up to the
// highest one it uses, the others 0.
type RID uint32

// The reduction kernels' specialization constants.
const (
	RGroup   RID = iota // invocations per workgroup in X
	RFold               // the fold: FoldAny, FoldAll, FoldXor
	RPath               // reduce_inner, reduce_small: how rows are read (ReducePath*)
	RLong               // reduce_inner: rows hold enough vectors for the unrolled loop
	RRowVecs            // reduce_inner, ReducePathRowVecs: the vectors of each row
	RTiny               // reduce_inner, ReducePathTiny: the bytes of each row
	RVec                // reduce_outer: columns are read as aligned 16-byte vectors
	RVecs               // reduce_outer, RVec: the vectors side by side an invocation reads
	RShort              // reduce_outer, not RVec: rows shorter than a vector, one after another, read as one run
	ROwned              // reduce_outer, RVec: each invocation owns the output vectors it folds, and stores them
)

// RNames are the GLSL names of the reduction kernels' constants, by id.
var RNames = [...]string{RGroup: "GROUP", RFold: "FOLD", RPath: "PATH", RLong: "LONG", RRowVecs: "ROWVECS",
	RTiny: "TINY", RVec: "VEC", RVecs: "VECS", RShort: "SHORT",
	ROwned: "OWNED"}

// The folds (FOLD_ in GLSL): how a reduction, or a fused chain's
// terminal reduction, combines bools (shaders/reduce_fold.glsl).
// FoldNone is a chain that stores its result. The fused kernel folds
// with FoldAny and FoldAll.
const (
	FoldNone = iota
	FoldAny  // logical or: some byte is nonzero
	FoldAll  // logical and: no byte is zero
	FoldXor  // logical xor: an odd number of bytes are nonzero
)

// foldNames are the folds' GLSL names, by value.
var foldNames = [...]string{FoldNone: "FOLD_NONE", FoldAny: "FOLD_ANY", FoldAll: "FOLD_ALL", FoldXor: "FOLD_XOR"}

// The reading paths of reduce_inner.glsl and reduce_small.glsl (RPath);
// ops/reduce_plan.go says when each is taken.
const (
	ReducePathVectors    = iota // rows of whole, aligned 16-byte vectors
	ReducePathMasked            // rows of 32 bytes or more, anywhere
	ReducePathShort             // rows of fewer than 32 bytes
	ReducePathRowVecs           // rows of a few whole vectors, one invocation each
	ReducePathTiny              // rows of 1 to 15 bytes, sixteen to an output vector
	ReducePathSmallVecs         // reduce_small: contiguous rows (one column) of whole vectors
	ReducePathSmallRows         // reduce_small: contiguous rows (one column), by words
	ReducePathSmallWords        // reduce_small: columns four to a word in every row
	ReducePathSmallBytes        // reduce_small: any columns, a byte at a time
)

// reducePathNames are the paths' GLSL names, by value.
var reducePathNames = [...]string{ReducePathVectors: "PATH_VECTORS", ReducePathMasked: "PATH_MASKED",
	ReducePathShort: "PATH_SHORT", ReducePathRowVecs: "PATH_ROWVECS", ReducePathTiny: "PATH_TINY",
	ReducePathSmallVecs: "PATH_SMALL_VECS", ReducePathSmallRows: "PATH_SMALL_ROWS", ReducePathSmallWords: "PATH_SMALL_WORDS", ReducePathSmallBytes: "PATH_SMALL_BYTES"}

// ReducePathName returns path's GLSL name, as plans print it.
func ReducePathName(path uint32) string {
	if int(path) < len(reducePathNames) {
		return reducePathNames[path]
	}
	return fmt.Sprintf("PATH_%d", path)
}
