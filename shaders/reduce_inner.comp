#version 450
// Logical or/and along the innermost axis: rows of rowLen contiguous bool
// bytes, one output byte per row. Each invocation owns one output word
// (four rows) and streams its rows, several words in turn when rows are
// short, or one chunk of each row when the planner splits few long rows
// across invocations (ops/reduce_plan.go).
//
// The fold is always an OR: for AND each byte is first mapped to "is
// zero" (0x80 or 0), so AND = NOT(OR(NOT x)). An invocation that covers
// its whole word stores it; otherwise it combines into a word that the
// planner filled with the identity (0 for OR, 0x01010101 for AND), and
// only when it found something: atomicOr sets rows that hold a true,
// atomicAnd clears rows that hold a false.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool AND = false;

// Rows shorter than this many bytes are read a word at a time, the four
// rows of an output word together (foldShort); longer ones a vector at
// a time, row by row (anyIn).
const uint SHORT = 32u;

layout(std430, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(std430, binding = 1) buffer Dst { uint dst[]; };

layout(push_constant) uniform Push {
	uint n;          // invocations: ceil(words / perInv) * chunks
	uint groupsX;    // workgroups in X of the grid
	uint firstWord;  // the binding word of invocation 0
	uint words;      // output words covered
	uint perInv;     // words per invocation, 1 when chunks > 1
	uint chunks;     // invocations per word, each taking one chunk of every row
	uint chunkBytes; // bytes per chunk, a multiple of 16
	uint inSkip;     // binding byte where row 0 starts
	uint rowLen;     // bytes of each row inside this dispatch
	uint rows;       // rows in this dispatch
	uint outSkip;    // binding byte of row 0's output
	uint tail;       // rows from row 0 that exist at all (padding after)
	uint whole;      // 1: every row lies entirely in this dispatch
} pc;

// zeroBytes maps each byte of x to 0x80 if it is zero and to 0 if not,
// exactly per byte (no borrow between bytes).
uint zeroBytes(uint x) { return ~(((x & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) | x | 0x7F7F7F7Fu); }
uvec4 zeroBytes4(uvec4 x) {
	return ~(((x & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) | x | 0x7F7F7F7Fu);
}
uint fold(uint x) { return AND ? zeroBytes(x) : x; }
uvec4 fold4(uvec4 x) { return AND ? zeroBytes4(x) : x; }

uint word(uint w) { return src[w >> 2][w & 3u]; }

// vecBytes returns the mask of bytes [from, to) of a 16-byte vector,
// 0 <= from < to <= 16.
uvec4 vecBytes(uint from, uint to) {
	ivec4 lane = ivec4(0, 4, 8, 12);
	uvec4 lo = uvec4(clamp(int(from) - lane, 0, 4)); // bytes below the range
	uvec4 hi = uvec4(clamp(lane + 4 - int(to), 0, 4)); // bytes above it
	uvec4 m = (uvec4(0xFFFFFFFFu) << (8u * min(lo, 3u))) & (uvec4(0xFFFFFFFFu) >> (8u * min(hi, 3u)));
	return mix(m, uvec4(0u), greaterThan(max(lo, hi), uvec4(3u)));
}

// anyIn reports whether some byte in [s, e) of the binding folds to
// nonzero (s < e), reading whole vectors. The bytes outside the range in
// the first and last vector are masked after folding, so they count as
// neutral for OR and AND alike.
bool anyIn(uint s, uint e) {
	uint v = s >> 4;
	uint last = (e - 1u) >> 4;
	uint end = ((e - 1u) & 15u) + 1u;
	if (v == last) {
		return any(notEqual(fold4(src[v]) & vecBytes(s & 15u, end), uvec4(0u)));
	}
	uvec4 a = (fold4(src[v]) & vecBytes(s & 15u, 16u)) | (fold4(src[last]) & vecBytes(0u, end));
	for (v++; v + 4u <= last; v += 4u) {
		a |= fold4(src[v]) | fold4(src[v + 1u]) | fold4(src[v + 2u]) | fold4(src[v + 3u]);
	}
	for (; v < last; v++) {
		a |= fold4(src[v]);
	}
	return any(notEqual(a, uvec4(0u)));
}

// spanMask returns, for each of four rows, the mask of its bytes [a, b)
// within a word, 0 <= a, b <= 4 (empty when b <= a).
uvec4 spanMask(ivec4 a, ivec4 b) {
	uvec4 lo = mix(uvec4(0xFFFFFFFFu) << (8u * uvec4(min(a, 3))), uvec4(0u), greaterThan(a, ivec4(3)));
	uvec4 hi = mix(~(uvec4(0xFFFFFFFFu) << (8u * uvec4(min(b, 3)))), uvec4(0xFFFFFFFFu), greaterThan(b, ivec4(3)));
	return lo & hi;
}

// foldShort folds the four byte ranges [s[k], e[k]) of short rows that
// lie close together: each word between the first start and the last end
// is read once, whatever number of rows it holds bytes of, and its bytes
// are shared out to the rows by masks rather than by branches.
uvec4 foldShort(uvec4 s, uvec4 e) {
	uvec4 acc = uvec4(0u);
	uint lo = min(min(s.x, s.y), min(s.z, s.w));
	uint hi = max(max(e.x, e.y), max(e.z, e.w));
	for (uint w = lo >> 2; 4u * w < hi; w++) {
		int base = int(4u * w);
		acc |= uvec4(fold(word(w))) & spanMask(clamp(ivec4(s) - base, 0, 4), clamp(ivec4(e) - base, 0, 4));
	}
	return acc;
}

// reduceWord folds chunk c of the rows of binding word w into it.
void reduceWord(uint w, uint c) {
	bool owned = pc.whole == 1u && pc.chunks == 1u;
	// The byte range of each of the word's four rows; empty for rows
	// that are not in this dispatch.
	uvec4 s = uvec4(0xFFFFFFFFu);
	uvec4 e = uvec4(0u);
	for (uint k = 0u; k < 4u; k++) {
		int j = int(4u * w + k) - int(pc.outSkip);
		if (j < 0 || uint(j) >= pc.rows) {
			// Another dispatch's row, or padding past the last row.
			owned = owned && j >= 0 && uint(j) >= pc.tail;
			continue;
		}
		uint rowStart = pc.inSkip + uint(j) * pc.rowLen;
		s[k] = rowStart + c * pc.chunkBytes;
		e[k] = min(s[k] + pc.chunkBytes, rowStart + pc.rowLen);
	}
	uvec4 acc = uvec4(0u);
	if (pc.rowLen < SHORT) {
		acc = foldShort(s, e);
	} else {
		for (uint k = 0u; k < 4u; k++) {
			if (s[k] < e[k] && anyIn(s[k], e[k])) {
				acc[k] = 1u;
			}
		}
	}
	// 0x01 in each lane whose rows hold a true (OR) or a false (AND).
	bvec4 hit = notEqual(acc, uvec4(0u));
	uint found = uint(hit.x) | uint(hit.y) << 8 | uint(hit.z) << 16 | uint(hit.w) << 24;
	if (owned) {
		dst[w] = AND ? found ^ 0x01010101u : found;
	} else if (found != 0u) {
		if (AND) {
			atomicAnd(dst[w], ~found);
		} else {
			atomicOr(dst[w], found);
		}
	}
}

void main() {
	uint g = gl_WorkGroupID.x + pc.groupsX * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
	uint i = g * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
	if (i >= pc.n) {
		return;
	}
	uint c = i % pc.chunks;
	uint first = (i / pc.chunks) * pc.perInv;
	uint last = min(first + pc.perInv, pc.words);
	for (uint w = first; w < last; w++) {
		reduceWord(pc.firstWord + w, c);
	}
}
