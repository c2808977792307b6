// Probes for what lavapipe itself allows: kernels of the shape vkops's
// elementwise kernels have (texel-buffer loads, 64-bit SSBO stores, 256
// invocations a workgroup), stripped of everything else. run.sh times
// them with ../shared/tools/lavapipe-ceiling's lpc, whose "rd" and "wr"
// cases bind input A as an rgba32ui texel buffer (binding 8) and the
// output as a storage buffer (binding 3), and do not check the result.
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 256) in;
layout(binding = 8, rgba32ui) uniform readonly uimageBuffer ta;
layout(std430, binding = 3) writeonly buffer O4 { uvec4 o4[]; };
layout(std430, binding = 3) writeonly buffer O8 { u64vec4 o8[]; };

uint invocation() {
	return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
}
