// Copies 16-byte vectors: the simplest kernel, the bandwidth baseline of
// `vkops bench` and the runtime's own tests; with TEXEL_LOADS it reads
// through an rgba32ui texel buffer, the copy baseline of the texel
// variants and the runtime's test of texel bindings.
#include "spec.glsl"

layout(local_size_x_id = 0) in;

#ifdef TEXEL_LOADS
layout(binding = 0, rgba32ui) readonly uniform uimageBuffer src;
uvec4 load(uint i) { return imageLoad(src, int(i)); }
#else
layout(std430, binding = 0) readonly buffer Src { uvec4 src[]; };
uvec4 load(uint i) { return src[i]; }
#endif
layout(std430, binding = 1) writeonly buffer Dst { uvec4 dst[]; };

layout(push_constant) uniform Push { PUSH_COPY } pc; // spec.CopyPush

void main() {
	uint g = gl_WorkGroupID.x + pc.groupsX * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
	uint i = g * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
	if (i < pc.n) {
		dst[i] = load(i);
	}
}
