// The fused kernels' hooks in the elementwise skeleton (elementwise.glsl):
// a chain of element ops (masks, select, Maximum, Minimum, Clamp) run as
// one pass, its program in specialization constants, so that the driver
// itself compiles it into straight-line code over registers (ops/expr.go
// builds the programs).
//
// Registers hold one chunk of sixteen elements each (one element on the
// element path): the inputs, the pushed scalars, then the result of
// each instruction (shaders/spec sets how many of each, and make shaders
// writes the register file, fused_regs.glsl). A register holds bools
// (one byte each) or values (W bytes each, of one element type, read as
// KEY says). The last instruction's result is the output, stored, or
// with FOLD folded: any of it (FOLD_ANY) or all of it (FOLD_ALL), into
// one bool, or with FOLD_ROWS into one bool for each run of pc.foldLen
// elements (a reduction over the innermost axes).
#include "spec.glsl"
#define NIN FUSED_INPUTS
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_vote : require

// HEAD, its fields (HEAD_ in shaders/spec): which inputs, scalars and
// output are bools, KEY (of the values), FOLD, FOLD_ROWS, FOLD_COLS,
// and the instructions, which the module defines as NINS: a module for
// each length holds only its slots' code.
layout(constant_id = SPEC_OP0) const uint HEAD = 0u;
const uint KEY = FIELD(HEAD, HEAD_KEY);
const uint FOLD = FIELD(HEAD, HEAD_FOLD); // FOLD_NONE, FOLD_ANY or FOLD_ALL (spec.glsl)
// FOLD_ROWS: element e folds into output (e / pc.foldLen) % pc.foldKeep;
// FOLD_COLS too, and a chunk's 16 elements into 16 outputs (foldLen 1).
const bool FOLD_ROWS = FIELD(HEAD, HEAD_FOLD_ROWS) != 0u;
const bool FOLD_COLS = FIELD(HEAD, HEAD_FOLD_COLS) != 0u;
#define OUT_W (FIELD(HEAD, HEAD_OUT_BOOL) != 0u ? 1u : W)
uint inW(uint x) { return ((FIELD(HEAD, HEAD_IN_BOOL) >> x) & 1u) != 0u ? 1u : W; }
#define HAS_FOLD
#include "elementwise.glsl"
#include "maskops.glsl"
#include "minmaxops.glsl"

// The registers, the instructions I0, I1, ... and the program's runs,
// runChunk and runElem.
#include "fused_regs.glsl"

// Instruction i, its fields (INS_ in shaders/spec): the op (OP_EQ, ...,
// OP_SELECT, OP_MAX, OP_MIN, OP_CLAMP); whether its operands are bools
// (a compare, select, maximum, minimum or clamp of bools); IsInf's
// detect; the registers of its operands a, b and c (a select's cond,
// then and else; a clamp's data, min and max).
uint opOf(uint ins) { return FIELD(ins, INS_OP); }
bool boolArgs(uint ins) { return FIELD(ins, INS_BOOL_ARGS) != 0u; }
uint detectOf(uint ins) { return FIELD(ins, INS_DETECT); }
uint regA(uint ins) { return FIELD(ins, INS_REG_A); }
uint regB(uint ins) { return FIELD(ins, INS_REG_B); }
uint regC(uint ins) { return FIELD(ins, INS_REG_C); }

// The program's output's register.
#define OUT_REG (FUSED_FIRST_RESULT + uint(NINS) - 1u)

// scalarW returns scalar s's element bytes.
uint scalarW(uint s) { return ((FIELD(HEAD, HEAD_SCALAR_BOOL) >> s) & 1u) != 0u ? 1u : W; }

// keyW returns how the operands of instruction ins are read, and their
// bytes.
uint argKey(uint ins) { return boolArgs(ins) || (opOf(ins) >= OP_AND && opOf(ins) <= OP_NOT) ? KEY_BOOL : KEY; }
uint argW(uint ins) { return argKey(ins) == KEY_BOOL ? 1u : W; }

// The registers of a chunk are one variable each, not an array:
// indexed by the program's constants, an array of registers stayed in
// memory on lavapipe, and a fused ReLU ran 40 times as slow as the two
// ops apart. vec chooses a register by a chain of ifs on those
// constants, which specialization folds to a plain read. The code
// reads registers a vector at a time, never copying one whole into an
// operand array: those copies were most of lavapipe's pipeline build
// of the fused kernels (ReLU's 18 ms against 11.5, the clamp's 27
// against 19).

// selectChunk is select's chunk: c's bools pick the elements of w bytes
// of register a or of register b, bit for bit, into o.
void selectChunk(uint w, uvec4 c, uint a, uint b, out uvec4 o[8]) {
	uvec4 f = flags(c);
	for (uint k = 0u; k < w; k++) {
		uvec4 m;
		if (w == 1u) {
			m = f * 0xffu;
		} else if (w == 2u) {
			uvec4 x = uvec4(f[2u * k], f[2u * k], f[2u * k + 1u], f[2u * k + 1u]) >> uvec4(0u, 16u, 0u, 16u);
			m = (x & 1u) * 0xffffu | ((x >> 8) & 1u) * 0xffff0000u;
		} else {
			uvec4 x = w == 4u ? uvec4(f[k]) >> uvec4(0u, 8u, 16u, 24u)
			                  : uvec4(f[k >> 1]) >> (uvec4(0u, 0u, 8u, 8u) + 16u * (k & 1u));
			m = (x & 1u) * 0xffffffffu;
		}
		o[k] = (vec(a, k) & m) | (vec(b, k) & ~m);
	}
}

// isTest reports whether op is a comparison or a classifier: one that
// tests elements of values, not bools.
bool isTest(uint op) { return op <= OP_LE || (op >= OP_ISNAN && op <= OP_ISFINITE); }

// lanes returns, for vector k of a chunk of W-byte values, the mask of
// the elements for which test instruction p holds: the bools it makes,
// before they are packed into bytes. A select whose cond a test of
// values made, and a fold of one, take these, not the bytes: packing
// sixteen bools and unpacking them again took lavapipe longer than the
// test.
uvec4 lanes(uint p, uint k) {
	uvec4 a = vec(regA(p), k), b = vec(regB(p), k);
	uint op = opOf(p), key = KEY, det = detectOf(p);
	const uint w = W;
	if (w == 4u) {
		return op4(op, key, det, w, a, b) * 0xffffffffu;
	}
	if (w == 2u) {
		uvec4 lo = op4(op, key, det, w, a & 0xffffu, b & 0xffffu);
		uvec4 hi = op4(op, key, det, w, a >> 16, b >> 16);
		return lo * 0xffffu | hi * 0xffff0000u;
	}
	if (w == 8u) {
		uvec2 r = op2(op, key, det, a, b);
		return uvec4(r.xx, r.yy) * 0xffffffffu;
	}
	uvec4 m = uvec4(0u);
	for (uint i = 0u; i < 4u; i++) {
		m |= op4(op, key, det, w, (a >> (8u * i)) & 0xffu, (b >> (8u * i)) & 0xffu) * (0xffu << (8u * i));
	}
	return m;
}

// tested reports whether register r holds the result of a test of
// values, the instruction that made it in p.
bool tested(uint r, out uint p) {
	p = instrAt(r - FUSED_FIRST_RESULT);
	return r >= FUSED_FIRST_RESULT && isTest(opOf(p)) && !boolArgs(p);
}

// step runs instruction ins on the chunk's registers into o.
void step(uint ins, out uvec4 o[8]) {
	// Each call has its width as a constant, so that the module holds
	// the code of two widths, bools and W, not of all four.
	uint op = opOf(ins), a = regA(ins), b = regB(ins), c = regC(ins), p;
	if (op == OP_SELECT && !boolArgs(ins) && tested(a, p)) {
		for (uint k = 0u; k < W; k++) {
			uvec4 m = lanes(p, k);
			o[k] = (vec(b, k) & m) | (vec(c, k) & ~m);
		}
	} else if (op == OP_SELECT) {
		if (boolArgs(ins)) {
			selectChunk(1u, vec(a, 0u), b, c, o);
		} else {
			selectChunk(W, vec(a, 0u), b, c, o);
		}
	} else if (op >= OP_MAX && boolArgs(ins)) {
		// Of bools, Maximum is or and Minimum and, on sixteen at once:
		// the module holds no code of values one byte wide for them.
		uvec4 fa = flags(vec(a, 0u)), fb = flags(vec(b, 0u));
		uvec4 f = op == OP_MIN ? fa & fb : fa | fb;
		o[0] = op == OP_CLAMP ? f & flags(vec(c, 0u)) : f;
	} else if (op >= OP_MAX) {
		for (uint k = 0u; k < W; k++) {
			o[k] = valueVec(op, KEY, W, vec(a, k), vec(b, k), vec(c, k));
		}
	} else if (op >= OP_AND && op <= OP_NOT) {
		o[0] = logicalChunk(op, vec(a, 0u), vec(b, 0u));
	} else if (boolArgs(ins)) {
		uvec4 v = uvec4(0u);
		opVec(op, KEY_BOOL, detectOf(ins), 1u, vec(a, 0u), vec(b, 0u), 0u, v);
		o[0] = v;
	} else {
		uvec4 v = uvec4(0u);
		for (uint k = 0u; k < W; k++) {
			opVec(op, KEY, detectOf(ins), W, vec(a, k), vec(b, k), k, v);
		}
		o[0] = v;
	}
}

// folded returns what a fold takes of a chunk: nonzero where the
// result's non-identity is, from the last instruction's lanes where it
// is a test, else from its bools.
uvec4 folded() {
	uint p = instrAt(uint(NINS) - 1u);
	uvec4 f = uvec4(0u);
	if (isTest(opOf(p)) && !boolArgs(p)) {
		for (uint k = 0u; k < W; k++) {
			f |= FOLD == FOLD_ANY ? lanes(p, k) : ~lanes(p, k);
		}
		return f;
	}
	f = flags(vec(OUT_REG, 0u));
	return FOLD == FOLD_ANY ? f : f ^ 0x01010101u;
}

void opChunk(uvec4 v[NIN][8], out uvec4 o[8]) {
	runChunk(v);
	// A fold by columns takes the bools, in the order of their elements,
	// which folded's lanes of a test do not keep.
	if (FOLD != 0u && !FOLD_COLS) {
		o[0] = folded();
	} else {
		for (uint k = 0u; k < W; k++) {
			o[k] = vec(OUT_REG, k);
		}
	}
}

// stepE runs instruction ins on one element's registers.
uvec2 stepE(uint ins) {
	uint op = opOf(ins);
	if (op == OP_SELECT) {
		return getE(regA(ins)).x != 0u ? getE(regB(ins)) : getE(regC(ins));
	}
	if (op >= OP_MAX && boolArgs(ins)) {
		// As on chunks, or and and: the values' code is W's alone.
		uint v = op == OP_MIN ? uint(getE(regA(ins)).x != 0u && getE(regB(ins)).x != 0u)
		                      : uint(getE(regA(ins)).x != 0u || getE(regB(ins)).x != 0u);
		return uvec2(op == OP_CLAMP ? v & uint(getE(regC(ins)).x != 0u) : v, 0u);
	}
	if (op >= OP_MAX) {
		return valueOf(op, KEY, W, getE(regA(ins)), getE(regB(ins)), getE(regC(ins)));
	}
	return uvec2(result(op, argKey(ins), detectOf(ins), argW(ins), getE(regA(ins)), getE(regB(ins))), 0u);
}

uvec2 opElem(uint off[NIN]) {
	runElem(off);
	return getE(OUT_REG);
}

// The fold: where this invocation saw the output's non-identity (a
// true for FOLD_ANY, a false for FOLD_ALL), as bits, or'ed without a
// branch. Over every element, at the invocation's end one invocation of
// each subgroup that saw one changes the output's first byte, which the
// host filled with the identity. By rows (FOLD_ROWS), the invocation
// changes its row's byte when it moves to the next row and at its end:
// chunks lie in one row each, as pc.foldLen is a whole number of them.
// By columns (FOLD_COLS), a chunk changes the bytes of its 16 outputs
// where it saw something: on data that makes every byte count, none.
uvec4 seen = uvec4(0u);
uint seenRow = 0xffffffffu; // the row seen belongs to, with FOLD_ROWS

// mark changes row's byte of the output, where seen holds something.
void mark(uint row) {
	if (!any(notEqual(seen, uvec4(0u)))) {
		return;
	}
	uint sh = 8u * (row & 3u);
	if (FOLD == FOLD_ANY) {
		atomicOr(outW[row >> 2], 1u << sh);
	} else {
		atomicAnd(outW[row >> 2], ~(0xffu << sh));
	}
}

// rowOf moves seen to the row of element e, marking the one it held.
void rowOf(uint e) {
	uint row = e / pc.foldLen % pc.foldKeep;
	if (row != seenRow) {
		if (seenRow != 0xffffffffu) {
			mark(seenRow);
		}
		seen = uvec4(0u);
		seenRow = row;
	}
}

// markChunk changes the bytes of the 16 outputs from o0, a multiple of
// 16, where the chunk's bools o are not the identity.
void markChunk(uint o0, uvec4 o) {
	uvec4 f = FOLD == FOLD_ANY ? flags(o) : flags(o) ^ 0x01010101u;
	for (uint k = 0u; k < 4u; k++) {
		if (f[k] == 0u) {
			continue;
		}
		if (FOLD == FOLD_ANY) {
			atomicOr(outW[o0 / 4u + k], f[k]);
		} else {
			atomicAnd(outW[o0 / 4u + k], ~(f[k] * 0xffu));
		}
	}
}

void foldChunk(uvec4 o, uint e) {
	if (FOLD_COLS) {
		markChunk(e % pc.foldKeep, o);
		return;
	}
	if (FOLD_ROWS) {
		rowOf(e);
	}
	seen |= o;
}

void foldElem(uint v, uint e) {
	if (FOLD_ROWS) {
		rowOf(e);
	}
	seen.x |= uint((v != 0u) == (FOLD == FOLD_ANY));
}

void foldEnd() {
	if (FOLD_ROWS) {
		if (seenRow != 0xffffffffu) {
			mark(seenRow);
		}
		return;
	}
	if (subgroupAny(any(notEqual(seen, uvec4(0u)))) && subgroupElect()) {
		if (FOLD == FOLD_ANY) {
			atomicOr(outW[0], 1u);
		} else {
			atomicAnd(outW[0], ~0xffu);
		}
	}
}
