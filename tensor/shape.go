package tensor

import (
	"fmt"
	"math"
)

// Shape is a list of dimension sizes, outermost first. A nil or empty
// Shape is the shape of a 0-D (scalar) tensor with one element.
type Shape []int

// Rank returns the number of dimensions.
func (s Shape) Rank() int { return len(s) }

// Validate reports a negative dimension or an element count that does not
// fit in an int.
func (s Shape) Validate() error {
	_, err := s.checkedNumElements()
	return err
}

func (s Shape) checkedNumElements() (int, error) {
	// Errors quote a copy, so that s does not escape: callers may check
	// shapes they keep on the stack.
	n := 1
	zero := false
	for i, d := range s {
		if d < 0 {
			return 0, fmt.Errorf("shape %v: dimension %d is negative (%d)", s.Clone(), i, d)
		}
		if d == 0 {
			zero = true
			continue
		}
		if n > math.MaxInt/d {
			return 0, fmt.Errorf("shape %v: element count overflows", s.Clone())
		}
		n *= d
	}
	// A zero dimension makes the product zero, but the rest must still be
	// representable or the shape means nothing, wherever the zero stands
	// (numpy checks the same way).
	if zero {
		return 0, nil
	}
	return n, nil
}

// NumElements returns the product of the dimensions; 1 for a 0-D shape.
// It panics on an invalid shape: call Validate first on untrusted input.
func (s Shape) NumElements() int {
	n, err := s.checkedNumElements()
	if err != nil {
		panic(err)
	}
	return n
}

// Equal reports whether s and t have the same rank and dimensions.
func (s Shape) Equal(t Shape) bool {
	if len(s) != len(t) {
		return false
	}
	for i := range s {
		if s[i] != t[i] {
			return false
		}
	}
	return true
}

// Clone returns a copy of s that never aliases it.
func (s Shape) Clone() Shape {
	return append(Shape{}, s...)
}

// String formats the shape as Go formats an int slice: "[2 3 4]".
func (s Shape) String() string { return fmt.Sprint([]int(s)) }

// Strides returns the row-major strides of s, in elements.
func (s Shape) Strides() []int {
	st := make([]int, len(s))
	acc := 1
	for i := len(s) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= s[i]
	}
	return st
}

// Clash describes why two shapes do not broadcast. Axis counts from the
// end, as numpy aligns shapes: -1 is the innermost dimension. When Rank is
// set, A and B are ranks: the source had more dimensions than the target.
type Clash struct {
	Axis int
	A, B int // the clashing sizes (or ranks), in the order the check was asked
	Rank bool
}

// String describes the clash as errors quote it: "axis -2: 3 vs 4".
func (c *Clash) String() string {
	if c.Rank {
		return fmt.Sprintf("rank %d > %d", c.A, c.B)
	}
	return fmt.Sprintf("axis %d: %d vs %d", c.Axis, c.A, c.B)
}

// Broadcast returns the numpy broadcast of the shapes: aligned at the
// innermost dimension, missing leading dimensions count as 1, and each
// dimension must be equal or 1 in all but one. On failure it returns the
// first clash found, scanning from the innermost axis outwards, between the
// broadcast so far (A) and the next shape (B).
func Broadcast(shapes ...Shape) (Shape, *Clash) {
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	return AppendBroadcast(make(Shape, 0, rank), shapes...)
}

// AppendBroadcast appends the broadcast of the shapes, as Broadcast
// returns it, to dst and returns the extended slice; on a clash it
// returns nil. With room in dst it allocates nothing.
func AppendBroadcast(dst Shape, shapes ...Shape) (Shape, *Clash) {
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	start := len(dst)
	for range rank {
		dst = append(dst, 1)
	}
	out := dst[start:]
	for _, s := range shapes {
		off := rank - len(s)
		for i := len(s) - 1; i >= 0; i-- { // innermost first, as FitsOneWay
			d, o := s[i], out[off+i]
			switch {
			case o == d || d == 1:
			case o == 1:
				out[off+i] = d
			default:
				return nil, &Clash{Axis: off + i - rank, A: o, B: d}
			}
		}
	}
	return dst, nil
}

// FitsOneWay reports whether src broadcasts one way to dst: rank(src) <=
// rank(dst) and each src dimension, aligned at the innermost, equals dst's
// or is 1. It returns nil when it fits, else the innermost clash (A from
// src, B from dst).
func FitsOneWay(src, dst Shape) *Clash {
	off := len(dst) - len(src)
	if off < 0 {
		return &Clash{Axis: -len(src), A: len(src), B: len(dst), Rank: true}
	}
	for i := len(src) - 1; i >= 0; i-- {
		if d, t := src[i], dst[off+i]; d != t && d != 1 {
			return &Clash{Axis: i - len(src), A: d, B: t}
		}
	}
	return nil
}

// BroadcastStrides returns, for a tensor of shape src broadcast to dst,
// the element stride of each dst dimension in src: 0 where src is missing
// the dimension or has size 1 there. src must fit dst one way.
func BroadcastStrides(src, dst Shape) []int {
	st := make([]int, len(dst))
	own := src.Strides()
	off := len(dst) - len(src)
	for i := range src {
		if src[i] != 1 {
			st[off+i] = own[i]
		}
	}
	return st
}
