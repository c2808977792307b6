package ops

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/shaders/spec"
	"github.com/vkops/vkops/tensor"
)

// A chain beyond the fused kernel's limits runs in segments: the planner
// cuts it at some ops, whose values become tensors, and each cut op's
// value is a kernel of its own that computes it from the inputs, the
// scalars and earlier cuts. An op that is not cut is computed inside the
// kernel of each cut op that needs it, so the one output each kernel
// writes is all the memory a segment adds.

// compiled is a root of an Expr, planned: the steps Eval runs, in order.
type compiled struct {
	root  int32
	steps []step
	uses  []inputUse // each input the steps read, and its first reader
}

// inputUse is an input node and the op and operand that first read it,
// which an error about the input names.
type inputUse struct {
	node     int32
	op, name string
}

// A step makes one node's value: as a fused kernel over a segment of the
// chain, or by the node's op as its own function runs it.
type step struct {
	node int32
	seg  *segment // nil where the op runs as itself
	// why says why node's value is a tensor of its own instead of fused
	// into the step that reads it; "" for the root.
	why string
	// frees are the values, of this step or earlier ones, that no later
	// step reads, freed once this one is recorded.
	frees []int32
}

// kernels returns the number of steps c runs: fused kernels and ops.
func (c *compiled) kernels() int { return len(c.steps) }

// compile plans root: a step for each op where cuts cuts the chain, in order,
// fused where its segment holds more than one op or a fold.
func (e *Expr) compile(root int32) (*compiled, error) {
	why := e.cuts(root)
	c := &compiled{root: root}
	for _, i := range e.order(root, nil) {
		if why[i-1] == nil {
			continue
		}
		s, err := e.step(i, why)
		if err != nil {
			return nil, err
		}
		s.why = *why[i-1]
		c.steps = append(c.steps, s)
	}
	c.planFrees(e)
	c.uses = e.inputUses(root)
	return c, nil
}

// inputUses returns the inputs that root's ops read, each once.
func (e *Expr) inputUses(root int32) []inputUse {
	var uses []inputUse
	for _, i := range e.order(root, nil) {
		n := &e.nodes[i-1]
		for k, a := range n.args[:n.nargs] {
			if a.node != 0 && e.nodes[a.node-1].kind == exprInput &&
				!slices.ContainsFunc(uses, func(u inputUse) bool { return u.node == a.node }) {
				uses = append(uses, inputUse{a.node, n.name, n.argName(k)})
			}
		}
	}
	return uses
}

// checkInputs reports, as the ops do, the first input of c that cannot
// be read now: freed, or of a device closed since c was planned.
func (c *compiled) checkInputs(e *Expr) error {
	for _, u := range c.uses {
		if err := checkTensor(u.op, u.name, e.nodes[u.node-1].t); err != nil {
			return err
		}
	}
	return nil
}

// cuts returns, by node, why each op that root's plan cuts is cut, nil
// for the ops fused into a later step's kernel: greedyCuts's, or fewer
// where fewestCuts finds them.
func (e *Expr) cuts(root int32) []*string {
	why := e.greedyCuts(root)
	if fewer := e.fewestCuts(root, why); fewer != nil {
		return fewer
	}
	return why
}

// greedyCuts returns cuts of root's chain found in one walk. Over root's
// ops in order, it fuses each into its operands' segments while the
// segment fits the kernel, and where it does not, cuts the operand
// whose segment is largest until it does: for a chain of ops each on the
// one before, the fewest segments. A reduction is cut, and so is its
// operand where the kernel cannot fold it.
func (e *Expr) greedyCuts(root int32) []*string {
	why := make([]*string, len(e.nodes))
	cut := func(i int32, s string) {
		if why[i-1] == nil {
			why[i-1] = &s
		}
	}
	cut(root, "")
	vote := hasVote(e.nodes[root-1].dev)
	for _, i := range e.order(root, nil) {
		n := &e.nodes[i-1]
		switch {
		case !vote:
			cut(i, "the device lacks subgroup vote and basic operations")
		case n.kind == exprReduce:
			cut(i, "a reduction's result is not fusable")
			if a := e.unfolded(n); a != 0 {
				reason := "reduction over axes the kernel cannot fold"
				if !n.red.fuses {
					reason = "the kernel has no " + n.red.short + " fold"
				}
				cut(a, reason)
			}
		default:
			e.fit(i, why, cut)
		}
	}
	return why
}

// fit cuts operands of op i until the segment it ends fits the kernel,
// each the largest segment among them.
func (e *Expr) fit(i int32, why []*string, cut func(int32, string)) {
	for {
		ops := e.segment(i, why)
		reason := e.misfit(ops)
		if reason == "" {
			return
		}
		var big int32
		size := 0
		n := &e.nodes[i-1]
		for _, a := range n.args[:n.nargs] {
			if a.node == 0 || why[a.node-1] != nil || e.nodes[a.node-1].kind == exprInput {
				continue
			}
			if k := len(e.segment(a.node, why)); k > size {
				big, size = a.node, k
			}
		}
		if big == 0 {
			return // i alone; an op alone always fits
		}
		cut(big, reason)
	}
}

// unfolded returns the operand of reduction n that must be cut, an op
// whose result the kernel cannot fold over n's axes, or at all (xor); 0
// for none, and where n is not a reduction.
func (e *Expr) unfolded(n *exprNode) int32 {
	if n.kind != exprReduce {
		return 0
	}
	a := n.args[0].node
	if e.nodes[a-1].kind == exprInput {
		return 0
	}
	if _, ok := e.foldable(n, a); ok {
		return 0
	}
	return a
}

// stepChain returns the last op of the segment that the step of node i
// fuses under cuts why: i, or a reduction's operand, which it folds;
// false where a reduction's operand is an input or cut, so that the
// reduction runs as its op.
func (e *Expr) stepChain(i int32, why []*string) (int32, bool) {
	n := &e.nodes[i-1]
	if n.kind != exprReduce {
		return i, true
	}
	a := n.args[0].node
	return a, e.nodes[a-1].kind != exprInput && why[a-1] == nil
}

// fewestSearchOps is the most ops that fewestCuts may cut or leave,
// whose subsets it tries: 1024 at most, each a check of a few segments
// of about 1.6 us (a chain of 13 ops, 12 of them free, took 299 sets
// and 0.47 ms more to plan than the greedy walk; 8 ops, one set, 2 us).
const fewestSearchOps = 10

// fewestCuts returns cuts of root's chain into fewer segments than why's
// that all fit the kernel, nil where there are none or the chain is too
// long to search. greedyCuts decides each cut for the ops before it, so
// a scalar that only an early op uses can cost a segment: with
// le = LessEqual(x, 1), for Minimum(Minimum(Maximum(le, true),
// Minimum(le, false)), true) it cuts the Maximum, then the Minimum of
// both (three kernels), where cutting le alone leaves two (FuzzExpr
// found it). It tries the sets of the ops that no rule forces cut,
// smallest first, so that every cut of the set it returns is needed:
// without it, a segment that holds the op would not fit, and that is
// the reason it gives.
func (e *Expr) fewestCuts(root int32, why []*string) []*string {
	ord := e.order(root, nil)
	forced := make([]*string, len(e.nodes))
	for _, i := range ord {
		n := &e.nodes[i-1]
		if i == root || n.kind == exprReduce {
			forced[i-1] = why[i-1]
		}
		if a := e.unfolded(n); a != 0 {
			forced[a-1] = why[a-1]
		}
	}
	var free []int32
	have, need := 0, 0
	for _, i := range ord {
		switch {
		case forced[i-1] != nil:
			need++
		case e.nodes[i-1].kind != exprReduce:
			free = append(free, i)
		}
		if why[i-1] != nil {
			have++
		}
	}
	if !hasVote(e.nodes[root-1].dev) || have == need || len(free) > fewestSearchOps {
		return nil
	}
	for k := 0; need+k < have; k++ {
		if try := e.cutsOf(ord, forced, free, k); try != nil {
			return try
		}
	}
	return nil
}

// cutsOf returns the forced cuts and k of the free ops cut, the first
// such set whose segments all fit, each free cut with its reason; nil
// where none fits.
func (e *Expr) cutsOf(ord []int32, forced []*string, free []int32, k int) []*string {
	pick := make([]int, k) // indices into free, increasing
	for j := range pick {
		pick[j] = j
	}
	for {
		try := slices.Clone(forced)
		for _, j := range pick {
			try[free[j]-1] = new(string)
		}
		if e.fits(ord, try) {
			for _, j := range pick {
				*try[free[j]-1] = e.needed(ord, try, free[j])
			}
			return try
		}
		// The next k-subset in lexicographic order.
		j := k - 1
		for j >= 0 && pick[j] == len(free)-k+j {
			j--
		}
		if j < 0 {
			return nil
		}
		pick[j]++
		for m := j + 1; m < k; m++ {
			pick[m] = pick[m-1] + 1
		}
	}
}

// fits reports whether the segment of each step that cuts why plans,
// over ops ord, fits the kernel: an op's, and the one a reduction folds.
func (e *Expr) fits(ord []int32, why []*string) bool {
	for _, i := range ord {
		if why[i-1] == nil {
			continue
		}
		if chain, ok := e.stepChain(i, why); ok && e.misfit(e.segment(chain, why)) != "" {
			return false
		}
	}
	return true
}

// needed returns why cut c of why is needed: what the first segment
// that would hold c without the cut passes of the kernel's limits. Some
// segment does, where why is a smallest set that fits: the same set
// without c was tried before it, and only the segments that would hold
// c change.
func (e *Expr) needed(ord []int32, why []*string, c int32) (reason string) {
	keep := why[c-1]
	why[c-1] = nil
	for _, i := range ord {
		if why[i-1] == nil || reason != "" {
			continue
		}
		if chain, ok := e.stepChain(i, why); ok {
			if ops := e.segment(chain, why); slices.Contains(ops, c) {
				reason = e.misfit(ops)
			}
		}
	}
	why[c-1] = keep
	return reason
}

// segment returns the ops of the segment that ends at i, in order: i and
// the ops it needs back to the inputs and the cut ops.
func (e *Expr) segment(i int32, why []*string) []int32 {
	return e.appendSegment(i, i, why, nil)
}

func (e *Expr) appendSegment(end, i int32, why []*string, dst []int32) []int32 {
	n := &e.nodes[i-1]
	if n.kind == exprInput || i != end && why[i-1] != nil || slices.Contains(dst, i) {
		return dst
	}
	for _, a := range n.args[:n.nargs] {
		if a.node != 0 {
			dst = e.appendSegment(end, a.node, why, dst)
		}
	}
	return append(dst, i)
}

// misfit returns why the ops, a segment in order, do not fit the fused
// kernel, "" where they fit: each limit they pass, as "5 ops > 4".
func (e *Expr) misfit(ops []int32) string {
	var ins []int32
	var scalars []exprArg
	var types []tensor.DType
	addType := func(dt tensor.DType) {
		if dt != tensor.Bool && !slices.Contains(types, dt) {
			types = append(types, dt)
		}
	}
	for _, i := range ops {
		n := &e.nodes[i-1]
		if n.kind == exprReduce {
			return "op not fusable"
		}
		addType(n.dt)
		for _, a := range n.args[:n.nargs] {
			switch {
			case a.node == 0:
				addType(a.dt)
				if !slices.Contains(scalars, a) {
					scalars = append(scalars, a)
				}
			case !slices.Contains(ops, a.node):
				addType(e.nodes[a.node-1].dt)
				if !slices.Contains(ins, a.node) {
					ins = append(ins, a.node)
				}
			}
		}
	}
	var over []string
	for _, l := range []struct {
		n, max int
		what   string
	}{{len(ins), fuseMaxInputs, "input tensors"}, {len(scalars), fuseMaxScalars, "scalars"}, {len(ops), fuseMaxOps, "ops"}} {
		if l.n > l.max {
			over = append(over, fmt.Sprintf("%d %s > %d", l.n, l.what, l.max))
		}
	}
	if len(types) > 1 {
		over = append(over, fmt.Sprintf("two element types besides bool (%v, %v)", types[0], types[1]))
	}
	if len(ins) <= fuseMaxInputs { // more, and the kernel has no layout: reported above
		if l := e.layout(e.nodes[ops[len(ops)-1]-1].dims, ins); l.rank > maxRank {
			over = append(over, fmt.Sprintf("a broadcast of %d dimensions > %d", l.rank, maxRank))
		}
	}
	return strings.Join(over, ", ")
}

// layout returns the layout of a kernel over out that reads nodes ins,
// at most fuseMaxInputs, as the op of a node or a fused segment would
// run. Each op of a segment may fit the kernels' dimensions and the
// segment not: inputs broadcast along different axes each add theirs.
func (e *Expr) layout(out tensor.Shape, ins []int32) layout {
	var shapes [fuseMaxInputs]tensor.Shape
	for k, i := range ins {
		shapes[k] = e.nodes[i-1].dims
	}
	return newLayout(out, shapes[:len(ins)]...)
}

// step plans the step that makes node i's value, given the cuts: a
// reduction folds the segment that ends at its operand, where that is
// not cut; an op fuses its segment, unless that is i alone, which runs
// as its op: fusing saves no pass, and the op's own kernel has paths
// that the fused one lacks (rows, seams). A masked fill, fused, took
// 1.33x as long as Where on f16 (8.1 against 6.6 ms, lavapipe, five
// rounds).
func (e *Expr) step(i int32, why []*string) (step, error) {
	n := &e.nodes[i-1]
	s := step{node: i}
	chain, ok := e.stepChain(i, why)
	if !ok {
		return s, nil
	}
	c := &segment{node: i, chain: chain, dev: n.dev}
	if n.kind == exprReduce {
		fm, _ := e.foldable(n, c.chain)
		c.red, c.fold, c.fm = n.red, n.red.fold, fm
	}
	ops := e.segment(c.chain, why)
	if c.fold == spec.FoldNone && len(ops) == 1 || !hasVote(n.dev) {
		return s, nil
	}
	if !e.lower(c, ops) {
		return s, fmt.Errorf("%s: the planner's segment does not fit the fused kernel: %s", n.name, e.misfit(ops))
	}
	s.seg = c
	return s, e.planFused(c)
}

// planFrees sets each step's frees: the earlier steps' values that it is
// the last to read, and its own where no step reads it, but the root's.
func (c *compiled) planFrees(e *Expr) {
	last := map[int32]int{}
	for k, s := range c.steps {
		last[s.node] = k
		for _, a := range s.reads(e) {
			last[a] = k
		}
	}
	for k := range c.steps {
		for _, s := range c.steps[:k+1] {
			if last[s.node] == k && s.node != c.root {
				c.steps[k].frees = append(c.steps[k].frees, s.node)
			}
		}
	}
}

// reads returns the nodes whose values s reads that earlier steps made.
func (s *step) reads(e *Expr) []int32 {
	var in []int32
	if s.seg != nil {
		in = s.seg.slots[:]
	} else {
		n := &e.nodes[s.node-1]
		for _, a := range n.args[:n.nargs] {
			in = append(in, a.node)
		}
	}
	var out []int32
	for _, i := range in {
		if i != 0 && e.nodes[i-1].kind != exprInput && !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	return out
}

// eval runs c's steps with e's inputs as they are now, each value freed
// once the last step that reads it is recorded (Free waits for the work
// recorded on a tensor), and returns the root's value.
func (c *compiled) eval(e *Expr, dst *device.Tensor) (*device.Tensor, error) {
	if err := c.checkInputs(e); err != nil {
		return nil, err
	}
	var vals []*device.Tensor // only a plan of several steps has values between them
	if len(c.steps) > 1 {
		vals = make([]*device.Tensor, len(e.nodes))
	}
	for k, s := range c.steps {
		var into *device.Tensor
		if k == len(c.steps)-1 {
			into = dst
		}
		t, err := s.eval(e, vals, into)
		if err != nil {
			for _, v := range vals {
				v.Free()
			}
			return nil, err
		}
		if vals != nil {
			vals[s.node-1] = t
		}
		for _, i := range s.frees {
			vals[i-1].Free()
			vals[i-1] = nil
		}
		if k == len(c.steps)-1 {
			return t, nil
		}
	}
	return nil, invalidf("expr: nothing to evaluate")
}

// eval runs s, its operands' values in vals, into dst where it is not
// nil.
func (s *step) eval(e *Expr, vals []*device.Tensor, dst *device.Tensor) (*device.Tensor, error) {
	if s.seg != nil {
		return s.seg.eval(e, vals, dst)
	}
	return e.evalNode(s.node, vals, dst)
}
