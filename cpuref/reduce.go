package cpuref

import (
	"fmt"

	"github.com/vkops/vkops/tensor"
)

// ReduceLogicalOr returns the logical or of data's elements along axes:
// OpenVINO ReduceLogicalOr-1 as docs/specs.md#reducelogicalor states it.
//
// data must be bool, of any rank. Each axis must lie in [-r, r-1] for
// rank r, a negative one counting from the end, and no axis may repeat
// once normalised; a 0-D data has no axes at all. Empty axes is the
// identity. With keepDims the reduced dimensions stay as 1, otherwise
// they are removed. A reduction over no elements (a zero-size reduced
// dimension) gives false. The output is bool, each byte 0 or 1.
func ReduceLogicalOr(data *tensor.Host, axes []int, keepDims bool) (*tensor.Host, error) {
	return reduce("reduce_logical_or", data, axes, keepDims, false, func(acc, v bool) bool { return acc || v })
}

// ReduceLogicalAnd is ReduceLogicalOr with logical and: the same rules,
// except that a reduction over no elements gives true.
func ReduceLogicalAnd(data *tensor.Host, axes []int, keepDims bool) (*tensor.Host, error) {
	return reduce("reduce_logical_and", data, axes, keepDims, true, func(acc, v bool) bool { return acc && v })
}

// ReduceLogicalXor is ReduceLogicalOr with logical xor, the parity of
// the true elements: the same rules, and a reduction over no elements
// gives false. It is numpy's logical_xor.reduce over several axes
// (docs/specs.md#reducelogicalxor); OpenVINO has no such op.
func ReduceLogicalXor(data *tensor.Host, axes []int, keepDims bool) (*tensor.Host, error) {
	return reduce("reduce_logical_xor", data, axes, keepDims, false, func(acc, v bool) bool { return acc != v })
}

// reduce folds data along axes with fold, each output element starting
// at the fold's identity.
func reduce(op string, data *tensor.Host, axes []int, keepDims, identity bool, fold func(acc, v bool) bool) (*tensor.Host, error) {
	if err := checkHost(op, "data", data); err != nil {
		return nil, err
	}
	if data.DType != tensor.Bool {
		return nil, fmt.Errorf("%s: data must be bool, got %v", op, data.DType)
	}
	rank := data.Shape.Rank()
	reduced := make([]bool, rank)
	first := make([]int, rank) // the axis value that named each reduced dimension
	for _, a := range axes {
		d := a
		if d < 0 {
			d += rank
		}
		if d < 0 || d >= rank {
			if rank == 0 {
				return nil, fmt.Errorf("%s: axis %d is out of range for rank 0 (a 0-D tensor has no axes)", op, a)
			}
			return nil, fmt.Errorf("%s: axis %d is out of range for rank %d (want %d..%d)", op, a, rank, -rank, rank-1)
		}
		if reduced[d] {
			return nil, fmt.Errorf("%s: axis %d repeats axis %d (after normalising)", op, a, first[d])
		}
		reduced[d], first[d] = true, a
	}

	// kept is the output shape with reduced dimensions kept as 1. It fits
	// data's shape one way, so BroadcastStrides maps each input
	// multi-index to its output element: stride 0 on reduced dimensions.
	kept := data.Shape.Clone()
	dropped := tensor.Shape{}
	for d := range rank {
		if reduced[d] {
			kept[d] = 1
		} else {
			dropped = append(dropped, data.Shape[d])
		}
	}
	res, err := tensor.New(tensor.Bool, kept)
	// Reducing a zero-size dimension makes the output larger than data:
	// [0 n] gives [1 n], which may be too large to hold.
	if err != nil {
		return nil, fmt.Errorf("%s: output: %v", op, err)
	}
	if identity {
		for i := range res.Data {
			res.Data[i] = 1
		}
	}
	toOut := tensor.BroadcastStrides(kept, data.Shape)
	idx := make([]int, rank)
	for n := range data.Len() {
		multiIndex(idx, n, data.Shape)
		o := dot(idx, toOut)
		res.Data[o] = b2byte(fold(res.Data[o] != 0, data.Data[n] != 0))
	}
	if !keepDims {
		// Removing dimensions of size 1 leaves the row-major layout as it is.
		res.Shape = dropped
	}
	return res, nil
}

// b2byte returns a bool as a bool tensor's byte.
func b2byte(b bool) byte {
	if b {
		return 1
	}
	return 0
}
