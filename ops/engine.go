package ops

import (
	"fmt"
	"math"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/core"
	"github.com/vkops/vkops/shaders/spec"
	"github.com/vkops/vkops/tensor"
)

// The elementwise engine runs every op that computes each output element
// from the inputs' elements at the same index, broadcast: Select, Where
// and the mask ops. An op is an elemOp, a descriptor, and a file of GLSL
// hooks that the skeleton (shaders/elementwise.glsl) calls; the engine
// lays the operands out, plans the dispatches (plan.go), picks the
// kernel variant and records. It knows nothing of any op's meaning.

// An elemOp describes an elementwise op to the engine. Its kernels are
// the modules NAME_wW[_variant][_role] (shaders/spec), one per element
// width W: the op's own width, which bool inputs and a bool output do
// not have.
type elemOp struct {
	name    string // the modules' prefix and the families' keys
	inputs  int    // 1 to maxOperands-1; the kernel's bindings, then the output's
	bools   uint32 // bit x: input x is bool, one byte
	boolOut bool   // the output is bool; else of the op's width
	// rows is whether the op has modules for blocks of whole rows and
	// row seams (shaders/spec): without them the planner runs those
	// pieces element by element.
	rows bool
	// needs, where set, is what every variant of the op needs of a
	// device.
	needs func(d *device.Device) bool
	// chunks is the 16-element chunks an invocation does on a CPU
	// profile, by width: enough that each writes 64 bytes or more.
	chunks [9]int
	// probes are the runs that time a family's variants; probeSpec the
	// op's constants in them.
	probes    []probe
	probeSpec []uint32
	variants  [9][]*variant
	families  [9][classes]*family
}

// A probe is one run that times a variant: which inputs are pushed
// scalars, and how much its time weighs, by width.
type probe struct {
	pushed uint32
	weight func(w int) float64
}

// maxOpSpec is the most specialization constants of an op's own.
const maxOpSpec = maxSpec - int(spec.Op)

// register declares op's variants and families at every width, and
// returns op.
func (op *elemOp) register() *elemOp {
	for _, w := range []int{1, 2, 4, 8} {
		vs := op.newVariants(w)
		op.variants[w] = vs
		for c := range classes {
			op.families[w][c] = register(&family{
				key:      fmt.Sprintf("%s/w%d/%v", op.name, w, c),
				variants: vs,
				measure:  func(d *device.Device, v *variant) (float64, error) { return op.measure(d, v, w, c) },
			})
		}
	}
	return op
}

// variantNeeds is what each elementwise variant needs of a device.
var variantNeeds = map[string]func(d *device.Device) bool{
	"texel":   hasTexels,
	"texel64": func(d *device.Device) bool { return hasTexels(d) && d.Info().Features.ShaderInt64 },
}

func hasTexels(d *device.Device) bool { return bridge.Device(d).HasTexels(core.TexelRGBA32UI) }

// newVariants returns op's variants at width w, the portable one first.
func (op *elemOp) newVariants(w int) []*variant {
	var vs []*variant
	sop, _ := spec.ElementwiseOpNamed(op.name)
	for _, ev := range spec.ElementwiseVariants {
		texel := ev.Suffix != ""
		k := func(r spec.Role) *core.Kernel {
			if !sop.Has(r) {
				return nil
			}
			return op.kernel(spec.ElementwiseName(op.name, w, ev.Suffix, r.Suffix), texel)
		}
		v := &variant{name: ev.Name, kernel: k(spec.RoleMain), rows: k(spec.RoleRows), seams: k(spec.RoleSeams),
			whole: k(spec.RoleWhole), needs: op.variantNeeds(ev.Name)}
		if v.kernel == nil {
			v.kernel = k(spec.RoleElems)
		}
		vs = append(vs, v)
	}
	return vs
}

// variantNeeds returns what variant name of op needs of a device, nil
// for nothing.
func (op *elemOp) variantNeeds(name string) func(d *device.Device) bool {
	v := variantNeeds[name]
	switch {
	case op.needs == nil:
		return v
	case v == nil:
		return op.needs
	}
	return func(d *device.Device) bool { return op.needs(d) && v(d) }
}

// kernel declares op's module name: its inputs, read through rgba32ui
// texel buffers where texel is set, and the output, then the push
// constants of shaders/elementwise.glsl.
func (op *elemOp) kernel(name string, texel bool) *core.Kernel {
	n := op.inputs
	k := kernel[spec.ElementwisePush](name, n+1)
	if texel {
		k.Kinds = make([]core.BindingKind, n+1)
		for x := range n {
			k.Kinds[x] = core.TexelRGBA32UI
		}
	}
	return k
}

// module returns the variant's kernel of role ro and mode.
func (v *variant) module(ro role, mode uint32) *core.Kernel {
	switch {
	case ro == roleRows:
		return v.rows
	case ro == roleSeams:
		return v.seams
	case mode == spec.ModeWhole && v.whole != nil:
		return v.whole
	}
	return v.kernel
}

// A run is one call of an elementwise op, as the planner takes it: its
// operands (inputs, then the output; a nil input is a pushed scalar,
// one of the last two), their shapes and element sizes, the scalars'
// bits and the op's own constants.
type run struct {
	op     *elemOp
	width  int
	ts     [maxOperands]*device.Tensor
	shapes [maxOperands]tensor.Shape
	sizes  [maxOperands]int
	bits   [2]uint64 // the last two inputs' bits where they are pushed
	spec   [maxOpSpec]uint32
	nspec  int
	// fold, where nonzero, is the bytes of an output the kernel folds
	// its result into (fused.glsl), not a tensor of the layout's shape:
	// the kernel binds them, and indexes blocks from the layout's first
	// element; where foldLen is nonzero, element e folds into output
	// (e / foldLen) % foldKeep, else every element into one.
	fold     uint64
	foldLen  uint32
	foldKeep uint32
	// pick, when not -1, is the input that the output equals,
	// broadcast; pickBits are its value where pickKnown.
	pick      int
	pickKnown bool
	pickBits  uint64
}

// newRun returns a run of op at element width w, its operands unset.
func (op *elemOp) newRun(w int) run {
	r := run{op: op, width: w, pick: -1}
	for x := range op.inputs {
		r.sizes[x] = w
		if op.bools>>x&1 != 0 {
			r.sizes[x] = 1
		}
	}
	r.sizes[op.inputs] = w
	if op.boolOut {
		r.sizes[op.inputs] = 1
	}
	return r
}

// maxOutputBytes mirrors the largest tensor tensor.New makes, so that an
// output too large to address is rejected with cpuref's words.
const maxOutputBytes = 1 << 48

// checkOutput checks out as the shape of a new dt tensor, op's result,
// in cpuref's words: its element count must fit an int, and its bytes
// must be addressable. It returns the element count. An op checks it
// where its rules resolve the output's shape, so that a node of an Expr
// carries the same error; a shape that passes may be given to
// NumElements. Callers may keep out on the stack: errors quote a copy.
func checkOutput(op string, dt tensor.DType, out tensor.Shape) (int, error) {
	if err := out.Validate(); err != nil {
		return 0, invalidf("%s: output: %v", op, err)
	}
	n := out.NumElements()
	if n > maxOutputBytes/dt.Size() {
		return 0, invalidf("%s: output: shape %v of %v: %d elements are too many to address", op, out.Clone(), dt, n)
	}
	return n, nil
}

// execute is what every elementwise op does once its operands are
// checked: it checks out as the shape of a new dt tensor (checkOutput),
// lays the inputs out over it, allocates the output on d, or takes dst
// where the caller gave one (Expr.EvalInto), and fills it. If a dispatch
// fails, a new output is freed. Callers may keep out on the stack, so
// that an op allocates nothing but its output: errors quote a copy of it.
func (r *run) execute(name string, d *device.Device, dt tensor.DType, out tensor.Shape, dst *device.Tensor) (*device.Tensor, error) {
	n, err := checkOutput(name, dt, out)
	if err != nil {
		return nil, err
	}
	l := newLayout(out, r.shapes[:r.op.inputs]...)
	if l.rank > maxRank {
		return nil, rankError(name, &l)
	}
	res, err := output(d, dt, out, dst)
	if err != nil {
		return nil, fmt.Errorf("%s: output: %w", name, err)
	}
	if n == 0 {
		return res, nil
	}
	r.ts[r.op.inputs], r.shapes[r.op.inputs] = res, out
	if err := r.record(d, &l); err != nil {
		discard(res, dst)
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return res, nil
}

// output returns the tensor an op writes: dst where the caller gave one,
// which Expr.EvalInto checked to be a dt tensor of shape out on d, else a
// new one.
func output(d *device.Device, dt tensor.DType, out tensor.Shape, dst *device.Tensor) (*device.Tensor, error) {
	if dst != nil {
		return dst, nil
	}
	return bridge.Empty(d, dt, out)
}

// discard frees res, an op's output that it failed to fill, unless it is
// the caller's dst.
func discard(res, dst *device.Tensor) {
	if res != dst {
		res.Free()
	}
}

// record fills the output over layout l: by the pick rule where it
// applies, else with the kernel variant of r's width and l's class. A
// forced variant runs its kernel everywhere, so that tests of it reach
// every plan.
func (r *run) record(d *device.Device, l *layout) error {
	t := targetOf(d)
	if forced() == "" {
		if ln, ok := r.planPick(&t); ok {
			return r.recordLaunch(d, nil, &ln)
		}
	}
	v, err := r.op.families[r.width][classOf(l, &r.ts)].pick(d)
	if err != nil {
		return err
	}
	return r.recordWith(d, l, v, &t)
}

// recordWith records r's kernel dispatches over l with variant v, piece
// by piece.
func (r *run) recordWith(d *device.Device, l *layout, v *variant, t *target) error {
	t.span = spanOf(d, v)
	st := l.operandStrides()
	first := true
	return l.pieces(&r.sizes, t.span, func(p piece) error {
		b := r.boxOf(l, &st, p, t)
		var buf [3]launch
		plan := r.planBox(buf[:0], &b, t)
		// The first piece decides for the call: the profile's own plans,
		// or its quick profile's where they would build a pipeline.
		if first {
			first = false
			if q := t.prof.quick; q != nil && anyFresh(d, plan, func(i int) (*core.Kernel, error) { return v.module(plan[i].role, plan[i].mode), nil }) {
				qt := *t
				qt.prof = q
				t = &qt
				plan = r.planBox(buf[:0], &b, t)
			}
		}
		for i := range plan {
			if err := r.recordLaunch(d, v, &plan[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// anyFresh reports whether a kernel launch of plan, run by the kernel
// that kernelOf returns for plan[i], would build a pipeline new to the
// device (core.Device.Fresh). It asks for every one, so that the next
// call finds none fresh; an error of kernelOf ends it, false. (kernelOf
// takes an index, not the launch: a pointer handed to a function value
// escapes, and the plan with it.)
func anyFresh(d *device.Device, plan []launch, kernelOf func(i int) (*core.Kernel, error)) bool {
	f := false
	for i := range plan {
		if ln := &plan[i]; ln.kind == launchKernel {
			k, err := kernelOf(i)
			if err != nil {
				return false // the recording reports it
			}
			f = bridge.Device(d).Fresh(k, ln.spec[:ln.nspec]) || f
		}
	}
	return f
}

// recordLaunch records ln with variant v.
func (r *run) recordLaunch(d *device.Device, v *variant, ln *launch) error {
	out := r.op.inputs
	switch ln.kind {
	case launchFill:
		return bridge.Device(d).Fill(bridge.Tensor(r.ts[out]), ln.word)
	case launchTile:
		return bridge.Device(d).Tile(bridge.Tensor(r.ts[out]), bridge.Tensor(r.ts[ln.src]))
	case launchExpand:
		return expand(d, expandKernel(d), r.ts[out], r.ts[ln.src], ln.repeat)
	}
	var args [maxOperands]core.Arg
	bound := -1
	for x := range out + 1 {
		t := r.ts[x]
		if t == nil {
			continue
		}
		a, skip, err := bridge.Tensor(t).Window(ln.ranges[x][0], ln.ranges[x][1])
		if err != nil {
			return err
		}
		if want := ln.ranges[x][0] % bridge.Device(d).PageSize() % bridge.Device(d).Alignment(); skip != want {
			return fmt.Errorf("internal error: %s: binding %d starts %d bytes early, planned %d", r.op.name, x, skip, want)
		}
		args[x] = a
		if bound < 0 {
			bound = x
		}
	}
	args[out].Write = true
	for x := range out {
		if r.ts[x] == nil {
			args[x] = args[bound]
		}
	}
	return bridge.Device(d).Dispatch(v.module(ln.role, ln.mode), ln.spec[:ln.nspec], args[:out+1], ln.push[:ln.npush], ln.grid)
}

// class is the part of a plan that can change which variant is fastest
// besides the element width: whether every tensor operand runs
// contiguously beside the output (scalars pushed as constants count as
// contiguous: they cost no loads), or some are broadcast.
type class int

const (
	classSame class = iota
	classBroadcast
	classes
)

func (c class) String() string { return [...]string{"same", "bcast"}[c] }

// classOf returns the class of layout l for operands ts.
func classOf(l *layout, ts *[maxOperands]*device.Tensor) class {
	if l.rank != 1 {
		return classBroadcast
	}
	for x := range l.inputs {
		if ts[x] != nil && l.strides[x][0] != 1 {
			return classBroadcast
		}
	}
	return classSame
}

// measure times variant v of op on d at width w in class c: each probe
// as measureElementwise runs it, over unsigned integers of w bytes and
// bools, its time weighed by the probe.
func (op *elemOp) measure(d *device.Device, v *variant, w int, c class) (float64, error) {
	total := 0.0
	for _, pr := range op.probes {
		r := op.newRun(w)
		r.nspec = copy(r.spec[:], op.probeSpec)
		dts := make([]tensor.DType, op.inputs+1)
		for x := range dts {
			switch {
			case x < op.inputs && pr.pushed>>x&1 != 0:
				dts[x] = tensor.Invalid
			case x == op.inputs && op.boolOut, x < op.inputs && op.bools>>x&1 != 0:
				dts[x] = tensor.Bool
			default:
				dts[x] = uintOfSize(w)
			}
		}
		ns, err := measureElementwise(d, dts, c, func(l *layout, ts *[maxOperands]*device.Tensor) error {
			r.ts = *ts
			t := targetOf(d)
			t.prof = noQuick(t.prof) // the variant's own plans are timed
			return r.recordWith(d, l, v, &t)
		})
		if err != nil {
			return 0, err
		}
		weight := 1.0
		if pr.weight != nil {
			weight = pr.weight(w)
		}
		total += ns * weight
	}
	return total, nil
}

// measureElementwise times run on d over operands of types dts (inputs,
// then the output) of the profile's measureBytes of the widest
// elements, or a page where pages are smaller (tests' tiny pages would
// make it thousands of dispatches), in class c: same-shape operands, or
// the first input broadcast along rows and the last tensor along
// columns ([r, 1] and [1, k] against [r, k], with rows k of up to 1024
// elements). An input of type tensor.Invalid is pushed: it has no
// tensor, and its ts entry is nil. It returns the fastest of five timed
// runs after one that builds the pipeline: other work on the machine
// only ever slows a run down, and on a CPU driver it comes in bursts.
func measureElementwise(d *device.Device, dts []tensor.DType, c class, run func(l *layout, ts *[maxOperands]*device.Tensor) error) (float64, error) {
	w := 1
	for _, dt := range dts {
		w = max(w, dt.Size())
	}
	n := int(min(profileOf(d).measureBytes, bridge.Device(d).PageSize())) / w
	k := min(n, 1024)
	out := tensor.Shape{n / k, k}
	ins := len(dts) - 1
	shapes := make([]tensor.Shape, ins)
	last := ins - 1
	for last > 0 && dts[last] == tensor.Invalid {
		last--
	}
	for x := range shapes {
		switch {
		case dts[x] == tensor.Invalid:
		case c == classBroadcast && x == 0:
			shapes[x] = tensor.Shape{n / k, 1}
		case c == classBroadcast && x == last:
			shapes[x] = tensor.Shape{1, k}
		default:
			shapes[x] = out
		}
	}
	var ts [maxOperands]*device.Tensor
	defer func() {
		for _, t := range ts {
			t.Free()
		}
	}()
	for x, dt := range dts {
		if dt == tensor.Invalid {
			continue
		}
		s := out
		if x < ins {
			s = shapes[x]
		}
		t, err := bridge.Empty(d, dt, s)
		if err != nil {
			return 0, err
		}
		ts[x] = t
	}
	l := newLayout(out, shapes...)
	timed := func() error { return run(&l, &ts) }
	if err := timed(); err != nil {
		return 0, err
	}
	if err := d.Sync(); err != nil {
		return 0, err
	}
	best := math.Inf(1)
	for range 5 {
		ns, err := bridge.Device(d).GPUTime(timed)
		if err != nil {
			return 0, err
		}
		best = min(best, ns)
	}
	return best, nil
}

// uintOfSize returns the unsigned integer type of w bytes.
func uintOfSize(w int) tensor.DType {
	return map[int]tensor.DType{1: tensor.U8, 2: tensor.U16, 4: tensor.U32, 8: tensor.U64}[w]
}
