// A small reduction pass, whole in one dispatch: data [B, rows, cols]
// bytes reduces over rows to [B, cols]. Each invocation owns one output
// word of the binding and folds the columns of its bytes with
// reduce_fold.glsl's hooks, by the path PATH:
//   PATH_SMALL_VECS   cols is 1 and rows a multiple of 16: each output
//                     byte's column is a row of whole 16-byte vectors;
//   PATH_SMALL_ROWS   cols is 1: each output byte's column is a row of
//                     contiguous bytes, read a word at a time;
//   PATH_SMALL_WORDS  cols is a multiple of 4: the word's four columns
//                     are one word in every row;
//   PATH_SMALL_BYTES  any cols, a byte at a time.
//
// It is what the CPU profile runs for passes of a few KiB
// (reduceTune.smallMax in ops/reduce_plan.go): lavapipe compiles a
// kernel at its first dispatch, and the reading paths of
// reduce_inner.glsl and reduce_outer.glsl took it 20-30 ms more than one
// path of this one, on work of microseconds either way. (A row read by
// vectors with masked ends, rather than the two row paths, compiled
// 10-20 ms slower.)
//
// The output's last word may hold bytes past it, another tensor's or
// padding: only its own bytes change, with atomics, as other dispatches
// change theirs.
#include "reduce_fold.glsl"

layout(constant_id = SPEC_R_PATH) const uint PATH = PATH_SMALL_BYTES;

layout(binding = 0, rgba32ui) readonly uniform uimageBuffer srcTexels;
layout(std430, binding = 1) buffer Dst { uint dst[]; };

layout(push_constant) uniform Push { PUSH_REDUCE_SMALL } pc; // spec.ReduceSmallPush

// word returns input word w, from a texel load: on lavapipe a storage
// buffer load is a loop over the SIMD lanes, a texel load is not.
uint word(uint w) { return imageLoad(srcTexels, int(w >> 2))[w & 3u]; }

// rowFound reports whether the fold finds the row of bytes [s, e), s < e,
// read a word at a time, the bytes outside it masked off after marking.
bool rowFound(uint s, uint e) {
	uint a = 0u;
	for (uint w = s >> 2; 4u * w < e && !(SETTLES && a != 0u); w++) {
		uint lo = max(s, 4u * w) - 4u * w;      // 0 to 3
		uint hi = min(e, 4u * w + 4u) - 4u * w; // 1 to 4
		a = accum(a, mark(word(w)) & (0xFFFFFFFFu << (8u * lo)) & (0xFFFFFFFFu >> (8u * (4u - hi))));
	}
	return runFound1(a);
}

// vectorsFound reports whether the fold finds the vectors [v, end) of the
// input, v < end, read a texel at a time.
bool vectorsFound(uint v, uint end) {
	uvec4 a = uvec4(0u);
	for (; v < end && !(SETTLES && any(notEqual(a, uvec4(0u)))); v++) {
		a = accum4(a, mark4(imageLoad(srcTexels, int(v))));
	}
	return runFound(a);
}

// columnFound reports whether the fold finds the column of rows bytes
// from byte p, cols apart, read a byte at a time.
bool columnFound(uint p) {
	bool f = false;
	for (uint r = 0u; r < pc.rows && !(SETTLES && f); r++) {
		f = f != findByte((word(p >> 2) >> (8u * (p & 3u))) & 0xFFu);
		p += pc.cols;
	}
	return f;
}

// words folds the four columns of output word i, one input word in each
// row: the marks stay in their byte lanes.
uint words(uint i) {
	uint b = 4u * i / pc.cols;
	uint w = (b * pc.rows * pc.cols + 4u * i - b * pc.cols) >> 2;
	uint a = 0u;
	for (uint r = 0u; r < pc.rows; r++) {
		a = accum(a, mark(word(w)));
		w += pc.cols >> 2;
	}
	return answer(lanes(a));
}

void main() {
	uint g = gl_WorkGroupID.x + pc.groupsX * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
	uint i = g * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
	if (i >= pc.n) {
		return;
	}
	if (PATH == PATH_SMALL_WORDS) {
		dst[i] = words(i); // the output is whole words
		return;
	}
	uint bits = 0u;
	uint mine = 0u; // the word's bytes that are the output's
	for (uint k = 0u; k < 4u; k++) {
		uint o = 4u * i + k;
		if (o < pc.outputs) {
			uint b = o / pc.cols;
			uint p = b * pc.rows * pc.cols + (o - b * pc.cols);
			bool f = PATH == PATH_SMALL_VECS ? vectorsFound(p >> 4, (p + pc.rows) >> 4) : PATH == PATH_SMALL_ROWS ? rowFound(p, p + pc.rows) : columnFound(p);
			mine |= 0xFFu << (8u * k);
			bits |= uint(f != ALL) << (8u * k);
		}
	}
	if (mine == 0xFFFFFFFFu) {
		dst[i] = bits;
		return;
	}
	atomicAnd(dst[i], bits | ~mine);
	atomicOr(dst[i], bits);
}
