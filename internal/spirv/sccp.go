package spirv

// Sparse conditional constant propagation (Wegman and Zadeck) over the
// functions' 32-bit integers and bools: a value is known where every
// path that the constants let run gives it the same one. It finds what
// the in-order scan cannot: a phi whose other inputs come only from
// sides the constants never take, and what is computed from it. On
// fused2_w4_texel64_whole with ReLU's constants, spirv-opt's --ccp then
// --eliminate-dead-branches took lavapipe's pipeline build from 24-25
// ms to 16.5, where dead branches alone did not move it.

import "slices"

const opFunctionEnd = 56

// A lat is a value's place in the lattice: unseen (no path reaches it
// yet), one constant, or varying. An id the propagation has not set is
// absent, and reads as varying.
type lat struct {
	state uint8
	v     uint32
}

const (
	absent uint8 = iota
	unseen
	constant
	varying
)

// flow is the state of one propagation over a module. Its tables by id
// hold an entry per id below the module's bound.
type flow struct {
	e      *evaluator
	words  []uint32
	blocks []flowBlock
	label  []int32 // label id: its block + 1, 0 for none
	at     []int32 // the instructions' positions in words
	blk    []int32 // each instruction's block
	lat    []lat   // id: its value
	// uses lists the instructions that read each id:
	// useList[useStart[id]:useStart[id+1]].
	useStart []int32
	useList  []int32
	edges    map[int64]bool // executable edges, from block to block (edgeKey)
	exec     []bool         // executable blocks
	flowWL   [][2]int32
	ssaWL    []int32
}

func edgeKey(from, to int32) int64 { return int64(from)<<32 | int64(uint32(to)) }

type flowBlock struct {
	first, end int32 // its instructions, at[first:end]; the last is its terminator
}

// propagate runs the propagation over words and records in e.known
// each value it finds constant. It reports false where it cannot read
// the functions' blocks.
func (e *evaluator) propagate(words []uint32) bool {
	f := flow{e: e, words: words, label: make([]int32, e.bound()), lat: make([]lat, e.bound())}
	entries, ok := f.read()
	if !ok {
		return false
	}
	f.exec = make([]bool, len(f.blocks))
	f.edges = make(map[int64]bool, 2*len(f.blocks))
	for _, b := range entries {
		f.flowWL = append(f.flowWL, [2]int32{-1, b})
	}
	f.run()
	for id, l := range f.lat {
		if l.state == constant {
			e.decide(uint32(id), l.v)
		}
	}
	return true
}

// read splits the functions into blocks and records which ids each
// tracked instruction uses. It returns each function's first block.
func (f *flow) read() (entries []int32, ok bool) {
	// Id useID[i] is read by instruction useK[i].
	useID, useK := make([]uint32, 0, len(f.words)/4), make([]int32, 0, len(f.words)/4)
	f.at, f.blk = make([]int32, 0, len(f.words)/4), make([]int32, 0, len(f.words)/4)
	in := false
	for i := 5; i < len(f.words); {
		n := int(f.words[i] >> 16)
		ins := f.words[i : i+n]
		op := ins[0] & 0xffff
		i += n
		switch {
		case op == opFunction:
			in = true
			entries = append(entries, int32(len(f.blocks)))
			continue
		case op == opFunctionEnd:
			in = false
			continue
		case !in:
			continue
		case op == opLabel:
			if len(ins) < 2 || int(ins[1]) >= len(f.label) {
				return nil, false
			}
			f.label[ins[1]] = int32(len(f.blocks)) + 1
			f.blocks = append(f.blocks, flowBlock{first: int32(len(f.at))})
		}
		if len(f.blocks) == 0 {
			continue // OpFunctionParameter, before the first label
		}
		k := int32(len(f.at))
		f.at = append(f.at, int32(i-n))
		f.blk = append(f.blk, int32(len(f.blocks)-1))
		f.blocks[len(f.blocks)-1].end = k + 1
		for _, id := range f.operands(ins) {
			if int(id) < len(f.lat) {
				useID, useK = append(useID, id), append(useK, k)
			}
		}
	}
	for _, b := range entries {
		if int(b) >= len(f.blocks) {
			return nil, false
		}
	}
	f.useStart = make([]int32, len(f.lat)+1)
	for _, id := range useID {
		f.useStart[id+1]++
	}
	for i := 1; i < len(f.useStart); i++ {
		f.useStart[i] += f.useStart[i-1]
	}
	f.useList = make([]int32, len(useK))
	next := slices.Clone(f.useStart[:len(f.lat)])
	for i, id := range useID {
		f.useList[next[id]] = useK[i]
		next[id]++
	}
	return entries, true
}

// uses returns the instructions that read id.
func (f *flow) uses(id uint32) []int32 {
	if int(id) >= len(f.lat) {
		return nil
	}
	return f.useList[f.useStart[id]:f.useStart[id+1]]
}

// block returns the block of label l.
func (f *flow) block(l uint32) (int32, bool) {
	if int(l) >= len(f.label) || f.label[l] == 0 {
		return 0, false
	}
	return f.label[l] - 1, true
}

// operands returns the ids that instruction ins reads and that the
// propagation follows: a tracked instruction's arguments, a phi's
// values, a branch's condition and a switch's selector.
func (f *flow) operands(ins []uint32) []uint32 {
	switch op := ins[0] & 0xffff; {
	case op == opPhi:
		var ids []uint32
		for j := 3; j+1 < len(ins); j += 2 {
			ids = append(ids, ins[j])
		}
		return ids
	case op == opBranchConditional || op == opSwitch:
		if len(ins) >= 2 {
			return ins[1:2]
		}
	case f.tracked(ins):
		return ins[3:]
	}
	return nil
}

// tracked reports whether ins makes a value the propagation computes:
// an integer or bool that eval knows how to make.
func (f *flow) tracked(ins []uint32) bool {
	op := ins[0] & 0xffff
	if len(ins) < 4 || len(ins) > 6 || !folds(op) {
		return false
	}
	return f.e.kind(ins[1]) != other
}

// get returns the value of id as the propagation sees it now.
func (f *flow) get(id uint32) lat {
	if v, ok := f.e.value(id); ok {
		return lat{constant, v}
	}
	if int(id) < len(f.lat) && f.lat[id].state != absent {
		return f.lat[id]
	}
	return lat{state: varying}
}

// set lowers id to l, and queues its uses where that changes it.
func (f *flow) set(id uint32, l lat) {
	if _, ok := f.e.value(id); ok || int(id) >= len(f.lat) {
		return
	}
	old := f.lat[id]
	if old == l || old.state == absent && l.state == unseen {
		return
	}
	f.lat[id] = l
	f.ssaWL = append(f.ssaWL, f.uses(id)...)
}

func (f *flow) run() {
	for len(f.flowWL) > 0 || len(f.ssaWL) > 0 {
		if n := len(f.flowWL); n > 0 {
			edge := f.flowWL[n-1]
			f.flowWL = f.flowWL[:n-1]
			key := edgeKey(edge[0], edge[1])
			if f.edges[key] {
				continue
			}
			f.edges[key] = true
			b := f.blocks[edge[1]]
			first := !f.exec[edge[1]]
			f.exec[edge[1]] = true
			for k := b.first; k < b.end; k++ {
				if first || f.op(k) == opPhi {
					f.visit(k)
				}
			}
			continue
		}
		k := f.ssaWL[len(f.ssaWL)-1]
		f.ssaWL = f.ssaWL[:len(f.ssaWL)-1]
		if f.exec[f.blk[k]] {
			f.visit(k)
		}
	}
}

func (f *flow) op(k int32) uint32 { return f.words[f.at[k]] & 0xffff }

func (f *flow) ins(k int32) []uint32 {
	p := f.at[k]
	return f.words[p : p+int32(f.words[p]>>16)]
}

// visit evaluates instruction k of an executable block.
func (f *flow) visit(k int32) {
	ins := f.ins(k)
	switch op := ins[0] & 0xffff; {
	case op == opPhi:
		f.set(ins[2], f.phi(k, ins))
	case op == opBranch:
		f.follow(k, ins[1])
	case op == opBranchConditional:
		f.branch(k, ins)
	case op == opSwitch:
		f.switchTo(k, ins)
	case f.tracked(ins):
		f.set(ins[2], f.compute(ins))
	}
}

// phi meets the values that come over executable edges.
func (f *flow) phi(k int32, ins []uint32) lat {
	to := f.blk[k]
	r := lat{state: unseen}
	for j := 3; j+1 < len(ins); j += 2 {
		from, ok := f.block(ins[j+1])
		if !ok || !f.edges[edgeKey(from, to)] {
			continue
		}
		v := f.get(ins[j])
		switch {
		case v.state == unseen:
		case r.state == unseen:
			r = v
		case v != r:
			return lat{state: varying}
		}
	}
	return r
}

func (f *flow) compute(ins []uint32) lat {
	var v [3]uint32
	for i, a := range ins[3:] {
		l := f.get(a)
		if l.state != constant {
			return l
		}
		v[i] = l.v
	}
	r, ok := fold(ins[0]&0xffff, f.e.kind(ins[1]), v[:len(ins)-3])
	if !ok {
		return lat{state: varying}
	}
	return lat{constant, r}
}

// follow queues the edge from instruction k's block to label l.
func (f *flow) follow(k int32, l uint32) {
	if to, ok := f.block(l); ok {
		f.flowWL = append(f.flowWL, [2]int32{f.blk[k], to})
	}
}

func (f *flow) branch(k int32, ins []uint32) {
	if len(ins) < 4 {
		return
	}
	switch c := f.get(ins[1]); c.state {
	case constant:
		if c.v != 0 {
			f.follow(k, ins[2])
		} else {
			f.follow(k, ins[3])
		}
	case varying:
		f.follow(k, ins[2])
		f.follow(k, ins[3])
	}
}

func (f *flow) switchTo(k int32, ins []uint32) {
	s := f.get(ins[1])
	if s.state == unseen {
		return
	}
	if s.state == constant && f.e.intKind(ins[1]) == int32Kind {
		to := ins[2]
		for j := 3; j+1 < len(ins); j += 2 {
			if ins[j] == s.v {
				to = ins[j+1]
				break
			}
		}
		f.follow(k, to)
		return
	}
	succ, ok := f.e.successors(nil, ins)
	if !ok {
		// A selector of a width it cannot read: every label in the
		// instruction may be taken.
		succ = ins[2:]
	}
	for _, l := range succ {
		f.follow(k, l)
	}
}
