// The general reduction path: one invocation per input element, each
// finding its output element from its coordinates and folding its byte
// into it with an atomic, into an output the host filled with the
// fold's identity. It reads a byte at a time and runs an atomic per
// byte the fold finds: slow, and simple enough to be plainly right, so
// that tests check every fast path (reduce_inner.glsl,
// reduce_outer.glsl) against it (ops/reduce_general.go).
//
// A dispatch covers the elements [first, first + n) of the data, which
// its input binding holds from byte inSkip on, and the output elements
// [outFirst, outFirst + outCount), which its output binding holds from
// byte outSkip on; an element whose output lies outside them is another
// dispatch's.
#include "reduce_fold.glsl"

layout(std430, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, binding = 1) buffer Dst { uint dst[]; };

layout(push_constant) uniform Push { PUSH_REDUCE_GENERAL } pc; // spec.ReduceGeneralPush

void main() {
	uint g = gl_WorkGroupID.x + pc.groupsX * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
	uint i = g * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
	if (i >= pc.n) {
		return;
	}
	uint p = pc.inSkip + i;
	uint b = (src[p >> 2] >> (8u * (p & 3u))) & 0xFFu;
	// The output element: the element's coordinates in the kept
	// dimensions, row-major.
	uint e = pc.first + i;
	uint o = 0u;
	uint stride = 1u;
	for (uint d = 0u; d < pc.rank; d++) {
		uint c = e % pc.dims[d];
		e /= pc.dims[d];
		if ((pc.reduced >> d & 1u) == 0u) {
			o += c * stride;
			stride *= pc.dims[d];
		}
	}
	if (o < pc.outFirst || o - pc.outFirst >= pc.outCount || !findByte(b)) {
		return;
	}
	uint q = pc.outSkip + (o - pc.outFirst);
	COMBINE(dst[q >> 2], 1u << (8u * (q & 3u)))
}
