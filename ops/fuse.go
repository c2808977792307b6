package ops

import (
	"fmt"
	"math"
	"slices"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/shaders/spec"
	"github.com/vkops/vkops/tensor"
)

// A chain of element ops runs fused as one kernel (shaders/fused.glsl):
// a program of up to fuseMaxOps instructions over registers that each
// hold one chunk, passed as specialization constants, so that the driver
// compiles it into straight-line code and the pipeline cache keeps it.
// The registers are the inputs, then the pushed scalars, then each
// instruction's result; shaders/spec holds their counts and the words'
// fields, which the GLSL reads by the same names.
const (
	fuseMaxInputs  = spec.FusedInputs
	fuseMaxScalars = spec.FusedScalars
	fuseMaxOps     = spec.FusedMaxOps
	fuseRegOps     = spec.FusedFirstResult
	// fuseMaxFold is the most elements a fold takes: the kernel indexes
	// them from the piece's first in 32 bits.
	fuseMaxFold = math.MaxInt32
)

// fusedElems describe the fused kernels to the engine, by the program's
// length (shaders/spec: a module for each): four input slots (those a
// program leaves empty are pushed, never read), of bools or of the
// program's value type, and no modules of rows or seams. Their families
// are timed on less-than of two inputs, as the masks' are.
var fusedElems = func() (ops [fuseMaxOps + 1]*elemOp) {
	for n := 1; n <= fuseMaxOps; n++ {
		ops[n] = (&elemOp{
			name: spec.FusedName(n), inputs: fuseMaxInputs, boolOut: true,
			needs:     hasVote,
			chunks:    [9]int{1: 4, 2: 2, 4: 1, 8: 1},
			probes:    []probe{{pushed: 0b1100}},
			probeSpec: []uint32{spec.HeadOps.Put(1) | spec.HeadOutBool.Put(1), spec.InsOp.Put(spec.OpLT) | spec.InsRegB.Put(1)},
		}).register()
	}
	return ops
}()

// hasVote reports whether d has the subgroup operations a fold needs.
func hasVote(d *device.Device) bool {
	info := d.Info()
	return info.HasSubgroupOp("basic") && info.HasSubgroupOp("vote")
}

// segment is a fused kernel of a plan: a segment of a chain, its ops in
// order, lowered to the kernel's run with the operands left out, and its
// launches.
type segment struct {
	node  int32 // the value it makes: chain's, or that of a reduction it folds
	chain int32 // the segment's last op
	ops   []int32
	run   run
	slots [fuseMaxInputs]int32 // the node read in each slot, 0 for none
	v     *variant
	plan  []launch
	fold  uint32 // red's fold where node folds the chain, else spec.FoldNone
	red   *reduceOp
	fm    foldMap // how the fold maps the chain's elements to outputs
	dev   *device.Device
	dims  tensor.Shape // the kernel's output
	dt    tensor.DType
}

// A foldMap is how a fused fold maps the chain's elements to the
// reduction's outputs (fused.glsl, FOLD_ROWS and FOLD_COLS): with inner
// 0 every element folds into one output; else element e folds into
// output (e / inner) % keep, a 16-element chunk into one output where
// inner is a multiple of 16, and with cols (inner 1) into 16 outputs.
type foldMap struct {
	inner, keep uint32
	cols        bool
}

// String says how the map folds, as Explain prints it.
func (m foldMap) String() string {
	switch {
	case m.inner == 0:
		return " over all"
	case m.cols:
		return fmt.Sprintf(" down %d columns", m.keep)
	}
	return fmt.Sprintf(" over rows of %d into %d outputs", m.inner, m.keep)
}

// foldable reports whether reduction n folds its data, chain's result,
// in the fused kernel, and how: a fold the kernel has (reduceOp.fuses),
// over every element, or where the dimensions kept are one run K, with
// reduced dimensions R before it and I after it, [R K I], [K I] or
// [R K], once size-1 dimensions are dropped: rows of I, a multiple of 16
// elements, fold into one output each, and without I chunks of 16
// columns into 16 outputs, K a multiple of 16; a per-row, per-column or
// per-channel any or all. The output must lie in one page, and the
// kernel indexes the elements in 32 bits.
func (e *Expr) foldable(n *exprNode, chain int32) (foldMap, bool) {
	dims := e.nodes[chain-1].dims
	total, outs := dims.NumElements(), n.dims.NumElements()
	switch {
	case !n.red.fuses || total > fuseMaxFold:
		return foldMap{}, false
	case outs == 1:
		return foldMap{}, true
	case total == 0 || uint64(outs) > bridge.Device(n.dev).PageSize():
		return foldMap{}, false
	}
	var buf [reduceRank]reduceDim
	cd := reduceCollapse(buf[:0], dims, n.axes)
	if cd[0].reduced {
		cd = cd[1:] // R: outputs repeat, (e / inner) % keep
	}
	switch {
	case len(cd) == 2 && cd[1].reduced && cd[1].n%16 == 0:
		return foldMap{inner: uint32(cd[1].n), keep: uint32(cd[0].n)}, true
	case len(cd) == 1 && cd[0].n%16 == 0:
		return foldMap{inner: 1, keep: uint32(cd[0].n), cols: true}, true
	}
	return foldMap{}, false
}

// order appends to dst the ops that root needs, each after its
// operands, once.
func (e *Expr) order(root int32, dst []int32) []int32 {
	n := &e.nodes[root-1]
	if n.kind == exprInput {
		return dst
	}
	for _, a := range n.args[:n.nargs] {
		if a.node != 0 {
			dst = e.order(a.node, dst)
		}
	}
	if slices.Contains(dst, root) {
		return dst
	}
	return append(dst, root)
}

// lower writes c's chain, its ops in order, as a fused program into
// c.run, and reports whether it fits the kernel: at most fuseMaxInputs
// inputs, fuseMaxScalars distinct scalars and fuseMaxOps ops, and one
// element type besides bool (misfit says which it breaks).
func (e *Expr) lower(c *segment, ops []int32) bool {
	if len(ops) > fuseMaxOps {
		return false
	}
	var p program
	for _, i := range ops {
		n := &e.nodes[i-1]
		if n.kind == exprReduce || !p.valueType(n.dt) {
			return false
		}
		var regs [3]uint32
		for k, a := range n.args[:n.nargs] {
			r, ok := p.reg(e, a, ops)
			if !ok {
				return false
			}
			regs[k] = r
		}
		p.instr = append(p.instr, instrOf(n, regs))
	}
	c.ops, c.slots = ops, p.slots
	c.dt, c.dims = e.nodes[c.chain-1].dt, e.nodes[c.chain-1].dims
	c.run = p.run(c)
	return true
}

// program is a fused chain while it is lowered.
type program struct {
	slots    [fuseMaxInputs]int32 // input nodes
	nslots   int
	scalars  [fuseMaxScalars]exprArg
	nscalars int
	vt       tensor.DType // the one element type besides bool; Invalid while none
	instr    []uint32
}

// valueType reports whether dt may join the program: bool, or its one
// other element type.
func (p *program) valueType(dt tensor.DType) bool {
	switch {
	case dt == tensor.Bool:
		return true
	case p.vt == tensor.Invalid:
		p.vt = dt
	}
	return dt == p.vt
}

// reg returns the register that holds arg, taking a slot for a new
// input or scalar, and reports whether one was free.
func (p *program) reg(e *Expr, a exprArg, ops []int32) (uint32, bool) {
	if a.node == 0 {
		if !p.valueType(a.dt) {
			return 0, false
		}
		for s := range p.nscalars {
			if p.scalars[s] == a {
				return uint32(fuseMaxInputs + s), true
			}
		}
		if p.nscalars == fuseMaxScalars {
			return 0, false
		}
		p.scalars[p.nscalars] = a
		p.nscalars++
		return uint32(fuseMaxInputs + p.nscalars - 1), true
	}
	if e.nodes[a.node-1].kind != exprInput {
		if k := slices.Index(ops, a.node); k >= 0 {
			return uint32(fuseRegOps + k), true
		}
	}
	if !p.valueType(e.nodes[a.node-1].dt) {
		return 0, false
	}
	if x := slices.Index(p.slots[:p.nslots], a.node); x >= 0 {
		return uint32(x), true
	}
	if p.nslots == fuseMaxInputs {
		return 0, false
	}
	p.slots[p.nslots] = a.node
	p.nslots++
	return uint32(p.nslots - 1), true
}

// instrOf encodes node n, its operands in registers regs, as an
// instruction (fused.glsl): the op, whether its operands are bools, IsInf's
// attributes and the three registers.
func instrOf(n *exprNode, regs [3]uint32) uint32 {
	op, boolArgs := uint32(spec.OpSelect), n.dt == tensor.Bool
	if n.kind == exprMask {
		op, boolArgs = n.mask.code, n.argDT == tensor.Bool
	}
	return spec.InsOp.Put(op) | spec.InsBoolArgs.Put(b2u(boolArgs)) | spec.InsDetect.Put(n.detect) |
		spec.InsRegA.Put(regs[0]) | spec.InsRegB.Put(regs[1]) | spec.InsRegC.Put(regs[2])
}

// run returns the kernel's run of program p for c: its width, element
// sizes, scalars and constants (HEAD, then the instructions).
func (p *program) run(c *segment) run {
	vt := p.vt
	if vt == tensor.Invalid {
		vt = tensor.Bool
	}
	r := fusedElems[len(p.instr)].newRun(vt.Size())
	var head uint32
	for x := range fuseMaxInputs + 1 {
		r.sizes[x] = vt.Size()
	}
	if c.dt == tensor.Bool || c.fold != spec.FoldNone {
		head |= spec.HeadOutBool.Put(1)
		r.sizes[fuseMaxInputs] = 1
	}
	for s := range p.nscalars {
		r.bits[s] = p.scalars[s].bits
		if p.scalars[s].dt == tensor.Bool {
			head |= spec.HeadScalarBool.Put(1 << s)
		}
	}
	head |= spec.HeadKey.Put(keyOf(vt)) | spec.HeadFold.Put(c.fold) | spec.HeadFoldRows.Put(b2u(c.fm.inner != 0)) |
		spec.HeadFoldCols.Put(b2u(c.fm.cols)) | spec.HeadOps.Put(uint32(len(p.instr)))
	r.spec[0] = head
	r.nspec = 1 + copy(r.spec[1:], p.instr)
	return r
}

// markBools sets the sizes of c's bool inputs to one byte and their bits
// in HEAD, once the inputs are known.
func (e *Expr) markBools(c *segment) {
	for x, i := range c.slots {
		if i != 0 && e.nodes[i-1].dt == tensor.Bool {
			c.run.sizes[x] = 1
			c.run.spec[0] |= spec.HeadInBool.Put(1 << x)
		}
	}
}

// planned stands for every operand tensor while a segment is planned:
// the plan asks only which operands are tensors, and an earlier
// segment's value does not exist yet. Record gives the tensors.
var planned = new(device.Tensor)

// planFused picks the fused kernel's variant for c and plans its
// launches.
func (e *Expr) planFused(c *segment) error {
	e.markBools(c)
	r := &c.run
	var shapes [fuseMaxInputs]tensor.Shape
	for x, i := range c.slots {
		if i != 0 {
			r.ts[x], shapes[x] = planned, e.nodes[i-1].dims
		}
	}
	l := newLayout(c.dims, shapes[:]...)
	if l.rank > maxRank {
		return rankError(e.nodes[c.chain-1].name, &l)
	}
	if c.dims.NumElements() == 0 {
		return nil
	}
	if c.fold != spec.FoldNone {
		r.fold, r.foldLen, r.foldKeep = uint64(max(e.nodes[c.node-1].dims.NumElements(), 1)), c.fm.inner, c.fm.keep
	}
	v, err := r.op.families[r.width][classOf(&l, &r.ts)].pick(c.dev)
	if err != nil {
		return err
	}
	t := targetOf(c.dev)
	t.span = spanOf(c.dev, v)
	c.v, c.plan = v, r.appendPlan(nil, &l, &t)
	return nil
}

// eval runs c with e's inputs as they are now and the values of earlier
// segments in vals, into dst where it is not nil.
func (c *segment) eval(e *Expr, vals []*device.Tensor, dst *device.Tensor) (*device.Tensor, error) {
	n := &e.nodes[c.node-1]
	dt, dims := c.dt, c.dims
	if c.fold != spec.FoldNone {
		dt, dims = n.dt, n.dims
	}
	res, err := output(c.dev, dt, dims, dst)
	if err != nil {
		return nil, fmt.Errorf("%s: output: %w", n.name, err)
	}
	if err := c.record(e, res, vals); err != nil {
		discard(res, dst)
		return nil, fmt.Errorf("%s: %w", e.nodes[c.chain-1].name, err)
	}
	return res, nil
}

// record records c's fused kernel into res.
func (c *segment) record(e *Expr, res *device.Tensor, vals []*device.Tensor) error {
	if c.fold != spec.FoldNone {
		if err := bridge.Device(c.dev).Fill(bridge.Tensor(res), c.red.identityWord()); err != nil {
			return err
		}
	}
	r := c.run
	for x, i := range c.slots {
		if i != 0 {
			r.ts[x] = e.value(i, vals)
		}
	}
	r.ts[fuseMaxInputs] = res
	for i := range c.plan {
		if err := r.recordLaunch(c.dev, c.v, &c.plan[i]); err != nil {
			return err
		}
	}
	return nil
}
