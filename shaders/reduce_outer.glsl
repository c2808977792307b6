// A reduction across rows: data [batches, rows, cspan] (row stride
// rowStride, batch stride batchStride, in bytes) reduces to
// [batches, cspan]. Each invocation owns perInv units of output (words,
// or with VEC 16-byte vectors) and walks a block of rows down their
// columns; neighbouring invocations take neighbouring columns of the same
// rows. See ops/reduce_plan.go for how the planner cuts a tensor into
// such dispatches.
//
// The fold is reduce_fold.glsl's: each column's bytes are marked and
// their marks accumulated. An invocation that covers all rows of its
// whole unit stores the answers; otherwise it combines into a unit that
// the planner filled with the identity, and only where it found
// something.
//
// VEC needs rowStride, batchStride, cspan and both skips to be multiples
// of 16: then every unit is one aligned vector in every row. Without it,
// a word's four bytes may sit at any byte offset and straddle two batches,
// and each lane run is read with a funnel shift of two words.
//
// This file is included by one small .comp per variant; TEXEL, defined
// before the include, reads the input through a storage texel buffer
// (rgba32ui) instead of a storage buffer: on lavapipe imageLoad costs a
// fraction of an SSBO load. Every byte a binding holds past the data is
// undefined: reads only ever count the bytes of their own range.
#extension GL_EXT_control_flow_attributes : require

#include "reduce_fold.glsl"

layout(constant_id = SPEC_R_VEC) const bool VEC = false;
// VECS: with VEC, the 16-byte columns side by side that an invocation
// reads in each row.
layout(constant_id = SPEC_R_VECS) const uint VECS = 4u;

#ifdef TEXEL
layout(binding = 0, rgba32ui) readonly uniform uimageBuffer srcTexels;
uvec4 vec(uint v) { return imageLoad(srcTexels, int(v)); }
#else
layout(std430, binding = 0) readonly buffer Src { uvec4 src[]; };
uvec4 vec(uint v) { return src[v]; }
#endif
layout(std430, binding = 1) buffer Dst { uvec4 dst[]; };

layout(push_constant) uniform Push { PUSH_REDUCE_OUTER } pc; // spec.ReduceOuterPush

uint word(uint w) { return vec(w >> 2)[w & 3u]; }

// bytesAt returns the len bytes (1..4) at binding byte p in its low bytes;
// the bytes above them are undefined. It reads the second word only when
// the run reaches into it, so it never reads past the data.
uint bytesAt(uint p, uint len) {
	uint w = word(p >> 2);
	uint sh = (p & 3u) * 8u;
	if (sh == 0u) {
		return w;
	}
	w >>= sh;
	if ((p & 3u) + len > 4u) {
		w |= word((p >> 2) + 1u) << (32u - sh);
	}
	return w;
}

void combine(uint o, uint lane, uint found) {
	COMBINE(dst[o][lane], found)
}

// emitVector stores or combines output vector o, whose columns' marks
// are acc (colEnd).
void emitVector(uint o, uvec4 acc, bool owned) {
	uvec4 found = lanes4(acc);
	if (owned) {
		dst[o] = answer4(found);
		return;
	}
	for (uint lane = 0u; lane < 4u; lane++) {
		if (found[lane] != 0u) {
			combine(o, lane, found[lane]);
		}
	}
}

// vectors folds block blk of rows under units u.. of one batch, up to
// VECS and not past last, and returns how many it did. VECS columns side
// by side per row make each row's step read VECS * 16 contiguous bytes,
// and neighbouring invocations the bytes after them: walking down
// columns is bound by the latency of each row step, not its width.
uint vectors(uint u, uint last, uint blk) {
	uint r0 = blk * pc.blockRows;
	uint r1 = min(r0 + pc.blockRows, pc.rows);
	uint rel = 16u * u;
	uint bb = rel / pc.cSpan;
	uint cc = rel - bb * pc.cSpan;
	uint n = min(min(VECS, last - u), (pc.cSpan - cc) / 16u);
	uint stride = pc.rowStride >> 4;
	uint v = (pc.inSkip + bb * pc.batchStride + cc) / 16u + r0 * stride;
	uvec4 a[VECS];
	[[unroll]] for (uint k = 0u; k < VECS; k++) {
		a[k] = colStart();
	}
	// Past the n-th unit the last column repeats: a read of data that is
	// there anyway, where a branch would cost more.
	for (uint r = r0; r < r1; r++) {
		[[unroll]] for (uint k = 0u; k < VECS; k++) {
			uvec4 x = vec(v + min(k, n - 1u));
			a[k] = colStep(a[k], x);
		}
		v += stride;
	}
	[[unroll]] for (uint k = 0u; k < VECS; k++) {
		a[k] = colEnd(a[k]);
	}
	bool owned = pc.whole == 1u && pc.blocks == 1u;
	uint o = pc.firstUnit + u;
	[[unroll]] for (uint k = 0u; k < VECS; k++) {
		if (k < n) {
			emitVector(o + k, a[k], owned);
		}
	}
	return n;
}

void words(uint u, uint blk) {
	uint r0 = blk * pc.blockRows;
	uint r1 = min(r0 + pc.blockRows, pc.rows);
	uint w = pc.firstUnit + u;
	uint outLen = pc.batches * pc.cSpan;
	bool owned = pc.whole == 1u && pc.blocks == 1u;
	uint found = 0u;
	for (uint k = 0u; k < 4u;) {
		int rel = int(4u * w + k) - int(pc.outSkip);
		if (rel < 0 || uint(rel) >= outLen) {
			// Another dispatch's output, or padding past the end.
			owned = owned && rel >= 0 && uint(rel) >= pc.tail;
			k++;
			continue;
		}
		// A run of lanes in one batch: consecutive bytes in every row.
		uint bb = uint(rel) / pc.cSpan;
		uint cc = uint(rel) - bb * pc.cSpan;
		uint len = min(4u - k, pc.cSpan - cc);
		uint mask = 0xFFFFFFFFu >> (32u - 8u * len);
		uint p = pc.inSkip + bb * pc.batchStride + cc + r0 * pc.rowStride;
		uint acc = 0u;
		for (uint r = r0; r < r1; r++) {
			acc = accum(acc, mark(bytesAt(p, len)) & mask);
			p += pc.rowStride;
		}
		found |= lanes(acc) << (8u * k);
		k += len;
	}
	if (owned) {
		dst[w >> 2][w & 3u] = answer(found);
	} else if (found != 0u) {
		combine(w >> 2, w & 3u, found);
	}
}

void main() {
	uint g = gl_WorkGroupID.x + pc.groupsX * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
	uint i = g * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
	if (i >= pc.n) {
		return;
	}
	uint spans = (pc.units + pc.perInv - 1u) / pc.perInv;
	uint first = (i % spans) * pc.perInv;
	uint last = min(first + pc.perInv, pc.units);
	uint blk = i / spans;
	if (VEC) {
		for (uint u = first; u < last;) {
			u += vectors(u, last, blk);
		}
		return;
	}
	for (uint u = first; u < last; u++) {
		words(u, blk);
	}
}
