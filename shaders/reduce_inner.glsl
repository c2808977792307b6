// A reduction along the innermost axis: rows of rowLen contiguous bool
// bytes, one output byte per row. Each invocation owns one output word
// (four rows) and streams its rows, several words in turn when rows are
// short, or one chunk of each row when the planner splits few long rows
// across invocations (ops/reduce_plan.go).
//
// The fold is reduce_fold.glsl's: each row's bytes are marked and their
// marks accumulated. An invocation that covers its whole word stores the
// answers; otherwise it combines into a word that the planner filled
// with the identity, and only where it found something. A long row
// stops being read once a mark settles its answer (SETTLES).
//
// How rows are read is chosen per dispatch by specialization constants,
// not by branches: a CPU driver such as lavapipe runs both sides of a
// branch that its SIMD lanes do not all skip, and a loop's body at least
// once, so every path compiled in costs every row.
//
// This file is included by one small .comp per variant, which defines
// what the variant uses before including it:
//   TEXEL     read the input through a storage texel buffer (rgba32ui)
//             instead of a storage buffer: on lavapipe imageLoad costs a
//             fraction of an SSBO load.
//   SUBGROUP  combine the words that neighbouring invocations found in
//             the same output word in the subgroup, so that one atomic
//             per subgroup, not per invocation, reaches memory (needs
//             GL_KHR_shader_subgroup_arithmetic and _vote).
// Every byte a binding holds past the data is undefined: reads only ever
// count the bytes of their own range, with masks.
#extension GL_EXT_control_flow_attributes : require
#ifdef SUBGROUP
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_vote : require
#endif

#include "reduce_fold.glsl"

// PATH is how rows are read (innerPlan in ops/reduce_plan.go):
//   PATH_VECTORS  whole vectors: every row, and every chunk of one, starts and ends
//      on a 16-byte vector, so no byte needs masking;
//   PATH_MASKED   vectors, masking the bytes of the first and last vector of each
//      row that are not the row's (rows of at least SHORT bytes);
//   PATH_SHORT    short rows (fewer than SHORT bytes), a word at a time, the four
//      rows of an output word together;
//   PATH_ROWVECS  rows of ROWVECS whole vectors, each read by one invocation: short
//      rows, read by straight-line code, with no loop per row;
//   PATH_TINY     tiny rows of TINY bytes (1 to 15), sixteen to an output vector,
//      read as the TINY whole vectors that hold them exactly.
layout(constant_id = SPEC_R_PATH) const uint PATH = PATH_VECTORS;
// LONG: rows (or chunks) hold at least STEP vectors, so the loop that
// reads STEP at a time is compiled in.
layout(constant_id = SPEC_R_LONG) const bool LONG = false;
// ROWVECS: the vectors of each row with PATH_ROWVECS.
layout(constant_id = SPEC_R_ROWVECS) const uint ROWVECS = 1u;
// TINY: the bytes of each row with PATH_TINY.
layout(constant_id = SPEC_R_TINY) const uint TINY = 1u;

// Rows shorter than this many bytes, and not of whole vectors, take
// PATH_SHORT.
const uint SHORT = 32u;

#ifdef TEXEL
layout(binding = 0, rgba32ui) readonly uniform uimageBuffer srcTexels;
uvec4 vec(uint v) { return imageLoad(srcTexels, int(v)); }
#else
layout(std430, binding = 0) readonly buffer Src { uvec4 src[]; };
uvec4 vec(uint v) { return src[v]; }
#endif
layout(std430, binding = 1) buffer Dst { uint dst[]; };
// The same binding as whole vectors, which PATH_TINY stores in one go: on
// lavapipe each store is a loop over the SIMD lanes, so one of 16 bytes
// costs about as much as one of 4.
layout(std430, binding = 1) writeonly buffer DstVecs { uvec4 dstVecs[]; };

layout(push_constant) uniform Push { PUSH_REDUCE_INNER } pc; // spec.ReduceInnerPush

uint word(uint w) { return vec(w >> 2)[w & 3u]; }

// Vectors per step of the streaming loop: texel loads are cheap enough
// that sixteen in flight per invocation pay; unrolled SSBO loads, each a
// loop over the lanes on lavapipe, only bloat the loop.
#ifdef TEXEL
const uint STEP = 16u;
#else
const uint STEP = 4u;
#endif

// unsettled reports whether marks a, under ANYBITS, leave a row's answer
// open: always for a fold that does not settle.
bool unsettled(uvec4 a) { return !SETTLES || all(equal(a & ANYBITS, uvec4(0u))); }

// foldVectors returns a with the marks (markAny4) of the vectors
// [v, end) accumulated, under ANYBITS. A fold that settles stops early
// once a marks something: the row's answer is known. Under STEPAND the
// steps are tested by their and, and the first that may hold a false
// and the rest of the run are read one vector at a time.
uvec4 foldVectors(uvec4 a, uint v, uint end) {
	if (LONG) {
		for (; v + STEP <= end && unsettled(a); v += STEP) {
			if (STEPAND) {
				uvec4 m = vec(v);
				[[unroll]] for (uint k = 1u; k < STEP; k++) {
					m &= vec(v + k);
				}
				if (!unsettled(markAny4(m))) {
					break; // the loop below reads this step vector by vector
				}
				continue;
			}
			[[unroll]] for (uint k = 0u; k < STEP; k++) {
				a = accum4(a, markAny4(vec(v + k)));
			}
		}
	}
	for (; v < end && unsettled(a); v++) {
		a = accum4(a, markAny4(vec(v)));
	}
	return a & ANYBITS;
}

// vecBytes returns the mask of bytes [from, to) of a 16-byte vector,
// 0 <= from < to <= 16.
uvec4 vecBytes(uint from, uint to) {
	ivec4 lane = ivec4(0, 4, 8, 12);
	uvec4 lo = uvec4(clamp(int(from) - lane, 0, 4)); // bytes below the range
	uvec4 hi = uvec4(clamp(lane + 4 - int(to), 0, 4)); // bytes above it
	uvec4 m = (uvec4(0xFFFFFFFFu) << (8u * min(lo, 3u))) & (uvec4(0xFFFFFFFFu) >> (8u * min(hi, 3u)));
	return mix(m, uvec4(0u), greaterThan(max(lo, hi), uvec4(3u)));
}

// foundIn reports whether the fold finds the run of bytes [s, e) of the
// binding (s < e). With PATH_MASKED the bytes of the first and last
// vector outside the range are masked after marking, so they count as
// unmarked; a range within one vector is its first and last, chosen by
// selects rather than a branch.
bool foundIn(uint s, uint e) {
	if (PATH == PATH_VECTORS) {
		return runFound(foldVectors(uvec4(0u), s >> 4, e >> 4));
	}
	uint v = s >> 4;
	uint last = (e - 1u) >> 4;
	uint end = ((e - 1u) & 15u) + 1u;
	bool one = v == last;
	uvec4 a = mark4(vec(v)) & vecBytes(s & 15u, one ? end : 16u);
	a = accum4(a, mark4(vec(last)) & (one ? uvec4(0u) : vecBytes(0u, end)));
	return runFound(foldVectors(a, v + 1u, last));
}

// spanMask returns, for each of four rows, the mask of its bytes [a, b)
// within a word, 0 <= a, b <= 4 (empty when b <= a).
uvec4 spanMask(ivec4 a, ivec4 b) {
	uvec4 lo = mix(uvec4(0xFFFFFFFFu) << (8u * uvec4(min(a, 3))), uvec4(0u), greaterThan(a, ivec4(3)));
	uvec4 hi = mix(~(uvec4(0xFFFFFFFFu) << (8u * uvec4(min(b, 3)))), uvec4(0xFFFFFFFFu), greaterThan(b, ivec4(3)));
	return lo & hi;
}

// foldShort folds the four byte ranges [s[k], e[k]) of short rows that
// lie close together: each word between the first start and the last end
// is read once, whatever number of rows it holds bytes of, and its bytes
// are shared out to the rows by masks rather than by branches.
uvec4 foldShort(uvec4 s, uvec4 e) {
	uvec4 acc = uvec4(0u);
	uint lo = min(min(s.x, s.y), min(s.z, s.w));
	uint hi = max(max(e.x, e.y), max(e.z, e.w));
	for (uint w = lo >> 2; 4u * w < hi; w++) {
		int base = int(4u * w);
		acc = accum4(acc, uvec4(mark(word(w))) & spanMask(clamp(ivec4(s) - base, 0, 4), clamp(ivec4(e) - base, 0, 4)));
	}
	return acc;
}

// combine folds found (0x01 in each lane whose row the fold found a byte
// in) into binding word w, which others share.
void combine(uint w, uint found) {
#ifdef SUBGROUP
	// In a split dispatch neighbouring invocations read chunks of the
	// same rows: when the whole subgroup shares w, one atomic does.
	if (subgroupAllEqual(w)) {
		found = subgroupFound(found);
		if (!subgroupElect()) {
			return;
		}
	}
#endif
	if (found == 0u) {
		return;
	}
	COMBINE(dst[w], found)
}

// store stores the answers to found (0x01 in each lane whose row the
// fold found a byte in) as binding word w when the invocation owns the whole
// word, else combines it with the others'.
void store(uint w, uint found, bool owned) {
	if (owned) {
		dst[w] = answer(found);
	} else {
		combine(w, found);
	}
}

// wordRows folds the four rows of binding word w, of ROWVECS whole
// vectors each (PATH_ROWVECS). A row that is not this dispatch's reads row 0
// instead, and does not count: a select, where a branch would cost
// every row.
void wordRows(uint w) {
	bool owned = pc.whole == 1u;
	uint found = 0u;
	[[unroll]] for (uint k = 0u; k < 4u; k++) {
		int j = int(4u * w + k) - int(pc.outSkip);
		bool here = j >= 0 && uint(j) < pc.rows;
		owned = owned && (here || j >= 0 && uint(j) >= pc.tail);
		uint v = (pc.inSkip >> 4) + (here ? uint(j) : 0u) * ROWVECS;
		uvec4 a = uvec4(0u);
		[[unroll]] for (uint t = 0u; t < ROWVECS; t++) {
			a = accum4(a, markAny4(vec(v + t)));
		}
		found |= uint(here && runFound(a & ANYBITS)) << (8u * k);
	}
	store(w, found, owned);
}

// tinyRows folds the sixteen rows of binding vector o of the output, of
// TINY bytes each (PATH_TINY), from input vectors w*TINY on: they hold the
// sixteen rows exactly. A bit per byte, whether it is marked, is
// gathered first; each row's TINY bits are then tested at offsets that
// are constants once TINY is, so no byte is branched on. Past the last
// row the vector is the output's padding: the planner only takes this
// path where no other dispatch writes it, and reads stop at the last
// vector of the data.
void tinyRows(uint o, uint w) {
	uint base = (pc.inSkip >> 4) + w * TINY;
	uint lastVec = (pc.inSkip + pc.rows * TINY - 1u) >> 4;
	if (TINY == 1u) {
		// A row of one byte is itself: nonzero is true, for every fold.
		// The pass runs in place, over a copy of the data (reducer.identity
		// in ops/reduce.go): only a vector that holds a byte other than 0
		// and 1 is written.
		uvec4 x = vec(min(base, lastVec));
		if (any(notEqual(x & 0xFEFEFEFEu, uvec4(0u)))) {
			dstVecs[o] = nonzero4(x);
		}
		return;
	}
	uint bits[8]; // bit b: byte b of the sixteen rows is marked
	[[unroll]] for (uint i = 0u; i < 8u; i++) {
		bits[i] = 0u;
	}
	[[unroll]] for (uint t = 0u; t < TINY; t++) {
		uvec4 x = lanes4(mark4(vec(min(base + t, lastVec))));
		uvec4 nib = (x | x >> 7u | x >> 14u | x >> 21u) & 0xFu;
		bits[t >> 1u] |= (nib.x | nib.y << 4u | nib.z << 8u | nib.w << 12u) << (16u * (t & 1u));
	}
	uvec4 found = uvec4(0u);
	[[unroll]] for (uint k = 0u; k < 16u; k++) {
		uint p = k * TINY;
		uint b = bits[p >> 5u] >> (p & 31u);
		if ((p & 31u) + TINY > 32u) {
			b |= bits[(p >> 5u) + 1u] << (32u - (p & 31u));
		}
		found[k >> 2u] |= uint(runFound1(b & ((1u << TINY) - 1u))) << (8u * (k & 3u));
	}
	dstVecs[o] = answer4(found);
}

// reduceWord folds chunk c of the rows of binding word w into it.
void reduceWord(uint w, uint c) {
	bool owned = pc.whole == 1u && pc.chunks == 1u;
	// The byte range of each of the word's four rows; empty for rows
	// that are not in this dispatch.
	uvec4 s = uvec4(0xFFFFFFFFu);
	uvec4 e = uvec4(0u);
	[[unroll]] for (uint k = 0u; k < 4u; k++) {
		int j = int(4u * w + k) - int(pc.outSkip);
		if (j < 0 || uint(j) >= pc.rows) {
			// Another dispatch's row, or padding past the last row.
			owned = owned && j >= 0 && uint(j) >= pc.tail;
			continue;
		}
		uint rowStart = pc.inSkip + uint(j) * pc.rowLen;
		s[k] = rowStart + c * pc.chunkBytes;
		e[k] = min(s[k] + pc.chunkBytes, rowStart + pc.rowLen);
	}
	uvec4 acc = uvec4(0u);
	if (PATH == PATH_SHORT) {
		acc = foldShort(s, e);
	} else {
		[[unroll]] for (uint k = 0u; k < 4u; k++) {
			if (s[k] < e[k] && foundIn(s[k], e[k])) {
				acc[k] = 1u;
			}
		}
	}
	store(w, uint(runFound1(acc.x)) | uint(runFound1(acc.y)) << 8 | uint(runFound1(acc.z)) << 16 | uint(runFound1(acc.w)) << 24, owned);
}

void main() {
	uint g = gl_WorkGroupID.x + pc.groupsX * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
	uint i = g * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
	if (i >= pc.n) {
		return;
	}
	uint c = i % pc.chunks;
	uint first = (i / pc.chunks) * pc.perInv;
	uint last = min(first + pc.perInv, pc.words);
	for (uint w = first; w < last; w++) {
		if (PATH == PATH_TINY) {
			tinyRows(pc.firstWord + w, w);
		} else if (PATH == PATH_ROWVECS) {
			wordRows(pc.firstWord + w);
		} else {
			reduceWord(pc.firstWord + w, c);
		}
	}
}
