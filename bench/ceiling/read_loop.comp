#version 450
#extension GL_EXT_control_flow_attributes : require
// Texel loads alone, as the reductions read: 16 KiB an invocation in a
// loop of sixteen loads a step.
#include "common.glsl"

void main() {
	uint i = invocation();
	uvec4 a = uvec4(0u);
	[[dont_unroll]] for (uint j = 0u; j < 1024u; j += 16u) {
		for (uint k = 0u; k < 16u; k++) {
			a ^= imageLoad(ta, int(1024u * i + j + k));
		}
	}
	if (a == uvec4(0x12345678u, 0x9abcdef0u, 0u, 1u)) {
		o4[i] = a;
	}
}
