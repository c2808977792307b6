// The reductions' fold, which every reduction kernel includes: the GLSL
// side of ops' reduceOp descriptors. A fold finds bytes: FOLD_ANY a
// nonzero byte, FOLD_ALL a zero one; its answer for a run of bytes is
// whether it found one, negated for FOLD_ALL (all = not any zero). The
// kernels only ever or what they find, word by word, so every fold reads
// the same way; an output that several invocations share starts at the
// fold over nothing (0 for FOLD_ANY, 1 for FOLD_ALL, filled by the host)
// and each sets, or clears, the bytes where it found something.
#include "spec.glsl"

layout(local_size_x_id = SPEC_R_GROUP) in;
layout(constant_id = SPEC_R_FOLD) const uint FOLD = FOLD_ANY;
// ALL: the fold finds zero bytes and negates its answer.
const bool ALL = FOLD == FOLD_ALL;

// zeroBytes maps each byte of x to 0x80 if it is zero and to 0 if not,
// exactly per byte (no borrow between bytes).
uint zeroBytes(uint x) { return ~(((x & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) | x | 0x7F7F7F7Fu); }
uvec4 zeroBytes4(uvec4 x) { return ~(((x & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) | x | 0x7F7F7F7Fu); }

// find maps each byte of x to nonzero where the fold finds it and to 0
// where not, exactly per byte.
uint find(uint x) { return ALL ? zeroBytes(x) : x; }
uvec4 find4(uvec4 x) { return ALL ? zeroBytes4(x) : x; }

// findByte reports whether the fold finds byte b.
bool findByte(uint b) { return (b != 0u) != ALL; }

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

// answer maps found, 0x01 in each byte where the fold found something,
// to the output bytes: 0x01 for true.
uint answer(uint found) { return ALL ? found ^ 0x01010101u : found; }
uvec4 answer4(uvec4 found) { return ALL ? found ^ 0x01010101u : found; }

// COMBINE folds found (0x01 in each byte where the fold found
// something) into the shared output word ref, which started at the
// identity: it sets those bytes for FOLD_ANY and clears them for
// FOLD_ALL. (A macro: GLSL passes no buffer variable to a function.)
#define COMBINE(ref, found) \
	if (ALL) { \
		atomicAnd(ref, ~(found)); \
	} else { \
		atomicOr(ref, found); \
	}
