package ops

import (
	"fmt"
	"math"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/shaders/spec"
	"github.com/vkops/vkops/tensor"
)

// reduceGeneral is the general reduction path's variant: one kernel
// (shaders/reduce_general.glsl), an invocation per input element, which
// folds its byte into its output element with an atomic. Tests check
// every planned path against it (TestReducePlansAgainstGeneral); the
// general profile runs it everywhere.
var reduceGeneral = &variant{name: "general", kernel: kernel[spec.ReduceGeneralPush]("reduce_general", 2)}

// The classes of the launches that run one kernel whatever the families
// choose: the general path's and the small passes'.
const (
	reduceGeneralClass = reduceClasses + iota
	reduceSmallClass
)

// runGeneral reduces data, of the given shape, into out by the general
// path (planGeneral).
func (r *reducer) runGeneral(data, out *device.Tensor, shape tensor.Shape, reduced []bool) error {
	lns, err := r.tune.planGeneral(nil, &r.t, r.op, shape, reduced, data.Bytes(), out.Bytes())
	if err != nil {
		return err
	}
	for i := range lns {
		if err := r.record(&lns[i], data, out); err != nil {
			return err
		}
	}
	return nil
}

// planGeneral appends to dst the general path's launches for a reduction
// by op of data of the given shape, inBytes bytes, into an output of
// outBytes: a fill of the output with the identity, then one launch for
// each page of data and each page of the output, in which each element
// of the data page whose output lies in the output page folds into it.
// It takes data of fewer than 2^32 elements whose collapsed shape has at
// most spec.GeneralRank dimensions: any the tests make.
func (tu *reduceTune) planGeneral(dst []launch, t *target, op *reduceOp, shape tensor.Shape, reduced []bool, inBytes, outBytes uint64) ([]launch, error) {
	var dimBuf [reduceRank]reduceDim
	dims := reduceCollapse(dimBuf[:0], shape, reduced)
	if inBytes > math.MaxUint32 || len(dims) > spec.GeneralRank {
		return nil, fmt.Errorf("the general reduction path takes fewer than 2^32 elements in %d dimensions, not %v", spec.GeneralRank, shape)
	}
	push := spec.ReduceGeneralPush{Rank: uint32(len(dims))}
	for i, dim := range dims {
		d := len(dims) - 1 - i // innermost first
		push.Dims[d] = uint32(dim.n)
		push.Reduced |= b2u(dim.reduced) << d
	}
	dst = append(dst, launch{kind: launchFill, word: op.identityWord()})
	for lo := uint64(0); lo < inBytes; lo += t.page {
		hi := min(lo+t.page, inBytes)
		for olo := uint64(0); olo < outBytes; olo += t.page {
			ohi := min(olo+t.page, outBytes)
			push.First, push.InSkip = uint32(lo), uint32(lo%t.page%t.align)
			push.OutFirst, push.OutCount, push.OutSkip = uint32(olo), uint32(ohi-olo), uint32(olo%t.page%t.align)
			ln := launch{kind: launchKernel, class: reduceGeneralClass, invocations: uint32(hi - lo)}
			ln.ranges[0], ln.ranges[1] = [2]uint64{lo, hi}, [2]uint64{olo, ohi}
			setPush(&ln, &push)
			tu.finish(&ln, t, op)
			dst = append(dst, ln)
		}
	}
	return dst, nil
}
