#version 450
// A copy by the same loads and stores: 64 bytes an invocation.
#include "common.glsl"

void main() {
	uint i = invocation();
	for (uint k = 0u; k < 2u; k++) {
		uvec4 x = imageLoad(ta, int(4u * i + 2u * k)), y = imageLoad(ta, int(4u * i + 2u * k + 1u));
		o8[2u * i + k] = u64vec4(pack64(x.xy), pack64(x.zw), pack64(y.xy), pack64(y.zw));
	}
}
