package ops

import (
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/tensor"
)

// An Expr is a chain of element ops built as nodes and run as one pass
// where it can be: a fused kernel (fuse.go) reads the inputs once and
// writes the result once, with no intermediate tensor, or folds the
// result where the chain ends in a reduction or, and, or over all of
// it, its rows, its columns or its channels (the dimensions kept are one
// run, with whole 16-element chunks to fold: see Explain); one op that
// stores its result runs as that op, as it gains nothing from fusing. For example, a ReLU and a NaN check:
//
//	var e ops.Expr
//	x := e.Input(t)
//	y, err := e.Eval(e.Where(e.Greater(x, 0), x, 0))
//	nan, err := e.Eval(e.ReduceOr(e.IsNaN(x), ops.AllAxes))
//
// Each node is checked by its op's own rules as it is made, with the
// same errors; a node made from a bad one carries its error, which Eval
// returns. Eval returns, bit for bit, what the same ops called one by
// one return. A chain beyond the fused kernel's limits (4 input
// tensors, 2 distinct scalars and 4 ops a kernel, one element type
// besides bool) runs in segments, each a fused kernel within them, with
// the same result: a segment's value is a tensor that the next reads and
// Eval frees once that is recorded. A device without subgroup vote and
// basic operations runs each op by itself. Explain shows the plan.
//
// Eval plans a root once; later Evals of it replay the plan, with the
// inputs that Set gave, of the same shapes and types. EvalInto runs the
// same plan into a tensor the caller gives, such as a wrapped Go slice,
// rather than a new one. An Expr is not safe for concurrent use. A nil
// *Expr makes only zero Nodes, which carry an error.
type Expr struct {
	nodes    []exprNode
	compiled []*compiled
}

// A Node is a value of an Expr: an input tensor, or the result of an op.
// The zero Node is no value.
type Node struct {
	e *Expr
	i int32 // index in e.nodes, plus one
}

// Err returns the error n carries: its own op's, or the first of the
// nodes it was made from.
func (n Node) Err() error {
	if n.e == nil || n.i <= 0 || int(n.i) > len(n.e.nodes) {
		return invalidf("expr: not a node of an expression")
	}
	return n.e.nodes[n.i-1].err
}

// exprKind is what a node is.
type exprKind uint8

const (
	exprInput  exprKind = iota // an input tensor
	exprMask                   // a mask op: args a and b (unary: a); or Maximum, Minimum (a, b), Clamp (x, min, max)
	exprSelect                 // Select or Where: args cond, then, else
	exprReduce                 // ReduceOr or ReduceAnd: arg data
)

// exprNode is a node: its op, operands and result's type and shape.
type exprNode struct {
	kind   exprKind
	name   string         // the op, as its errors begin
	t      *device.Tensor // an input's
	mask   *maskOp
	detect uint32       // IsInf's attributes
	argDT  tensor.DType // a mask op's input type
	args   [3]exprArg
	nargs  int
	red    *reduceOp // a reduction's fold
	axes   []bool    // the dimensions a reduction reduces
	dt     tensor.DType
	dims   tensor.Shape // checked by the op's rules (checkOutput): NumElements of it cannot panic
	dev    *device.Device
	err    error
}

// argName returns the name of n's operand k, as n's op names it in its
// errors.
func (n *exprNode) argName(k int) string {
	var names [3]string
	switch {
	case n.kind == exprSelect && n.name == "select":
		names = [3]string{"cond", "then", "else"}
	case n.kind == exprSelect:
		names = [3]string{"cond", "input", "other"}
	case n.kind == exprReduce:
		names[0] = "data"
	case n.mask == clampOp:
		names = [3]string{"x", "min", "max"}
	case n.mask.swap:
		names = [3]string{"b", "a"}
	default:
		names = [3]string{"a", "b"}
	}
	return names[k]
}

// exprArg is an operand of a node: another node, or a scalar of the
// type the op's rules gave it.
type exprArg struct {
	node int32 // the node's index plus one; 0 for a scalar
	bits uint64
	dt   tensor.DType // a scalar's
}

// add appends n and returns its Node. A nil e holds no node: it returns
// the zero Node, whose Err says so.
func (e *Expr) add(n exprNode) Node {
	if e == nil {
		return Node{}
	}
	e.nodes = append(e.nodes, n)
	return Node{e, int32(len(e.nodes))}
}

// addElem appends n, a node of an elementwise op of two or three
// operands, or a node that carries the error the op gives at run time
// where its broadcast needs more dimensions than the kernels walk, so
// that Err reports it before Eval.
func (e *Expr) addElem(n exprNode) Node {
	var buf [3]int32
	ins := buf[:0]
	for _, a := range n.args[:n.nargs] {
		if a.node != 0 {
			ins = append(ins, a.node)
		}
	}
	if l := e.layout(n.dims, ins); l.rank > maxRank {
		return e.fail(rankError(n.name, &l))
	}
	return e.add(n)
}

// fail returns a node that carries err.
func (e *Expr) fail(err error) Node { return e.add(exprNode{err: err}) }

// node returns x, operand name of op, checking that it is a node of e
// and carries no error.
func (e *Expr) node(op, name string, x Node) (*exprNode, error) {
	if e == nil || x.e != e || x.i <= 0 || int(x.i) > len(e.nodes) {
		return nil, invalidf("%s: %s is not a node of this expression", op, name)
	}
	n := &e.nodes[x.i-1]
	return n, n.err
}

// argFrom returns the node operand of a checked argument; a tensor
// given directly becomes an input node.
func (e *Expr) argFrom(a operand, dt tensor.DType) exprArg {
	switch {
	case a.t != nil:
		return exprArg{node: e.Input(a.t).i}
	case a.node != 0:
		return exprArg{node: a.node}
	}
	return exprArg{bits: a.bits, dt: dt}
}

// Input returns a node that stands for t, a tensor on the device.
func (e *Expr) Input(t *device.Tensor) Node {
	if err := checkTensor("expr", "input", t); err != nil {
		return e.fail(err)
	}
	return e.add(exprNode{kind: exprInput, name: "input", t: t, dt: t.DType(), dims: bridge.Tensor(t).Dims().Clone(), dev: t.Device()})
}

// Set makes input node in stand for t from now on: a tensor of the same
// element type and shape on the same device, so that a root Eval has
// planned replays its plan with it.
func (e *Expr) Set(in Node, t *device.Tensor) error {
	n, err := e.node("expr", "input", in)
	if err != nil {
		return err
	}
	if n.kind != exprInput {
		return invalidf("expr: set: the node is not an input")
	}
	if err := checkTensor("expr", "input", t); err != nil {
		return err
	}
	if t.Device() != n.dev {
		return misusef("expr: set: %v is on another device than the input it replaces", t)
	}
	if t.DType() != n.dt || !bridge.Tensor(t).Dims().Equal(n.dims) {
		return invalidf("expr: set: %v is not of the input's type and shape %v%v", t, n.dt, n.dims)
	}
	n.t = t
	return nil
}

// binary makes a node of mask op m on a and b, checked as m's function
// checks them.
func (e *Expr) binary(m *maskOp, a, b any, opts []SelectOption) Node {
	var buf [maxRank]int
	call, err := m.resolveBinary(configure(opts), a, b, e, &buf)
	if err != nil {
		return e.fail(err)
	}
	n := exprNode{kind: exprMask, name: m.name, mask: m, argDT: call.dt, dt: m.outType(call.dt), dims: call.out.Clone(), dev: call.dev, nargs: 2}
	n.args[0], n.args[1] = e.argFrom(call.x, call.dt), e.argFrom(call.y, call.dt)
	return e.addElem(n)
}

// unary makes a node of mask op m on a, checked as m's function checks
// it.
func (e *Expr) unary(m *maskOp, a Node, detect uint32) Node {
	arg, err := argOf(m.name, "a", a, nil, "", e)
	if err != nil {
		return e.fail(err)
	}
	if err := m.check(arg.dt); err != nil {
		return e.fail(err)
	}
	n := exprNode{kind: exprMask, name: m.name, mask: m, detect: detect, argDT: arg.dt, dt: tensor.Bool, dims: arg.dims, dev: arg.dev, nargs: 1}
	n.args[0] = exprArg{node: a.i}
	return e.add(n)
}

// Equal is ops.Equal as a node.
func (e *Expr) Equal(a, b any, opts ...SelectOption) Node { return e.binary(equalOp, a, b, opts) }

// NotEqual is ops.NotEqual as a node.
func (e *Expr) NotEqual(a, b any, opts ...SelectOption) Node { return e.binary(notEqualOp, a, b, opts) }

// Less is ops.Less as a node.
func (e *Expr) Less(a, b any, opts ...SelectOption) Node { return e.binary(lessOp, a, b, opts) }

// LessEqual is ops.LessEqual as a node.
func (e *Expr) LessEqual(a, b any, opts ...SelectOption) Node {
	return e.binary(lessEqualOp, a, b, opts)
}

// Greater is ops.Greater as a node.
func (e *Expr) Greater(a, b any, opts ...SelectOption) Node { return e.binary(greaterOp, a, b, opts) }

// GreaterEqual is ops.GreaterEqual as a node.
func (e *Expr) GreaterEqual(a, b any, opts ...SelectOption) Node {
	return e.binary(greaterEqualOp, a, b, opts)
}

// LogicalAnd is ops.LogicalAnd as a node.
func (e *Expr) LogicalAnd(a, b any, opts ...SelectOption) Node {
	return e.binary(logicalAndOp, a, b, opts)
}

// LogicalOr is ops.LogicalOr as a node.
func (e *Expr) LogicalOr(a, b any, opts ...SelectOption) Node {
	return e.binary(logicalOrOp, a, b, opts)
}

// LogicalXor is ops.LogicalXor as a node.
func (e *Expr) LogicalXor(a, b any, opts ...SelectOption) Node {
	return e.binary(logicalXorOp, a, b, opts)
}

// LogicalNot is ops.LogicalNot as a node.
func (e *Expr) LogicalNot(a Node) Node { return e.unary(logicalNotOp, a, 0) }

// Maximum is ops.Maximum as a node.
func (e *Expr) Maximum(a, b any, opts ...SelectOption) Node { return e.binary(maximumOp, a, b, opts) }

// Minimum is ops.Minimum as a node.
func (e *Expr) Minimum(a, b any, opts ...SelectOption) Node { return e.binary(minimumOp, a, b, opts) }

// Clamp is ops.Clamp as a node: x is a node (or a *device.Tensor), min
// and max scalars. It is one instruction of the fused kernel, its bounds
// two of the kernel's scalars.
func (e *Expr) Clamp(x, min, max any) Node {
	call, err := resolveClamp(x, min, max, e)
	if err != nil {
		return e.fail(err)
	}
	n := exprNode{kind: exprMask, name: clampOp.name, mask: clampOp, argDT: call.dt, dt: call.dt, dims: call.out.Clone(), dev: call.dev, nargs: 3}
	n.args[0], n.args[1], n.args[2] = e.argFrom(call.x, call.dt), e.argFrom(call.y, call.dt), e.argFrom(call.z, call.dt)
	return e.addElem(n)
}

// IsNaN is ops.IsNaN as a node.
func (e *Expr) IsNaN(a Node) Node { return e.unary(isNaNOp, a, 0) }

// IsInf is ops.IsInf as a node.
func (e *Expr) IsInf(a Node, detectNegative, detectPositive bool) Node {
	return e.unary(isInfOp, a, b2u(detectNegative)|b2u(detectPositive)<<1)
}

// IsFinite is ops.IsFinite as a node.
func (e *Expr) IsFinite(a Node) Node { return e.unary(isFiniteOp, a, 0) }

// Select is ops.Select as a node: cond, then and else are nodes (or
// *device.Tensor).
func (e *Expr) Select(cond, then, els any, opts ...SelectOption) Node {
	const op = "select"
	c := configure(opts)
	if c.broadcast > BroadcastPDPD {
		return e.fail(invalidf("%s: unknown broadcast %q (want none, numpy or pdpd)", op, c.broadcast))
	}
	var args [3]whereArg
	for i, v := range []any{cond, then, els} {
		name := [...]string{"cond", "then", "else"}[i]
		var dev *device.Device
		if i > 0 {
			dev = args[0].dev
		}
		a, err := argOf(op, name, v, dev, "cond", e)
		if err == nil && !a.isTensor() {
			err = invalidf("%s: %s is a scalar; Select takes tensors (Where takes scalars)", op, name)
		}
		if err != nil {
			return e.fail(err)
		}
		args[i] = a
	}
	var buf [maxRank]int
	out, err := resolveSelect(op, c, args[0], args[1], args[2], &buf)
	if err != nil {
		return e.fail(err)
	}
	n := exprNode{kind: exprSelect, name: op, dt: args[1].dt, dims: out.Clone(), dev: args[0].dev, nargs: 3}
	for i := range args {
		n.args[i] = e.argFrom(args[i].operand, args[i].dt)
	}
	return e.addElem(n)
}

// Where is ops.Where as a node: cond is a node (or a *device.Tensor),
// input and other nodes, tensors or scalars as Where takes them.
func (e *Expr) Where(cond, input, other any) Node {
	const op = "where"
	c, err := argOf(op, "cond", cond, nil, "", e)
	if err == nil && !c.isTensor() {
		err = invalidf("%s: cond is a scalar; it must be a tensor", op)
	}
	if err != nil {
		return e.fail(err)
	}
	var buf [maxRank]int
	w, err := resolveWhere(op, c, input, other, e, &buf)
	if err != nil {
		return e.fail(err)
	}
	n := exprNode{kind: exprSelect, name: op, dt: w.dt, dims: w.out.Clone(), dev: c.dev, nargs: 3}
	n.args[0], n.args[1], n.args[2] = e.argFrom(c.operand, c.dt), e.argFrom(w.a.operand, w.dt), e.argFrom(w.b.operand, w.dt)
	return e.addElem(n)
}

// ReduceOr is ops.ReduceLogicalOr as a node, with the same axes: a NaN
// check reduces AllAxes, e.ReduceOr(e.IsNaN(x), ops.AllAxes); nil or
// empty axes reduce none.
func (e *Expr) ReduceOr(data Node, axes []int, opts ...ReduceOption) Node {
	return e.reduce(reduceOrOp, data, axes, opts)
}

// ReduceAnd is ops.ReduceLogicalAnd as a node, with the same axes.
func (e *Expr) ReduceAnd(data Node, axes []int, opts ...ReduceOption) Node {
	return e.reduce(reduceAndOp, data, axes, opts)
}

// ReduceXor is ops.ReduceLogicalXor as a node, with the same axes. The
// fused kernel has no parity fold: a chain that ends in one writes its
// result, which the reduction then reads (Explain says so).
func (e *Expr) ReduceXor(data Node, axes []int, opts ...ReduceOption) Node {
	return e.reduce(reduceXorOp, data, axes, opts)
}

func (e *Expr) reduce(red *reduceOp, data Node, axes []int, opts []ReduceOption) Node {
	op := red.name
	a, err := argOf(op, "data", data, nil, "", e)
	if err != nil {
		return e.fail(err)
	}
	if a.dt != tensor.Bool {
		return e.fail(invalidf("%s: data must be bool, got %v", op, a.dt))
	}
	var reducedBuf [reduceRank]bool
	var outBuf [reduceRank]int
	reduced, out, err := resolveReduce(op, a.dims, axes, opts, &reducedBuf, &outBuf)
	if err != nil {
		return e.fail(err)
	}
	n := exprNode{kind: exprReduce, name: op, red: red, axes: append([]bool(nil), reduced...), dt: tensor.Bool,
		dims: out.Clone(), dev: a.dev, nargs: 1}
	n.args[0] = exprArg{node: data.i}
	return e.add(n)
}

// Eval computes n, as one pass where the chain allows (see Expr), and
// returns it as a new tensor. Its first call plans n; later calls replay
// the plan. Explain says what it runs.
func (e *Expr) Eval(n Node) (*device.Tensor, error) {
	c, err := e.plan(n)
	if err != nil {
		return nil, err
	}
	return c.eval(e, nil)
}

// EvalInto computes n as Eval does, into dst rather than a new tensor.
// dst must be a live tensor on n's device, of n's element type and
// shape, and share no memory with the Expr's inputs: not one of them,
// nor a second Wrap of an input's slice. The kernels overwrite it when
// they run: over a slice made a tensor by device.Wrap, the result lands
// in the slice itself, with no copy out; call dst.Wait before the host
// reads it. A broken rule leaves dst as it was.
func (e *Expr) EvalInto(n Node, dst *device.Tensor) error {
	c, err := e.plan(n)
	if err != nil {
		return err
	}
	if err := e.checkDst(c.root, dst); err != nil {
		return err
	}
	_, err = c.eval(e, dst)
	return err
}

// checkDst checks dst as EvalInto's rules for the result of node root.
func (e *Expr) checkDst(root int32, dst *device.Tensor) error {
	n := &e.nodes[root-1]
	if err := checkTensor("expr", "dst", dst); err != nil {
		return err
	}
	if dst.Device() != n.dev {
		return misusef("expr: dst is on another device than %s's operands", n.name)
	}
	if dst.DType() != n.dt || !bridge.Tensor(dst).Dims().Equal(n.dims) {
		return invalidf("expr: dst %v is not of %s's result type and shape %v%v", dst, n.name, n.dt, n.dims)
	}
	for i := range e.nodes {
		if in := &e.nodes[i]; in.kind == exprInput && bridge.Tensor(dst).SharesMemory(bridge.Tensor(in.t)) {
			return invalidf("expr: dst %v shares memory with the expression's input %v; evaluate into another tensor", dst, in.t)
		}
	}
	return nil
}

// plan returns n's plan, made on the first call.
func (e *Expr) plan(n Node) (*compiled, error) {
	root, err := e.node("expr", "the node to evaluate", n)
	if err != nil {
		return nil, err
	}
	if root.kind == exprInput {
		return nil, invalidf("expr: the node to evaluate is an input; evaluate an op")
	}
	for _, c := range e.compiled {
		if c.root == n.i {
			return c, nil
		}
	}
	c, err := e.compile(n.i)
	if err != nil {
		return nil, err
	}
	e.compiled = append(e.compiled, c)
	return c, nil
}

// operandOf returns arg as an elementwise operand, its node's value from
// vals.
func (e *Expr) operandOf(arg exprArg, vals []*device.Tensor) operand {
	if arg.node == 0 {
		return operand{bits: arg.bits}
	}
	return operand{t: e.value(arg.node, vals)}
}

// value returns node i's tensor: an input's, or its value in vals.
func (e *Expr) value(i int32, vals []*device.Tensor) *device.Tensor {
	if n := &e.nodes[i-1]; n.kind == exprInput {
		return n.t
	}
	return vals[i-1]
}

// evalNode runs node i, op by op, its operands' values in vals, into
// dst where it is not nil.
func (e *Expr) evalNode(i int32, vals []*device.Tensor, dst *device.Tensor) (*device.Tensor, error) {
	n := &e.nodes[i-1]
	switch n.kind {
	case exprMask:
		var b, c operand
		if n.nargs >= 2 {
			b = e.operandOf(n.args[1], vals)
		}
		if n.nargs == 3 {
			c = e.operandOf(n.args[2], vals)
		}
		if n.mask.values {
			return runValues(n.name, n.mask.code, n.dev, n.argDT, n.dims, e.operandOf(n.args[0], vals), b, c, dst)
		}
		return runMask(n.name, n.mask.code, n.detect, n.dev, n.argDT, n.dims, e.operandOf(n.args[0], vals), b, dst)
	case exprSelect:
		return blend(n.name, n.dt, n.dims, e.value(n.args[0].node, vals), e.operandOf(n.args[1], vals), e.operandOf(n.args[2], vals), dst)
	}
	return reduceRun(n.red, e.value(n.args[0].node, vals), n.axes, n.dims, dst)
}
