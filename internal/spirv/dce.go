package spirv

// Dead code removal: once the constants have chosen the paths, much of
// what is left computes values that nothing reads any more (a fused
// kernel fetches the registers of every operand slot, whichever op
// reads them). An instruction stays where it has an effect or where a
// kept one reads its result; a store to a Function or Private variable
// stays where something reads that variable. Control flow stays whole,
// so the module stays structured as it was. On ReLU's pruned module,
// spirv-opt's aggressive dead code removal took lavapipe's pipeline
// build from 17 to 12.5 ms.

// The opcodes dce reads besides Prune's.
const (
	opName                 = 5
	opExtInstImport        = 11
	opExtInst              = 12
	opVariable             = 59
	opLoad                 = 61
	opStore                = 62
	opAccessChain          = 65
	opInBoundsAccessChain  = 66
	opDecorateID           = 332
	opDecorateString       = 5632
	storageClassPrivate    = 6
	storageClassFunction   = 7
	glslStd450Name         = 0x4c534c47 // "GLSL" as the first word of "GLSL.std.450"
	maxPureOpcode          = 256
	opVectorShuffle        = 79
	opCompositeConstruct   = 80
	opCompositeExtract     = 81
	opCompositeInsert      = 82
	opVectorExtractDynamic = 77
	opVectorInsertDynamic  = 78
	opImageRead            = 98
	opImageQuerySize       = 104
	opUndef                = 1
)

// pure marks the opcodes whose only effect is their result: type,
// result id, then operands.
var pure = func() (p [maxPureOpcode]bool) {
	for _, op := range []uint32{
		opUndef, opLoad, opAccessChain, opInBoundsAccessChain,
		opVectorExtractDynamic, opVectorInsertDynamic, opVectorShuffle,
		opCompositeConstruct, opCompositeExtract, opCompositeInsert, opCopyObject,
		opImageRead, opImageQuerySize, opPhi, opSelect,
	} {
		p[op] = true
	}
	// Conversions (109-124), arithmetic (126-152), relational and
	// logical tests (154-191), bit operations (194-205).
	for _, r := range [][2]uint32{{109, 124}, {126, 152}, {154, 191}, {194, 205}} {
		for op := r[0]; op <= r[1]; op++ {
			p[op] = true
		}
	}
	return p
}()

// dce returns words without the instructions of the functions that
// have no effect and no reader, nor the names and decorations of what
// it removes. It returns words itself where it removes nothing.
func dce(words []uint32) []uint32 {
	if len(words) < 5 {
		return words
	}
	d := &deadCode{words: words, bound: words[3]}
	if !d.scan() {
		return words
	}
	d.markEffects()
	d.propagate()
	removed, cut := d.removed()
	if !cut {
		return words
	}
	return d.emit(removed)
}

// deadCode is what dce knows of a module: where its instructions lie,
// what makes each id, and which instructions are live.
type deadCode struct {
	words  []uint32
	bound  uint32
	at     []int            // the instructions' positions
	inFunc []bool           // by instruction: it lies in a function
	def    []int32          // id: index+1 of the instruction that makes it
	local  []bool           // Function and Private variables
	glsl   []bool           // GLSL.std.450's import
	stores map[uint32][]int // local variable: the stores through it
	live   []bool           // by instruction
	work   []int            // live instructions whose operands are not yet marked
}

// ins returns instruction k.
func (d *deadCode) ins(k int) []uint32 { return instr(d.words, d.at[k]) }

// scan indexes the module's instructions, what makes each id and the
// stores to each local variable; false where an instruction runs past
// the end or a variable or removable instruction makes an id past the
// bound.
func (d *deadCode) scan() bool {
	d.def = make([]int32, d.bound)
	d.local = make([]bool, d.bound)
	d.glsl = make([]bool, d.bound)
	in := false
	for i := 5; i < len(d.words); {
		n := int(d.words[i] >> 16)
		if n == 0 || i+n > len(d.words) {
			return false
		}
		ins := d.words[i : i+n]
		k := len(d.at)
		d.at = append(d.at, i)
		switch ins[0] & 0xffff {
		case opFunction:
			in = true
		case opFunctionEnd:
			in = false
		case opExtInstImport:
			if n >= 3 && ins[1] < d.bound && ins[2] == glslStd450Name {
				d.glsl[ins[1]] = true
			}
		case opVariable:
			if n < 4 || ins[2] >= d.bound {
				return false
			}
			d.def[ins[2]] = int32(k + 1)
			d.local[ins[2]] = ins[3] == storageClassFunction || ins[3] == storageClassPrivate
		}
		d.inFunc = append(d.inFunc, in)
		if in && removable(ins, d.glsl) {
			if ins[2] >= d.bound {
				return false
			}
			d.def[ins[2]] = int32(k + 1)
		}
		i += n
	}
	d.stores = map[uint32][]int{}
	for k := range d.at {
		if !d.inFunc[k] {
			continue
		}
		if v, ok := d.localStore(d.ins(k)); ok {
			d.stores[v] = append(d.stores[v], k)
		}
	}
	return true
}

// localStore returns the local variable that ins, a store, writes into,
// and false for any other instruction.
func (d *deadCode) localStore(ins []uint32) (uint32, bool) {
	if ins[0]&0xffff != opStore || len(ins) < 3 {
		return 0, false
	}
	v := d.root(ins[1])
	return v, v < d.bound && d.local[v]
}

// root follows a pointer to the variable it points into.
func (d *deadCode) root(id uint32) uint32 {
	for id < d.bound && d.def[id] > 0 {
		ins := d.ins(int(d.def[id] - 1))
		op := ins[0] & 0xffff
		if (op != opAccessChain && op != opInBoundsAccessChain && op != opCopyObject) || len(ins) < 4 {
			break
		}
		id = ins[3]
	}
	return id
}

// mark makes instruction k live.
func (d *deadCode) mark(k int) {
	if !d.live[k] {
		d.live[k] = true
		d.work = append(d.work, k)
	}
}

// markEffects marks live the instructions of functions that have an
// effect: all but those that only make their result, variables, and
// stores to local variables.
func (d *deadCode) markEffects() {
	d.live = make([]bool, len(d.at))
	for k := range d.at {
		ins := d.ins(k)
		if !d.inFunc[k] || removable(ins, d.glsl) || ins[0]&0xffff == opVariable {
			continue
		}
		if _, ok := d.localStore(ins); ok {
			continue
		}
		d.mark(k)
	}
}

// propagate marks live what live instructions read: the instructions
// that make their operands and, for a local variable, the stores to it.
func (d *deadCode) propagate() {
	for len(d.work) > 0 {
		k := d.work[len(d.work)-1]
		d.work = d.work[:len(d.work)-1]
		ins := d.ins(k)
		// Every word after the opcode is taken for an id: a literal
		// that happens to equal one only keeps more.
		for j, w := range ins[1:] {
			if w >= d.bound || d.def[w] == 0 || j == 1 && w == ins[2] && removable(ins, d.glsl) {
				continue
			}
			if def := int(d.def[w] - 1); !d.live[def] {
				d.mark(def)
				if d.local[w] {
					for _, s := range d.stores[w] {
						d.mark(s)
					}
				}
			}
		}
	}
}

// dead reports whether dce removes instruction k, ins: an instruction
// of a function that nothing live reads and that only makes its result,
// a variable, or a store.
func (d *deadCode) dead(k int, ins []uint32) bool {
	op := ins[0] & 0xffff
	return d.inFunc[k] && !d.live[k] && (op == opStore || op == opVariable || removable(ins, d.glsl))
}

// removed returns the ids whose making instructions dce removes, and
// whether it removes anything.
func (d *deadCode) removed() (removed []bool, cut bool) {
	removed = make([]bool, d.bound)
	for k := range d.at {
		if ins := d.ins(k); d.dead(k, ins) {
			if ins[0]&0xffff != opStore {
				removed[ins[2]] = true
			}
			cut = true
		}
	}
	return removed, cut
}

// emit returns the module without the dead instructions of its
// functions and the names and decorations of the ids they made.
func (d *deadCode) emit(removed []bool) []uint32 {
	out := make([]uint32, 0, len(d.words))
	out = append(out, d.words[:5]...)
	for k := range d.at {
		ins := d.ins(k)
		op := ins[0] & 0xffff
		switch {
		case d.dead(k, ins):
			continue
		case (op == opName || op == opDecorate || op == opDecorateID || op == opDecorateString) &&
			len(ins) >= 2 && ins[1] < d.bound && removed[ins[1]]:
			continue
		}
		out = append(out, ins...)
	}
	return out
}

// removable reports whether ins only makes its result: an opcode of
// pure, or a GLSL.std.450 instruction.
func removable(ins []uint32, glsl []bool) bool {
	op := ins[0] & 0xffff
	if len(ins) < 3 {
		return false
	}
	if op == opExtInst {
		return len(ins) >= 5 && ins[3] < uint32(len(glsl)) && glsl[ins[3]]
	}
	return op < maxPureOpcode && pure[op]
}

func instr(words []uint32, p int) []uint32 { return words[p : p+int(words[p]>>16)] }
