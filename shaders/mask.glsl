// The mask ops' hooks in the elementwise skeleton (elementwise.glsl):
// comparisons, logical ops and float classifiers (maskops.glsl), each
// writing one bool byte, 0 or 1, per output element, from inputs a (0)
// and b (1) of W bytes each; either may be a pushed scalar, and a unary
// op's b is a pushed scalar it never reads. ops/mask.go describes the
// ops to the engine. Which op, and how its element type is read, are
// specialization constants, so one pipeline per op and type is built
// from one module. W is not: lavapipe translates and optimises all of a
// module's code before specialization removes any, and with the width a
// constant too each module is a quarter of the size, its pipelines built
// in half the time (about 16 ms instead of 32 for a first call).
#define NIN 2
#define OUT_W 1u
uint inW(uint x) { return W; }
#include "elementwise.glsl"
#include "maskops.glsl"

layout(constant_id = SPEC_OP0) const uint OP = 0;         // OP_EQ, ...
layout(constant_id = SPEC_OP0 + 1) const uint KEY = 0;    // how elements are read: KEY_UINT, ...
layout(constant_id = SPEC_OP0 + 2) const uint DETECT = 3; // is-inf: bit 0 -inf, bit 1 +inf

void opChunk(uvec4 v[NIN][8], out uvec4 o[8]) { o[0] = chunkOp(OP, KEY, DETECT, W, v[0], v[1]); }

uvec2 opElem(uint off[NIN]) {
	uvec2 b = OP >= OP_NOT ? uvec2(0u) : inElem(1u, off[1]);
	return uvec2(result(OP, KEY, DETECT, W, inElem(0u, off[0]), b), 0u);
}
