#version 450
// Stores alone: 128 bytes an invocation, four 32-byte stores.
#include "common.glsl"

void main() {
	uint i = invocation();
	for (uint k = 0u; k < 4u; k++) {
		o8[4u * i + k] = u64vec4(i + k);
	}
}
