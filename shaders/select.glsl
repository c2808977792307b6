// Select over one piece of a broadcast (ops/select.go plans the pieces):
// out = cond ? then : else, element by element, copying bits. This is the
// body of the select kernels; shaders/select*.comp include it with the
// defines that make each variant, and it is not compiled alone.
//
// A piece is a row-major box of RANK dimensions; the output is contiguous
// in it and each input steps through it with its own strides, 0 where it
// is broadcast. Inputs are read as vectors of four 32-bit words and as
// words; the output is written as words and vectors. How is the
// variant's choice:
//
//   (no define)  storage buffers throughout: no optional device feature.
//   TEXEL_LOADS  inputs are rgba32ui storage texel buffers read with
//                imageLoad, which lavapipe runs several times faster
//                than storage-buffer loads.
//   STORE64      whole blocks are stored as u64vec4 (needs shaderInt64,
//                which the includer enables), which lavapipe stores in
//                half the operations of uvec4.
//
// Each invocation owns one block of E output elements, aligned in the
// output binding, and writes it as whole words, so no two invocations
// share a word. It finds the block's multi-index once (division by
// host-computed reciprocals); when the block lies inside one run of the
// innermost dimension, every operand is either contiguous there (vector
// loads) or constant (one load), and the block is done with no further
// index math. Other blocks (piece edges, short rows) go element by
// element, stepping the multi-index like an odometer. Where the host
// knows that every block of a dispatch lies in one run (WHOLE), the
// element-by-element code is left out: on a driver that runs
// invocations as SIMD lanes of a CPU, as lavapipe does, code that any
// lane might take costs every lane its time.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint W = 4;      // element bytes: 1, 2, 4 or 8
layout(constant_id = 2) const uint RANK = 1;   // dimensions of the piece, 1 to 8
layout(constant_id = 3) const uint PUSHED = 0; // bit 0: then is pc.scalar[0]; bit 1: else is pc.scalar[1]
layout(constant_id = 4) const uint CHUNKS = 1; // 16-element chunks per block
layout(constant_id = 5) const bool ALIGNED = false; // every vector load of a block is 16-byte aligned
layout(constant_id = 6) const uint INNER = 0;  // bit x: operand x (cond, then, else) is broadcast in dim 0
layout(constant_id = 7) const bool WHOLE = false; // every block is whole and in one innermost run

const uint E = 16u * CHUNKS; // elements per block

#ifdef TEXEL_LOADS
layout(binding = 0, rgba32ui) readonly uniform uimageBuffer condT;
layout(binding = 1, rgba32ui) readonly uniform uimageBuffer thenT;
layout(binding = 2, rgba32ui) readonly uniform uimageBuffer elseT;

uvec4 vecAt(uint x, uint i) {
	if (x == 0u) return imageLoad(condT, int(i));
	if (x == 1u) return imageLoad(thenT, int(i));
	return imageLoad(elseT, int(i));
}

uint wordAt(uint x, uint i) { return vecAt(x, i >> 2)[i & 3u]; }
#else
// Each input is declared twice: as vectors for bulk access and as words.
layout(std430, binding = 0) readonly buffer CondV { uvec4 condV[]; };
layout(std430, binding = 0) readonly buffer CondW { uint condW[]; };
layout(std430, binding = 1) readonly buffer ThenV { uvec4 thenV[]; };
layout(std430, binding = 1) readonly buffer ThenW { uint thenW[]; };
layout(std430, binding = 2) readonly buffer ElseV { uvec4 elseV[]; };
layout(std430, binding = 2) readonly buffer ElseW { uint elseW[]; };

uvec4 vecAt(uint x, uint i) {
	if (x == 0u) return condV[i];
	if (x == 1u) return thenV[i];
	return elseV[i];
}

uint wordAt(uint x, uint i) {
	if (x == 0u) return condW[i];
	if (x == 1u) return thenW[i];
	return elseW[i];
}
#endif

layout(std430, binding = 3) buffer OutV { uvec4 outV[]; };
layout(std430, binding = 3) buffer OutW { uint outW[]; };
#ifdef STORE64
layout(std430, binding = 3) writeonly buffer Out64 { u64vec4 out64[]; };
#endif

layout(push_constant) uniform Push {
	uint dims[8];    // the piece's shape, innermost first
	uint magic[8];   // dims[d] as a reciprocal: see div
	uint shifts[2];  // and its shift, byte d%4 of word d/4
	uint masks;      // bit 8*x+d: operand x (cond, then, else) is broadcast in dim d
	uint base[4];    // first element of cond, then, else and out in their bindings
	uint groupsX;    // workgroups in X of the grid
	uvec2 scalar[2]; // then and else bits when pushed
} pc;

// div returns r / dims[d] for r < 2^31: floor(r * m / 2^(31+l)) with
// m = ceil(2^(31+l) / dims[d]) and l = ceil(log2(dims[d])) is exact there
// (Granlund and Montgomery, 1994).
uint div(uint r, uint d) {
	uint hi, lo;
	umulExtended(r, pc.magic[d], hi, lo);
	uint l = (pc.shifts[d >> 2] >> (8u * (d & 3u))) & 31u;
	return ((hi << 1) | (lo >> 31)) >> l;
}

// elemAt returns element o of operand x, w bytes wide, in the low bits.
uvec2 elemAt(uint x, uint w, uint o) {
	if (w == 8u) return uvec2(wordAt(x, 2u * o), wordAt(x, 2u * o + 1u));
	uint v = wordAt(x, o * w / 4u);
	if (w == 4u) return uvec2(v, 0u);
	return uvec2((v >> (8u * (o * w % 4u))) & ((1u << (8u * w)) - 1u), 0u);
}

// load16 reads elements o to o+15 of operand x, w bytes each, as w
// vectors. Only the vectors that hold those bytes are read, and they lie
// in the binding: bindings start 16-byte aligned and end on a multiple of
// 16 bytes past the last byte the piece uses. The host sets ALIGNED when
// it knows that no load needs the funnel shift.
void load16(uint x, uint w, uint o, out uvec4 r[8]) {
	uint b = o * w;
	uint q = b >> 4;
	uint s = b & 15u;
	if (ALIGNED || s == 0u) {
		for (uint k = 0u; k < w; k++) {
			r[k] = vecAt(x, q + k);
		}
		return;
	}
	uint sw = s >> 2;
	uint sb = 8u * (s & 3u);
	uvec4 u0 = vecAt(x, q);
	for (uint k = 0u; k < w; k++) {
		uvec4 u1 = vecAt(x, q + k + 1u);
		uvec4 a, c; // words sw..sw+3 and sw+1..sw+4 of u0:u1
		if (sw == 0u) {
			a = u0;
			c = uvec4(u0.yzw, u1.x);
		} else if (sw == 1u) {
			a = uvec4(u0.yzw, u1.x);
			c = uvec4(u0.zw, u1.xy);
		} else if (sw == 2u) {
			a = uvec4(u0.zw, u1.xy);
			c = uvec4(u0.w, u1.xyz);
		} else {
			a = uvec4(u0.w, u1.xyz);
			c = u1;
		}
		r[k] = sb == 0u ? a : (a >> sb) | (c << (32u - sb));
		u0 = u1;
	}
}

// flags turns 16 bools (bytes) into 0x01 per true byte, 0x00 per false.
uvec4 flags(uvec4 c) {
	uvec4 f = c | (c >> 4);
	f |= f >> 2;
	f |= f >> 1;
	return f & 0x01010101u;
}

// laneMask turns the 16 bools of a chunk into the bit mask of its k-th
// vector of W-byte elements. Narrow elements take the bools as flags
// (see flags); wide ones test the bytes themselves.
uvec4 laneMask(uvec4 c, uint k) {
	if (W == 1u) {
		return c * 0xffu;
	}
	if (W == 2u) {
		uvec4 x = uvec4(c[2u * k], c[2u * k], c[2u * k + 1u], c[2u * k + 1u]) >> uvec4(0u, 16u, 0u, 16u);
		return (x & 1u) * 0xffffu | ((x >> 8) & 1u) * 0xffff0000u;
	}
	uvec4 x = W == 4u ? uvec4(c[k]) >> uvec4(0u, 8u, 16u, 24u)
	                  : uvec4(c[k >> 1]) >> (uvec4(0u, 0u, 8u, 8u) + 16u * (k & 1u));
	return uvec4(notEqual(x & 0xffu, uvec4(0u))) * 0xffffffffu;
}

// splat fills a vector with copies of one W-byte element.
uvec4 splat(uvec2 v) {
	if (W == 1u) return uvec4(v.x * 0x01010101u);
	if (W == 2u) return uvec4(v.x * 0x00010001u);
	if (W == 4u) return uvec4(v.x);
	return uvec4(v, v);
}

bool pushed(uint x) { return x > 0u && (PUSHED & x) != 0u; }

// broadcast reports whether operand x is broadcast in dim d. Dim 0 is
// also a specialization constant, so that the block path holds only the
// code for how its operands are read.
bool broadcast(uint x, uint d) {
	if (d == 0u) return ((INNER >> x) & 1u) != 0u;
	return ((pc.masks >> (8u * x + d)) & 1u) != 0u;
}

// value returns the element of then (x = 1) or else (x = 2) at offset o.
uvec2 value(uint x, uint o) {
	if (pushed(x)) return pc.scalar[x - 1u];
	return elemAt(x, W, o);
}

#ifdef STORE64
// A block's vectors are stored in pairs when it has an even number of
// them, as then every pair starts 32-byte aligned in the binding.
const bool PAIRS = (W * CHUNKS) % 2u == 0u;
uvec4 pending; // the first vector of a pair
#endif

// storeVec writes vector j of the block whose first vector is vector b
// of out. The block's vectors come in order, so with STORE64 an odd one
// completes the pair that its predecessor began; j is a constant once
// the block's loops unroll, so only the store remains.
void storeVec(uint b, uint j, uvec4 v) {
#ifdef STORE64
	if (PAIRS) {
		if ((j & 1u) == 0u) {
			pending = v;
		} else {
			out64[(b + j) >> 1] = u64vec4(pack64(pending.xy), pack64(pending.zw), pack64(v.xy), pack64(v.zw));
		}
		return;
	}
#endif
	outV[b + j] = v;
}

// store writes the bytes of word i of out that mask selects.
void store(uint i, uint v, uint mask) {
	outW[i] = mask == 0xffffffffu ? v : (outW[i] & ~mask) | v;
}

void main() {
	uint g = gl_WorkGroupID.x + pc.groupsX * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
	uint n = 1u;
	for (uint d = 0u; d < RANK; d++) {
		n *= pc.dims[d];
	}
	uint first = pc.base[3];
	uint end = first + n;
	uint e0 = (first / E + g * gl_WorkGroupSize.x + gl_LocalInvocationID.x) * E;
	if (e0 >= end) {
		return;
	}
	uint lo = max(e0, first);
	uint hi = min(e0 + E, end);

	// The block's multi-index and each operand's offset there: operands
	// are row-major over the dimensions they are not broadcast in.
	uint coord[8];
	uint off[3] = uint[3](pc.base[0], pc.base[1], pc.base[2]);
	uint p[3] = uint[3](1u, 1u, 1u);
	uint r = lo - first;
	for (uint d = 0u; d < RANK; d++) {
		uint c = r;
		if (d + 1u < RANK) {
			uint q = div(r, d);
			c = r - q * pc.dims[d];
			r = q;
		}
		coord[d] = c;
		for (uint x = 0u; x < 3u; x++) {
			if (!broadcast(x, d)) {
				off[x] += c * p[x];
				p[x] *= pc.dims[d];
			}
		}
	}

	if (WHOLE || (lo == e0 && hi == e0 + E && coord[0] + E <= pc.dims[0])) {
		// The whole block lies in one innermost run.
		uvec4 fc = broadcast(0u, 0u) ? uvec4(elemAt(0u, 1u, off[0]).x != 0u ? 0x01010101u : 0u) : uvec4(0u);
		uvec4 tc = (pushed(1u) || broadcast(1u, 0u)) ? splat(value(1u, off[1])) : uvec4(0u);
		uvec4 ec = (pushed(2u) || broadcast(2u, 0u)) ? splat(value(2u, off[2])) : uvec4(0u);
		for (uint ch = 0u; ch < CHUNKS; ch++) {
			uvec4 f = fc;
			if (!broadcast(0u, 0u)) {
				uvec4 c[8];
				load16(0u, 1u, off[0] + 16u * ch, c);
				f = W <= 2u ? flags(c[0]) : c[0];
			}
			uvec4 tv[8], ev[8];
			if (pushed(1u) || broadcast(1u, 0u)) {
				for (uint k = 0u; k < W; k++) tv[k] = tc;
			} else {
				load16(1u, W, off[1] + 16u * ch, tv);
			}
			if (pushed(2u) || broadcast(2u, 0u)) {
				for (uint k = 0u; k < W; k++) ev[k] = ec;
			} else {
				load16(2u, W, off[2] + 16u * ch, ev);
			}
			for (uint k = 0u; k < W; k++) {
				uvec4 m = laneMask(f, k);
				storeVec(e0 / 16u * W, ch * W + k, (tv[k] & m) | (ev[k] & ~m));
			}
		}
		return;
	}

	// Element by element, stepping each operand by its strides. Narrow
	// elements gather into a word, stored when the next word begins; a
	// word the piece covers in part keeps its other bytes, which belong to
	// a neighbouring piece.
	uint st[3][8];
	for (uint x = 0u; x < 3u; x++) {
		uint s = 1u;
		for (uint d = 0u; d < RANK; d++) {
			st[x][d] = broadcast(x, d) ? 0u : s;
			s *= broadcast(x, d) ? 1u : pc.dims[d];
		}
	}
	uint acc = 0u, accMask = 0u, accWord = lo * W / 4u;
	for (uint e = lo; e < hi; e++) {
		uvec2 v = elemAt(0u, 1u, off[0]).x != 0u ? value(1u, off[1]) : value(2u, off[2]);
		if (W == 8u) {
			outW[2u * e] = v.x;
			outW[2u * e + 1u] = v.y;
		} else if (W == 4u) {
			outW[e] = v.x;
		} else {
			if (e * W / 4u != accWord) {
				store(accWord, acc, accMask);
				acc = accMask = 0u;
				accWord = e * W / 4u;
			}
			uint sh = 8u * (e * W % 4u);
			acc |= v.x << sh;
			accMask |= ((1u << (8u * W)) - 1u) << sh;
		}
		// Step the multi-index. The loop has no break, so that it unrolls
		// and the arrays stay in registers.
		bool carry = true;
		for (uint d = 0u; d < RANK; d++) {
			if (carry) {
				coord[d]++;
				for (uint x = 0u; x < 3u; x++) off[x] += st[x][d];
				carry = coord[d] == pc.dims[d] && d + 1u < RANK;
				if (carry) {
					coord[d] = 0u;
					for (uint x = 0u; x < 3u; x++) off[x] -= pc.dims[d] * st[x][d];
				}
			}
		}
	}
	if (W < 4u) {
		store(accWord, acc, accMask);
	}
}
