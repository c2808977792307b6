// Maximum's, Minimum's and Clamp's hooks in the elementwise skeleton
// (elementwise.glsl), on the functions of minmaxops.glsl: inputs a (0),
// b (1) and c (2), W bytes each, the output of their type. b and c may
// be pushed scalars. Maximum and Minimum read a and b, c being a pushed
// scalar never read; Clamp reads a and its bounds b and c. ops/minmax.go
// describes the ops to the engine. Only the last two inputs can be
// pushed, so a scalar a is input 1 and the tensor b input 0, and SWAP
// says so: the operands' order picks which NaN a Maximum of two keeps.
#define NIN 3
#define OUT_W W
uint inW(uint x) { return W; }
#include "elementwise.glsl"
#include "maskops.glsl"
#include "minmaxops.glsl"

layout(constant_id = SPEC_OP0) const uint OP = OP_MAX;   // OP_MAX, OP_MIN or OP_CLAMP
layout(constant_id = SPEC_OP0 + 1) const uint KEY = 0;   // how elements are read: KEY_UINT, ...
layout(constant_id = SPEC_OP0 + 2) const uint SWAP = 0;  // 1: a is input 1 and b input 0

void opChunk(uvec4 v[NIN][8], out uvec4 o[8]) {
	if (SWAP != 0u) {
		chunkValue(OP, KEY, W, v[1], v[0], v[2], o);
	} else {
		chunkValue(OP, KEY, W, v[0], v[1], v[2], o);
	}
}

uvec2 opElem(uint off[NIN]) {
	uvec2 a = inElem(0u, off[0]), b = inElem(1u, off[1]);
	uvec2 c = OP == OP_CLAMP ? inElem(2u, off[2]) : uvec2(0u);
	return SWAP != 0u ? valueOf(OP, KEY, W, b, a, c) : valueOf(OP, KEY, W, a, b, c);
}
