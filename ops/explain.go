package ops

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/vkops/vkops/shaders/spec"
	"github.com/vkops/vkops/tensor"
)

// Explain plans n as Eval does, without running it, and returns the plan
// as text: the kernels Eval runs, in order, one a line. A line names the
// ops its kernel fuses (or the one op that runs as itself), the fold that
// ends it if any, what it reads and what it writes, and, for a kernel
// whose result another reads, why the chain is cut there: a limit of the
// fused kernel that fusing on would pass ("5 input tensors > 4", "3
// scalars > 2", "5 ops > 4", "two element types besides bool (f32,
// f16)"), "reduction over axes the kernel cannot fold", "the kernel has
// no xor fold", "a reduction's result is not fusable", or a device
// without the subgroup operations the fused kernel needs. Inputs are in1, in2, ... in the order the Expr
// made them; #k is the kernel on line k's result. The text is stable: it
// changes only where the plan does. Eval of n then replays the plan.
func (e *Expr) Explain(n Node) (string, error) {
	c, err := e.plan(n)
	if err != nil {
		return "", err
	}
	return c.explain(e), nil
}

// explain returns c as Explain gives it.
func (c *compiled) explain(e *Expr) string {
	var b strings.Builder
	ops := len(e.order(c.root, nil))
	fmt.Fprintf(&b, "%s in %s\n", plural(ops, "op"), plural(len(c.steps), "kernel"))
	for k, s := range c.steps {
		fmt.Fprintf(&b, "%d. %s\n", k+1, c.line(e, &s))
	}
	return b.String()
}

// line describes step s.
func (c *compiled) line(e *Expr, s *step) string {
	n := &e.nodes[s.node-1]
	ops := []int32{s.node}
	what := "op " + n.name
	if s.seg != nil {
		ops = s.seg.ops
		names := make([]string, len(ops))
		for k, i := range ops {
			names[k] = e.nodes[i-1].name
		}
		what = "fused " + strings.Join(names, ", ")
		if s.seg.fold != spec.FoldNone {
			what += ", fold " + s.seg.red.short + s.seg.fm.String()
		}
	} else if n.kind == exprReduce {
		what += fmt.Sprintf(" over axes %v", reducedList(n.axes))
	}
	line := fmt.Sprintf("%s (%s) -> %v%v", what, c.operands(e, ops), n.dt, n.dims)
	if s.why != "" {
		line += "; boundary: " + s.why
	}
	return line
}

// operands describes what the ops, a step's, read besides each other:
// inputs and earlier kernels' results, then scalars.
func (c *compiled) operands(e *Expr, ops []int32) string {
	var ins, scalars []string
	for _, i := range ops {
		n := &e.nodes[i-1]
		for _, a := range n.args[:n.nargs] {
			var v string
			list := &ins
			switch {
			case a.node == 0:
				v, list = scalarText(a), &scalars
			case slices.Contains(ops, a.node):
				continue
			default:
				v = c.valueName(e, a.node)
			}
			if !slices.Contains(*list, v) {
				*list = append(*list, v)
			}
		}
	}
	text := strings.Join(ins, ", ")
	if len(scalars) > 0 {
		text += fmt.Sprintf("; %s %s", map[bool]string{true: "scalar", false: "scalars"}[len(scalars) == 1], strings.Join(scalars, ", "))
	}
	return text
}

// valueName names node i's value: inK for the Kth input the Expr made,
// #k for the result of c's kth step.
func (c *compiled) valueName(e *Expr, i int32) string {
	if e.nodes[i-1].kind == exprInput {
		k := 0
		for _, n := range e.nodes[:i] {
			if n.kind == exprInput {
				k++
			}
		}
		return fmt.Sprintf("in%d", k)
	}
	return fmt.Sprintf("#%d", slices.IndexFunc(c.steps, func(s step) bool { return s.node == i })+1)
}

// scalarText writes scalar a as a number, or a bool, of its type.
func scalarText(a exprArg) string {
	switch a.dt {
	case tensor.F16:
		return fmt.Sprint(tensor.Float16(a.bits).Float32())
	case tensor.BF16:
		return fmt.Sprint(tensor.BFloat16(a.bits).Float32())
	case tensor.F32:
		return fmt.Sprint(math.Float32frombits(uint32(a.bits)))
	}
	return fmt.Sprint(scalarValue(tensor.Scalar{DType: a.dt, Bits: a.bits}))
}

// reducedList returns the axes a reduction reduces, by index.
func reducedList(axes []bool) []int {
	list := []int{}
	for i, r := range axes {
		if r {
			list = append(list, i)
		}
	}
	return list
}

// plural writes n and noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
