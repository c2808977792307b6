package ops

import (
	"fmt"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/tensor"
)

// ReduceOption configures ReduceLogicalOr and ReduceLogicalAnd.
type ReduceOption func(*reduceOptions)

type reduceOptions struct {
	keepDims bool
}

// KeepDims keeps each reduced dimension as a dimension of size 1 when
// keep is true. By default reduced dimensions are removed.
func KeepDims(keep bool) ReduceOption {
	return func(o *reduceOptions) { o.keepDims = keep }
}

// The kernels of both reductions; the spec constant AND picks the fold.
var (
	reduceInnerKernel = kernel("reduce_inner", 2, 13)
	reduceOuterKernel = kernel("reduce_outer", 2, 16)
	reduceFillKernel  = kernel("reduce_fill", 1, 3)
)

// ReduceLogicalOr returns the logical or of data's elements along axes
// in a new tensor: OpenVINO ReduceLogicalOr-1 as the spec README decides
// it, with the same rules and error messages as cpuref.ReduceLogicalOr.
//
// data must be bool (one byte per element, nonzero is true), of any rank.
// Each axis must lie in [-r, r-1] for rank r, and no axis may repeat once
// normalised. Empty axes is the identity. Reduced dimensions are removed
// unless KeepDims(true) is given. A reduction over no elements gives
// false. The output's bytes are 0 or 1; data is never modified.
//
// Every rule is checked before anything is allocated or dispatched; a
// rejected input gives an error matching ErrInvalid, such as
//
//	reduce_logical_or: axis 5 is out of range for rank 3 (want -3..2)
//
// Other errors come from the device, and leave nothing allocated.
func ReduceLogicalOr(data *device.Tensor, axes []int, opts ...ReduceOption) (*device.Tensor, error) {
	return reduceLogical("reduce_logical_or", false, data, axes, opts)
}

// ReduceLogicalAnd is ReduceLogicalOr with logical and: the same rules,
// except that a reduction over no elements gives true.
func ReduceLogicalAnd(data *device.Tensor, axes []int, opts ...ReduceOption) (*device.Tensor, error) {
	return reduceLogical("reduce_logical_and", true, data, axes, opts)
}

func reduceLogical(op string, and bool, data *device.Tensor, axes []int, opts []ReduceOption) (*device.Tensor, error) {
	var o reduceOptions
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	if err := checkReduceData(op, data); err != nil {
		return nil, err
	}
	shape := data.Shape()
	reduced, err := reducedAxes(op, shape.Rank(), axes)
	if err != nil {
		return nil, err
	}
	outShape, err := reduceOutputShape(op, shape, reduced, o.keepDims)
	if err != nil {
		return nil, err
	}
	d := data.Device()
	out, err := d.Empty(tensor.Bool, outShape)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	r := reducer{d: d, and: and, tune: reduceTuning}
	if err := r.run(data, out, shape, reduced); err != nil {
		out.Free()
		return nil, fmt.Errorf("%s: %w", op, err)
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
	and  bool
	tune reduceTune
}

// identity is the fold's value over no elements, in each byte of a word.
func (r *reducer) identity() uint32 {
	if r.and {
		return 0x01010101
	}
	return 0
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
	ps := reducePasses(reduceCollapse(shape, reduced))
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
			t, err := r.d.Empty(tensor.Bool, tensor.Shape{int(p.b * p.c)})
			if err != nil {
				release(src)
				return err
			}
			dst = t
		}
		err := r.pass(p, src, dst)
		release(src)
		if err != nil {
			release(dst)
			return err
		}
		src = dst
	}
	return nil
}

// reduceJob is one planned dispatch.
type reduceJob struct {
	k    *device.Kernel
	spec []uint32
	args []device.Arg
	push words
	n    uint64
}

// pass records the dispatches of pass p from src into dst. When output
// words are shared between invocations, dst is first filled with the
// identity for them to combine into.
func (r *reducer) pass(p reducePass, src, dst *device.Tensor) error {
	pieces := p.pieces(r.d.PageSize())
	jobs := make([]reduceJob, 0, len(pieces))
	shared := len(pieces) > 1
	for _, pp := range pieces {
		in, inSkip, err := src.Window(p.inSpan(pp))
		if err != nil {
			return err
		}
		out, outSkip, err := dst.Window(p.outSpan(pp))
		if err != nil {
			return err
		}
		out.Write = true
		j := reduceJob{args: []device.Arg{in, out}}
		var sh bool
		if p.inner() {
			j.k, j.spec = reduceInnerKernel, []uint32{uint32(r.tune.groupSize), reduceFlag(r.and)}
			j.push, j.n, sh = r.tune.innerPush(p, pp, inSkip, outSkip)
		} else {
			vec := p.vecOK(pp, inSkip, outSkip)
			j.k, j.spec = reduceOuterKernel, []uint32{uint32(r.tune.groupSize), reduceFlag(r.and), reduceFlag(vec)}
			j.push, j.n, sh = r.tune.outerPush(p, pp, inSkip, outSkip, vec)
		}
		shared = shared || sh
		jobs = append(jobs, j)
	}
	if shared {
		if err := r.fill(dst); err != nil {
			return err
		}
	}
	for _, j := range jobs {
		if err := r.dispatch(j); err != nil {
			return err
		}
	}
	return nil
}

// fill sets every byte of t to the identity, page by page.
func (r *reducer) fill(t *device.Tensor) error {
	page := r.d.PageSize()
	for lo := uint64(0); lo < t.Bytes(); lo += page {
		a, _, err := t.Window(lo, min(lo+page, t.Bytes()))
		if err != nil {
			return err
		}
		a.Write = true
		err = r.dispatch(reduceJob{
			k:    reduceFillKernel,
			spec: []uint32{uint32(r.tune.groupSize)},
			args: []device.Arg{a},
			push: words{}.u32(0, 0, r.identity()),
			n:    a.Size / 16,
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// dispatch records j over enough workgroups for its invocations, which
// the first two push constants count and lay out.
func (r *reducer) dispatch(j reduceJob) error {
	if !fitsU32(j.n) {
		return fmt.Errorf("internal error: %d invocations in one dispatch of %s", j.n, j.k.Name)
	}
	grid, err := r.d.Grid(reduceCeil(j.n, r.tune.groupSize))
	if err != nil {
		return err
	}
	push := append(words{}.u32(uint32(j.n), grid[0]), j.push[8:]...)
	return r.d.Dispatch(j.k, j.spec, j.args, push, grid)
}
