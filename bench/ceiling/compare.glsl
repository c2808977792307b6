// Less on f32, as shaders/mask.glsl computes it (ordered integer keys,
// NaNs by their bits), or with TRIVIAL an xor in its place: the first
// mid of A against the second, 32 elements an invocation, one 32-byte
// store of 32 bools.
#include "common.glsl"

ivec4 key4(uvec4 v, out uvec4 nan) {
	uvec4 mag = v & 0x7fffffffu;
	nan = uvec4(greaterThan(mag, uvec4(0x7f800000u)));
	ivec4 k = ivec4(mag);
	return mix(k, -k, notEqual(v & 0x80000000u, uvec4(0u)));
}

uint less4(uvec4 a, uvec4 b) {
#ifdef TRIVIAL
	uvec4 r = (a ^ b) & 1u;
#else
	uvec4 na, nb;
	ivec4 ka = key4(a, na), kb = key4(b, nb);
	uvec4 r = uvec4(lessThan(ka, kb)) & (uvec4(1u) - (na | nb));
#endif
	r <<= uvec4(0u, 8u, 16u, 24u);
	return r.x | r.y | r.z | r.w;
}

uvec4 chunk(uint t, uint mid) {
	uvec4 r;
	for (uint k = 0u; k < 4u; k++) {
		r[k] = less4(imageLoad(ta, int(t + k)), imageLoad(ta, int(mid + t + k)));
	}
	return r;
}

void main() {
	uint i = invocation();
	uint mid = uint(imageSize(ta)) / 2u;
	if (8u * i >= mid) {
		return;
	}
	uvec4 x = chunk(8u * i, mid), y = chunk(8u * i + 4u, mid);
	o8[i] = u64vec4(pack64(x.xy), pack64(x.zw), pack64(y.xy), pack64(y.zw));
}
