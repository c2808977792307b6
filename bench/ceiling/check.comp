#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_vote : require
// A NaN check of f32 as a fused fold does it: 64 bytes an invocation,
// each lane tested, a vote of the subgroup, and one atomic where it saw
// a NaN (the harness's data holds none).
#include "common.glsl"
layout(std430, binding = 3) buffer OA { uint oa[]; };

bool nan(uvec4 t) { return any(greaterThan(t & 0x7fffffffu, uvec4(0x7f800000u))); }

void main() {
	uint i = invocation();
	bool seen = false;
	for (uint k = 0u; k < 4u; k++) {
		seen = seen || nan(imageLoad(ta, int(4u * i + k)));
	}
	if (subgroupAny(seen) && subgroupElect()) {
		atomicOr(oa[0], 1u);
	}
}
