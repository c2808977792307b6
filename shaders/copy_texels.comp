#version 450
// copy_words with texel-buffer loads: the copy baseline of the texel
// variants, and the runtime's test of texel bindings.
layout(local_size_x_id = 0) in;

layout(binding = 0, rgba32ui) readonly uniform uimageBuffer src;
layout(std430, binding = 1) writeonly buffer Dst { uvec4 dst[]; };

layout(push_constant) uniform Push {
	uint n;       // texels to copy
	uint groupsX; // workgroups in X of the grid
} pc;

void main() {
	uint g = gl_WorkGroupID.x + pc.groupsX * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
	uint i = g * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
	if (i < pc.n) {
		dst[i] = imageLoad(src, int(i));
	}
}
