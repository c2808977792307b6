// The mask ops over one piece of a broadcast (ops/mask.go plans the
// pieces with Select's planner): comparisons, logical ops and float
// classifiers, each writing one bool byte, 0 or 1, per output element.
// This is the body of the mask kernels; shaders/mask_w*.comp include it
// with the defines that make each variant, as select.glsl's are made
// (TEXEL_LOADS, STORE64), and with W, the input element bytes, and it is
// not compiled alone. Which op, and how its element type is read, are
// specialization constants, so one pipeline per op and type is built
// from one module. W is not: lavapipe translates and optimises all of a
// module's code before specialization removes any, and with the width a
// constant too each module is a quarter of the size, its pipelines built
// in half the time (about 16 ms instead of 32 for a first call).
//
// Everything is integer arithmetic on the elements' bits: a driver may
// flush subnormals or treat NaNs loosely in float instructions, and i64
// and u64 must compare exactly. Floats are compared through an ordered
// integer key (sign and magnitude turned two's complement, so that -0
// and +0 meet at 0), NaNs found by their exponent and mantissa bits.
// 64-bit elements are pairs of 32-bit words: no shaderInt64 is needed.
//
// As in select.glsl, each invocation owns one block of E output elements,
// aligned in the output binding, so no two invocations share a word;
// blocks inside one innermost run are done with vector loads (or one
// load for an operand broadcast there), others element by element.
layout(local_size_x_id = 0) in;
// W, the input element bytes (1, 2, 4 or 8), is defined by the includer;
// constant_id 1 is left unused.
layout(constant_id = 2) const uint RANK = 1;   // dimensions of the piece, 1 to 8
layout(constant_id = 3) const uint PUSHED = 0; // bit x: operand x (a, b) is pc.scalar[x]
layout(constant_id = 4) const uint CHUNKS = 1; // 16-element chunks per block
layout(constant_id = 5) const uint ALIGNED = 0; // bit x: every vector load of operand x is 16-byte aligned
layout(constant_id = 6) const uint INNER = 0;  // bit x: operand x is broadcast in dim 0
// constant_id 7 is MODE, 11 to 13 ROWLEN, GATHER and TWO: see elementwise.glsl.
layout(constant_id = 8) const uint OP = 0;     // see the OP_ constants
layout(constant_id = 9) const uint KEY = 0;    // how elements are read: see the KEY_ constants
layout(constant_id = 10) const uint DETECT = 3; // is-inf: bit 0 -inf, bit 1 +inf

// Ops. Greater and GreaterEqual are Less and LessEqual with a and b
// swapped by the host.
const uint OP_EQ = 0u, OP_NE = 1u, OP_LT = 2u, OP_LE = 3u;
const uint OP_AND = 4u, OP_OR = 5u, OP_XOR = 6u, OP_NOT = 7u;
const uint OP_ISNAN = 8u, OP_ISINF = 9u, OP_ISFINITE = 10u;

// Element types, as far as reading them goes.
const uint KEY_UINT = 0u, KEY_INT = 1u, KEY_BOOL = 2u;
const uint KEY_F16 = 3u, KEY_BF16 = 4u, KEY_F32 = 5u, KEY_F64 = 6u;

const bool UNARY = OP >= OP_NOT;
const bool LOGICAL = OP >= OP_AND && OP <= OP_NOT;
const uint E = 16u * CHUNKS; // elements per block

#ifdef TEXEL_LOADS
layout(binding = 0, rgba32ui) readonly uniform uimageBuffer aT;
layout(binding = 1, rgba32ui) readonly uniform uimageBuffer bT;

uvec4 vecAt(uint x, uint i) {
	if (x == 0u) return imageLoad(aT, int(i));
	return imageLoad(bT, int(i));
}

uint wordAt(uint x, uint i) { return vecAt(x, i >> 2)[i & 3u]; }

uint vecs(uint x) {
	if (x == 0u) return uint(imageSize(aT));
	return uint(imageSize(bT));
}
#else
layout(std430, binding = 0) readonly buffer AV { uvec4 aV[]; };
layout(std430, binding = 0) readonly buffer AW { uint aW[]; };
layout(std430, binding = 1) readonly buffer BV { uvec4 bV[]; };
layout(std430, binding = 1) readonly buffer BW { uint bW[]; };

uvec4 vecAt(uint x, uint i) {
	if (x == 0u) return aV[i];
	return bV[i];
}

uint wordAt(uint x, uint i) {
	if (x == 0u) return aW[i];
	return bW[i];
}

uint vecs(uint x) {
	if (x == 0u) return uint(aV.length());
	return uint(bV.length());
}
#endif

// The output, the push constants and the code select and the masks
// share.
#define NIN 2
const uint OUT_VECS = CHUNKS; // one bool byte per element
#include "elementwise.glsl"

// Float formats: the sign bit, the magnitude mask and the infinity's
// magnitude, in the high word for f64.
uint signBit() {
	return KEY == KEY_F16 || KEY == KEY_BF16 ? 0x8000u : 0x80000000u;
}
uint infBits() {
	if (KEY == KEY_F16) return 0x7c00u;
	if (KEY == KEY_BF16) return 0x7f80u;
	if (KEY == KEY_F32) return 0x7f800000u;
	return 0x7ff00000u;
}

// key returns an element as a 64-bit two's-complement integer (hi, lo)
// that orders as the element does, and whether it is a NaN.
void key(uvec2 v, out int hi, out uint lo, out bool nan) {
	lo = 0u;
	nan = false;
	if (KEY == KEY_BOOL) {
		hi = v.x != 0u ? 1 : 0;
	} else if (KEY == KEY_UINT) {
		if (W == 8u) {
			hi = int(v.y ^ 0x80000000u);
			lo = v.x;
		} else {
			hi = W == 4u ? int(v.x ^ 0x80000000u) : int(v.x);
		}
	} else if (KEY == KEY_INT) {
		if (W == 8u) {
			hi = int(v.y);
			lo = v.x;
		} else {
			hi = int(v.x << (32u - 8u * W)) >> (32u - 8u * W);
		}
	} else if (KEY == KEY_F64) {
		uint mh = v.y & 0x7fffffffu;
		nan = mh > 0x7ff00000u || (mh == 0x7ff00000u && v.x != 0u);
		bool neg = (v.y & 0x80000000u) != 0u;
		hi = neg ? -int(mh) - (v.x != 0u ? 1 : 0) : int(mh);
		lo = neg ? 0u - v.x : v.x;
	} else {
		uint mag = v.x & (signBit() - 1u);
		nan = mag > infBits();
		hi = (v.x & signBit()) != 0u ? -int(mag) : int(mag);
	}
}

// result computes the op on one element of a (and b).
uint result(uvec2 a, uvec2 b) {
	if (LOGICAL) {
		bool x = a.x != 0u, y = b.x != 0u;
		if (OP == OP_AND) return uint(x && y);
		if (OP == OP_OR) return uint(x || y);
		if (OP == OP_XOR) return uint(x != y);
		return uint(!x);
	}
	if (OP >= OP_ISNAN) {
		uint hi = W == 8u ? a.y : a.x;
		uint mag = hi & (signBit() - 1u);
		bool lowZero = W != 8u || a.x == 0u;
		bool inf = mag == infBits() && lowZero;
		bool nan = mag > infBits() || (mag == infBits() && !lowZero);
		if (OP == OP_ISNAN) return uint(nan);
		if (OP == OP_ISFINITE) return uint(!nan && !inf);
		uint want = (hi & signBit()) != 0u ? 1u : 2u;
		return uint(inf && (DETECT & want) != 0u);
	}
	int ha, hb;
	uint la, lb;
	bool na, nb;
	key(a, ha, la, na);
	key(b, hb, lb, nb);
	bool eq = ha == hb && la == lb && !na && !nb;
	bool lt = (ha < hb || (ha == hb && la < lb)) && !na && !nb;
	if (OP == OP_EQ) return uint(eq);
	if (OP == OP_NE) return uint(!eq);
	if (OP == OP_LT) return uint(lt);
	return uint(lt || eq);
}

// key4 is key for four elements of up to 32 bits, one in the low bits of
// each lane: the ordered keys, and 1 where an element is a NaN.
ivec4 key4(uvec4 v, out uvec4 nan) {
	nan = uvec4(0u);
	if (KEY == KEY_BOOL) return ivec4(notEqual(v, uvec4(0u)));
	if (KEY == KEY_UINT) return W == 4u ? ivec4(v ^ 0x80000000u) : ivec4(v);
	if (KEY == KEY_INT) return ivec4(v << (32u - 8u * W)) >> (32u - 8u * W);
	uvec4 mag = v & (signBit() - 1u);
	nan = uvec4(greaterThan(mag, uvec4(infBits())));
	ivec4 k = ivec4(mag);
	return mix(k, -k, notEqual(v & signBit(), uvec4(0u)));
}

// compare4 is the comparison op on four elements of a and b: 0 or 1 each.
uvec4 compare4(uvec4 a, uvec4 b) {
	uvec4 na, nb;
	ivec4 ka = key4(a, na), kb = key4(b, nb);
	uvec4 ok = uvec4(1u) - (na | nb);
	if (OP == OP_EQ) return uvec4(equal(ka, kb)) & ok;
	if (OP == OP_NE) return uvec4(1u) - (uvec4(equal(ka, kb)) & ok);
	if (OP == OP_LT) return uvec4(lessThan(ka, kb)) & ok;
	return uvec4(lessThanEqual(ka, kb)) & ok;
}

// classify4 is the classifier op on four elements of up to 32 bits.
uvec4 classify4(uvec4 a) {
	uvec4 mag = a & (signBit() - 1u);
	uvec4 nan = uvec4(greaterThan(mag, uvec4(infBits())));
	if (OP == OP_ISNAN) return nan;
	uvec4 inf = uvec4(equal(mag, uvec4(infBits())));
	if (OP == OP_ISFINITE) return uvec4(1u) - (nan | inf);
	uvec4 neg = uvec4(notEqual(a & signBit(), uvec4(0u)));
	return inf & (neg * (DETECT & 1u) + (uvec4(1u) - neg) * (DETECT >> 1));
}

// op4 is the op on four elements of up to 32 bits.
uvec4 op4(uvec4 a, uvec4 b) { return OP >= OP_ISNAN ? classify4(a) : compare4(a, b); }

// op2 is the op on the two 64-bit elements of a vector each (low word
// first): 0 or 1 in x and y.
uvec2 op2(uvec4 a, uvec4 b) {
	return uvec2(result(a.xy, b.xy), result(a.zw, b.zw));
}

// opVec is the op on the elements of vector k of a chunk of W-byte
// elements (a and b as load16 reads them), as the bytes of the output
// words they make: all four words for W = 1, words 2k and 2k+1 for
// W = 2, word k for W = 4, half of word k/2 for W = 8, in the low or
// high half as k is even or odd.
void opVec(uvec4 a, uvec4 b, uint k, inout uvec4 o) {
	if (W == 1u) {
		for (uint i = 0u; i < 4u; i++) {
			o |= op4((a >> (8u * i)) & 0xffu, (b >> (8u * i)) & 0xffu) << (8u * i);
		}
	} else if (W == 2u) {
		uvec4 lo = op4(a & 0xffffu, b & 0xffffu), hi = op4(a >> 16, b >> 16);
		uvec4 r = lo | (hi << 8);
		o[2u * k] = r.x | (r.y << 16);
		o[2u * k + 1u] = r.z | (r.w << 16);
	} else if (W == 4u) {
		uvec4 r = op4(a, b) << uvec4(0u, 8u, 16u, 24u);
		o[k] = r.x | r.y | r.z | r.w;
	} else {
		uvec2 r = op2(a, b);
		o[k >> 1] |= (r.x | (r.y << 8)) << (16u * (k & 1u));
	}
}

bool pushed(uint x) { return (PUSHED & (1u << x)) != 0u; }

// constant reports whether operand x is one value across a block.
bool constant(uint x) { return pushed(x) || broadcast(x, 0u); }

uvec2 value(uint x, uint o) {
	if (pushed(x)) return pc.scalar[x];
	return elemAt(x, W, o);
}

// chunkOp is the op on one chunk of sixteen elements of a (and b), each
// held as W vectors: sixteen bool bytes.
uvec4 chunkOp(uvec4 av[8], uvec4 bv[8]) {
	if (LOGICAL) {
		// Sixteen bools at once, as bytes.
		uvec4 fa = flags(av[0]);
		uvec4 fb = UNARY ? uvec4(0u) : flags(bv[0]);
		if (OP == OP_AND) return fa & fb;
		if (OP == OP_OR) return fa | fb;
		if (OP == OP_XOR) return fa ^ fb;
		return fa ^ 0x01010101u;
	}
	uvec4 o = uvec4(0u);
	for (uint k = 0u; k < W; k++) {
		opVec(av[k], bv[k], k, o);
	}
	return o;
}

#ifdef ROWS
// rows does a block of MODE_ROWS (see elementwise.glsl) from e0, from
// the multi-index coord (a row's start) and the operands' offsets off
// there.
void rows(uint e0, uint coord[8], uint off[2]) {
	uint start[2] = off;
	uvec2 rv[2][16];
	uint ro[2][16];
	uvec4 seg[2][2][8];
	rowsOf(uint[2](W, W), coord, off, rv, ro);
	runsOf(0u, W, ro[0], rv[0], seg[0]);
	runsOf(1u, W, ro[1], rv[1], seg[1]);
	[[unroll]] for (uint ch = 0u; ch < CHUNKS; ch++) {
		uvec4 av[8], bv[8];
		if (pushed(0u)) {
			for (uint k = 0u; k < W; k++) av[k] = splat(pc.scalar[0]);
		} else {
			rowChunk(0u, W, ch, start[0], rv[0], ro[0], seg[0], av);
		}
		if (UNARY || pushed(1u)) {
			for (uint k = 0u; k < W; k++) bv[k] = splat(pc.scalar[1]);
		} else {
			rowChunk(1u, W, ch, start[1], rv[1], ro[1], seg[1], bv);
		}
		storeVec(e0 / 16u, ch, chunkOp(av, bv));
	}
}
#endif

#ifdef SEAMS
// seams does a block of MODE_SEAMS (see elementwise.glsl) from e0, from
// its multi-index coord and the operands' offsets off there.
void seams(uint e0, uint coord[8], uint off[2]) {
	uint next[2];
	uint b = seamOffsets(coord, off, next);
	uvec2 v[2][2];
	for (uint x = 0u; x < 2u; x++) {
		v[x][0] = v[x][1] = uvec2(0u);
		if (broadcast(x, 0u) && !pushed(x) && !(UNARY && x == 1u)) {
			v[x][0] = elemAt(x, W, off[x]);
			v[x][1] = elemAt(x, W, next[x]);
		}
	}
	for (uint ch = 0u; ch < CHUNKS; ch++) {
		uvec4 av[8], bv[8];
		if (pushed(0u)) {
			for (uint k = 0u; k < W; k++) av[k] = splat(pc.scalar[0]);
		} else {
			seamChunk(0u, W, ch, b, off[0], next[0], v[0], av);
		}
		if (UNARY || pushed(1u)) {
			for (uint k = 0u; k < W; k++) bv[k] = splat(pc.scalar[1]);
		} else {
			seamChunk(1u, W, ch, b, off[1], next[1], v[1], bv);
		}
		storeVec(e0 / 16u, ch, chunkOp(av, bv));
	}
}
#endif

void main() {
	uint first = pc.base[2];
	uint e0, lo, hi;
	if (!block(first, e0, lo, hi)) {
		return;
	}

	uint coord[8];
	uint off[2] = uint[2](pc.base[0], pc.base[1]);
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
		uint st[2][8];
		if (ROWCH != 0u) {
			strides(st);
		}
		uvec2 ca, cb;
		for (uint ch = 0u; ch < CHUNKS; ch++) {
			uint r = rowChunk(ch, coord, off, st);
			if (r == 0u) {
				ca = constant(0u) ? value(0u, off[0]) : uvec2(0u);
				cb = !UNARY && constant(1u) ? value(1u, off[1]) : uvec2(0u);
			}
			uvec4 av[8], bv[8];
			if (constant(0u)) {
				for (uint k = 0u; k < W; k++) av[k] = splat(ca);
			} else {
				load16(0u, W, off[0] + 16u * r, av);
			}
			if (UNARY || constant(1u)) {
				for (uint k = 0u; k < W; k++) bv[k] = splat(cb);
			} else {
				load16(1u, W, off[1] + 16u * r, bv);
			}
			storeVec(e0 / 16u, ch, chunkOp(av, bv));
		}
		return;
	}

	// Element by element, stepping each operand by its strides; bools
	// gather into a word, stored when the next word begins. A word the
	// piece covers in part keeps its other bytes, which belong to a
	// neighbouring piece.
	uint st[2][8];
	strides(st);
	uint acc = 0u, accMask = 0u, accWord = lo / 4u;
	for (uint e = lo; e < hi; e++) {
		uint v = result(value(0u, off[0]), UNARY ? uvec2(0u) : value(1u, off[1]));
		if (e / 4u != accWord) {
			store(accWord, acc, accMask);
			acc = accMask = 0u;
			accWord = e / 4u;
		}
		uint sh = 8u * (e % 4u);
		acc |= v << sh;
		accMask |= 0xffu << sh;
		advance(coord, off, st);
	}
	store(accWord, acc, accMask);
#endif
}
