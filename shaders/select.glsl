// Select's hooks in the elementwise skeleton (elementwise.glsl): out =
// cond ? then : else, element by element, copying bits. Inputs: cond (0,
// bools, one byte each, nonzero true), then (1) and else (2), W bytes
// each; then and else may be pushed scalars (Where's). ops/select.go
// describes the op to the engine.
//
// A chunk's sixteen bools become a bit mask per vector of W-byte
// elements, and the output is (then & mask) | (else & ~mask): no branch,
// whatever the data.
#define NIN 3
#define OUT_W W
uint inW(uint x) { return x == 0u ? 1u : W; }
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

void opChunk(uvec4 v[NIN][8], out uvec4 o[8]) {
	uvec4 f = W <= 2u ? flags(v[0][0]) : v[0][0];
	for (uint k = 0u; k < W; k++) {
		uvec4 m = laneMask(f, k);
		o[k] = (v[1][k] & m) | (v[2][k] & ~m);
	}
}

// opElem reads only the operand that cond picks.
uvec2 opElem(uint off[NIN]) {
	return inElem(0u, off[0]).x != 0u ? inElem(1u, off[1]) : inElem(2u, off[2]);
}
