// Package spirv rewrites a compute module for one set of specialization
// constants before a driver sees it.
//
// vkops's kernels choose their paths by specialization constants: a fused
// kernel holds every op's code in each instruction slot, and the
// constants pick one. A driver translates every path before its own
// constant folding removes the dead ones; lavapipe 22.3 spent most of a
// fused ReLU's pipeline build there (fused2_w4_texel64_whole, 115 KB of
// SPIR-V: 75 ms, against 13.5 ms for the module specialized and
// optimized by spirv-opt). Prune points each selection that the
// constants decide at its taken side only, so that the driver never
// translates the other. It finds them by propagating the constants
// through the functions (sccp.go), then drops the code whose results
// nothing reads (dce.go). ReLU's module went from 143 KB to 72 with the
// constants alone, to 51 with propagation and to 44 without dead code;
// lavapipe's pipeline build from 26 ms to 17.5, then 14 (the clamp's
// 47 to 29, then 25). Prune itself takes 2.5-2.8 ms on the largest
// module (BenchmarkPrune), with its tables indexed by id where maps took
// 4.9-5.4.
package spirv

import (
	"encoding/binary"
	"slices"
)

// The opcodes Prune reads.
const (
	opTypeBool             = 20
	opTypeInt              = 21
	opConstantTrue         = 41
	opConstantFalse        = 42
	opConstant             = 43
	opSpecConstantTrue     = 48
	opSpecConstantFalse    = 49
	opSpecConstant         = 50
	opSpecConstantOp       = 52
	opDecorate             = 71
	opCopyObject           = 83
	opBitcast              = 124
	opSNegate              = 126
	opIAdd                 = 128
	opISub                 = 130
	opIMul                 = 132
	opUDiv                 = 134
	opUMod                 = 137
	opLogicalEqual         = 164
	opLogicalNotEqual      = 165
	opLogicalOr            = 166
	opLogicalAnd           = 167
	opLogicalNot           = 168
	opSelect               = 169
	opIEqual               = 170
	opINotEqual            = 171
	opUGreaterThan         = 172
	opSGreaterThan         = 173
	opUGreaterThanEqual    = 174
	opSGreaterThanEqual    = 175
	opULessThan            = 176
	opSLessThan            = 177
	opULessThanEqual       = 178
	opSLessThanEqual       = 179
	opShiftRightLogical    = 194
	opShiftRightArithmetic = 195
	opShiftLeftLogical     = 196
	opBitwiseOr            = 197
	opBitwiseXor           = 198
	opBitwiseAnd           = 199
	opNot                  = 200
	opFunction             = 54
	opPhi                  = 245
	opLoopMerge            = 246
	opSelectionMerge       = 247
	opLabel                = 248
	opBranch               = 249
	opBranchConditional    = 250
	opSwitch               = 251
	opKill                 = 252
	opReturn               = 253
	opReturnValue          = 254
	opUnreachable          = 255

	decorationSpecID = 1
	magic            = 0x07230203
	// version16 is SPIR-V 1.6, from which a conditional branch's two
	// labels must differ.
	version16 = 0x00010600
)

// Version names what Prune makes of a module: vkops keeps pruned modules
// from run to run under a name that holds it, beside the module's and
// the constants' digests. Raise it when Prune changes so that it must
// not reuse what an earlier Prune made, as after a fix; an improvement
// alone need not, as every Prune's output is a correct pruning.
const Version = 1

// Prune returns code, a SPIR-V module, with each selection whose
// condition is known from the specialization constants spec (by
// SpecId; a constant spec does not name keeps its default) branching
// to its taken side alone: OpBranchConditional names that label twice,
// OpSwitch keeps it as its default and drops its cases. The selection
// constructs stay whole, so the module stays valid, and a driver
// translates only the blocks it can reach: it computes the same
// constants from the same spec. Prune returns code itself where it
// changes nothing or cannot read the module.
func Prune(code []byte, spec []uint32) []byte {
	if len(code) < 20 || len(code)%4 != 0 {
		return code
	}
	words := make([]uint32, len(code)/4)
	for i := range words {
		words[i] = binary.LittleEndian.Uint32(code[4*i:])
	}
	if words[0] != magic || words[1] >= version16 || words[3] > maxBound {
		return code
	}
	e := newEvaluator(words[3], spec)
	if !e.scan(words) || !e.propagate(words) {
		return code
	}
	out, changed := e.rewrite(words)
	if !changed {
		return code
	}
	if out = e.stubUnreachable(out); out == nil {
		return code
	}
	if out = e.fixPhis(out); out == nil {
		return code
	}
	out = dce(out)
	b := make([]byte, 4*len(out))
	for i, w := range out {
		binary.LittleEndian.PutUint32(b[4*i:], w)
	}
	return b
}

// A kind is what Prune knows of a type: the values it computes are
// 32-bit integers and bools.
type kind uint8

const (
	other kind = iota
	int32Kind
	int64Kind
	boolKind
)

// maxBound is the largest id bound Prune reads: its tables hold an
// entry per id below the bound (make shaders compacts the ids: the
// largest module's bound is 11087).
const maxBound = 1 << 22

// An evaluator holds what Prune knows of each id, in tables indexed by
// id: an id at or past the module's bound is one it knows nothing of.
type evaluator struct {
	known []uint32 // result id: its value, where decided says the constants decide it
	// decided marks the result ids whose value known holds.
	decided []bool
	kinds   []kind // type id: its kind
	// ints is the kind of each result id of an integer type: the
	// width of a switch's literals is its selector's.
	ints    []kind
	specIDs []uint32 // result id: its SpecId + 1, 0 for none
	spec    []uint32
}

func newEvaluator(bound uint32, spec []uint32) *evaluator {
	return &evaluator{known: make([]uint32, bound), decided: make([]bool, bound), kinds: make([]kind, bound),
		ints: make([]kind, bound), specIDs: make([]uint32, bound), spec: spec}
}

// bound returns the module's id bound: every id is below it.
func (e *evaluator) bound() int { return len(e.decided) }

// value returns the value of id where the constants decide it.
func (e *evaluator) value(id uint32) (uint32, bool) {
	if int(id) >= len(e.decided) || !e.decided[id] {
		return 0, false
	}
	return e.known[id], true
}

// decide records v as the value of id.
func (e *evaluator) decide(id, v uint32) {
	if int(id) < len(e.decided) {
		e.known[id], e.decided[id] = v, true
	}
}

// kind returns the kind of type id.
func (e *evaluator) kind(id uint32) kind {
	if int(id) >= len(e.kinds) {
		return other
	}
	return e.kinds[id]
}

// intKind returns the kind of result id where it is an integer.
func (e *evaluator) intKind(id uint32) kind {
	if int(id) >= len(e.ints) {
		return other
	}
	return e.ints[id]
}

// specValue returns the value spec gives result id, or def where spec
// names no value for its SpecId or it has none.
func (e *evaluator) specValue(id, def uint32) uint32 {
	if int(id) >= len(e.specIDs) || e.specIDs[id] == 0 {
		return def
	}
	if sid := e.specIDs[id] - 1; int(sid) < len(e.spec) {
		return e.spec[sid]
	}
	return def
}

// setKind records k as the kind of type or result id in table t.
func setKind(t []kind, id uint32, k kind) {
	if int(id) < len(t) {
		t[id] = k
	}
}

// scan walks the module's instructions in order, recording types,
// SpecIds and each value that the constants decide. Ids are defined
// before use, but for OpPhi, which it does not evaluate. It reports
// false where an instruction's length is wrong.
func (e *evaluator) scan(words []uint32) bool {
	for i := 5; i < len(words); {
		n := int(words[i] >> 16)
		if n == 0 || i+n > len(words) {
			return false
		}
		e.step(words[i : i+n])
		i += n
	}
	return true
}

func (e *evaluator) step(ins []uint32) {
	op := ins[0] & 0xffff
	if len(ins) >= 3 && op != opDecorate {
		if k := e.kind(ins[1]); k == int32Kind || k == int64Kind {
			setKind(e.ints, ins[2], k)
		}
	}
	switch op {
	case opDecorate:
		if len(ins) == 4 && ins[2] == decorationSpecID && int(ins[1]) < len(e.specIDs) {
			e.specIDs[ins[1]] = ins[3] + 1
		}
	case opTypeBool:
		setKind(e.kinds, ins[1], boolKind)
	case opTypeInt:
		if len(ins) == 4 && ins[2] == 32 {
			setKind(e.kinds, ins[1], int32Kind)
		} else if len(ins) == 4 && ins[2] == 64 {
			setKind(e.kinds, ins[1], int64Kind)
		}
	case opConstantTrue, opConstantFalse:
		e.decide(ins[2], b2u(op == opConstantTrue))
	case opConstant:
		if len(ins) == 4 && e.kind(ins[1]) == int32Kind {
			e.decide(ins[2], ins[3])
		}
	case opSpecConstantTrue, opSpecConstantFalse:
		e.decide(ins[2], b2u(e.specValue(ins[2], b2u(op == opSpecConstantTrue)) != 0))
	case opSpecConstant:
		if len(ins) == 4 && e.kind(ins[1]) == int32Kind {
			e.decide(ins[2], e.specValue(ins[2], ins[3]))
		}
	case opSpecConstantOp:
		if len(ins) >= 4 {
			e.eval(ins[3], ins[1], ins[2], ins[4:])
		}
	default:
		if len(ins) >= 3 {
			e.eval(op, ins[1], ins[2], ins[3:])
		}
	}
}

// eval records the value of result id, of type typ, made by op from
// operand ids args, where Prune computes op and knows every operand.
func (e *evaluator) eval(op, typ, id uint32, args []uint32) {
	k := e.kind(typ)
	if k == other || len(args) == 0 || len(args) > 3 {
		return
	}
	var v [3]uint32
	for i, a := range args {
		x, ok := e.value(a)
		if !ok {
			return
		}
		v[i] = x
	}
	if r, ok := fold(op, k, v[:len(args)]); ok {
		e.decide(id, r)
	}
}

// folds reports whether fold computes op: each of its operands is an
// id.
func folds(op uint32) bool {
	switch op {
	case opCopyObject, opBitcast, opSNegate, opNot, opLogicalNot, opSelect,
		opIAdd, opISub, opIMul, opUDiv, opUMod,
		opShiftRightLogical, opShiftRightArithmetic, opShiftLeftLogical,
		opBitwiseOr, opBitwiseXor, opBitwiseAnd, opLogicalOr, opLogicalAnd,
		opIEqual, opLogicalEqual, opINotEqual, opLogicalNotEqual,
		opUGreaterThan, opSGreaterThan, opUGreaterThanEqual, opSGreaterThanEqual,
		opULessThan, opSLessThan, opULessThanEqual, opSLessThanEqual:
		return true
	}
	return false
}

// fold returns what op makes of the values v, of kind k, where Prune
// computes it.
func fold(op uint32, k kind, v []uint32) (uint32, bool) {
	if k == other || len(v) == 0 {
		return 0, false
	}
	a := v[0]
	var b uint32
	if len(v) > 1 {
		b = v[1]
	}
	two := len(v) == 2
	var r uint32
	switch {
	case op == opCopyObject && len(v) == 1, op == opBitcast && len(v) == 1 && k == int32Kind:
		r = a
	case op == opSNegate && len(v) == 1:
		r = -a
	case op == opNot && len(v) == 1:
		r = ^a
	case op == opLogicalNot && len(v) == 1:
		r = a ^ 1
	case op == opSelect && len(v) == 3:
		r = v[2]
		if a != 0 {
			r = b
		}
	case !two:
		return 0, false
	case op == opIAdd:
		r = a + b
	case op == opISub:
		r = a - b
	case op == opIMul:
		r = a * b
	case op == opUDiv && b != 0:
		r = a / b
	case op == opUMod && b != 0:
		r = a % b
	case (op == opShiftRightLogical || op == opShiftRightArithmetic || op == opShiftLeftLogical) && b < 32:
		switch op {
		case opShiftRightLogical:
			r = a >> b
		case opShiftRightArithmetic:
			r = uint32(int32(a) >> b)
		default:
			r = a << b
		}
	case op == opBitwiseOr:
		r = a | b
	case op == opBitwiseXor:
		r = a ^ b
	case op == opBitwiseAnd:
		r = a & b
	case op == opLogicalOr:
		r = b2u(a != 0 || b != 0)
	case op == opLogicalAnd:
		r = b2u(a != 0 && b != 0)
	case op == opIEqual, op == opLogicalEqual:
		r = b2u(a == b)
	case op == opINotEqual, op == opLogicalNotEqual:
		r = b2u(a != b)
	case op == opUGreaterThan:
		r = b2u(a > b)
	case op == opSGreaterThan:
		r = b2u(int32(a) > int32(b))
	case op == opUGreaterThanEqual:
		r = b2u(a >= b)
	case op == opSGreaterThanEqual:
		r = b2u(int32(a) >= int32(b))
	case op == opULessThan:
		r = b2u(a < b)
	case op == opSLessThan:
		r = b2u(int32(a) < int32(b))
	case op == opULessThanEqual:
		r = b2u(a <= b)
	case op == opSLessThanEqual:
		r = b2u(int32(a) <= int32(b))
	default:
		return 0, false
	}
	return r, true
}

// rewrite returns the module with each decided selection's branch
// pointed at its taken side, and whether it changed any.
func (e *evaluator) rewrite(words []uint32) ([]uint32, bool) {
	out := make([]uint32, 0, len(words))
	out = append(out, words[:5]...)
	changed := false
	var prev uint32
	for i := 5; i < len(words); {
		n := int(words[i] >> 16)
		ins := words[i : i+n]
		op := ins[0] & 0xffff
		i += n
		merged := prev == opSelectionMerge
		prev = op
		switch {
		case merged && op == opBranchConditional && n >= 4:
			c, ok := e.value(ins[1])
			if !ok || ins[2] == ins[3] {
				break
			}
			to := ins[3]
			if c != 0 {
				to = ins[2]
			}
			out = append(out, 4<<16|opBranchConditional, ins[1], to, to)
			changed = true
			continue
		case merged && op == opSwitch && n > 3 && n%2 == 1:
			// Cases of 32-bit selectors: a literal and a label each.
			s, ok := e.value(ins[1])
			if !ok {
				break
			}
			to := ins[2]
			for j := 3; j+1 < n; j += 2 {
				if ins[j] == s {
					to = ins[j+1]
					break
				}
			}
			out = append(out, 3<<16|opSwitch, ins[1], to)
			changed = true
			continue
		}
		out = append(out, ins...)
	}
	return out, changed
}

// successors appends the labels that terminator ins branches to, or
// reports false where it cannot read a switch's labels.
func (e *evaluator) successors(dst []uint32, ins []uint32) ([]uint32, bool) {
	switch ins[0] & 0xffff {
	case opBranch:
		return append(dst, ins[1]), true
	case opBranchConditional:
		return append(dst, ins[2], ins[3]), true
	case opSwitch:
		lit := 1
		switch e.intKind(ins[1]) {
		case int32Kind:
		case int64Kind:
			lit = 2
		default:
			return dst, false
		}
		dst = append(dst, ins[2])
		for j := 3 + lit; j < len(ins); j += lit + 1 {
			dst = append(dst, ins[j])
		}
	}
	return dst, true
}

// stubUnreachable empties each block that no branch reaches any more
// to OpUnreachable, so that a side no selection takes neither branches
// into a loop's constructs from outside them nor feeds a phi. The
// continue target of a loop still reached stays whole: the loop's
// back edge. It returns nil where it cannot read a switch's labels.
func (e *evaluator) stubUnreachable(words []uint32) []uint32 {
	type block struct {
		start, end int    // its words: OpLabel to its terminator
		succ       [2]int // its successors, succs[succ[0]:succ[1]]
		cont       uint32 // with OpLoopMerge, the continue target
	}
	blocks := make([]block, 0, len(words)/32)
	succs := make([]uint32, 0, len(words)/16)
	var entries []int               // each function's first block
	label := make([]int, e.bound()) // label id: its block + 1, 0 for none
	for i := 5; i < len(words); {
		n := int(words[i] >> 16)
		ins := words[i : i+n]
		switch ins[0] & 0xffff {
		case opFunction:
			entries = append(entries, len(blocks))
		case opLabel:
			if len(ins) < 2 || int(ins[1]) >= len(label) {
				return nil
			}
			label[ins[1]] = len(blocks) + 1
			blocks = append(blocks, block{start: i})
		case opLoopMerge:
			blocks[len(blocks)-1].cont = ins[2]
		case opBranch, opBranchConditional, opSwitch, opReturn, opReturnValue, opKill, opUnreachable:
			b := &blocks[len(blocks)-1]
			b.end = i + n
			var ok bool
			b.succ[0] = len(succs)
			if succs, ok = e.successors(succs, ins); !ok {
				return nil
			}
			b.succ[1] = len(succs)
		}
		i += n
	}
	reached := make([]bool, len(blocks))
	var stack []int
	for _, f := range entries {
		if f < len(blocks) {
			reached[f] = true
			stack = append(stack, f)
		}
	}
	for len(stack) > 0 {
		b := blocks[stack[len(stack)-1]]
		stack = stack[:len(stack)-1]
		for _, l := range succs[b.succ[0]:b.succ[1]] {
			if int(l) < len(label) && label[l] > 0 && !reached[label[l]-1] {
				reached[label[l]-1] = true
				stack = append(stack, label[l]-1)
			}
		}
	}
	keep := slices.Clone(reached)
	for j, b := range blocks {
		if reached[j] && int(b.cont) < len(label) && label[b.cont] > 0 {
			keep[label[b.cont]-1] = true
		}
	}
	out := make([]uint32, 0, len(words))
	at := 0
	for j, b := range blocks {
		if keep[j] || b.end == 0 {
			continue
		}
		out = append(out, words[at:b.start]...)
		out = append(out, 2<<16|opLabel, words[b.start+1], 1<<16|opUnreachable)
		at = b.end
	}
	return append(out, words[at:]...)
}

// fixPhis drops from each OpPhi the blocks that no longer branch to
// its own: a selection pointed at one side no longer comes from the
// header. It returns nil where it cannot read a switch's labels.
func (e *evaluator) fixPhis(words []uint32) []uint32 {
	edges := map[[2]uint32]bool{} // {from, to}
	var succ []uint32
	var block uint32
	for i := 5; i < len(words); {
		n := int(words[i] >> 16)
		ins := words[i : i+n]
		i += n
		switch ins[0] & 0xffff {
		case opLabel:
			block = ins[1]
		case opBranch, opBranchConditional, opSwitch:
			var ok bool
			if succ, ok = e.successors(succ[:0], ins); !ok {
				return nil
			}
			for _, l := range succ {
				edges[[2]uint32{block, l}] = true
			}
		}
	}
	out := make([]uint32, 0, len(words))
	out = append(out, words[:5]...)
	for i := 5; i < len(words); {
		n := int(words[i] >> 16)
		ins := words[i : i+n]
		i += n
		switch ins[0] & 0xffff {
		case opLabel:
			block = ins[1]
		case opPhi:
			at := len(out)
			out = append(out, 0, ins[1], ins[2])
			for j := 3; j+1 < n; j += 2 {
				if edges[[2]uint32{ins[j+1], block}] {
					out = append(out, ins[j], ins[j+1])
				}
			}
			out[at] = uint32(len(out)-at)<<16 | opPhi
			continue
		}
		out = append(out, ins...)
	}
	return out
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}
