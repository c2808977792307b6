package ops

import (
	"slices"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/tensor"
)

// A span is what an elementwise kernel is told of one piece of a layout
// (see layout.pieces): each operand's binding and where the piece starts
// in it, which operands are broadcast along which dimension, and the
// piece's shape with the reciprocals that divide by it. Operands are the
// inputs, then the output; a nil tensor (a scalar pushed as a constant)
// is bound as the first tensor operand is, and never read.
type span struct {
	args  []device.Arg
	base  []uint32 // first element of each operand in its binding
	masks uint32   // bit 8*x+d: input x is broadcast in dimension d
	rank  int      // dimensions, innermost first in dims
	dims  [maxRank]uint32
	magic [maxRank]uint32
	shift [2]uint32 // shift of dims[d] in byte d%4 of word d/4
}

// spans binds each piece of l for operands ts (inputs, then the output)
// of the given element sizes, every binding covering at most pageSize
// bytes, and calls f with each.
func (l layout) spans(ts []*device.Tensor, sizes []int, pageSize int, f func(s *span) error) error {
	strides := append(slices.Clone(l.strides), tensor.Shape(l.dims).Strides())
	out := len(ts) - 1
	for _, p := range l.pieces(sizes, pageSize) {
		// A leading dimension of one is a prefix coordinate like the others.
		dims, k := p.dims, len(l.dims)-len(p.dims)
		for len(dims) > 1 && dims[0] == 1 {
			dims, k = dims[1:], k+1
		}
		s := span{args: make([]device.Arg, len(ts)), base: make([]uint32, len(ts)), rank: len(dims)}
		for x, t := range ts {
			if t == nil {
				continue
			}
			for i, st := range strides[x][k:] {
				if st == 0 && x < out {
					s.masks |= 1 << (8*x + s.rank - 1 - i)
				}
			}
			lo := uint64(p.first[x] * sizes[x])
			arg, skip, err := t.Window(lo, lo+uint64((p.span(strides[x])+1)*sizes[x]))
			if err != nil {
				return err
			}
			s.args[x], s.base[x] = arg, uint32(skip/uint64(sizes[x]))
		}
		s.args[out].Write = true
		bound := slices.IndexFunc(ts, func(t *device.Tensor) bool { return t != nil })
		for x, t := range ts {
			if t == nil {
				s.args[x] = s.args[bound]
			}
		}
		for i := range s.rank {
			s.dims[i] = uint32(dims[s.rank-1-i])
			m, sh := reciprocal(s.dims[i])
			s.magic[i] = m
			s.shift[i/4] |= sh << (8 * (i % 4))
		}
		if err := f(&s); err != nil {
			return err
		}
	}
	return nil
}
