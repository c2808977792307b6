#version 450
// Fills 16-byte vectors with one word: the identity that reductions
// combine into with atomics (0 for OR, 0x01010101 for AND), and the result
// of a reduction over no elements.
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) writeonly buffer Dst { uvec4 dst[]; };

layout(push_constant) uniform Push {
	uint n;       // vectors to fill
	uint groupsX; // workgroups in X of the grid
	uint word;    // the value of every word
} pc;

void main() {
	uint g = gl_WorkGroupID.x + pc.groupsX * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
	uint i = g * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
	if (i < pc.n) {
		dst[i] = uvec4(pc.word);
	}
}
