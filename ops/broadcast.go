package ops

import (
	"math/bits"
	"slices"

	"github.com/vkops/vkops/tensor"
)

// maxRank is the most dimensions an elementwise kernel walks once
// adjacent dimensions have been merged (see collapse).
const maxRank = 8

// layout is the iteration space of an elementwise op: the output's
// dimensions, outermost first, and for each input the element stride it
// takes along each of them, 0 where it is broadcast. The output itself is
// contiguous.
type layout struct {
	dims    []int
	strides [][]int
}

// newLayout lays out inputs of the given shapes, each of which must
// broadcast one way to out, and collapses the result.
func newLayout(out tensor.Shape, ins ...tensor.Shape) layout {
	l := layout{dims: out.Clone()}
	for _, s := range ins {
		l.strides = append(l.strides, tensor.BroadcastStrides(s, out))
	}
	return l.collapse()
}

// collapse drops dimensions of size 1 and merges each pair of adjacent
// dimensions that every input steps through alike, as if they were one
// (an input contiguous across both, or broadcast in both). Most broadcasts
// become one to three dimensions, and the kernel's index math shrinks with
// them. A 0-D or all-ones shape becomes [1].
func (l layout) collapse() layout {
	c := layout{strides: make([][]int, len(l.strides))}
	for d, n := range l.dims {
		if n == 1 {
			continue
		}
		last := len(c.dims) - 1
		merge := last >= 0
		for x := range l.strides {
			if merge && c.strides[x][last] != l.strides[x][d]*n {
				merge = false
			}
		}
		if merge {
			c.dims[last] *= n
			for x := range l.strides {
				c.strides[x][last] = l.strides[x][d]
			}
			continue
		}
		c.dims = append(c.dims, n)
		for x := range l.strides {
			c.strides[x] = append(c.strides[x], l.strides[x][d])
		}
	}
	if len(c.dims) == 0 {
		c.dims = []int{1}
		for x := range c.strides {
			c.strides[x] = []int{0}
		}
	}
	return c
}

// piece is a box of a layout that one dispatch covers: a fixed prefix of
// outer coordinates, a range of the next dimension, and every dimension
// inside it whole. In every operand the elements it touches lie in one
// page.
type piece struct {
	dims  []int // the box's shape: the range, then the inner dimensions
	first []int // the box's first element in each input, then the output
}

// span returns how many elements past first the piece reaches in an
// operand with the given strides (those of the piece's dimensions).
func (p piece) span(strides []int) int {
	s := 0
	for i, n := range p.dims {
		s += (n - 1) * strides[len(strides)-len(p.dims)+i]
	}
	return s
}

// pieces splits the layout into boxes in which every operand's touched
// bytes lie in one page of pageSize bytes. sizes holds the element size of
// each input, then of the output. Strides are nonnegative, so over a box
// an operand reaches from its offset at the box's first element to its
// offset at the last, and a box can be measured in constant time; boxes
// are made as long as they fit, and a slice of a dimension that fits
// nowhere is split along the next one. A single element always fits, as
// pages hold whole elements.
func (l layout) pieces(sizes []int, pageSize int) []piece {
	strides := append(slices.Clone(l.strides), tensor.Shape(l.dims).Strides())
	var out []piece
	var walk func(k int, first []int)
	walk = func(k int, first []int) {
		// What each operand covers inside one slice of dimension k.
		inner := make([]int, len(strides))
		for x, st := range strides {
			for m := k + 1; m < len(l.dims); m++ {
				inner[x] += (l.dims[m] - 1) * st[m]
			}
		}
		for i := 0; i < l.dims[k]; {
			at := make([]int, len(strides))
			count := l.dims[k] - i
			for x, st := range strides {
				at[x] = first[x] + i*st[k]
				w := sizes[x]
				pageEnd := (at[x]*w/pageSize + 1) * pageSize
				room := pageEnd/w - at[x] - inner[x] // slices may start at at[x] .. at[x]+room-1
				switch {
				case room < 1:
					count = 0
				case st[k] > 0:
					count = min(count, (room-1)/st[k]+1)
				}
			}
			if count == 0 {
				walk(k+1, at)
				i++
				continue
			}
			out = append(out, piece{dims: append([]int{count}, l.dims[k+1:]...), first: at})
			i += count
		}
	}
	walk(0, make([]int, len(strides)))
	return out
}

// reciprocal returns m and l such that n/d == n*m >> (31+l) for every n
// below 2^31, for 1 <= d < 2^31: l = ceil(log2(d)) and m = ceil(2^(31+l)/d),
// which fits in 32 bits (Granlund and Montgomery, "Division by invariant
// integers using multiplication", 1994, theorem 4.2 with N = 31).
func reciprocal(d uint32) (m uint32, l uint32) {
	l = uint32(bits.Len32(d - 1))
	return uint32((uint64(1)<<(31+l) + uint64(d) - 1) / uint64(d)), l
}

// rankError reports a layout beyond maxRank.
func rankError(op string, l layout) error {
	return invalidf("%s: the broadcast needs %d dimensions after merging adjacent ones, more than the %d the kernels support",
		op, len(l.dims), maxRank)
}
