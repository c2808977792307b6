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
	bound := words[3]
	var (
		at     []int                  // the instructions' positions
		def    = make([]int32, bound) // id: index+1 of the instruction that makes it
		local  = make([]bool, bound)  // Function and Private variables
		stores = map[uint32][]int{}   // local variable: the stores through it
		glsl   = make([]bool, bound)  // GLSL.std.450's import
		inFunc []bool
	)
	// root follows a pointer to the variable it points into.
	root := func(id uint32) uint32 {
		for id < bound && def[id] > 0 {
			ins := instr(words, at[def[id]-1])
			op := ins[0] & 0xffff
			if (op != opAccessChain && op != opInBoundsAccessChain && op != opCopyObject) || len(ins) < 4 {
				break
			}
			id = ins[3]
		}
		return id
	}
	in := false
	for i := 5; i < len(words); {
		n := int(words[i] >> 16)
		if n == 0 || i+n > len(words) {
			return words
		}
		ins := words[i : i+n]
		op := ins[0] & 0xffff
		k := len(at)
		at = append(at, i)
		switch op {
		case opFunction:
			in = true
		case opFunctionEnd:
			in = false
		case opExtInstImport:
			if n >= 3 && ins[1] < bound && ins[2] == glslStd450Name {
				glsl[ins[1]] = true
			}
		case opVariable:
			if n >= 4 && ins[2] < bound {
				def[ins[2]] = int32(k + 1)
				local[ins[2]] = ins[3] == storageClassFunction || ins[3] == storageClassPrivate
			}
		}
		inFunc = append(inFunc, in)
		if in && removable(ins, glsl) && ins[2] < bound {
			def[ins[2]] = int32(k + 1)
		}
		i += n
	}
	for k, p := range at {
		ins := instr(words, p)
		if inFunc[k] && ins[0]&0xffff == opStore && len(ins) >= 3 {
			if v := root(ins[1]); v < bound && local[v] {
				stores[v] = append(stores[v], k)
			}
		}
	}
	live := make([]bool, len(at))
	var work []int
	mark := func(k int) {
		if !live[k] {
			live[k] = true
			work = append(work, k)
		}
	}
	for k, p := range at {
		ins := instr(words, p)
		if !inFunc[k] || removable(ins, glsl) || ins[0]&0xffff == opVariable {
			continue
		}
		if ins[0]&0xffff == opStore && len(ins) >= 3 {
			if v := root(ins[1]); v < bound && local[v] {
				continue
			}
		}
		mark(k)
	}
	for len(work) > 0 {
		k := work[len(work)-1]
		work = work[:len(work)-1]
		ins := instr(words, at[k])
		// Every word after the opcode is taken for an id: a literal
		// that happens to equal one only keeps more.
		for j, w := range ins[1:] {
			if w >= bound || def[w] == 0 || j == 1 && w == ins[2] && removable(ins, glsl) {
				continue
			}
			d := int(def[w] - 1)
			if live[d] {
				continue
			}
			mark(d)
			if local[w] {
				for _, s := range stores[w] {
					mark(s)
				}
			}
		}
	}
	removed := make([]bool, bound)
	cut := false
	for k, p := range at {
		ins := instr(words, p)
		op := ins[0] & 0xffff
		if !inFunc[k] || live[k] {
			continue
		}
		if op == opStore || op == opVariable && local[ins[2]] || removable(ins, glsl) {
			if op != opStore {
				removed[ins[2]] = true
			}
			cut = true
		}
	}
	if !cut {
		return words
	}
	out := make([]uint32, 0, len(words))
	out = append(out, words[:5]...)
	for k, p := range at {
		ins := instr(words, p)
		op := ins[0] & 0xffff
		switch {
		case inFunc[k] && !live[k] && (op == opStore || op == opVariable || removable(ins, glsl)):
			continue
		case (op == opName || op == opDecorate || op == opDecorateID || op == opDecorateString) &&
			len(ins) >= 2 && ins[1] < bound && removed[ins[1]]:
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
