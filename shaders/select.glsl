// Select over one piece of a broadcast (ops/select.go plans the pieces):
// out = cond ? then : else, element by element, copying bits. This is the
// body of the select kernels; shaders/select*.comp include it with the
// defines that make each variant, and it is not compiled alone.
//
// A piece is a row-major box of RANK dimensions; the output is contiguous
// in it and each input steps through it with its own strides, 0 where it
// is broadcast. Inputs are read as vectors of four 32-bit words and as
// words; the output is written as words and vectors. How is the
// variant's choice:
//
//   (no define)  storage buffers throughout: no optional device feature.
//   TEXEL_LOADS  inputs are rgba32ui storage texel buffers read with
//                imageLoad, which lavapipe runs several times faster
//                than storage-buffer loads.
//   STORE64      whole blocks are stored as u64vec4 (needs shaderInt64,
//                which the includer enables), which lavapipe stores in
//                half the operations of uvec4.
//
// Each invocation owns one block of E output elements, aligned in the
// output binding, and writes it as whole words, so no two invocations
// share a word. It finds the block's multi-index once (division by
// host-computed reciprocals); when the block lies inside one run of the
// innermost dimension, every operand is either contiguous there (vector
// loads) or constant (one load), and the block is done with no further
// index math. A block that a row's start falls inside is read by
// vectors from its two rows; short rows go in blocks of whole rows, and
// the rest (a piece's partial ends) element by element, stepping the
// multi-index like an odometer. Each kind of block runs in a dispatch
// of its own (MODE, in elementwise.glsl), so that no kernel holds two
// paths.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint W = 4;      // element bytes: 1, 2, 4 or 8
layout(constant_id = 2) const uint RANK = 1;   // dimensions of the piece, 1 to 8
layout(constant_id = 3) const uint PUSHED = 0; // bit 0: then is pc.scalar[0]; bit 1: else is pc.scalar[1]
layout(constant_id = 4) const uint CHUNKS = 1; // 16-element chunks per block
layout(constant_id = 5) const uint ALIGNED = 0; // bit x: every vector load of operand x is 16-byte aligned
layout(constant_id = 6) const uint INNER = 0;  // bit x: operand x (cond, then, else) is broadcast in dim 0
// constant_id 7 is MODE, 11 to 13 ROWLEN, GATHER and TWO: see elementwise.glsl.

const uint E = 16u * CHUNKS; // elements per block

#ifdef TEXEL_LOADS
layout(binding = 0, rgba32ui) readonly uniform uimageBuffer condT;
layout(binding = 1, rgba32ui) readonly uniform uimageBuffer thenT;
layout(binding = 2, rgba32ui) readonly uniform uimageBuffer elseT;

uvec4 vecAt(uint x, uint i) {
	if (x == 0u) return imageLoad(condT, int(i));
	if (x == 1u) return imageLoad(thenT, int(i));
	return imageLoad(elseT, int(i));
}

uint wordAt(uint x, uint i) { return vecAt(x, i >> 2)[i & 3u]; }

uint vecs(uint x) {
	if (x == 0u) return uint(imageSize(condT));
	if (x == 1u) return uint(imageSize(thenT));
	return uint(imageSize(elseT));
}
#else
// Each input is declared twice: as vectors for bulk access and as words.
layout(std430, binding = 0) readonly buffer CondV { uvec4 condV[]; };
layout(std430, binding = 0) readonly buffer CondW { uint condW[]; };
layout(std430, binding = 1) readonly buffer ThenV { uvec4 thenV[]; };
layout(std430, binding = 1) readonly buffer ThenW { uint thenW[]; };
layout(std430, binding = 2) readonly buffer ElseV { uvec4 elseV[]; };
layout(std430, binding = 2) readonly buffer ElseW { uint elseW[]; };

uvec4 vecAt(uint x, uint i) {
	if (x == 0u) return condV[i];
	if (x == 1u) return thenV[i];
	return elseV[i];
}

uint wordAt(uint x, uint i) {
	if (x == 0u) return condW[i];
	if (x == 1u) return thenW[i];
	return elseW[i];
}

uint vecs(uint x) {
	if (x == 0u) return uint(condV.length());
	if (x == 1u) return uint(thenV.length());
	return uint(elseV.length());
}
#endif

// The output, the push constants and the code select and the masks
// share.
#define NIN 3
const uint OUT_VECS = W * CHUNKS; // W-byte elements
#include "elementwise.glsl"

// laneMask turns the 16 bools of a chunk into the bit mask of its k-th
// vector of W-byte elements. Narrow elements take the bools as flags
// (see flags); wide ones test the bytes themselves.
uvec4 laneMask(uvec4 c, uint k) {
	if (W == 1u) {
		return c * 0xffu;
	}
	if (W == 2u) {
		uvec4 x = uvec4(c[2u * k], c[2u * k], c[2u * k + 1u], c[2u * k + 1u]) >> uvec4(0u, 16u, 0u, 16u);
		return (x & 1u) * 0xffffu | ((x >> 8) & 1u) * 0xffff0000u;
	}
	uvec4 x = W == 4u ? uvec4(c[k]) >> uvec4(0u, 8u, 16u, 24u)
	                  : uvec4(c[k >> 1]) >> (uvec4(0u, 0u, 8u, 8u) + 16u * (k & 1u));
	return uvec4(notEqual(x & 0xffu, uvec4(0u))) * 0xffffffffu;
}

bool pushed(uint x) { return x > 0u && (PUSHED & x) != 0u; }

// value returns the element of then (x = 1) or else (x = 2) at offset o.
uvec2 value(uint x, uint o) {
	if (pushed(x)) return pc.scalar[x - 1u];
	return elemAt(x, W, o);
}

#ifdef ROWS
// rows does a block of MODE_ROWS (see elementwise.glsl) from e0, from
// the multi-index coord (a row's start) and the operands' offsets off
// there.
void rows(uint e0, uint coord[8], uint off[3]) {
	uint start[3] = off;
	uvec2 rv[3][16];
	uint ro[3][16];
	uvec4 seg[3][2][8];
	rowsOf(uint[3](1u, W, W), coord, off, rv, ro);
	runsOf(0u, 1u, ro[0], rv[0], seg[0]);
	runsOf(1u, W, ro[1], rv[1], seg[1]);
	runsOf(2u, W, ro[2], rv[2], seg[2]);
	[[unroll]] for (uint ch = 0u; ch < CHUNKS; ch++) {
		uvec4 c[8], tv[8], ev[8];
		rowChunk(0u, 1u, ch, start[0], rv[0], ro[0], seg[0], c);
		uvec4 f = W <= 2u ? flags(c[0]) : c[0];
		if (pushed(1u)) {
			for (uint k = 0u; k < W; k++) tv[k] = splat(pc.scalar[0]);
		} else {
			rowChunk(1u, W, ch, start[1], rv[1], ro[1], seg[1], tv);
		}
		if (pushed(2u)) {
			for (uint k = 0u; k < W; k++) ev[k] = splat(pc.scalar[1]);
		} else {
			rowChunk(2u, W, ch, start[2], rv[2], ro[2], seg[2], ev);
		}
		for (uint k = 0u; k < W; k++) {
			uvec4 m = laneMask(f, k);
			storeVec(e0 / 16u * W, ch * W + k, (tv[k] & m) | (ev[k] & ~m));
		}
	}
}
#endif

#ifdef SEAMS
// seams does a block of MODE_SEAMS (see elementwise.glsl) from e0, from
// its multi-index coord and the operands' offsets off there.
void seams(uint e0, uint coord[8], uint off[3]) {
	uint next[3];
	uint b = seamOffsets(coord, off, next);
	const uint ws[3] = uint[3](1u, W, W);
	uvec2 v[3][2];
	for (uint x = 0u; x < 3u; x++) {
		v[x][0] = v[x][1] = uvec2(0u);
		if (broadcast(x, 0u) && !pushed(x)) {
			v[x][0] = elemAt(x, ws[x], off[x]);
			v[x][1] = elemAt(x, ws[x], next[x]);
		}
	}
	for (uint ch = 0u; ch < CHUNKS; ch++) {
		uvec4 c[8], tv[8], ev[8];
		seamChunk(0u, 1u, ch, b, off[0], next[0], v[0], c);
		uvec4 f = W <= 2u ? flags(c[0]) : c[0];
		if (pushed(1u)) {
			for (uint k = 0u; k < W; k++) tv[k] = splat(pc.scalar[0]);
		} else {
			seamChunk(1u, W, ch, b, off[1], next[1], v[1], tv);
		}
		if (pushed(2u)) {
			for (uint k = 0u; k < W; k++) ev[k] = splat(pc.scalar[1]);
		} else {
			seamChunk(2u, W, ch, b, off[2], next[2], v[2], ev);
		}
		for (uint k = 0u; k < W; k++) {
			uvec4 m = laneMask(f, k);
			storeVec(e0 / 16u * W, ch * W + k, (tv[k] & m) | (ev[k] & ~m));
		}
	}
}
#endif

void main() {
	uint first = pc.base[3];
	uint e0, lo, hi;
	if (!block(first, e0, lo, hi)) {
		return;
	}

	// The block's multi-index and each operand's offset there.
	uint coord[8];
	uint off[3] = uint[3](pc.base[0], pc.base[1], pc.base[2]);
	locate(lo - first, coord, off);

#if defined(ROWS)
	rows(e0, coord, off);
#elif defined(SEAMS)
	seams(e0, coord, off);
#else
	if (MODE == MODE_WHOLE) {
		if (!inRun(e0, lo, hi, coord)) {
			return;
		}
		// The whole block lies in one innermost run, or with ROWCH is
		// whole rows: the inputs constant along a row are read at each
		// row's start.
		uint st[3][8];
		if (ROWCH != 0u) {
			strides(st);
		}
		uvec4 fc, tc, ec;
		for (uint ch = 0u; ch < CHUNKS; ch++) {
			uint r = rowChunk(ch, coord, off, st);
			if (r == 0u) {
				fc = broadcast(0u, 0u) ? uvec4(elemAt(0u, 1u, off[0]).x != 0u ? 0x01010101u : 0u) : uvec4(0u);
				tc = (pushed(1u) || broadcast(1u, 0u)) ? splat(value(1u, off[1])) : uvec4(0u);
				ec = (pushed(2u) || broadcast(2u, 0u)) ? splat(value(2u, off[2])) : uvec4(0u);
			}
			uvec4 f = fc;
			if (!broadcast(0u, 0u)) {
				uvec4 c[8];
				load16(0u, 1u, off[0] + 16u * r, c);
				f = W <= 2u ? flags(c[0]) : c[0];
			}
			uvec4 tv[8], ev[8];
			if (pushed(1u) || broadcast(1u, 0u)) {
				for (uint k = 0u; k < W; k++) tv[k] = tc;
			} else {
				load16(1u, W, off[1] + 16u * r, tv);
			}
			if (pushed(2u) || broadcast(2u, 0u)) {
				for (uint k = 0u; k < W; k++) ev[k] = ec;
			} else {
				load16(2u, W, off[2] + 16u * r, ev);
			}
			for (uint k = 0u; k < W; k++) {
				uvec4 m = laneMask(f, k);
				storeVec(e0 / 16u * W, ch * W + k, (tv[k] & m) | (ev[k] & ~m));
			}
		}
		return;
	}

	// Element by element, stepping each operand by its strides. Narrow
	// elements gather into a word, stored when the next word begins; a
	// word the piece covers in part keeps its other bytes, which belong to
	// a neighbouring piece.
	uint st[3][8];
	strides(st);
	uint acc = 0u, accMask = 0u, accWord = lo * W / 4u;
	for (uint e = lo; e < hi; e++) {
		uvec2 v = elemAt(0u, 1u, off[0]).x != 0u ? value(1u, off[1]) : value(2u, off[2]);
		if (W == 8u) {
			outW[2u * e] = v.x;
			outW[2u * e + 1u] = v.y;
		} else if (W == 4u) {
			outW[e] = v.x;
		} else {
			if (e * W / 4u != accWord) {
				store(accWord, acc, accMask);
				acc = accMask = 0u;
				accWord = e * W / 4u;
			}
			uint sh = 8u * (e * W % 4u);
			acc |= v.x << sh;
			accMask |= ((1u << (8u * W)) - 1u) << sh;
		}
		advance(coord, off, st);
	}
	if (W < 4u) {
		store(accWord, acc, accMask);
	}
#endif
}
