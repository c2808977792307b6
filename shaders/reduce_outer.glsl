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
// units are output words, four to a window of 16 bytes that may sit at
// any byte offset and straddle batches, and each run of a window's bytes
// in one batch is read with a funnel shift of two vectors a row.
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
// SHORT: without VEC, rows of cSpan < 16 bytes follow one another, and
// each block of them holds 64 bytes or more: shortRunMarks reads them.
layout(constant_id = SPEC_R_SHORT) const bool SHORT = false;
// OWNED: with VEC, every row of the pass lies in this dispatch and each
// invocation folds all of its columns' rows, so it stores its output
// vectors: the pipeline then holds none of the atomics that combine
// them, which lavapipe compiles as a loop over the SIMD lanes each. A
// cold first call of reduce-or over axis 1 of bool[256 256 256] took
// 158 ms with their code, 88 without (medians of 6 fresh processes in
// turn), the device time the same.
layout(constant_id = SPEC_R_OWNED) const bool OWNED = false;

#ifdef TEXEL
layout(binding = 0, rgba32ui) readonly uniform uimageBuffer srcTexels;
uvec4 vec(uint v) { return imageLoad(srcTexels, int(v)); }
#else
layout(std430, binding = 0) readonly buffer Src { uvec4 src[]; };
uvec4 vec(uint v) { return src[v]; }
#endif
layout(std430, binding = 1) buffer Dst { uvec4 dst[]; };

layout(push_constant) uniform Push { PUSH_REDUCE_OUTER } pc; // spec.ReduceOuterPush

// funnel returns bytes [s, s+16) of the 32 bytes a then b, s < 16.
uvec4 funnel(uvec4 a, uvec4 b, uint s) {
	uint ws = s >> 2u;
	uint bs = (s & 3u) * 8u;
	uvec4 lo = ws == 0u ? a : ws == 1u ? uvec4(a.yzw, b.x) : ws == 2u ? uvec4(a.zw, b.xy) : uvec4(a.w, b.xyz);
	uvec4 hi = ws == 0u ? uvec4(a.yzw, b.x) : ws == 1u ? uvec4(a.zw, b.xy) : ws == 2u ? uvec4(a.w, b.xyz) : b;
	// A shift by 32 is undefined: bs == 0 selects lo.
	return bs == 0u ? lo : (lo >> bs) | (hi << (32u - bs));
}

// lowBytes returns the mask of a vector's first n bytes, n <= 16.
uvec4 lowBytes(uint n) {
	uvec4 k = uvec4(clamp(ivec4(n) - ivec4(0, 4, 8, 12), 0, 4));
	uvec4 m = uvec4(0xFFFFFFFFu) >> (32u - 8u * max(k, 1u));
	return mix(m, uvec4(0u), equal(k, uvec4(0u)));
}

// bytesAt returns the 16 bytes at binding byte p: the two vectors around
// them funnelled into place, the second never one past lastVec, the
// data's last.
uvec4 bytesAt(uint p, uint lastVec) {
	uint v = p >> 4u;
	return funnel(vec(v), vec(min(v + 1u, lastVec)), p & 15u);
}

// runMarks accumulates the marks of the len bytes (1 to 16) at binding
// byte p of each row in [r0, r1), p moving on by the row stride, and
// returns them as colEnd gives them, the bytes past len cleared.
uvec4 runMarks(uint p, uint len, uint r0, uint r1, uint lastVec) {
	uvec4 a = colStart();
	for (uint r = r0; r < r1; r++) {
		a = colStep(a, bytesAt(p, lastVec));
		p += pc.rowStride;
	}
	return colEnd(a) & lowBytes(len);
}

void combine(uint o, uint lane, uint found) {
	COMBINE(dst[o][lane], found)
}

// emitVector stores or combines output vector o, whose columns' marks
// are acc (colEnd).
void emitVector(uint o, uvec4 acc) {
	uvec4 found = lanes4(acc);
	if (OWNED) {
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
	uint o = pc.firstUnit + u;
	[[unroll]] for (uint k = 0u; k < VECS; k++) {
		if (k < n) {
			emitVector(o + k, a[k]);
		}
	}
	return n;
}

// identityOutside returns x with the bytes outside mask m made the
// fold's identity, which marks nothing.
uvec4 identityOutside(uvec4 x, uvec4 m) { return ALL ? x | ~m : x & m; }

// shortRunMarks is runMarks for rows of fewer than 16 bytes that follow
// one another (the row stride is cSpan): it reads the rows [r0, r1) of
// the batch at binding byte base as one run of bytes, k whole rows a
// step, and folds the lanes of a column together at the end; then the
// len bytes from column cc are the run's. Rows of 8 bytes take half the
// steps that runMarks would, rows of 3 a fifth.
uvec4 shortRunMarks(uint base, uint cc, uint len, uint r0, uint r1, uint lastVec) {
	uint k = 16u / pc.cSpan;
	uint step = k * pc.cSpan;
	uint p = base + r0 * pc.cSpan;
	uint end = base + r1 * pc.cSpan;
	// Lanes past the k rows are the next row's: in each step they hold
	// the identity.
	uvec4 mk = lowBytes(step);
	uvec4 a = colStart();
	for (; p + step <= end; p += step) {
		a = colStep(a, identityOutside(bytesAt(p, lastVec), mk));
	}
	if (p < end) {
		a = colStep(a, identityOutside(bytesAt(p, lastVec), lowBytes(end - p)));
	}
	uvec4 m = colEnd(a);
	uvec4 f = m;
	for (uint i = 1u; i < k; i++) {
		f = accum4(f, funnel(m, uvec4(0u), i * pc.cSpan));
	}
	return (cc == 0u ? f : funnel(f, uvec4(0u), cc)) & lowBytes(len);
}

// window folds block blk of rows under output words [w0, w1) of the
// binding (one to four: 16 bytes at most), whose bytes need not start on
// a vector in any row: each run of them in one batch is read 16 bytes a
// row (runMarks).
void window(uint w0, uint w1, uint blk) {
	uint r0 = blk * pc.blockRows;
	uint r1 = min(r0 + pc.blockRows, pc.rows);
	uint outLen = pc.batches * pc.cSpan;
	uint lastVec = (pc.inSkip + (pc.batches - 1u) * pc.batchStride + (pc.rows - 1u) * pc.rowStride + pc.cSpan - 1u) >> 4u;
	uint nb = 4u * (w1 - w0);
	uvec4 found = uvec4(0u);
	uint others = 0u; // bit i: word w0 + i holds bytes of another dispatch
	for (uint k = 0u; k < nb;) {
		int rel = int(4u * w0 + k) - int(pc.outSkip);
		if (rel < 0 || uint(rel) >= outLen) {
			// Another dispatch's output, or padding past the end.
			if (rel < 0 || uint(rel) < pc.tail) {
				others |= 1u << (k >> 2u);
			}
			k++;
			continue;
		}
		// A run of bytes in one batch: consecutive bytes in every row.
		uint bb = uint(rel) / pc.cSpan;
		uint cc = uint(rel) - bb * pc.cSpan;
		uint len = min(nb - k, pc.cSpan - cc);
		uint base = pc.inSkip + bb * pc.batchStride;
		uvec4 m = lanes4(SHORT ? shortRunMarks(base, cc, len, r0, r1, lastVec) : runMarks(base + cc + r0 * pc.rowStride, len, r0, r1, lastVec));
		// Its found lanes moved up to byte k of the window.
		found |= k == 0u ? m : funnel(uvec4(0u), m, 16u - k);
		k += len;
	}
	bool owned = pc.whole == 1u && pc.blocks == 1u;
	for (uint i = 0u; i < w1 - w0; i++) {
		uint w = w0 + i;
		if (owned && (others & (1u << i)) == 0u) {
			dst[w >> 2][w & 3u] = answer(found[i]);
		} else if (found[i] != 0u) {
			combine(w >> 2, w & 3u, found[i]);
		}
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
	// perInv is a multiple of 4: windows of four words.
	for (uint u = first; u < last; u += 4u) {
		window(pc.firstUnit + u, pc.firstUnit + min(u + 4u, last), blk);
	}
}
