#version 450
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_vote : require
// check.comp with 16 KiB an invocation, in a loop of sixteen loads a
// step, as vkops's folds on the CPU profile do (profile.foldChunks).
#include "common.glsl"
layout(std430, binding = 3) buffer OA { uint oa[]; };

void main() {
	uint i = invocation();
	uvec4 seen = uvec4(0u);
	[[dont_unroll]] for (uint j = 0u; j < 1024u; j += 16u) {
		for (uint k = 0u; k < 16u; k++) {
			seen |= uvec4(greaterThan(imageLoad(ta, int(1024u * i + j + k)) & 0x7fffffffu, uvec4(0x7f800000u)));
		}
	}
	if (subgroupAny(any(notEqual(seen, uvec4(0u)))) && subgroupElect()) {
		atomicOr(oa[0], 1u);
	}
}
