#version 450
// Copies 32-bit words: the simplest kernel, used by the runtime's own
// tests and as the bandwidth baseline of `vkops bench`.
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(std430, binding = 1) writeonly buffer Dst { uvec4 dst[]; };

layout(push_constant) uniform Push {
	uint n;      // uvec4 elements to copy
	uint groupsX; // workgroups in X of the grid
} pc;

void main() {
	uint g = gl_WorkGroupID.x + pc.groupsX * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
	uint i = g * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
	if (i < pc.n) {
		dst[i] = src[i];
	}
}
