package spirv

import (
	"bytes"
	"encoding/binary"
	"maps"
	"slices"
	"testing"

	"github.com/vkops/vkops/shaders"
)

// reluSpec is the fused ReLU's constants on f32[1 1024] (a 256-wide
// group, MODE_WHOLE, Greater then Where), as vkops bench's first call
// passes them.
var reluSpec = []uint32{0x100, 1, 0xe, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0x20500, 0x402, 0x4060b}

func TestPruneLeavesWhatItCannotRead(t *testing.T) {
	code := shaders.SPIRV("fused1_w4_whole")
	v16 := bytes.Clone(code)
	binary.LittleEndian.PutUint32(v16[4:], version16)
	// The last instruction, OpFunctionEnd, claims words past the end.
	cut := bytes.Clone(code)
	binary.LittleEndian.PutUint32(cut[len(cut)-4:], 5<<16|56)
	// Ids at and past the bound, which Prune's tables do not hold.
	low := bytes.Clone(code)
	binary.LittleEndian.PutUint32(low[12:], 100)
	huge := bytes.Clone(code)
	binary.LittleEndian.PutUint32(huge[12:], maxBound+1)
	for _, c := range []struct {
		name string
		code []byte
	}{
		{"empty", nil},
		{"not words", code[:21]},
		{"no magic", append([]byte{0, 0, 0, 0}, code[4:]...)},
		{"SPIR-V 1.6", v16},
		{"an instruction past the end", cut},
		{"ids past the bound", low},
		{"a bound past maxBound", huge},
	} {
		if got := Prune(c.code, reluSpec); !bytes.Equal(got, c.code) {
			t.Errorf("%s: Prune changed the module", c.name)
		}
	}
}

func TestPruneFused(t *testing.T) {
	in := shaders.SPIRV("fused2_w4_texel64_whole")
	out := Prune(in, reluSpec)
	// The ReLU's two instructions and MODE_WHOLE leave less than two
	// fifths of the module reachable (51 of 143 KB when written).
	if len(out) >= len(in)*2/5 {
		t.Errorf("ReLU's fused module: %d of %d bytes left", len(out), len(in))
	}
	if again := Prune(out, reluSpec); !bytes.Equal(again, out) {
		t.Errorf("pruning the pruned module changed it: %d bytes, then %d", len(out), len(again))
	}
	if other := Prune(in, append([]uint32{}, reluSpec[:12]...)); bytes.Equal(other, out) {
		t.Errorf("another program pruned as ReLU's")
	}
}

func TestEval(t *testing.T) {
	const u32, b = 1, 2
	e := newEvaluator(128, nil)
	for id, v := range map[uint32]uint32{10: 7, 11: 3, 12: 0xfffffff0, 13: 1, 14: 0, 15: 40} {
		e.decide(id, v)
	}
	setKind(e.kinds, u32, int32Kind)
	setKind(e.kinds, b, boolKind)
	for _, c := range []struct {
		name string
		op   uint32
		typ  uint32
		args []uint32
		want uint32
		ok   bool
	}{
		{"iadd", opIAdd, u32, []uint32{10, 11}, 10, true},
		{"isub", opISub, u32, []uint32{11, 10}, 0xfffffffc, true},
		{"imul", opIMul, u32, []uint32{10, 11}, 21, true},
		{"udiv", opUDiv, u32, []uint32{10, 11}, 2, true},
		{"udiv by 0", opUDiv, u32, []uint32{10, 14}, 0, false},
		{"umod", opUMod, u32, []uint32{10, 11}, 1, true},
		{"shr", opShiftRightLogical, u32, []uint32{12, 11}, 0x1ffffffe, true},
		{"sar", opShiftRightArithmetic, u32, []uint32{12, 11}, 0xfffffffe, true},
		{"shl", opShiftLeftLogical, u32, []uint32{10, 11}, 56, true},
		{"shift past the width", opShiftLeftLogical, u32, []uint32{10, 15}, 0, false},
		{"and", opBitwiseAnd, u32, []uint32{10, 11}, 3, true},
		{"or", opBitwiseOr, u32, []uint32{10, 12}, 0xfffffff7, true},
		{"xor", opBitwiseXor, u32, []uint32{10, 11}, 4, true},
		{"not", opNot, u32, []uint32{14}, 0xffffffff, true},
		{"negate", opSNegate, u32, []uint32{13}, 0xffffffff, true},
		{"ieq", opIEqual, b, []uint32{10, 10}, 1, true},
		{"ine", opINotEqual, b, []uint32{10, 10}, 0, true},
		{"ult", opULessThan, b, []uint32{12, 10}, 0, true},
		{"slt", opSLessThan, b, []uint32{12, 10}, 1, true},
		{"uge", opUGreaterThanEqual, b, []uint32{12, 10}, 1, true},
		{"sgt", opSGreaterThan, b, []uint32{12, 10}, 0, true},
		{"ule", opULessThanEqual, b, []uint32{11, 10}, 1, true},
		{"sge", opSGreaterThanEqual, b, []uint32{11, 10}, 0, true},
		{"logical and", opLogicalAnd, b, []uint32{13, 14}, 0, true},
		{"logical or", opLogicalOr, b, []uint32{13, 14}, 1, true},
		{"logical not", opLogicalNot, b, []uint32{14}, 1, true},
		{"select", opSelect, u32, []uint32{14, 10, 11}, 3, true},
		{"an unknown operand", opIAdd, u32, []uint32{10, 99}, 0, false},
		{"a type it does not compute", opIAdd, 3, []uint32{10, 11}, 0, false},
		{"an op it does not compute", opSpecConstantOp, u32, []uint32{10, 11}, 0, false},
	} {
		const id = 100
		e.decided[id] = false
		e.eval(c.op, c.typ, id, c.args)
		got, ok := e.value(id)
		if ok != c.ok || got != c.want {
			t.Errorf("%s: got %#x (known %v), want %#x (known %v)", c.name, got, ok, c.want, c.ok)
		}
	}
}

// BenchmarkPrune is what Prune adds to building a pipeline, on the
// largest fused module.
func BenchmarkPrune(b *testing.B) {
	in := shaders.SPIRV("fused4_w4_texel64_whole")
	for b.Loop() {
		Prune(in, reluSpec)
	}
}

// phiModule is a compute module of two selections in a row: the first
// on spec constant 0 == 1, the second on a phi of what the first's
// sides give (1 or 2) == 1. Only propagation through the phi decides
// the second.
func phiModule() []byte {
	const (
		void, fn, boolT, uintT, c, one, two, main, entry = 1, 2, 3, 4, 5, 6, 7, 8, 9
		cond, t, f, m, p, q, a, b, m2, bound             = 10, 11, 12, 13, 14, 15, 16, 17, 18, 19
	)
	words := []uint32{magic, 0x00010300, 0, bound, 0}
	for _, i := range [][]uint32{
		ins(17, 1),                      // OpCapability Shader
		ins(14, 0, 1),                   // OpMemoryModel Logical GLSL450
		ins(15, 5, main, 0x6e69616d, 0), // OpEntryPoint GLCompute "main"
		ins(16, main, 17, 1, 1, 1),      // OpExecutionMode LocalSize 1 1 1
		ins(opDecorate, c, decorationSpecID, 0),
		ins(19, void), // OpTypeVoid
		ins(33, fn, void),
		ins(opTypeBool, boolT),
		ins(opTypeInt, uintT, 32, 0),
		ins(opSpecConstant, uintT, c, 0),
		ins(opConstant, uintT, one, 1),
		ins(opConstant, uintT, two, 2),
		ins(opFunction, void, main, 0, fn),
		ins(opLabel, entry),
		ins(opIEqual, boolT, cond, c, one),
		ins(opSelectionMerge, m, 0),
		ins(opBranchConditional, cond, t, f),
		ins(opLabel, t), ins(opBranch, m),
		ins(opLabel, f), ins(opBranch, m),
		ins(opLabel, m),
		ins(opPhi, uintT, p, one, t, two, f),
		ins(opIEqual, boolT, q, p, one),
		ins(opSelectionMerge, m2, 0),
		ins(opBranchConditional, q, a, b),
		ins(opLabel, a), ins(opBranch, m2),
		ins(opLabel, b), ins(opBranch, m2),
		ins(opLabel, m2), ins(opReturn),
		ins(opFunctionEnd),
	} {
		words = append(words, i...)
	}
	code := make([]byte, 4*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint32(code[4*i:], w)
	}
	return code
}

// branches returns the targets of each OpBranchConditional in code.
func branches(code []byte) [][2]uint32 {
	var out [][2]uint32
	for i := 20; i+16 <= len(code); {
		w := binary.LittleEndian.Uint32(code[i:])
		if w&0xffff == opBranchConditional {
			out = append(out, [2]uint32{binary.LittleEndian.Uint32(code[i+8:]), binary.LittleEndian.Uint32(code[i+12:])})
		}
		i += 4 * int(w>>16)
	}
	return out
}

// TestPrunePropagates: a selection on a phi is decided where the
// constants leave only one of the phi's inputs reachable.
func TestPrunePropagates(t *testing.T) {
	in := phiModule()
	for _, c := range []struct {
		spec uint32
		want [][2]uint32
	}{
		{1, [][2]uint32{{11, 11}, {16, 16}}}, // first side: the phi is 1
		{0, [][2]uint32{{12, 12}, {17, 17}}}, // second side: 2
	} {
		got := branches(Prune(in, []uint32{c.spec}))
		if !slices.Equal(got, c.want) {
			t.Errorf("spec %d: branches %v, want %v", c.spec, got, c.want)
		}
	}
}

// TestDCE: what nothing reads goes, with the stores to a variable that
// nothing loads; what reaches a store to shared memory stays.
func TestDCE(t *testing.T) {
	const (
		void, fn, uintT, pf, pw, g, one, two, main, entry = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10
		v, u, a, b, l, c, bound                           = 11, 12, 13, 14, 15, 16, 17
	)
	words := []uint32{magic, 0x00010300, 0, bound, 0}
	for _, i := range [][]uint32{
		ins(17, 1), ins(14, 0, 1), ins(15, 5, main, 0x6e69616d, 0),
		ins(opName, a, 0x61), // "a"
		ins(19, void), ins(33, fn, void),
		ins(opTypeInt, uintT, 32, 0),
		ins(32, pf, storageClassFunction, uintT), // OpTypePointer
		ins(32, pw, 4, uintT),                    // Workgroup
		ins(opVariable, pw, g, 4),
		ins(opConstant, uintT, one, 1), ins(opConstant, uintT, two, 2),
		ins(opFunction, void, main, 0, fn),
		ins(opLabel, entry),
		ins(opVariable, pf, v, storageClassFunction),
		ins(opVariable, pf, u, storageClassFunction),
		ins(opIAdd, uintT, a, one, two),
		ins(opStore, v, a),
		ins(opIMul, uintT, b, two, two),
		ins(opStore, u, b),
		ins(opLoad, uintT, l, u),
		ins(opStore, g, l),
		ins(opISub, uintT, c, one, one),
		ins(opReturn),
		ins(opFunctionEnd),
	} {
		words = append(words, i...)
	}
	got := map[uint32]bool{}
	stores := 0
	out := dce(words)
	for i := 5; i < len(out); i += int(out[i] >> 16) {
		switch out[i] & 0xffff {
		case opVariable, opIAdd, opIMul, opLoad, opISub:
			got[out[i+2]] = true
		case opStore:
			stores++
		case opName:
			t.Errorf("the name of a removed id stays")
		}
	}
	want := map[uint32]bool{g: true, u: true, b: true, l: true}
	if !maps.Equal(got, want) || stores != 2 {
		t.Errorf("ids defined after dce %v with %d stores, want %v with 2", got, stores, want)
	}
	// Ids past the bound: the module is left as it is.
	words[3] = c
	if out := dce(words); &out[0] != &words[0] {
		t.Errorf("dce changed a module whose ids pass its bound")
	}
}

func ins(op uint32, args ...uint32) []uint32 {
	return append([]uint32{uint32(len(args)+1)<<16 | op}, args...)
}
