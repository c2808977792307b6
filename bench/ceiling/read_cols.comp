#version 450
#extension GL_EXT_control_flow_attributes : require
// Texel loads alone in the order a reduction over axis 0 reads: the data
// as rows of 16 KiB (1024 texels), read down its columns, eight texels
// side by side an invocation and the rows cut into blocks, as vkops's
// reduce_outer.glsl reads [4096 16384] bools (128 column groups, blocks
// of 512 rows with 1024 invocations).
#include "common.glsl"

void main() {
	uint i = invocation();
	uint rows = uint(imageSize(ta)) / 1024u;
	uint blockRows = rows / (gl_NumWorkGroups.x * gl_NumWorkGroups.y * 256u / 128u);
	uvec4 a[8];
	[[unroll]] for (uint k = 0u; k < 8u; k++) {
		a[k] = uvec4(0u);
	}
	uint v = (i / 128u) * blockRows * 1024u + (i % 128u) * 8u;
	for (uint r = 0u; r < blockRows; r++) {
		[[unroll]] for (uint k = 0u; k < 8u; k++) {
			a[k] |= imageLoad(ta, int(v + k));
		}
		v += 1024u;
	}
	uvec4 s = uvec4(0u);
	[[unroll]] for (uint k = 0u; k < 8u; k++) {
		s ^= a[k];
	}
	if (s == uvec4(0x12345678u, 0x9abcdef0u, 0u, 1u)) {
		o4[i] = s;
	}
}
