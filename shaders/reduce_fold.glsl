// The reductions' folds, which every reduction kernel includes: the GLSL
// side of ops' reduceOp descriptors, selected by the spec constant FOLD.
// The kernels read bytes in words and vectors and call these hooks; a
// new fold is a new case in each hook here, and no kernel changes.
//
// A fold marks each byte (mark), accumulates the marks of a run of bytes
// byte lane by byte lane (accum), and reads the run's answer from them
// (runFound, or lanes for one answer per byte lane). FOLD_ANY marks
// nonzero bytes and FOLD_ALL zero ones, accumulating with or: one mark
// settles the run (SETTLES), so reading may stop there, and FOLD_ALL's
// answer is negated (all = no zero byte). FOLD_XOR marks nonzero bytes
// 0x01 and accumulates with xor: the answer is the parity of the count.
//
// An output that several invocations share starts at the fold over
// nothing, filled by the host (0 for FOLD_ANY and FOLD_XOR, 1 for
// FOLD_ALL), and each invocation combines what it found into it
// (COMBINE) only where it found something.
#include "spec.glsl"

layout(local_size_x_id = SPEC_R_GROUP) in;
layout(constant_id = SPEC_R_FOLD) const uint FOLD = FOLD_ANY;
const bool ALL = FOLD == FOLD_ALL;
const bool XOR = FOLD == FOLD_XOR;
// SETTLES: one marked byte settles a run's answer.
const bool SETTLES = !XOR;

// zeroBytes maps each byte of x to 0x80 if it is zero and to 0 if not,
// exactly per byte (no borrow between bytes).
uint zeroBytes(uint x) { return ~(((x & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) | x | 0x7F7F7F7Fu); }
uvec4 zeroBytes4(uvec4 x) { return ~(((x & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) | x | 0x7F7F7F7Fu); }

// nonzero maps each byte to 0x01 if it is nonzero and to 0 if not: bit 0
// of each byte collects bits 0..7 of the same byte only.
uint nonzero(uint x) {
	x |= x >> 4;
	x |= x >> 2;
	x |= x >> 1;
	return x & 0x01010101u;
}
uvec4 nonzero4(uvec4 x) {
	x |= x >> 4;
	x |= x >> 2;
	x |= x >> 1;
	return x & 0x01010101u;
}

// mark maps each byte of x to its mark: nonzero where the fold marks it
// and 0 where not, exactly per byte (0x01 for FOLD_XOR).
uint mark(uint x) { return XOR ? nonzero(x) : ALL ? zeroBytes(x) : x; }
uvec4 mark4(uvec4 x) { return XOR ? nonzero4(x) : ALL ? zeroBytes4(x) : x; }

// markAny4 is mark4 where, for a fold that SETTLES, only whether some
// byte is marked matters, not which: for FOLD_ALL the classic zero-byte
// test, whose borrows may mark bytes above a zero byte too, in three
// fewer operations a word. Its marks count only under ANYBITS, and many
// may be accumulated before the mask is applied.
uvec4 markAny4(uvec4 x) { return ALL ? (x - 0x01010101u) & ~x : mark4(x); }
const uint ANYBITS = ALL ? 0x80808080u : 0xFFFFFFFFu;

// STEPAND: a run read in steps of several vectors may test the and of a
// step's vectors instead of marking each (FOLD_ALL): no byte of the and
// is zero only where no byte of theirs is. Where one is, the step holds
// a false or bytes whose and is zero (1 and 2, both true), and is read
// again vector by vector. lavapipe's C read loop took 1.23x as long
// marking every vector as with the and (bench/ceiling, 6 rounds).
const bool STEPAND = ALL;

// accum accumulates marks m into a, byte lane by byte lane.
uint accum(uint a, uint m) { return XOR ? a ^ m : a | m; }
uvec4 accum4(uvec4 a, uvec4 m) { return XOR ? a ^ m : a | m; }

// lanes maps accumulated marks a to 0x01 in each byte lane whose run
// the fold found (before the answer's negation).
uint lanes(uint a) { return XOR ? a : nonzero(a); }
uvec4 lanes4(uvec4 a) { return XOR ? a : nonzero4(a); }

// runFound reports whether the marks a, accumulated over one run's
// bytes in any lanes and bits, find the run.
bool runFound(uvec4 a) {
	return XOR ? (bitCount(a.x ^ a.y ^ a.z ^ a.w) & 1) != 0 : any(notEqual(a, uvec4(0u)));
}
bool runFound1(uint a) { return XOR ? (bitCount(a) & 1) != 0 : a != 0u; }

// findByte reports whether the fold marks byte b, alone.
bool findByte(uint b) { return (b != 0u) != ALL; }

// The column hooks accumulate a column of 16-byte vectors into one
// vector of marks (reduce_outer.glsl): from colStart, colStep with each
// vector x, and colEnd, whose nonzero bytes (0x01 for FOLD_XOR) are the
// found lanes. For FOLD_ALL each lane keeps the and of highBits4, whose
// bytes' high bits stay set while every byte seen was nonzero: a lane of
// the result is 0x80 where the column held a false, as zeroBytes would
// give, in fewer operations per vector.
uvec4 highBits4(uvec4 x) { return ((x & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) | x; }
uvec4 colStart() { return uvec4(ALL ? 0xFFFFFFFFu : 0u); }
uvec4 colStep(uvec4 a, uvec4 x) { return XOR ? a ^ nonzero4(x) : ALL ? a & highBits4(x) : a | x; }
uvec4 colEnd(uvec4 a) { return ALL ? ~a & 0x80808080u : a; }

// answer maps found, 0x01 in each byte lane the fold found, to the output
// bytes: 0x01 for true.
uint answer(uint found) { return ALL ? found ^ 0x01010101u : found; }
uvec4 answer4(uvec4 found) { return ALL ? found ^ 0x01010101u : found; }

#ifdef SUBGROUP
// subgroupFound combines the found words of a subgroup's invocations as
// COMBINE would combine them in memory.
uint subgroupFound(uint found) { return XOR ? subgroupXor(found) : subgroupOr(found); }
#endif

// COMBINE folds found (0x01 in each byte lane the fold found) into the
// shared output word ref, which started at the identity: it sets those
// bytes for FOLD_ANY, clears them for FOLD_ALL and flips them for
// FOLD_XOR. (A macro: GLSL passes no buffer variable to a function.)
#define COMBINE(ref, found) \
	if (XOR) { \
		atomicXor(ref, found); \
	} else if (ALL) { \
		atomicAnd(ref, ~(found)); \
	} else { \
		atomicOr(ref, found); \
	}
