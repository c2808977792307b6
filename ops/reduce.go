package ops

import (
	"fmt"
	"math"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/core"
	"github.com/vkops/vkops/shaders/spec"
	"github.com/vkops/vkops/tensor"
)

// ReduceOption configures ReduceLogicalOr and ReduceLogicalAnd; KeepDims
// makes one. It is a value, as SelectOption is.
type ReduceOption struct {
	keepDims bool
}

// KeepDims keeps each reduced dimension as a dimension of size 1 when
// keep is true. By default reduced dimensions are removed.
func KeepDims(keep bool) ReduceOption { return ReduceOption{keepDims: keep} }

// A reduceOp describes a reduction to the engine, as elemOp describes an
// elementwise op: its name, its fold and the fold's value over no
// elements, and its plain-Go twin. The fold (spec.FoldAny, ...) is a
// specialization constant of every reduction kernel, whose hooks in
// shaders/reduce_fold.glsl define it, so that each reduction runs the
// same kernels and plans; where fuses is set, the fused kernel folds it
// too.
type reduceOp struct {
	name     string // in errors: the op's name, in snake case
	short    string // in plans: the fold's name
	fold     uint32
	identity bool
	fuses    bool
	ref      func(data *tensor.Host, axes []int, keepDims bool) (*tensor.Host, error)
}

var (
	reduceOrOp  = &reduceOp{name: "reduce_logical_or", short: "any", fold: spec.FoldAny, fuses: true, ref: cpuref.ReduceLogicalOr}
	reduceAndOp = &reduceOp{name: "reduce_logical_and", short: "all", fold: spec.FoldAll, identity: true, fuses: true, ref: cpuref.ReduceLogicalAnd}
	reduceXorOp = &reduceOp{name: "reduce_logical_xor", short: "xor", fold: spec.FoldXor, ref: cpuref.ReduceLogicalXor}
	// reduceOps are every reduction, as tests run them.
	reduceOps = []*reduceOp{reduceOrOp, reduceAndOp, reduceXorOp}
)

// identityWord is the fold's value over no elements in each byte of a
// word: what a shared output is filled with before invocations combine
// into it.
func (op *reduceOp) identityWord() uint32 { return b2u(op.identity) * 0x01010101 }

// The kernel variants of every reduction; the spec constant FOLD picks
// the fold, so the reductions share each kernel. The portable variants read
// through storage buffers, which every device has; the texel variants
// read the same bytes through rgba32ui texel-buffer views, 16 bools a
// texel, which lavapipe loads many times faster.
var (
	reduceInnerPortable = &variant{name: "portable", kernel: kernel[spec.ReduceInnerPush]("reduce_inner", 2)}
	reduceInnerTexel    = &variant{name: "texel", kernel: reduceTexelKernel[spec.ReduceInnerPush]("reduce_inner_texel"), needs: hasTexels}
	// texel-subgroup combines the chunks of a row that a subgroup read
	// with subgroupOr before one atomic: worth it where atomics on one
	// word are dear, as on GPUs with many invocations.
	reduceInnerSubgroup = &variant{name: "texel-subgroup", kernel: reduceTexelKernel[spec.ReduceInnerPush]("reduce_inner_texel_subgroup"), needs: reduceHasSubgroup}
	reduceOuterPortable = &variant{name: "portable", kernel: kernel[spec.ReduceOuterPush]("reduce_outer", 2)}
	reduceOuterTexel    = &variant{name: "texel", kernel: reduceTexelKernel[spec.ReduceOuterPush]("reduce_outer_texel"), needs: hasTexels}
	// small runs the passes of a few KiB that the CPU profile takes off
	// the families (reduceTune.smallMax): one kernel, an invocation per
	// output word, quick for lavapipe to compile.
	reduceSmall = &variant{name: "small", kernel: reduceTexelKernel[spec.ReduceSmallPush]("reduce_small")}
)

// reduceClass is the plan class of a dispatch: its variant is chosen,
// by measurement, per class and device.
type reduceClass int

const (
	reduceRows  reduceClass = iota // inner: each row read whole by one invocation
	reduceSplit                    // inner: few long rows, each read in chunks by many invocations
	reduceCols                     // outer: down the columns of rows
	reduceClasses
)

// reduceFamilies holds the family of each class.
var reduceFamilies = [reduceClasses]*family{
	reduceRows: register(&family{
		key:      "reduce/rows",
		variants: []*variant{reduceInnerPortable, reduceInnerTexel},
		measure:  reduceMeasure(reduceRows),
	}),
	reduceSplit: register(&family{
		key:      "reduce/split",
		variants: []*variant{reduceInnerPortable, reduceInnerTexel, reduceInnerSubgroup},
		measure:  reduceMeasure(reduceSplit),
	}),
	reduceCols: register(&family{
		key:      "reduce/cols",
		variants: []*variant{reduceOuterPortable, reduceOuterTexel},
		measure:  reduceMeasure(reduceCols),
	}),
}

func (c reduceClass) String() string {
	return [...]string{"rows", "split", "cols", "general", "small"}[c]
}

// reduceMeasured is the reduction each class is measured by: one pass
// of that class over 16 MiB, large enough that a dispatch's fixed cost
// is small beside it, small enough that measuring every variant on
// first use takes a fraction of a second on lavapipe.
var reduceMeasured = [reduceClasses]struct {
	shape   tensor.Shape
	reduced []bool
}{
	reduceRows:  {tensor.Shape{1024, 16384}, []bool{false, true}}, // rows of 16 KiB
	reduceSplit: {tensor.Shape{16 << 20}, []bool{true}},           // one row of 16 MiB
	reduceCols:  {tensor.Shape{1024, 16384}, []bool{true, false}}, // 1024 rows down their columns
}

// reduceTexelKernel declares a reduce kernel that reads its input,
// binding 0, as an rgba32ui texel buffer, and writes binding 1, a
// storage buffer.
func reduceTexelKernel[P any](name string) *core.Kernel {
	k := kernel[P](name, 2)
	k.Kinds = []core.BindingKind{core.TexelRGBA32UI, core.Storage}
	return k
}

func reduceHasSubgroup(d *device.Device) bool {
	info := d.Info()
	return hasTexels(d) && info.HasSubgroupOp("arithmetic") && info.HasSubgroupOp("vote")
}

// reduceMeasure returns the measure of class c's family: the device time
// of the best of three runs of reduceMeasured[c] by the variant, over
// zeros, where nothing stops early and no atomic runs: the worst case.
// Other work on the machine only ever slows a run down.
func reduceMeasure(c reduceClass) func(*device.Device, *variant) (float64, error) {
	shape, reduced := reduceMeasured[c].shape, reduceMeasured[c].reduced
	return func(d *device.Device, v *variant) (float64, error) {
		x, err := bridge.Empty(d, tensor.Bool, shape)
		if err != nil {
			return 0, err
		}
		defer x.Free()
		outShape, err := reduceOutputShape(nil, "measure", shape, reduced, false)
		if err != nil {
			return 0, err
		}
		y, err := bridge.Empty(d, tensor.Bool, outShape)
		if err != nil {
			return 0, err
		}
		defer y.Free()
		r := newReducer(d, reduceOrOp)
		r.only = v
		if err := r.fill(x); err != nil {
			return 0, err
		}
		best := math.Inf(1)
		for range 3 {
			ns, err := bridge.Device(d).GPUTime(func() error { return r.run(x, y, shape, reduced) })
			if err != nil {
				return 0, err
			}
			best = min(best, ns)
		}
		return best, nil
	}
}

// ReduceLogicalOr returns the logical or of data's elements along axes
// in a new tensor: OpenVINO ReduceLogicalOr-1 as
// docs/specs.md#reducelogicalor states it, with the same rules and error
// messages as cpuref.ReduceLogicalOr.
//
// data must be bool (one byte per element, nonzero is true), of any rank.
// Each axis must lie in [-r, r-1] for rank r, and no axis may repeat once
// normalised. Empty axes is the identity; AllAxes reduces every axis.
// Reduced dimensions are removed unless KeepDims(true) is given. A
// reduction over no elements gives false. The output's bytes are 0 or 1; data is never modified.
//
// Every rule is checked before anything is allocated or dispatched; a
// rejected input gives an error matching ErrInvalid, such as
//
//	reduce_logical_or: axis 5 is out of range for rank 3 (want -3..2)
//
// Other errors come from the device, and leave nothing allocated.
func ReduceLogicalOr(data *device.Tensor, axes []int, opts ...ReduceOption) (*device.Tensor, error) {
	return reduceLogical(reduceOrOp, data, axes, opts)
}

// AllAxes, as the axes of a reduction (ReduceLogicalOr, ReduceLogicalAnd,
// Expr.ReduceOr, Expr.ReduceAnd), reduces every axis of the data,
// whatever its rank. Nil or empty axes reduce none: the identity, as the
// specification has it. AllAxes is known by its identity, not its
// value: pass it itself, unmodified, not a copy.
var AllAxes = []int{math.MinInt}

// isAllAxes reports whether axes is AllAxes itself: an axis list that
// holds AllAxes's value, as a command line may, is out of range.
func isAllAxes(axes []int) bool { return len(axes) == 1 && &axes[0] == &AllAxes[0] }

// ReduceLogicalAnd is ReduceLogicalOr with logical and: the same rules,
// except that a reduction over no elements gives true.
func ReduceLogicalAnd(data *device.Tensor, axes []int, opts ...ReduceOption) (*device.Tensor, error) {
	return reduceLogical(reduceAndOp, data, axes, opts)
}

// ReduceLogicalXor is ReduceLogicalOr with logical xor, the parity of
// the true elements: the same rules, and a reduction over no elements
// gives false. OpenVINO has no ReduceLogicalXor; this is numpy's
// logical_xor.reduce over several axes (docs/specs.md).
func ReduceLogicalXor(data *device.Tensor, axes []int, opts ...ReduceOption) (*device.Tensor, error) {
	return reduceLogical(reduceXorOp, data, axes, opts)
}

// reduceRank is the rank up to which planning a reduction keeps its
// scratch on the stack.
const reduceRank = 8

func reduceLogical(op *reduceOp, data *device.Tensor, axes []int, opts []ReduceOption) (*device.Tensor, error) {
	if err := checkReduceData(op.name, data); err != nil {
		return nil, err
	}
	var reducedBuf [reduceRank]bool
	var outBuf [reduceRank]int
	reduced, outShape, err := resolveReduce(op.name, bridge.Tensor(data).Dims(), axes, opts, &reducedBuf, &outBuf)
	if err != nil {
		return nil, err
	}
	return reduceRun(op, data, reduced, outShape, nil)
}

// resolveReduce checks a reduction's axes and options for data of the
// given shape and returns which dimensions it reduces and the output's
// shape, in the buffers.
func resolveReduce(op string, shape tensor.Shape, axes []int, opts []ReduceOption,
	reducedBuf *[reduceRank]bool, outBuf *[reduceRank]int) ([]bool, tensor.Shape, error) {
	var keepDims bool
	for _, o := range opts {
		keepDims = o.keepDims
	}
	reduced, err := reducedAxes(reducedBuf[:0], op, shape.Rank(), axes)
	if err != nil {
		return nil, nil, err
	}
	outShape, err := reduceOutputShape(outBuf[:0], op, shape, reduced, keepDims)
	if err != nil {
		return nil, nil, err
	}
	return reduced, outShape, nil
}

// reduceRun reduces data, whose rules hold, into a new tensor of shape
// outShape, or into dst where the caller gave one (Expr.EvalInto). If a
// dispatch fails, a new output is freed.
func reduceRun(op *reduceOp, data *device.Tensor, reduced []bool, outShape tensor.Shape, dst *device.Tensor) (*device.Tensor, error) {
	d := data.Device()
	out, err := output(d, tensor.Bool, outShape, dst)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op.name, err)
	}
	r := newReducer(d, op)
	r.families = &reduceFamilies
	if err := r.run(data, out, bridge.Tensor(data).Dims(), reduced); err != nil {
		discard(out, dst)
		return nil, fmt.Errorf("%s: %w", op.name, err)
	}
	return out, nil
}

// checkReduceData checks data as cpuref checks its host form, and that it
// is still allocated, before anything is allocated or dispatched.
func checkReduceData(op string, data *device.Tensor) error {
	if err := checkTensor(op, "data", data); err != nil {
		return err
	}
	if data.DType() != tensor.Bool {
		return invalidf("%s: data must be bool, got %v", op, data.DType())
	}
	return nil
}

// reducer records the dispatches of one reduction.
type reducer struct {
	d    *device.Device
	op   *reduceOp
	t    target // d's
	tune reduceTune
	// quick, where set, is the tuning of plans whose kernels are new to
	// the device (tuning).
	quick *reduceTune
	// general runs the general path (reduce_general.go) instead of the
	// planned passes: the profile's general, which tests force.
	general bool
	// only, when set, is the variant every dispatch runs with, as when
	// measuring it; otherwise each class's family picks. (The families
	// are a field rather than the package variable, which is initialised
	// from the measurement that runs a reducer.)
	only     *variant
	families *[reduceClasses]*family
}

// newReducer returns a reducer of op on d that plans by d's profile,
// its families unset.
func newReducer(d *device.Device, op *reduceOp) reducer {
	t := targetOf(d)
	r := reducer{d: d, op: op, t: t, tune: *t.prof.reduce, general: t.prof.general}
	if t.prof.quick != nil {
		r.quick = t.prof.quick.reduce
	}
	if forced() != "" {
		// A forced variant runs every pass that has a family, so that
		// tests of it reach small tensors too: no pass is small.
		r.tune.smallMax, r.quick = 0, nil
	}
	return r
}

// tuning returns the tuning to plan passes ps by: r's own, or its quick
// one where a kernel of its own plans would be a pipeline new to the
// device (core.Device.Fresh), whose compile would make most of the call
// (reduceQuickTuning). The same passes run next time take r's own plans.
func (r *reducer) tuning(ps []reducePass) *reduceTune {
	if r.quick == nil || r.only != nil {
		return &r.tune
	}
	fresh := false
	var buf [5]launch
	for _, p := range ps {
		plan := r.tune.planPass(buf[:0], p, &r.t, r.op)
		fresh = anyFresh(r.d, plan, func(i int) (*core.Kernel, error) {
			v, err := r.variant(plan[i].class)
			if err != nil {
				return nil, err
			}
			return v.kernel, nil
		}) || fresh
	}
	if fresh {
		return r.quick
	}
	return &r.tune
}

// variant returns the variant to run dispatches of class c with.
func (r *reducer) variant(c reduceClass) (*variant, error) {
	switch {
	case c == reduceGeneralClass:
		return reduceGeneral, nil
	case c == reduceSmallClass:
		return reduceSmall, nil
	case r.only != nil:
		return r.only, nil
	}
	return r.families[c].pick(r.d)
}

// run reduces data, of the given shape, into out.
func (r *reducer) run(data, out *device.Tensor, shape tensor.Shape, reduced []bool) error {
	if out.Bytes() == 0 {
		return nil
	}
	// The output has elements, so any zero-size dimension is a reduced
	// one: every output element folds nothing.
	if data.Bytes() == 0 {
		return r.fill(out)
	}
	if r.general {
		return r.runGeneral(data, out, shape, reduced)
	}
	var buf [reduceRank]reducePass
	ps := r.passes(buf[:0], shape, reduced)
	if len(ps) == 1 && ps[0].r == 1 {
		return r.identity(data, out, ps[0])
	}
	return r.runPasses(r.tuning(ps), ps, data, out)
}

// passes appends to dst the passes that reduce shape over reduced.
func (r *reducer) passes(dst []reducePass, shape tensor.Shape, reduced []bool) []reducePass {
	var dimBuf [reduceRank]reduceDim
	var passBuf [reduceRank]reducePass
	return r.tune.regroup(dst, reducePasses(passBuf[:0], reduceCollapse(dimBuf[:0], shape, reduced)))
}

// runPasses records passes ps, planned by tu, from data into out.
func (r *reducer) runPasses(tu *reduceTune, ps []reducePass, data, out *device.Tensor) error {
	// Each pass but the last writes a temporary tensor that the next one
	// reads; Free waits for the work recorded on a tensor.
	release := func(t *device.Tensor) {
		if t != data && t != out {
			t.Free()
		}
	}
	src := data
	for i, p := range ps {
		dst := out
		if i < len(ps)-1 {
			t, err := bridge.Empty(r.d, tensor.Bool, tensor.Shape{int(p.outBytes())})
			if err != nil {
				release(src)
				return err
			}
			dst = t
		}
		err := r.pass(tu, p, src, dst)
		if err == nil && p.tail > 0 {
			err = bridge.Device(r.d).CopyRange(bridge.Tensor(dst), p.b*p.c, bridge.Tensor(src), p.b*p.r*p.c, p.tail)
		}
		release(src)
		if err != nil {
			release(dst)
			return err
		}
		src = dst
	}
	return nil
}

// identity writes data to out with each byte made 0 or 1: pass p of a
// reduction over size-1 axes only, which folds nothing. Where the tuning
// says so (lavapipe's), it copies the bytes (vkCmdCopyBuffer) and runs
// p's kernels in place, on the tiny-row path, which writes only the
// vectors that hold other bytes than 0 and 1: none, for bools that Go or
// numpy made. [24605914 1] over axis 1 took 0.70 of the time with the
// mask kernel's stores, [1 865363 16] over axis 0 0.66 (bench/ab.py,
// wall time, 6 rounds). A variant forced (r.only) runs that way too.
// Otherwise, or where a piece would take another path, it is the mask
// kernel's logical or with false.
func (r *reducer) identity(data, out *device.Tensor, p reducePass) error {
	if !r.tune.copyIdentity && r.only == nil {
		return r.normalize(data, out)
	}
	var buf [5]launch
	lns := r.tune.planPass(buf[:0], p, &r.t, r.op)
	for i := range lns {
		if lns[i].kind == launchKernel && lns[i].spec[spec.RPath] != spec.ReducePathTiny {
			return r.normalize(data, out)
		}
	}
	if err := bridge.Device(r.d).CopyRange(bridge.Tensor(out), 0, bridge.Tensor(data), 0, data.Bytes()); err != nil {
		return err
	}
	for i := range lns {
		// A fill would overwrite the copy: the tiny-row pieces share no
		// output vector, so none is needed.
		if lns[i].kind == launchKernel {
			if err := r.record(&lns[i], out, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// normalize is the mask kernel's logical or of data with false into out.
func (r *reducer) normalize(data, out *device.Tensor) error {
	n := tensor.Shape{data.Len()}
	l := newLayout(n, n, nil)
	m := maskElem.newRun(1)
	m.ts[0], m.ts[2] = data, out
	m.nspec = copy(m.spec[:], []uint32{opOr, keyOf(tensor.Bool), 0})
	return m.record(r.d, &l)
}

// pass records the launches of pass p, planned by tu, from src into dst.
func (r *reducer) pass(tu *reduceTune, p reducePass, src, dst *device.Tensor) error {
	var buf [5]launch
	lns := tu.planPass(buf[:0], p, &r.t, r.op)
	for i := range lns {
		if err := r.record(&lns[i], src, dst); err != nil {
			return err
		}
	}
	return nil
}

// fill sets every byte of t to the identity (vkCmdFillBuffer: on
// lavapipe a memset, cheaper than a dispatch).
func (r *reducer) fill(t *device.Tensor) error {
	return bridge.Device(r.d).Fill(bridge.Tensor(t), r.op.identityWord())
}

// record records launch ln of a reduction from src into dst: a fill of
// dst, or a dispatch of the variant of ln's class.
func (r *reducer) record(ln *launch, src, dst *device.Tensor) error {
	if ln.kind == launchFill {
		return bridge.Device(r.d).Fill(bridge.Tensor(dst), ln.word)
	}
	v, err := r.variant(ln.class)
	if err != nil {
		return err
	}
	var args [2]core.Arg
	for x, t := range [2]*device.Tensor{src, dst} {
		a, skip, err := bridge.Tensor(t).Window(ln.ranges[x][0], ln.ranges[x][1])
		if err != nil {
			return err
		}
		if want := ln.ranges[x][0] % r.t.page % r.t.align; skip != want {
			return fmt.Errorf("internal error: %s: binding %d starts %d bytes early, planned %d", r.op.name, x, skip, want)
		}
		args[x] = a
	}
	args[1].Write = true
	return bridge.Device(r.d).Dispatch(v.kernel, ln.spec[:ln.nspec], args[:], ln.push[:ln.npush], ln.grid)
}
