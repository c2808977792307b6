// The mask ops on elements and on chunks of sixteen, shared by the mask
// kernels (mask.glsl) and the fused ones (fused.glsl): comparisons,
// logical ops and float classifiers, each giving one bool byte, 0 or 1,
// per element. Every function takes the op (OP_ in spec.glsl), how its
// elements are read (KEY_), IsInf's attributes (detect: bit 0 -inf, bit
// 1 +inf) and the elements' bytes (w) as arguments, which are constants
// wherever it is called once specialization and inlining are done.
//
// Everything is integer arithmetic on the elements' bits: a driver may
// flush subnormals or treat NaNs loosely in float instructions, and i64
// and u64 must compare exactly. Floats are compared through an ordered
// integer key (sign and magnitude turned two's complement, so that -0
// and +0 meet at 0), NaNs found by their exponent and mantissa bits.
// 64-bit elements are pairs of 32-bit words: no shaderInt64 is needed.
// Greater and GreaterEqual are Less and LessEqual with a and b swapped
// by the host.

// Float formats: the sign bit, the magnitude mask and the infinity's
// magnitude, in the high word for f64.
uint signBit(uint key) {
	return key == KEY_F16 || key == KEY_BF16 ? 0x8000u : 0x80000000u;
}
uint infBits(uint key) {
	if (key == KEY_F16) return 0x7c00u;
	if (key == KEY_BF16) return 0x7f80u;
	if (key == KEY_F32) return 0x7f800000u;
	return 0x7ff00000u;
}

// key returns an element as a 64-bit two's-complement integer (hi, lo)
// that orders as the element does, and whether it is a NaN.
void keyOf(uint key, uint w, uvec2 v, out int hi, out uint lo, out bool nan) {
	lo = 0u;
	nan = false;
	if (key == KEY_BOOL) {
		hi = v.x != 0u ? 1 : 0;
	} else if (key == KEY_UINT) {
		if (w == 8u) {
			hi = int(v.y ^ 0x80000000u);
			lo = v.x;
		} else {
			hi = w == 4u ? int(v.x ^ 0x80000000u) : int(v.x);
		}
	} else if (key == KEY_INT) {
		if (w == 8u) {
			hi = int(v.y);
			lo = v.x;
		} else {
			hi = int(v.x << (32u - 8u * w)) >> (32u - 8u * w);
		}
	} else if (key == KEY_F64) {
		uint mh = v.y & 0x7fffffffu;
		nan = mh > 0x7ff00000u || (mh == 0x7ff00000u && v.x != 0u);
		bool neg = (v.y & 0x80000000u) != 0u;
		hi = neg ? -int(mh) - (v.x != 0u ? 1 : 0) : int(mh);
		lo = neg ? 0u - v.x : v.x;
	} else {
		uint mag = v.x & (signBit(key) - 1u);
		nan = mag > infBits(key);
		hi = (v.x & signBit(key)) != 0u ? -int(mag) : int(mag);
	}
}

// result computes the op on one element of a (and b).
uint result(uint op, uint key, uint detect, uint w, uvec2 a, uvec2 b) {
	if (op >= OP_AND && op <= OP_NOT) {
		bool x = a.x != 0u, y = b.x != 0u;
		if (op == OP_AND) return uint(x && y);
		if (op == OP_OR) return uint(x || y);
		if (op == OP_XOR) return uint(x != y);
		return uint(!x);
	}
	if (op >= OP_ISNAN) {
		uint hi = w == 8u ? a.y : a.x;
		uint mag = hi & (signBit(key) - 1u);
		bool lowZero = w != 8u || a.x == 0u;
		bool inf = mag == infBits(key) && lowZero;
		bool nan = mag > infBits(key) || (mag == infBits(key) && !lowZero);
		if (op == OP_ISNAN) return uint(nan);
		if (op == OP_ISFINITE) return uint(!nan && !inf);
		uint want = (hi & signBit(key)) != 0u ? 1u : 2u;
		return uint(inf && (detect & want) != 0u);
	}
	int ha, hb;
	uint la, lb;
	bool na, nb;
	keyOf(key, w, a, ha, la, na);
	keyOf(key, w, b, hb, lb, nb);
	bool eq = ha == hb && la == lb && !na && !nb;
	bool lt = (ha < hb || (ha == hb && la < lb)) && !na && !nb;
	if (op == OP_EQ) return uint(eq);
	if (op == OP_NE) return uint(!eq);
	if (op == OP_LT) return uint(lt);
	return uint(lt || eq);
}

// key4 is key for four elements of up to 32 bits, one in the low bits of
// each lane: the ordered keys, and 1 where an element is a NaN.
ivec4 key4(uint key, uint w, uvec4 v, out uvec4 nan) {
	nan = uvec4(0u);
	if (key == KEY_BOOL) return ivec4(notEqual(v, uvec4(0u)));
	if (key == KEY_UINT) return w == 4u ? ivec4(v ^ 0x80000000u) : ivec4(v);
	if (key == KEY_INT) return ivec4(v << (32u - 8u * w)) >> (32u - 8u * w);
	uvec4 mag = v & (signBit(key) - 1u);
	nan = uvec4(greaterThan(mag, uvec4(infBits(key))));
	ivec4 k = ivec4(mag);
	return mix(k, -k, notEqual(v & signBit(key), uvec4(0u)));
}

// compare4 is the comparison op on four elements of a and b: 0 or 1 each.
uvec4 compare4(uint op, uint key, uint w, uvec4 a, uvec4 b) {
	uvec4 na, nb;
	ivec4 ka = key4(key, w, a, na), kb = key4(key, w, b, nb);
	uvec4 ok = uvec4(1u) - (na | nb);
	if (op == OP_EQ) return uvec4(equal(ka, kb)) & ok;
	if (op == OP_NE) return uvec4(1u) - (uvec4(equal(ka, kb)) & ok);
	if (op == OP_LT) return uvec4(lessThan(ka, kb)) & ok;
	return uvec4(lessThanEqual(ka, kb)) & ok;
}

// classify4 is the classifier op on four elements of up to 32 bits.
uvec4 classify4(uint op, uint key, uint detect, uvec4 a) {
	uvec4 mag = a & (signBit(key) - 1u);
	uvec4 nan = uvec4(greaterThan(mag, uvec4(infBits(key))));
	if (op == OP_ISNAN) return nan;
	uvec4 inf = uvec4(equal(mag, uvec4(infBits(key))));
	if (op == OP_ISFINITE) return uvec4(1u) - (nan | inf);
	uvec4 neg = uvec4(notEqual(a & signBit(key), uvec4(0u)));
	return inf & (neg * (detect & 1u) + (uvec4(1u) - neg) * (detect >> 1));
}

// op4 is the op on four elements of up to 32 bits.
uvec4 op4(uint op, uint key, uint detect, uint w, uvec4 a, uvec4 b) {
	return op >= OP_ISNAN ? classify4(op, key, detect, a) : compare4(op, key, w, a, b);
}

// op2 is the op on the two 64-bit elements of a vector each (low word
// first): 0 or 1 in x and y.
uvec2 op2(uint op, uint key, uint detect, uvec4 a, uvec4 b) {
	return uvec2(result(op, key, detect, 8u, a.xy, b.xy), result(op, key, detect, 8u, a.zw, b.zw));
}

// opVec is the op on the elements of vector k of a chunk of w-byte
// elements (a and b as load16 reads them), as the bytes of the output
// words they make: all four words for w = 1, words 2k and 2k+1 for
// w = 2, word k for w = 4, half of word k/2 for w = 8, in the low or
// high half as k is even or odd.
void opVec(uint op, uint key, uint detect, uint w, uvec4 a, uvec4 b, uint k, inout uvec4 o) {
	if (w == 1u) {
		for (uint i = 0u; i < 4u; i++) {
			o |= op4(op, key, detect, w, (a >> (8u * i)) & 0xffu, (b >> (8u * i)) & 0xffu) << (8u * i);
		}
	} else if (w == 2u) {
		uvec4 lo = op4(op, key, detect, w, a & 0xffffu, b & 0xffffu), hi = op4(op, key, detect, w, a >> 16, b >> 16);
		uvec4 r = lo | (hi << 8);
		o[2u * k] = r.x | (r.y << 16);
		o[2u * k + 1u] = r.z | (r.w << 16);
	} else if (w == 4u) {
		uvec4 r = op4(op, key, detect, w, a, b) << uvec4(0u, 8u, 16u, 24u);
		o[k] = r.x | r.y | r.z | r.w;
	} else {
		uvec2 r = op2(op, key, detect, a, b);
		o[k >> 1] |= (r.x | (r.y << 8)) << (16u * (k & 1u));
	}
}

// logicalChunk is logical op op (OP_AND to OP_NOT) on sixteen bools at
// once, as bytes: a and b a chunk's vector of bools each.
uvec4 logicalChunk(uint op, uvec4 a, uvec4 b) {
	uvec4 fa = flags(a);
	uvec4 fb = op == OP_NOT ? uvec4(0u) : flags(b);
	if (op == OP_AND) return fa & fb;
	if (op == OP_OR) return fa | fb;
	if (op == OP_XOR) return fa ^ fb;
	return fa ^ 0x01010101u;
}

// chunkOp is the op on one chunk of sixteen elements of a (and b), each
// held as w vectors: sixteen bool bytes.
uvec4 chunkOp(uint op, uint key, uint detect, uint w, uvec4 av[8], uvec4 bv[8]) {
	if (op >= OP_AND && op <= OP_NOT) {
		return logicalChunk(op, av[0], bv[0]);
	}
	uvec4 o = uvec4(0u);
	for (uint k = 0u; k < w; k++) {
		opVec(op, key, detect, w, av[k], bv[k], k, o);
	}
	return o;
}
