// The skeleton of every elementwise kernel: the bindings and push
// constants, reading inputs by elements and by 16-element chunks, the
// multi-index of a block and the odometer that steps it, the modes that
// cover a piece (MODE_ALL, the general path, and the fast ones), and
// storing the output by vectors and by partial words. An op is a file of
// hooks that includes this one (select.glsl, mask.glsl); each module
// (a .comp that make shaders writes from shaders/spec) defines W,
// the element bytes, and the variant's and role's defines before
// including the op. The op defines, before including this file:
//
//   NIN      its number of inputs, 1 to 4: bindings 0 to NIN-1, the
//            output binding NIN
//   OUT_W    the output's element bytes
//   inW(x)   input x's element bytes (1 for bools, else W)
//
// and after it the hooks the modes call:
//
//   opChunk  the op on one chunk of sixteen elements: v[x] holds input
//            x's as inW(x) vectors, o gets the output's as OUT_W vectors
//   opElem   the op on one element, its inputs at offsets off, read with
//            inElem (so that an op may read only the inputs it needs)
//
// The shared specialization constants' ids come from spec.glsl, which
// make shaders writes from shaders/spec.go; an op's own start at
// SPEC_OP0. A module of the ROWS or SEAMS role holds only that mode's
// path, one of the WHOLE role only MODE_WHOLE's, one of ELEMS only
// MODE_ALL's and MODE_ENDS': the code of one path slows lavapipe's
// building of every pipeline of a module, since it translates all of a
// module's code before specialization removes any.
#include "spec.glsl"
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x_id = SPEC_GROUP) in;
layout(constant_id = SPEC_RANK) const uint RANK = 1;      // dimensions of the piece, 1 to 8
layout(constant_id = SPEC_PUSHED) const uint PUSHED = 0;  // bit x: input x is a pushed scalar
layout(constant_id = SPEC_CHUNKS) const uint CHUNKS = 1;  // 16-element chunks per block
layout(constant_id = SPEC_ALIGNED) const uint ALIGNED = 0; // bit x: every vector load of input x is 16-byte aligned
layout(constant_id = SPEC_INNER) const uint INNER = 0;    // bit x: input x is broadcast in dim 0

const uint E = 16u * CHUNKS;          // elements per block
const uint OUT_VECS = OUT_W * CHUNKS; // the output vectors a block fills

// The inputs, each declared as vectors for bulk access and as words, or
// with TEXEL_LOADS as an rgba32ui storage texel buffer read with
// imageLoad, which lavapipe runs several times faster than storage-buffer
// loads.
#ifdef TEXEL_LOADS
layout(binding = 0, rgba32ui) readonly uniform uimageBuffer in0T;
#if NIN > 1
layout(binding = 1, rgba32ui) readonly uniform uimageBuffer in1T;
#endif
#if NIN > 2
layout(binding = 2, rgba32ui) readonly uniform uimageBuffer in2T;
#endif
#if NIN > 3
layout(binding = 3, rgba32ui) readonly uniform uimageBuffer in3T;
#endif

// vecAt returns vector i of input x.
uvec4 vecAt(uint x, uint i) {
#if NIN > 3
	if (x == 3u) return imageLoad(in3T, int(i));
#endif
#if NIN > 2
	if (x == 2u) return imageLoad(in2T, int(i));
#endif
#if NIN > 1
	if (x == 1u) return imageLoad(in1T, int(i));
#endif
	return imageLoad(in0T, int(i));
}

// wordAt returns word i of input x.
uint wordAt(uint x, uint i) { return vecAt(x, i >> 2)[i & 3u]; }

// vecs returns the vectors in input x's binding.
uint vecs(uint x) {
#if NIN > 3
	if (x == 3u) return uint(imageSize(in3T));
#endif
#if NIN > 2
	if (x == 2u) return uint(imageSize(in2T));
#endif
#if NIN > 1
	if (x == 1u) return uint(imageSize(in1T));
#endif
	return uint(imageSize(in0T));
}
#else
layout(std430, binding = 0) readonly buffer In0V { uvec4 in0V[]; };
layout(std430, binding = 0) readonly buffer In0W { uint in0W[]; };
#if NIN > 1
layout(std430, binding = 1) readonly buffer In1V { uvec4 in1V[]; };
layout(std430, binding = 1) readonly buffer In1W { uint in1W[]; };
#endif
#if NIN > 2
layout(std430, binding = 2) readonly buffer In2V { uvec4 in2V[]; };
layout(std430, binding = 2) readonly buffer In2W { uint in2W[]; };
#endif
#if NIN > 3
layout(std430, binding = 3) readonly buffer In3V { uvec4 in3V[]; };
layout(std430, binding = 3) readonly buffer In3W { uint in3W[]; };
#endif

uvec4 vecAt(uint x, uint i) {
#if NIN > 3
	if (x == 3u) return in3V[i];
#endif
#if NIN > 2
	if (x == 2u) return in2V[i];
#endif
#if NIN > 1
	if (x == 1u) return in1V[i];
#endif
	return in0V[i];
}

uint wordAt(uint x, uint i) {
#if NIN > 3
	if (x == 3u) return in3W[i];
#endif
#if NIN > 2
	if (x == 2u) return in2W[i];
#endif
#if NIN > 1
	if (x == 1u) return in1W[i];
#endif
	return in0W[i];
}

uint vecs(uint x) {
#if NIN > 3
	if (x == 3u) return uint(in3V.length());
#endif
#if NIN > 2
	if (x == 2u) return uint(in2V.length());
#endif
#if NIN > 1
	if (x == 1u) return uint(in1V.length());
#endif
	return uint(in0V.length());
}
#endif

layout(std430, binding = NIN) buffer OutV { uvec4 outV[]; };
layout(std430, binding = NIN) buffer OutW { uint outW[]; };
#ifdef STORE64
layout(std430, binding = NIN) writeonly buffer Out64 { u64vec4 out64[]; };
#endif

layout(push_constant) uniform Push { PUSH_ELEMENTWISE } pc; // spec.ElementwisePush

// div returns r / dims[d] for r < 2^31: floor(r * m / 2^(31+l)) with
// m = ceil(2^(31+l) / dims[d]) and l = ceil(log2(dims[d])) is exact there
// (Granlund and Montgomery, 1994).
uint div(uint r, uint d) {
	uint hi, lo;
	umulExtended(r, pc.magic[d], hi, lo);
	uint l = (pc.shifts[d >> 2] >> (8u * (d & 3u))) & 31u;
	return ((hi << 1) | (lo >> 31)) >> l;
}

// elemAt returns element o of input x, w bytes wide, in the low bits.
uvec2 elemAt(uint x, uint w, uint o) {
	if (w == 8u) return uvec2(wordAt(x, 2u * o), wordAt(x, 2u * o + 1u));
	uint v = wordAt(x, o * w / 4u);
	if (w == 4u) return uvec2(v, 0u);
	return uvec2((v >> (8u * (o * w % 4u))) & ((1u << (8u * w)) - 1u), 0u);
}

// loadVecs reads the n vectors of input x (w-byte elements) from
// element o on, as if o began a vector: load16 reads elements o to o+15
// as w vectors. The vectors that hold those bytes lie in the binding:
// bindings start 16-byte aligned and end on a multiple of 16 bytes past
// the last byte the piece uses. The host sets bit x of ALIGNED when it
// knows that no load of input x needs the funnel shift. Otherwise every
// load takes the funnel, even where o happens to fall on a vector, and
// reads one vector more, clamped to the binding: a test for that case
// made lavapipe run both paths, and rows of 6094 f32 ran 1.6x as long as
// rows of 6096.
//
// With clamped, o may lie before the binding or run past it: the vectors
// outside it are read as its first or last, for elements that the caller
// does not use.
void loadVecs(uint x, uint w, uint o, uint n, bool clamped, out uvec4 r[8]) {
	int b = int(o * w);
	int q = b >> 4;
	uint s = uint(b) & 15u;
	int last = int(vecs(x)) - 1;
	if (((ALIGNED >> x) & 1u) != 0u) {
		for (uint k = 0u; k < n; k++) {
			r[k] = vecAt(x, uint(clamped ? clamp(q + int(k), 0, last) : q + int(k)));
		}
		return;
	}
	uint sw = s >> 2;
	uint sb = 8u * (s & 3u);
	uvec4 u0 = vecAt(x, uint(clamped ? clamp(q, 0, last) : q));
	for (uint k = 0u; k < n; k++) {
		uvec4 u1 = vecAt(x, uint(clamp(q + int(k) + 1, 0, last)));
		uvec4 a, c; // words sw..sw+3 and sw+1..sw+4 of u0:u1
		if (sw == 0u) {
			a = u0;
			c = uvec4(u0.yzw, u1.x);
		} else if (sw == 1u) {
			a = uvec4(u0.yzw, u1.x);
			c = uvec4(u0.zw, u1.xy);
		} else if (sw == 2u) {
			a = uvec4(u0.zw, u1.xy);
			c = uvec4(u0.w, u1.xyz);
		} else {
			a = uvec4(u0.w, u1.xyz);
			c = u1;
		}
		r[k] = sb == 0u ? a : (a >> sb) | (c << (32u - sb));
		u0 = u1;
	}
}

void load16(uint x, uint w, uint o, out uvec4 r[8]) { loadVecs(x, w, o, w, false, r); }

// flags turns 16 bools (bytes) into 0x01 per true byte, 0x00 per false.
uvec4 flags(uvec4 c) {
	uvec4 f = c | (c >> 4);
	f |= f >> 2;
	f |= f >> 1;
	return f & 0x01010101u;
}

// splatOf fills a vector with copies of one w-byte element.
uvec4 splatOf(uvec2 v, uint w) {
	if (w == 1u) return uvec4(v.x * 0x01010101u);
	if (w == 2u) return uvec4(v.x * 0x00010001u);
	if (w == 4u) return uvec4(v.x);
	return uvec4(v, v);
}

// pushed reports whether input x is a scalar in the push constants,
// not read from its binding: only the last two inputs can be.
bool pushed(uint x) { return ((PUSHED >> x) & 1u) != 0u; }

// scalarOf returns pushed input x's bits.
uvec2 scalarOf(uint x) { return pc.scalar[(x + 2u - NIN) & 1u]; }

uint inW(uint x);

// inElem returns input x's element at offset o, or its pushed bits.
uvec2 inElem(uint x, uint o) {
	if (pushed(x)) return scalarOf(x);
	return elemAt(x, inW(x), o);
}

// broadcast reports whether input x is broadcast in dim d. Dim 0 is
// also a specialization constant, so that the block path holds only the
// code for how its inputs are read.
bool broadcast(uint x, uint d) {
	if (d == 0u) return ((INNER >> x) & 1u) != 0u;
	return ((pc.masks >> (8u * x + d)) & 1u) != 0u;
}

// How a dispatch covers its piece; ops/plan.go chooses:
//   MODE_ALL    every block, element by element: for rows shorter
//               than a block, where no block lies whole in one run;
//   MODE_WHOLE  only the blocks that lie whole in one innermost run, by
//               vectors. No kernel holds both paths: on a driver that
//               runs invocations as SIMD lanes of a CPU, as lavapipe
//               does, every lane would pay for a path where any lane of
//               its group took it, and the code of the other path slowed
//               even the blocks that did not take it;
//   MODE_SEAMS  beside MODE_WHOLE, the blocks that a row's start falls
//               inside: one invocation per row boundary within the
//               piece. Rows hold at least E elements, so no block holds
//               two; the block is read by vectors from the two rows it
//               holds, merged byte by byte, and stored whole (seamChunk),
//               in modules of their own (SEAMS). Element by element,
//               these blocks took 2 to 3 times as long on 1-byte rows of
//               hundreds of elements;
//   MODE_ENDS   then the blocks of the piece's start and end where they
//               are partial, element by element: two invocations;
//   MODE_ROWS   rows shorter than 16 elements, in blocks of whole rows
//               that are also whole vectors of the output (E elements,
//               a multiple of ROWLEN): each input broadcast along the
//               rows is read once a row (rowsOf), the others by vectors
//               where they run on through the block, else row by row,
//               each row's elements taken from the vectors that hold
//               it (rowChunk), or where a block meets at most one
//               start of dimension 1, as two runs (twoRuns); the output is
//               stored by vectors, with no element-by-element store and
//               no odometer step per element (rowChunk). The rest of the
//               piece, pc.skip elements on, runs in MODE_ALL.
layout(constant_id = SPEC_MODE) const uint MODE = 0; // MODE_ALL, ...: spec.glsl
#ifdef ROWS
// MODE_ROWS only: the rows' length, 2 to 15, and which inputs are read
// row by row (bit x), as ops/plan.go classes them.
layout(constant_id = SPEC_ROWLEN) const uint ROWLEN = 2;
layout(constant_id = SPEC_GATHER) const uint GATHER = 0;
// MODE_ROWS only: bit x, input x is read as two runs (twoRuns); bit
// 8+x, it is broadcast in dimension 1, as the push constants say too:
// here the run's step is a constant, and so is where each element lies.
layout(constant_id = SPEC_TWO) const uint TWO = 0;
#endif

#if !defined(ROWS) && !defined(SEAMS) && !defined(ELEMS)
// MODE_WHOLE only: 0 where each block lies in one innermost run; else
// the chunks of each row, where rows of whole chunks are shorter than a
// block: a block then holds E / (16 ROWCH) whole rows, which the kernel
// steps through by the odometer (rowChunk), and a block that is not
// whole in the piece is left to another dispatch (ops/plan.go).
layout(constant_id = SPEC_ROWCH) const uint ROWCH = 0;
#endif

// block finds the block of E elements this invocation owns: its first
// element e0, aligned in the output binding, and the part [lo, hi) of it
// in the piece, which starts at element first of the binding, from
// pc.skip elements on. It returns false when the invocation has no
// block: past the piece, or in MODE_SEAMS and MODE_ENDS at a boundary
// that falls between blocks.
bool block(uint first, out uint e0, out uint lo, out uint hi) {
	uint g = gl_WorkGroupID.x + pc.groupsX * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
	uint i = g * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
	uint n = 1u;
	for (uint d = 0u; d < RANK; d++) {
		n *= pc.dims[d];
	}
	uint end = first + n;
	e0 = lo = hi = 0u;
	if (MODE == MODE_SEAMS || MODE == MODE_ENDS) {
		// Boundary i: MODE_SEAMS 1 to rows-1, MODE_ENDS 0 and rows.
		uint rows = n / pc.dims[0];
		if (MODE == MODE_SEAMS) {
			i++;
			if (i >= rows) {
				return false;
			}
		} else {
			if (i > 1u) {
				return false;
			}
			i *= rows;
		}
		uint p = first + i * pc.dims[0];
		if (p % E == 0u) {
			return false;
		}
		e0 = p / E * E;
	} else {
		e0 = ((first + pc.skip) / E + i) * E;
	}
	lo = max(e0, first + pc.skip);
	hi = min(e0 + E, end);
	return e0 < end;
}

// inRun reports whether the block [e0, e0+E), whose part in the piece is
// [lo, hi) and whose first element there is at coord, lies whole in one
// innermost run, or with ROWCH whole in the piece.
bool inRun(uint e0, uint lo, uint hi, uint coord[8]) {
#if !defined(ROWS) && !defined(SEAMS) && !defined(ELEMS)
	if (ROWCH != 0u) {
		return lo == e0 && hi == e0 + E;
	}
#endif
	return lo == e0 && hi == e0 + E && coord[0] + E <= pc.dims[0];
}

// locate finds the multi-index of element r of the piece (row-major,
// innermost first in coord) and adds each input's offset there to off:
// inputs are row-major over the dimensions they are not broadcast in.
void locate(uint r, out uint coord[8], inout uint off[NIN]) {
	uint p[NIN];
	for (uint x = 0u; x < NIN; x++) p[x] = 1u;
	for (uint d = 0u; d < RANK; d++) {
		uint c = r;
		if (d + 1u < RANK) {
			uint q = div(r, d);
			c = r - q * pc.dims[d];
			r = q;
		}
		coord[d] = c;
		for (uint x = 0u; x < NIN; x++) {
			if (!broadcast(x, d)) {
				off[x] += c * p[x];
				p[x] *= pc.dims[d];
			}
		}
	}
}

// strides returns each input's element stride along each dimension, 0
// where it is broadcast.
void strides(out uint st[NIN][8]) {
	for (uint x = 0u; x < NIN; x++) {
		uint s = 1u;
		for (uint d = 0u; d < RANK; d++) {
			st[x][d] = broadcast(x, d) ? 0u : s;
			s *= broadcast(x, d) ? 1u : pc.dims[d];
		}
	}
}

// advanceFrom steps the multi-index to the next index of dimension
// from, like an odometer, and each input's offset with it: from 0 the
// next element, from 1 the start of the next row when coord[0] is 0. The
// loop has no break, so that it unrolls and the arrays stay in
// registers.
void advanceFrom(uint from, inout uint coord[8], inout uint off[NIN], uint st[NIN][8]) {
	bool carry = true;
	for (uint d = from; d < RANK; d++) {
		if (carry) {
			coord[d]++;
			for (uint x = 0u; x < NIN; x++) off[x] += st[x][d];
			carry = coord[d] == pc.dims[d] && d + 1u < RANK;
			if (carry) {
				coord[d] = 0u;
				for (uint x = 0u; x < NIN; x++) off[x] -= pc.dims[d] * st[x][d];
			}
		}
	}
}

// advance steps the multi-index to the next element.
void advance(inout uint coord[8], inout uint off[NIN], uint st[NIN][8]) {
	advanceFrom(0u, coord, off, st);
}

#if !defined(ROWS) && !defined(SEAMS) && !defined(ELEMS)
// rowChunk returns which chunk of its row chunk ch of a MODE_WHOLE block
// is, first stepping coord and off to the next row where ch starts one.
uint rowChunk(uint ch, inout uint coord[8], inout uint off[NIN], uint st[NIN][8]) {
	if (ROWCH == 0u) {
		return ch;
	}
	if (ch != 0u && ch % ROWCH == 0u) {
		advanceFrom(1u, coord, off, st);
	}
	return ch % ROWCH;
}
#endif

#ifdef ROWS
// put sets element j of a chunk of W-byte elements, held as W vectors,
// to the low bits of v; the chunk starts zeroed when W < 4. j is a
// constant once the caller's loops unroll, so the position is too.
void put(inout uvec4 r[8], uint w, uint j, uvec2 v) {
	uint b = j * w;
	uint k = b >> 4, i = (b >> 2) & 3u;
	if (w == 8u) {
		r[k][i] = v.x;
		r[k][i + 1u] = v.y;
	} else if (w == 4u) {
		r[k][i] = v.x;
	} else {
		r[k][i] |= v.x << (8u * (b & 3u));
	}
}

// elemOf returns element c of w-byte elements held in vectors r.
uvec2 elemOf(uvec4 r[8], uint w, uint c) {
	uint b = c * w;
	uint v = r[b >> 4][(b >> 2) & 3u];
	if (w == 8u) return uvec2(v, r[(b + 4u) >> 4][((b + 4u) >> 2) & 3u]);
	if (w == 4u) return uvec2(v, 0u);
	return uvec2((v >> (8u * (b & 3u))) & ((1u << (8u * w)) - 1u), 0u);
}

// twoRuns: input x's offsets from row to row keep one step, 0 where x
// is broadcast in dimension 1 (its rows repeat), else 1 where it is
// broadcast along the rows (its values on successive rows lie side by
// side), until a dimension from 1 on starts over where x's broadcast
// changes. Where that takes at least a block's rows (the host sets bit x
// of TWO), a block sees at most one such break, so its offsets are two
// runs. Each run is read by vectors once a block, from where it would
// begin at row 0 (clamped loads) or at the last row, and a row takes its
// elements from the run it lies in: no load per row.
bool two(uint x) { return ((TWO >> x) & 1u) != 0u; }
uint runStep(uint x) { return ((TWO >> (8u + x)) & 1u) != 0u ? 0u : 1u; }
const uint BLOCK_ROWS = E / ROWLEN;

// runStarts returns where input x's two runs would begin at row 0.
uvec2 runStarts(uint x, uint ro[16]) {
	uint s = runStep(x);
	return uvec2(ro[0], ro[BLOCK_ROWS - 1u] - (BLOCK_ROWS - 1u) * s);
}

// inFirst reports whether row r of the block lies in input x's first run.
bool inFirst(uint x, uint r, uint ro[16], uvec2 ab) {
	return ro[r] == ab.x + r * runStep(x);
}

// rowChunk reads chunk ch of a MODE_ROWS block for input x (w-byte
// elements): by vectors where the input runs on through the block's
// rows from start, else from each row's value (rv, for an input
// broadcast along the rows), as two runs (seg holds the rows of an
// input broadcast in dimension 1), or row by row from where each row
// begins (ro): the vectors that hold a row's elements are read once, and
// each element taken from them, not loaded alone (zoo-17 and zoo-23 in
// f32 ran in 0.67 and 0.72 of the time, in i8 0.49 and 0.57). Row and
// column of each element are constants once the loops unroll.
void rowChunk(uint x, uint w, uint ch, uint start, uvec2 rv[16], uint ro[16], uvec4 seg[2][8], out uvec4 r[8]) {
	if (!broadcast(x, 0u) && ((GATHER >> x) & 1u) == 0u) {
		load16(x, w, start + 16u * ch, r);
		return;
	}
	for (uint k = 0u; k < w; k++) {
		r[k] = uvec4(0u);
	}
	if (!broadcast(x, 0u) && two(x)) {
		uvec2 ab = runStarts(x, ro);
		[[unroll]] for (uint j = 0u; j < 16u; j++) {
			uint e = 16u * ch + j;
			uint c = e % ROWLEN;
			put(r, w, j, inFirst(x, e / ROWLEN, ro, ab) ? elemOf(seg[0], w, c) : elemOf(seg[1], w, c));
		}
		return;
	}
	uvec4 rowv[8];
	[[unroll]] for (uint j = 0u; j < 16u; j++) {
		uint e = 16u * ch + j;
		uint row = e / ROWLEN;
		if (broadcast(x, 0u)) {
			put(r, w, j, rv[row]);
		} else {
			if (j == 0u || e % ROWLEN == 0u) {
				loadVecs(x, w, ro[row], (ROWLEN * w + 15u) / 16u, false, rowv);
			}
			put(r, w, j, elemOf(rowv, w, e % ROWLEN));
		}
	}
}

// runsOf reads the two runs of input x (w bytes wide) where its step is
// 0, or it is broadcast along the rows, into seg, and then, in the
// latter case, its value on each row into rv.
void runsOf(uint x, uint w, uint ro[16], inout uvec2 rv[16], out uvec4 seg[2][8]) {
	if (pushed(x) || !two(x)) {
		return;
	}
	uvec2 ab = runStarts(x, ro);
	// A row each for a step of 0, else the values of all the block's
	// rows.
	uint n = broadcast(x, 0u) ? (((BLOCK_ROWS - 1u) * runStep(x) + 1u) * w + 15u) / 16u : (ROWLEN * w + 15u) / 16u;
	loadVecs(x, w, ab.x, n, true, seg[0]);
	loadVecs(x, w, ab.y, n, true, seg[1]);
	if (broadcast(x, 0u)) {
		[[unroll]] for (uint r = 0u; r < 16u; r++) {
			if (r < BLOCK_ROWS) {
				uint c = r * runStep(x);
				rv[r] = inFirst(x, r, ro, ab) ? elemOf(seg[0], w, c) : elemOf(seg[1], w, c);
			}
		}
	}
}

// rowsOf reads what the rows of a MODE_ROWS block need, stepping the
// multi-index coord (a row's start) and the offsets off row by row: for
// each input, where each row begins (ro); for each that is broadcast
// along the rows, not pushed and not read as two runs (runsOf reads
// those), its value on each row (rv; ws[x] bytes wide).
void rowsOf(uint ws[NIN], inout uint coord[8], inout uint off[NIN], out uvec2 rv[NIN][16], out uint ro[NIN][16]) {
	uint st[NIN][8];
	strides(st);
	[[unroll]] for (uint r = 0u; r < 16u; r++) {
		if (r < BLOCK_ROWS) {
			for (uint x = 0u; x < NIN; x++) {
				ro[x][r] = off[x];
				rv[x][r] = broadcast(x, 0u) && !pushed(x) && !two(x) ? elemAt(x, ws[x], off[x]) : uvec2(0u);
			}
			if (r + 1u < BLOCK_ROWS) {
				advanceFrom(1u, coord, off, st);
			}
		}
	}
}
#endif

#ifdef SEAMS
// MODE_SEAMS only: bit x, input x is broadcast in no dimension, so that
// its offsets run on from one row into the next.
layout(constant_id = SPEC_RUNON) const uint RUNON = 0;

// headMask returns the mask of a vector's bytes before byte t.
uvec4 headMask(int t) {
	ivec4 n = clamp(ivec4(t) - ivec4(0, 4, 8, 12), 0, 4);
	uvec4 m = (uvec4(1u) << uvec4(8 * min(n, ivec4(3)))) - 1u;
	return mix(m, uvec4(0xffffffffu), equal(n, ivec4(4)));
}

// seamChunk reads chunk ch of a MODE_SEAMS block for input x (w-byte
// elements) whose first b elements lie in one row and the rest in the
// next: from off0 on (the block's first element) and from off1 on (the
// next row's first), or for an input broadcast along the rows its value
// on each, v. The two rows' vectors are merged byte by byte, so the
// chunk is read and kept as whole vectors. An input that runs on
// (RUNON) is one run, read once.
void seamChunk(uint x, uint w, uint ch, uint b, uint off0, uint off1, uvec2 v[2], out uvec4 r[8]) {
	int t = int((b - 16u * ch) * w); // the chunk's bytes in the first row
	if (broadcast(x, 0u)) {
		uvec4 a = splatOf(v[0], w), c = splatOf(v[1], w);
		for (uint k = 0u; k < w; k++) {
			uvec4 m = headMask(t - int(16u * k));
			r[k] = (a & m) | (c & ~m);
		}
		return;
	}
	if (((RUNON >> x) & 1u) != 0u) {
		loadVecs(x, w, off0 + 16u * ch, w, false, r);
		return;
	}
	uvec4 c[8];
	loadVecs(x, w, off0 + 16u * ch, w, true, r);
	loadVecs(x, w, off1 - b + 16u * ch, w, true, c);
	for (uint k = 0u; k < w; k++) {
		uvec4 m = headMask(t - int(16u * k));
		r[k] = (r[k] & m) | (c[k] & ~m);
	}
}

// seamOffsets returns, for a MODE_SEAMS block whose first element is at
// coord with each input's offset there in off, each input's offset at
// the next row's first element, and the block's elements before it.
uint seamOffsets(uint coord[8], uint off[NIN], out uint next[NIN]) {
	uint st[NIN][8];
	strides(st);
	uint c[8] = coord;
	next = off;
	advanceFrom(1u, c, next, st);
	for (uint x = 0u; x < NIN; x++) {
		next[x] -= coord[0] * st[x][0];
	}
	return pc.dims[0] - coord[0];
}
#endif

#ifdef STORE64
// A block's vectors are stored in pairs when it has an even number of
// them, as then every pair starts 32-byte aligned in the binding.
const bool PAIRS = OUT_VECS % 2u == 0u;
uvec4 pending; // the first vector of a pair
#endif

// storeVec writes vector j of the block whose first vector is vector b
// of out. The block's vectors come in order, so with STORE64 an odd one
// completes the pair that its predecessor began; j is a constant once
// the block's loops unroll, so only the store remains.
void storeVec(uint b, uint j, uvec4 v) {
#ifdef STORE64
	if (PAIRS) {
		if ((j & 1u) == 0u) {
			pending = v;
		} else {
			out64[(b + j) >> 1] = u64vec4(pack64(pending.xy), pack64(pending.zw), pack64(v.xy), pack64(v.zw));
		}
		return;
	}
#endif
	outV[b + j] = v;
}

// store writes the bytes of word i of out that mask selects.
void store(uint i, uint v, uint mask) {
	outW[i] = mask == 0xffffffffu ? v : (outW[i] & ~mask) | v;
}

// The op's hooks (see the top of this file).
void opChunk(uvec4 v[NIN][8], out uvec4 o[8]);
uvec2 opElem(uint off[NIN]);

// EACH_INPUT(F) expands to F(x) for every input x, x a constant: each
// input's code then folds as if written out. Written as a loop over the
// inputs, select's rows of 13 f32 ran 10x as slow (the arrays indexed
// by input stayed in memory), and unrolled with [[unroll]] their
// pipelines took lavapipe 9-45 s to build.
#if NIN == 1
#define EACH_INPUT(F) F(0u)
#elif NIN == 2
#define EACH_INPUT(F) F(0u) F(1u)
#elif NIN == 3
#define EACH_INPUT(F) F(0u) F(1u) F(2u)
#else
#define EACH_INPUT(F) F(0u) F(1u) F(2u) F(3u)
#endif

// constant reports whether input x is one value across a run of the
// innermost dimension.
bool constant(uint x) { return pushed(x) || broadcast(x, 0u); }

// splatIn fills v with input x's element c, repeated over a chunk.
void splatIn(uint x, uvec2 c, out uvec4 v[8]) {
	for (uint k = 0u; k < inW(x); k++) {
		v[k] = splatOf(c, inW(x));
	}
}

#ifdef HAS_FOLD
// An op that defines HAS_FOLD may fold its output into one value instead
// of storing it, where its FOLD is not 0: foldChunk takes each chunk,
// foldElem each element of the element path, each with the index of
// its first element in the layout (blocks of a fold are indexed from the
// layout's first element), and foldEnd ends every invocation, those
// without a block too.
void foldChunk(uvec4 o, uint e);
void foldElem(uint v, uint e);
void foldEnd();
#endif

// storeChunk stores chunk ch of the block that starts at element e0.
void storeChunk(uint e0, uint ch, uvec4 o[8]) {
#ifdef HAS_FOLD
	if (FOLD != 0u) {
		foldChunk(o[0], e0 + 16u * ch);
		return;
	}
#endif
	for (uint k = 0u; k < OUT_W; k++) {
		storeVec(e0 / 16u * OUT_W, ch * OUT_W + k, o[k]);
	}
}

#if defined(ROWS)
// rows does a block of MODE_ROWS from e0, from the multi-index coord (a
// row's start) and the inputs' offsets off there.
void rows(uint e0, uint coord[8], uint off[NIN]) {
	uint start[NIN] = off;
	uvec2 rv[NIN][16];
	uint ro[NIN][16];
	uvec4 seg[NIN][2][8];
	uint ws[NIN];
#define ROWS_WIDTH(x) ws[x] = inW(x);
	EACH_INPUT(ROWS_WIDTH)
	rowsOf(ws, coord, off, rv, ro);
#define ROWS_RUNS(x) runsOf(x, inW(x), ro[x], rv[x], seg[x]);
	EACH_INPUT(ROWS_RUNS)
	[[unroll]] for (uint ch = 0u; ch < CHUNKS; ch++) {
		uvec4 v[NIN][8];
#define ROWS_CHUNK(x) \
		if (pushed(x)) { \
			splatIn(x, scalarOf(x), v[x]); \
		} else { \
			rowChunk(x, inW(x), ch, start[x], rv[x], ro[x], seg[x], v[x]); \
		}
		EACH_INPUT(ROWS_CHUNK)
		uvec4 o[8];
		opChunk(v, o);
		storeChunk(e0, ch, o);
	}
}
#elif defined(SEAMS)
// seams does a block of MODE_SEAMS from e0, from its multi-index coord
// and the inputs' offsets off there: an input broadcast along the rows
// is read once for each of the two rows.
void seams(uint e0, uint coord[8], uint off[NIN]) {
	uint next[NIN];
	uint b = seamOffsets(coord, off, next);
	uvec2 rv[NIN][2];
#define SEAMS_VALUES(x) \
	rv[x][0] = rv[x][1] = uvec2(0u); \
	if (broadcast(x, 0u) && !pushed(x)) { \
		rv[x][0] = elemAt(x, inW(x), off[x]); \
		rv[x][1] = elemAt(x, inW(x), next[x]); \
	}
	EACH_INPUT(SEAMS_VALUES)
	for (uint ch = 0u; ch < CHUNKS; ch++) {
		uvec4 v[NIN][8];
#define SEAMS_CHUNK(x) \
		if (pushed(x)) { \
			splatIn(x, scalarOf(x), v[x]); \
		} else { \
			seamChunk(x, inW(x), ch, b, off[x], next[x], rv[x], v[x]); \
		}
		EACH_INPUT(SEAMS_CHUNK)
		uvec4 o[8];
		opChunk(v, o);
		storeChunk(e0, ch, o);
	}
}
#else
#ifndef ELEMS
// whole does a block of MODE_WHOLE, [lo, hi) of the block from e0 in
// the piece, from its multi-index coord and the inputs' offsets off
// there, if it lies whole in one innermost run, or with ROWCH is whole
// rows: the inputs constant along a row are read at each row's start.
void whole(uint e0, uint lo, uint hi, uint coord[8], uint off[NIN]) {
	if (!inRun(e0, lo, hi, coord)) {
		return;
	}
	uint st[NIN][8];
	if (ROWCH != 0u) {
		strides(st);
	}
	uvec2 c[NIN];
	for (uint ch = 0u; ch < CHUNKS; ch++) {
		uint r = rowChunk(ch, coord, off, st);
		uvec4 v[NIN][8];
#define WHOLE_CHUNK(x) \
		if (constant(x)) { \
			if (r == 0u) { \
				c[x] = inElem(x, off[x]); \
			} \
			splatIn(x, c[x], v[x]); \
		} else { \
			load16(x, inW(x), off[x] + 16u * r, v[x]); \
		}
		EACH_INPUT(WHOLE_CHUNK)
		uvec4 o[8];
		opChunk(v, o);
		storeChunk(e0, ch, o);
	}
}
#endif

#ifndef WHOLE
// elements does [lo, hi) of a block element by element, from its
// multi-index coord and the inputs' offsets off there, stepping each
// input by its strides: the general path, which every other mode is
// checked against. Narrow elements gather into a word, stored when the
// next word begins; a word the piece covers in part keeps its other
// bytes, which belong to a neighbouring piece.
void elements(uint lo, uint hi, uint coord[8], uint off[NIN]) {
	uint st[NIN][8];
	strides(st);
	uint acc = 0u, accMask = 0u, accWord = lo * OUT_W / 4u;
	for (uint e = lo; e < hi; e++) {
		uvec2 v = opElem(off);
#ifdef HAS_FOLD
		if (FOLD != 0u) {
			foldElem(v.x, e);
			advance(coord, off, st);
			continue;
		}
#endif
		if (OUT_W == 8u) {
			outW[2u * e] = v.x;
			outW[2u * e + 1u] = v.y;
		} else if (OUT_W == 4u) {
			outW[e] = v.x;
		} else {
			if (e * OUT_W / 4u != accWord) {
				store(accWord, acc, accMask);
				acc = accMask = 0u;
				accWord = e * OUT_W / 4u;
			}
			uint sh = 8u * (e * OUT_W % 4u);
			acc |= v.x << sh;
			accMask |= ((1u << (8u * OUT_W)) - 1u) << sh;
		}
		advance(coord, off, st);
	}
	if (OUT_W < 4u && accMask != 0u) {
		store(accWord, acc, accMask);
	}
}
#endif
#endif

// run does the block this invocation owns, if it has one.
void run() {
	uint first = pc.base[NIN];
	uint e0, lo, hi;
	if (!block(first, e0, lo, hi)) {
		return;
	}
	// The block's multi-index and each input's offset there.
	uint coord[8];
	uint off[NIN];
	for (uint x = 0u; x < NIN; x++) {
		off[x] = pc.base[x];
	}
	locate(lo - first, coord, off);
#if defined(ROWS)
	// Only whole blocks: the piece's last rows, fewer than a block, are
	// left to MODE_ALL, and the grid's last workgroup may reach them.
	if (lo == e0 && hi == e0 + E) {
		rows(e0, coord, off);
	}
#elif defined(SEAMS)
	seams(e0, coord, off);
#elif defined(WHOLE)
	whole(e0, lo, hi, coord, off);
#elif defined(ELEMS)
	elements(lo, hi, coord, off);
#else
	if (MODE == MODE_WHOLE) {
		whole(e0, lo, hi, coord, off);
	} else {
		elements(lo, hi, coord, off);
	}
#endif
}

void main() {
	run();
#ifdef HAS_FOLD
	if (FOLD != 0u) {
		foldEnd();
	}
#endif
}
