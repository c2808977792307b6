// The ops of values on elements and on chunks of sixteen, shared by the
// minmax kernels (minmax.glsl) and the fused ones (fused.glsl): Maximum,
// Minimum and Clamp (OP_MAX, OP_MIN, OP_CLAMP in spec.glsl), each giving
// one of its operands' elements, bit for bit, or for bools the byte 0 or
// 1. Include maskops.glsl first: its keys read the integers and bools.
//
// As there, everything is integer arithmetic on the elements' bits.
// Floats order by an integer key in which -0 lies below +0 (the negative
// magnitudes are complemented, not negated), so that Maximum(-0, +0) is
// +0 and Minimum(-0, +0) is -0 whichever operand comes first, as IEEE
// 754-2019's maximum and minimum say. A NaN operand wins: a's where a is
// a NaN, else b's, payload and sign kept.

// ordOf returns element v as a 64-bit two's-complement integer (hi, lo)
// that orders as Maximum and Minimum order, and whether it is a NaN.
void ordOf(uint key, uint w, uvec2 v, out int hi, out uint lo, out bool nan) {
	if (key == KEY_F64) {
		uint mh = v.y & 0x7fffffffu;
		nan = mh > 0x7ff00000u || (mh == 0x7ff00000u && v.x != 0u);
		bool neg = (v.y & 0x80000000u) != 0u;
		hi = neg ? ~int(mh) : int(mh);
		lo = neg ? ~v.x : v.x;
	} else if (key == KEY_F16 || key == KEY_BF16 || key == KEY_F32) {
		uint mag = v.x & (signBit(key) - 1u);
		nan = mag > infBits(key);
		hi = (v.x & signBit(key)) != 0u ? ~int(mag) : int(mag);
		lo = 0u;
	} else {
		keyOf(key, w, v, hi, lo, nan);
	}
}

// pickOf is op, OP_MAX or OP_MIN, on one element of a and b.
uvec2 pickOf(uint op, uint key, uint w, uvec2 a, uvec2 b) {
	int ha, hb;
	uint la, lb;
	bool na, nb;
	ordOf(key, w, a, ha, la, na);
	ordOf(key, w, b, hb, lb, nb);
	bool lt = ha < hb || (ha == hb && la < lb);
	bool gt = ha > hb || (ha == hb && la > lb);
	bool takeA = na || (!nb && (op == OP_MAX ? !lt : !gt));
	if (key == KEY_BOOL) return uvec2(uint(takeA ? ha : hb), 0u);
	return takeA ? a : b;
}

// valueOf is op on one element of a, b and, for OP_CLAMP, c: Clamp is
// Minimum(Maximum(a, b), c), so that a b above c gives c. Its first pick
// is Maximum's, Minimum's and Clamp's alike, so that a slot of the fused
// kernel, which holds every op's code until specialization, holds two
// picks, not three (docs/journal.md).
uvec2 valueOf(uint op, uint key, uint w, uvec2 a, uvec2 b, uvec2 c) {
	uvec2 v = pickOf(op == OP_CLAMP ? OP_MAX : op, key, w, a, b);
	return op == OP_CLAMP ? pickOf(OP_MIN, key, w, v, c) : v;
}

// ord4 is ordOf for four elements of up to 32 bits, one in the low bits
// of each lane.
ivec4 ord4(uint key, uint w, uvec4 v, out uvec4 nan) {
	if (key == KEY_F16 || key == KEY_BF16 || key == KEY_F32) {
		uvec4 mag = v & (signBit(key) - 1u);
		nan = uvec4(greaterThan(mag, uvec4(infBits(key))));
		ivec4 k = ivec4(mag);
		return mix(k, ~k, notEqual(v & signBit(key), uvec4(0u)));
	}
	return key4(key, w, v, nan);
}

// pick4 is pickOf for four elements of up to 32 bits.
uvec4 pick4(uint op, uint key, uint w, uvec4 a, uvec4 b) {
	uvec4 na, nb;
	ivec4 ka = ord4(key, w, a, na), kb = ord4(key, w, b, nb);
	uvec4 keep = uvec4(op == OP_MAX ? greaterThanEqual(ka, kb) : lessThanEqual(ka, kb));
	bvec4 takeA = notEqual(na | ((uvec4(1u) - nb) & keep), uvec4(0u));
	if (key == KEY_BOOL) return uvec4(mix(kb, ka, takeA));
	return mix(b, a, takeA);
}

// pickVec is op, OP_MAX or OP_MIN, on vector k of a chunk of w-byte
// elements, as load16 reads them: the result's vector k.
uvec4 pickVec(uint op, uint key, uint w, uvec4 a, uvec4 b) {
	if (w == 4u) return pick4(op, key, w, a, b);
	if (w == 2u) {
		return pick4(op, key, w, a & 0xffffu, b & 0xffffu) | (pick4(op, key, w, a >> 16, b >> 16) << 16);
	}
	if (w == 1u) {
		uvec4 o = uvec4(0u);
		for (uint i = 0u; i < 4u; i++) {
			o |= pick4(op, key, w, (a >> (8u * i)) & 0xffu, (b >> (8u * i)) & 0xffu) << (8u * i);
		}
		return o;
	}
	return uvec4(pickOf(op, key, 8u, a.xy, b.xy), pickOf(op, key, 8u, a.zw, b.zw));
}

// valueVec is op on vector k of a chunk of w-byte elements: of a and b,
// and for OP_CLAMP c, the result's vector k.
uvec4 valueVec(uint op, uint key, uint w, uvec4 a, uvec4 b, uvec4 c) {
	uvec4 v = pickVec(op == OP_CLAMP ? OP_MAX : op, key, w, a, b);
	return op == OP_CLAMP ? pickVec(OP_MIN, key, w, v, c) : v;
}

// chunkValue is op on one chunk of sixteen elements of a, b and, for
// OP_CLAMP, c, each held as w vectors, into o's w vectors, its picks
// shared as valueOf's are.
void chunkValue(uint op, uint key, uint w, uvec4 a[8], uvec4 b[8], uvec4 c[8], out uvec4 o[8]) {
	for (uint k = 0u; k < w; k++) {
		o[k] = valueVec(op, key, w, a[k], b[k], c[k]);
	}
}
