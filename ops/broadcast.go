package ops

import (
	"math/bits"
	"slices"

	"github.com/vkops/vkops/tensor"
)

// maxRank is the most dimensions an elementwise kernel walks once
// adjacent dimensions have been merged (see newLayout).
const maxRank = 8

// maxOperands is the most operands an elementwise kernel has: four
// inputs (a fused kernel's) and the output.
const maxOperands = 5

// layout is the iteration space of an elementwise op: the output's
// dimensions, outermost first, and for each input the element stride it
// takes along each of them, 0 where it is broadcast. The output itself is
// contiguous. It is a value of fixed size, so that planning an op
// allocates nothing.
type layout struct {
	// rank counts the dimensions; past maxRank only the count is right,
	// and such a layout is refused (rankError).
	rank    int
	inputs  int
	dims    [maxRank]int
	strides [maxOperands - 1][maxRank]int
}

// newLayout lays out inputs of the given shapes, each of which must
// broadcast one way to out (a nil shape, a scalar, is broadcast
// everywhere). It drops dimensions of size 1 and merges each pair of
// adjacent dimensions that every input steps through alike, as if they
// were one (an input contiguous across both, or broadcast in both). Most
// broadcasts become one to three dimensions, and the kernel's index math
// shrinks with them. A 0-D or all-ones shape becomes [1].
func newLayout(out tensor.Shape, ins ...tensor.Shape) layout {
	l := layout{inputs: len(ins)}
	// Innermost first, so that each input's own strides are the running
	// products of its dimensions. The open group of merged dimensions has
	// size g and, per input, the stride of its innermost dimension.
	var own, st, group [maxOperands - 1]int
	for x := range ins {
		own[x] = 1
	}
	g, open := 1, false
	for d := len(out) - 1; d >= 0; d-- {
		n := out[d]
		if n == 1 {
			continue
		}
		merge := open
		for x, s := range ins {
			st[x] = 0
			if i := d - (len(out) - len(s)); i >= 0 && s[i] != 1 {
				st[x] = own[x]
				own[x] *= s[i]
			}
			if merge && st[x] != group[x]*g {
				merge = false
			}
		}
		if merge {
			g *= n
			continue
		}
		if open {
			l.push(g, &group)
		}
		g, group, open = n, st, true
	}
	if open || l.rank == 0 {
		l.push(g, &group)
	}
	if l.rank <= maxRank {
		slices.Reverse(l.dims[:l.rank])
		for x := range l.inputs {
			slices.Reverse(l.strides[x][:l.rank])
		}
	}
	return l
}

// push adds a dimension of size n with the inputs' strides, innermost
// first, counting those past maxRank without keeping them.
func (l *layout) push(n int, st *[maxOperands - 1]int) {
	if l.rank < maxRank {
		l.dims[l.rank] = n
		for x := range l.inputs {
			l.strides[x][l.rank] = st[x]
		}
	}
	l.rank++
}

// operandStrides returns the strides of the inputs and, after them, of
// the contiguous output.
func (l *layout) operandStrides() (st [maxOperands][maxRank]int) {
	copy(st[:], l.strides[:l.inputs])
	p := 1
	for d := l.rank - 1; d >= 0; d-- {
		st[l.inputs][d] = p
		p *= l.dims[d]
	}
	return st
}

// piece is a box of a layout that one dispatch covers: a fixed prefix of
// outer coordinates, count coordinates of dimension k from there, and
// every dimension inside k whole. In every operand the elements it
// touches lie in one page.
type piece struct {
	k, count int
	first    [maxOperands]int // the box's first element in each input, then the output
}

// reach returns how many elements past first the piece reaches in an
// operand with strides st, in layout l.
func (p *piece) reach(l *layout, st *[maxRank]int) int {
	s := (p.count - 1) * st[p.k]
	for m := p.k + 1; m < l.rank; m++ {
		s += (l.dims[m] - 1) * st[m]
	}
	return s
}

// pieces splits the layout into boxes in which every operand's touched
// bytes lie in one page of pageSize bytes, and calls f with each in
// order (by value: a pointer would escape, an allocation per piece). sizes holds the element size of each input, then of the output.
// Strides are nonnegative, so over a box an operand reaches from its
// offset at the box's first element to its offset at the last, and a box
// can be measured in constant time; boxes are made as long as they fit,
// and a slice of a dimension that fits nowhere is split along the next
// one. A single element always fits, as pages hold whole elements.
func (l *layout) pieces(sizes *[maxOperands]int, pageSize int, f func(p piece) error) error {
	w := pieceWalk{l: l, st: l.operandStrides(), sizes: sizes, page: pageSize, f: f}
	return w.walk(0, [maxOperands]int{})
}

type pieceWalk struct {
	l     *layout
	st    [maxOperands][maxRank]int
	sizes *[maxOperands]int
	page  int
	f     func(p piece) error
}

// walk splits dimension k of the slice of the layout that starts at
// first.
func (w *pieceWalk) walk(k int, first [maxOperands]int) error {
	l, ops := w.l, w.l.inputs+1
	// What each operand covers inside one slice of dimension k.
	var inner [maxOperands]int
	for x := range ops {
		for m := k + 1; m < l.rank; m++ {
			inner[x] += (l.dims[m] - 1) * w.st[x][m]
		}
	}
	for i := 0; i < l.dims[k]; {
		p := piece{k: k, count: l.dims[k] - i}
		for x := range ops {
			st := w.st[x][k]
			at := first[x] + i*st
			p.first[x] = at
			size := w.sizes[x]
			pageEnd := (at*size/w.page + 1) * w.page
			room := pageEnd/size - at - inner[x] // slices may start at at .. at+room-1
			switch {
			case room < 1:
				p.count = 0
			case st > 0:
				p.count = min(p.count, (room-1)/st+1)
			}
		}
		if p.count == 0 {
			if err := w.walk(k+1, p.first); err != nil {
				return err
			}
			i++
			continue
		}
		if err := w.f(p); err != nil {
			return err
		}
		i += p.count
	}
	return nil
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
func rankError(op string, l *layout) error {
	return invalidf("%s: the broadcast needs %d dimensions after merging adjacent ones, more than the %d the kernels support",
		op, l.rank, maxRank)
}
