#version 450
// Texel loads alone: 64 bytes an invocation, kept alive by a store that
// never happens.
#include "common.glsl"

void main() {
	uint i = invocation();
	uvec4 a = uvec4(0u);
	for (uint k = 0u; k < 4u; k++) {
		a ^= imageLoad(ta, int(4u * i + k));
	}
	if (a == uvec4(0x12345678u, 0x9abcdef0u, 0u, 1u)) {
		o4[i] = a;
	}
}
