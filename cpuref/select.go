package cpuref

import (
	"fmt"

	"github.com/vkops/vkops/tensor"
)

// Select returns a tensor whose elements are then's where cond is true and
// els's where it is false: OpenVINO Select-1 as docs/specs.md#select
// states it.
//
// cond must be bool; then and els must share an element type, which is
// the output's. mode is the auto_broadcast attribute:
//
//   - "none": cond, then and els must have identical shapes.
//   - "numpy" (also ""): then and els are broadcast to each other, numpy
//     style, and cond must broadcast one way to that result; the output has
//     the result's shape, never wider.
//   - "pdpd": the output has then's shape; els, then cond, must broadcast
//     one way to it.
func Select(cond, then, els *tensor.Host, mode string) (*tensor.Host, error) {
	const op = "select"
	// The mode is an attribute of the op, so it is checked before the data.
	mode, err := checkMode(op, mode)
	if err != nil {
		return nil, err
	}
	if err := checkHosts(op, []string{"cond", "then", "else"}, cond, then, els); err != nil {
		return nil, err
	}
	if cond.DType != tensor.Bool {
		return nil, fmt.Errorf("%s: cond must be bool, got %v", op, cond.DType)
	}
	if then.DType != els.DType {
		return nil, fmt.Errorf("%s: then is %v but else is %v", op, then.DType, els.DType)
	}

	var out tensor.Shape
	switch mode {
	case "none":
		if !cond.Shape.Equal(then.Shape) || !then.Shape.Equal(els.Shape) {
			return nil, fmt.Errorf("%s: broadcast none needs equal shapes: cond %v then %v else %v",
				op, cond.Shape, then.Shape, els.Shape)
		}
		out = then.Shape
	case "numpy":
		// Step 1: then and else broadcast each other.
		var clash *tensor.Clash
		out, clash = tensor.Broadcast(then.Shape, els.Shape)
		if clash != nil {
			return nil, fmt.Errorf("%s: then shape %v and else shape %v do not broadcast (%v)",
				op, then.Shape, els.Shape, clash)
		}
		// Step 2: cond fits that result one way; it never widens it.
		if err := fitsOneWay(op, "cond", cond.Shape, out); err != nil {
			return nil, err
		}
	case "pdpd":
		out = then.Shape
		if err := fitsOneWay(op, "else", els.Shape, out); err != nil {
			return nil, err
		}
		if err := fitsOneWay(op, "cond", cond.Shape, out); err != nil {
			return nil, err
		}
	}
	return blend(op, out, cond, then, els)
}

// checkMode returns the auto_broadcast mode, "" read as "numpy", or an
// error naming the op when mode is none of "none", "numpy" and "pdpd".
func checkMode(op, mode string) (string, error) {
	switch mode {
	case "none", "numpy", "pdpd":
		return mode, nil
	case "":
		return "numpy", nil
	}
	return "", fmt.Errorf("%s: unknown broadcast %q (want none, numpy or pdpd)", op, mode)
}

// checkHosts is checkHost for each of hs in turn, names[i] naming hs[i].
func checkHosts(op string, names []string, hs ...*tensor.Host) error {
	for i, h := range hs {
		if err := checkHost(op, names[i], h); err != nil {
			return err
		}
	}
	return nil
}

// checkHost reports a nil tensor or one whose Data does not match its
// DType and Shape, naming the op and the operand.
func checkHost(op, name string, h *tensor.Host) error {
	if h == nil {
		return fmt.Errorf("%s: %s is nil", op, name)
	}
	if err := h.Check(); err != nil {
		return fmt.Errorf("%s: %s: %v", op, name, err)
	}
	return nil
}

// fitsOneWay reports, in the ops' error style, whether the operand's shape
// src broadcasts one way to dst.
func fitsOneWay(op, name string, src, dst tensor.Shape) error {
	if clash := tensor.FitsOneWay(src, dst); clash != nil {
		return fmt.Errorf("%s: %s shape %v cannot be broadcast one way to %v (%v)", op, name, src, dst, clash)
	}
	return nil
}

// blend returns a new tensor of shape out whose element at each
// multi-index is a's element there when cond's is nonzero, else b's. Each
// operand's shape must fit out one way; a and b must share an element
// type, and their bytes are copied as they are.
func blend(op string, out tensor.Shape, cond, a, b *tensor.Host) (*tensor.Host, error) {
	// Broadcasting valid shapes can still give a shape too large to hold.
	res, err := tensor.New(a.DType, out)
	if err != nil {
		return nil, fmt.Errorf("%s: output: %v", op, err)
	}
	size := a.DType.Size()
	cStride := tensor.BroadcastStrides(cond.Shape, out)
	aStride := tensor.BroadcastStrides(a.Shape, out)
	bStride := tensor.BroadcastStrides(b.Shape, out)
	idx := make([]int, len(out))
	for n := range res.Len() {
		multiIndex(idx, n, out)
		src, i := b, dot(idx, bStride)
		if cond.Data[dot(idx, cStride)] != 0 {
			src, i = a, dot(idx, aStride)
		}
		copy(res.Data[n*size:(n+1)*size], src.Data[i*size:(i+1)*size])
	}
	return res, nil
}

// multiIndex stores in idx the multi-index of the row-major linear index n
// in a tensor of the given shape. A 0-D shape has the single index n = 0.
func multiIndex(idx []int, n int, shape tensor.Shape) {
	for d := len(shape) - 1; d >= 0; d-- {
		idx[d] = n % shape[d]
		n /= shape[d]
	}
}

// dot returns the linear element index that the multi-index idx has under
// the given strides.
func dot(idx, strides []int) int {
	i := 0
	for d := range idx {
		i += idx[d] * strides[d]
	}
	return i
}
