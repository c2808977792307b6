package ops

import (
	"fmt"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/core"
	"github.com/vkops/vkops/shaders/spec"
	"github.com/vkops/vkops/tensor"
)

// The expand kernels (shaders/expand*.comp) repeat each element of a
// source R times in a row: bindings source and output, 8 words of push
// constants. texel64 reads through a texel buffer and stores 32 bytes at
// a time where the device allows, as select's variant of that name.
var (
	expandPortable = kernel[spec.ExpandPush]("expand", 2)
	expandTexel64  = func() *core.Kernel {
		k := kernel[spec.ExpandPush]("expand_texel64", 2)
		k.Kinds = []core.BindingKind{core.TexelRGBA32UI, core.Storage}
		return k
	}()
)

// expandGroup is the expand kernels' workgroup size.
const expandGroup = 256

// expandBlockBytes is the bytes an expand invocation stores: rows of
// that many bytes or more end at most once in a block, which the kernel
// then blends from the two elements it loads first (LONG).
const expandBlockBytes = 64

// rowsOf returns how many times each element of an operand of shape src
// repeats in a row when broadcast to out: the product of out's innermost
// dimensions where src has size 1, if src equals out in every other
// dimension (counted from the right, missing ones being 1).
func rowsOf(src, out tensor.Shape) (r int, ok bool) {
	if len(src) > len(out) {
		return 0, false
	}
	pad := len(out) - len(src)
	dim := func(i int) int {
		if i < pad {
			return 1
		}
		return src[i-pad]
	}
	i, r := len(out), 1
	for ; i > 0 && dim(i-1) == 1; i-- {
		r *= out[i-1]
	}
	for j := range i {
		if dim(j) != out[j] {
			return 0, false
		}
	}
	return r, true
}

// expandKernel returns the expand kernel to run on d: texel64 where d
// has what it needs, as select's variants of that name run fastest on
// lavapipe and on the H100 measured, else the portable one.
func expandKernel(d *device.Device) *core.Kernel {
	if hasTexels(d) && d.Info().Features.ShaderInt64 {
		return expandTexel64
	}
	return expandPortable
}

// expandWins reports whether rows of r elements of w bytes expand
// faster than the select kernel broadcasts them. On lavapipe
// (16M-element outputs, GPU time; BENCHMARKS.md at a602088, "Rows
// repeated") the select kernel took 2 to 14 times as long as expand on
// 1-byte rows of 16 to 2000 and on rows of 17 to 300 elements of 2, 4
// and 8 bytes while it went element by element where rows end inside
// blocks, and still 1.1 to 4.8 times once it read those blocks by
// vectors (modeSeams). Where its rows are whole 16-element chunks (no
// row ends inside a block), or longer than a KiB, it was as fast or
// faster; under 16 elements its blocks of whole rows are.
func expandWins(r, w int) bool {
	return r >= 16 && (w == 1 || r%16 != 0 && r*w <= 1024)
}

// expand records res = src with each element repeated r times in a
// row. The rows must hold a 16-byte vector at least, the source lie in
// one page, and the output's elements be indexable by the kernel
// (expandable).
func expand(d *device.Device, k *core.Kernel, res, src *device.Tensor, r int) error {
	w := res.DType().Size()
	in, skip, err := bridge.Tensor(src).Window(0, src.Bytes())
	if err != nil {
		return err
	}
	m, sh := reciprocal(uint32(r))
	page := bridge.Device(d).PageSize()
	for lo := uint64(0); lo < res.Bytes(); lo += page {
		out, oskip, err := bridge.Tensor(res).Window(lo, min(lo+page, res.Bytes()))
		if err != nil {
			return err
		}
		if oskip != 0 {
			return fmt.Errorf("internal error: expand: page at byte %d bound %d bytes early", lo, oskip)
		}
		out.Write = true
		vecs := (min(page, res.Bytes()-lo) + 15) / 16
		grid, err := bridge.Device(d).Grid((vecs + 4*expandGroup - 1) / (4 * expandGroup))
		if err != nil {
			return err
		}
		push := spec.ExpandPush{Vecs: uint32(vecs), GroupsX: grid[0], First: uint32(lo / uint64(w)), R: uint32(r),
			Magic: m, Shift: sh, Base: uint32(skip / uint64(w)), Last: uint32(src.Len() - 1)}
		consts, args := [3]uint32{expandGroup, uint32(w), b2u(r*w >= expandBlockBytes)}, [2]core.Arg{in, out}
		if err := bridge.Device(d).Dispatch(k, consts[:], args[:], pushBytes(&push), grid); err != nil {
			return err
		}
	}
	return nil
}
