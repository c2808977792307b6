// Expand: each element of a source repeated R times in a row, the
// output [N, R] of a source [N]: what a select whose cond is one known
// element comes to when the operand it picks is broadcast along the
// innermost axes (ops/expand.go). Rows hold at least one 16-byte vector
// (R*W >= 16), so no output vector holds more than two source elements:
// its bytes up to where a row ends take one, the rest the next. That
// keeps every store a whole vector, with no element-by-element path for
// the vectors a row ends in, which the select kernel needs there. This
// is the body of the expand kernels; shaders/generated/expand*.comp include it
// with the defines that make each variant:
//
//   (no define)  storage buffers throughout.
//   TEXEL_LOADS  the source is an rgba32ui storage texel buffer.
//   STORE64      four vectors stored as two u64vec4 (needs shaderInt64),
//                which lavapipe stores in half the operations.
#include "spec.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint W = 4; // element bytes: 1, 2, 4 or 8
// LONG: rows of VECS vectors or more, so that at most one row ends in
// an invocation's vectors.
layout(constant_id = 2) const bool LONG = false;

#ifdef TEXEL_LOADS
layout(binding = 0, rgba32ui) readonly uniform uimageBuffer srcT;
uvec4 vecAt(uint i) { return imageLoad(srcT, int(i)); }
#else
layout(std430, binding = 0) readonly buffer Src { uvec4 srcV[]; };
uvec4 vecAt(uint i) { return srcV[i]; }
#endif
layout(std430, binding = 1) writeonly buffer Out { uvec4 outV[]; };
#ifdef STORE64
layout(std430, binding = 1) writeonly buffer Out64 { u64vec4 out64[]; };
#endif

layout(push_constant) uniform Push { PUSH_EXPAND } pc; // spec.ExpandPush

// div returns g / R for g < 2^31 (Granlund and Montgomery, 1994; as
// elementwise.glsl's div).
uint div(uint g) {
	uint hi, lo;
	umulExtended(g, pc.magic, hi, lo);
	return ((hi << 1) | (lo >> 31)) >> pc.shift;
}

// splat returns a vector of copies of source element q.
uvec4 splat(uint q) {
	uint o = (pc.base + min(q, pc.last)) * W;
	uvec4 t = vecAt(o >> 4);
	if (W == 8u) {
		return (o & 8u) == 0u ? t.xyxy : t.zwzw;
	}
	uint v = t[(o >> 2) & 3u];
	if (W == 4u) return uvec4(v);
	v = (v >> (8u * (o & 3u))) & ((1u << (8u * W)) - 1u);
	return uvec4(W == 1u ? v * 0x01010101u : v * 0x00010001u);
}

// blend returns the vector whose c bytes before a row ends take a, the
// rest b: whole words where elements are, else one in part.
uvec4 blend(uvec4 a, uvec4 b, uvec4 c) {
	const uvec4 at = uvec4(0u, 4u, 8u, 12u); // each word's first byte
	uvec4 t = b;
	if (W < 4u) {
		uvec4 part = (uvec4(1u) << (8u * ((c - at) & 3u))) - 1u;
		t = mix(b, (a & part) | (b & ~part), lessThan(at, c));
	}
	return mix(t, a, lessThan(at + 3u, c));
}

// VECS vectors an invocation, 64 bytes, as a select block of 4-byte
// elements (ops/expand.go's expandBlockBytes). It loads the element its
// first vector starts in and the next; with LONG that is all, else one
// more each time a row ends.
const uint VECS = 4u;
const uint PER = 16u / W; // elements a vector

void main() {
	uint g = gl_WorkGroupID.x + pc.groupsX * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
	uint v0 = (g * gl_WorkGroupSize.x + gl_LocalInvocationID.x) * VECS;
	if (v0 >= pc.vecs) {
		return;
	}
	uint e = pc.first + v0 * PER;
	uint q = div(e);
	uint rem = e - q * pc.r; // the vector's first element's place in its row
	uvec4 a = splat(q), b = splat(q + 1u);
	uvec4 v[VECS];
	if (LONG) {
		// The bytes before the row ends take element q, the rest q+1,
		// with no load in the loop: llvmpipe runs the load that the
		// loop below makes where a row ends for every lane at every
		// vector.
		int end = int(min(pc.r - rem, VECS * PER) * W); // at most the block: no overflow
		for (uint k = 0u; k < VECS; k++) {
			v[k] = blend(a, b, uvec4(clamp(end - int(16u * k), 0, 16)));
		}
	} else {
		for (uint k = 0u; k < VECS; k++) {
			v[k] = a;
			if (rem + PER > pc.r) {
				v[k] = blend(a, b, uvec4((pc.r - rem) * W));
			}
			rem += PER;
			if (rem >= pc.r) {
				rem -= pc.r;
				q++;
				a = b;
				b = splat(q + 1u);
			}
		}
	}
#ifdef STORE64
	if (v0 + VECS <= pc.vecs) {
		out64[v0 / 2u] = u64vec4(pack64(v[0].xy), pack64(v[0].zw), pack64(v[1].xy), pack64(v[1].zw));
		out64[v0 / 2u + 1u] = u64vec4(pack64(v[2].xy), pack64(v[2].zw), pack64(v[3].xy), pack64(v[3].zw));
		return;
	}
#endif
	for (uint k = 0u; k < VECS; k++) {
		if (v0 + k < pc.vecs) {
			outV[v0 + k] = v[k];
		}
	}
}
