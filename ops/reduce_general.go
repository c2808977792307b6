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

// reduceGeneral is the general reduction path's kernel
// (shaders/reduce_general.glsl): an invocation per input element, which
// folds its byte into its output element with an atomic. Tests check
// every planned path against it (TestReducePlansAgainstGeneral); the
// general profile runs it everywhere.
var reduceGeneral = kernel[spec.ReduceGeneralPush]("reduce_general", 2)

// runGeneral reduces data, of the given shape, into out by the general
// path: out filled with the identity, then one dispatch for each page of
// data and each page of out, in which each element of the data page
// whose output lies in the out page folds into it. It takes data of
// fewer than 2^32 elements whose collapsed shape has at most
// spec.GeneralRank dimensions: any the tests make.
func (r *reducer) runGeneral(data, out *device.Tensor, shape tensor.Shape, reduced []bool) error {
	var dimBuf [reduceRank]reduceDim
	dims := reduceCollapse(dimBuf[:0], shape, reduced)
	if data.Bytes() > math.MaxUint32 || len(dims) > spec.GeneralRank {
		return fmt.Errorf("the general reduction path takes fewer than 2^32 elements in %d dimensions, not %v", spec.GeneralRank, shape)
	}
	push := spec.ReduceGeneralPush{Rank: uint32(len(dims))}
	for i, dim := range dims {
		d := len(dims) - 1 - i // innermost first
		push.Dims[d] = uint32(dim.n)
		push.Reduced |= b2u(dim.reduced) << d
	}
	if err := r.fill(out); err != nil {
		return err
	}
	page := bridge.Device(r.d).PageSize()
	for lo := uint64(0); lo < data.Bytes(); lo += page {
		hi := min(lo+page, data.Bytes())
		for olo := uint64(0); olo < out.Bytes(); olo += page {
			ohi := min(olo+page, out.Bytes())
			if err := r.generalPiece(data, out, push, [4]uint64{lo, hi, olo, ohi}); err != nil {
				return err
			}
		}
	}
	return nil
}

// generalPiece records the general path's dispatch over data's elements
// [in[0], in[1]) and out's [in[2], in[3]), each within one page.
func (r *reducer) generalPiece(data, out *device.Tensor, push spec.ReduceGeneralPush, in [4]uint64) error {
	src, inSkip, err := bridge.Tensor(data).Window(in[0], in[1])
	if err != nil {
		return err
	}
	dst, outSkip, err := bridge.Tensor(out).Window(in[2], in[3])
	if err != nil {
		return err
	}
	dst.Write = true
	push.First, push.InSkip = uint32(in[0]), uint32(inSkip)
	push.OutFirst, push.OutCount, push.OutSkip = uint32(in[2]), uint32(in[3]-in[2]), uint32(outSkip)
	pl := reducePlan{n: in[1] - in[0]}
	setPush(&pl, &push)
	return r.record(reduceGeneral, &pl, []core.Arg{src, dst})
}
