package ops

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/vkops/vkops/tensor"
)

func TestCollapse(t *testing.T) {
	for _, c := range []struct {
		out     tensor.Shape
		ins     []tensor.Shape
		dims    []int
		strides [][]int
	}{
		// Select-1's examples: cond {4,5} and {3,1,5} against {2,3,4,5}.
		{tensor.Shape{2, 3, 4, 5}, []tensor.Shape{{4, 5}, {2, 3, 4, 5}}, []int{6, 20}, [][]int{{0, 1}, {20, 1}}},
		{tensor.Shape{2, 3, 4, 5}, []tensor.Shape{{3, 1, 5}, {2, 3, 4, 5}}, []int{2, 3, 4, 5}, [][]int{{0, 5, 0, 1}, {60, 20, 5, 1}}},
		// Same shapes collapse to one dimension, scalars to [1].
		{tensor.Shape{7, 8, 9}, []tensor.Shape{{7, 8, 9}, {7, 8, 9}}, []int{504}, [][]int{{1}, {1}}},
		{tensor.Shape{}, []tensor.Shape{{}, {1, 1}}, []int{1}, [][]int{{0}, {0}}},
		{tensor.Shape{1, 1}, []tensor.Shape{{1}}, []int{1}, [][]int{{0}}},
		// A scalar operand takes no part in merging.
		{tensor.Shape{4, 5}, []tensor.Shape{{4, 5}, nil}, []int{20}, [][]int{{1}, {0}}},
		// Rows and columns: [N,1] and [1,C] stay two-dimensional.
		{tensor.Shape{6, 1024}, []tensor.Shape{{6, 1}, {6, 1024}}, []int{6, 1024}, [][]int{{1, 0}, {1024, 1}}},
		{tensor.Shape{6, 1024}, []tensor.Shape{{1, 1024}, {6, 1024}}, []int{6, 1024}, [][]int{{0, 1}, {1024, 1}}},
		// Size-1 dimensions vanish, so their neighbours may merge.
		{tensor.Shape{2, 1, 3, 1, 4}, []tensor.Shape{{2, 1, 3, 1, 4}, {1, 4}}, []int{6, 4}, [][]int{{4, 1}, {0, 1}}},
		// A zero-size dimension merges like any other.
		{tensor.Shape{3, 0, 2}, []tensor.Shape{{3, 0, 2}, {2}}, []int{0, 2}, [][]int{{2, 1}, {0, 1}}},
	} {
		l := newLayout(c.out, c.ins...)
		if !slices.Equal(l.dimList(), c.dims) || !slices.EqualFunc(l.strideList(), c.strides, slices.Equal) {
			t.Errorf("newLayout(%v, %v) = %v %v, want %v %v", c.out, c.ins, l.dimList(), l.strideList(), c.dims, c.strides)
		}
	}
}

// randomLayout returns an output shape of up to rank dimensions and
// operands that broadcast one way to it, dimension by dimension, and
// uncollapsed and collapsed layouts of them.
func randomLayout(rng *rand.Rand, rank, maxDim int) (tensor.Shape, []tensor.Shape) {
	out := make(tensor.Shape, rng.IntN(rank+1))
	for i := range out {
		out[i] = rng.IntN(maxDim) + 1
	}
	ins := make([]tensor.Shape, 3)
	for x := range ins {
		s := out[rng.IntN(len(out)+1):].Clone()
		for i := range s {
			if rng.IntN(3) == 0 {
				s[i] = 1
			}
		}
		ins[x] = s
	}
	return out, ins
}

// TestCollapseKeepsOffsets checks that collapsing maps every output
// element to the same element of every operand, and that each operand's
// strides are those the kernel derives from the dims and its broadcast
// mask: row-major over the dimensions it is not broadcast in.
func TestCollapseKeepsOffsets(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		out, ins := randomLayout(rng, 6, 4)
		var full [][]int
		for _, s := range ins {
			full = append(full, tensor.BroadcastStrides(s, out))
		}
		l := newLayout(out, ins...)
		for x := range ins {
			if got, want := offsets(l.dimList(), l.strideList()[x]), offsets(out, full[x]); !slices.Equal(got, want) {
				t.Fatalf("out %v operand %v: collapsed %v %v gives %v, want %v", out, ins[x], l.dimList(), l.strideList()[x], got, want)
			}
			p := 1
			for d := len(l.dimList()) - 1; d >= 0; d-- {
				if s := l.strideList()[x][d]; s != 0 {
					if s != p {
						t.Fatalf("out %v operand %v: collapsed strides %v over %v are not row-major", out, ins[x], l.strideList()[x], l.dimList())
					}
					p *= l.dimList()[d]
				}
			}
		}
		for i, n := range l.dimList() {
			if n == 1 && len(l.dimList()) > 1 {
				t.Fatalf("out %v: collapsed dims %v keep a 1 at %d", out, l.dimList(), i)
			}
		}
	}
}

// dimList returns l's dimensions as a slice.
func (l layout) dimList() []int { return slices.Clone(l.dims[:min(l.rank, maxRank)]) }

// strideList returns each input's strides as a slice.
func (l layout) strideList() [][]int {
	st := make([][]int, l.inputs)
	for x := range st {
		st[x] = slices.Clone(l.strides[x][:min(l.rank, maxRank)])
	}
	return st
}

// testPiece is a piece as tests see it: its shape, and per operand its first
// element and how far past it the piece reaches.
type testPiece struct {
	dims, first, reach []int
}

// pieceList returns l's pieces for operands of the given sizes.
func (l layout) pieceList(sizes []int, page int) []testPiece {
	var sz [maxOperands]int
	copy(sz[:], sizes)
	st := l.operandStrides()
	var boxes []testPiece
	err := l.pieces(&sz, page, func(p piece) error {
		b := testPiece{dims: append([]int{p.count}, l.dims[p.k+1:l.rank]...)}
		for x := range l.inputs + 1 {
			b.first = append(b.first, p.first[x])
			b.reach = append(b.reach, p.reach(&l, &st[x]))
		}
		boxes = append(boxes, b)
		return nil
	})
	if err != nil {
		panic(err)
	}
	return boxes
}

// offsets lists the element offset of each element of dims, in order.
func offsets(dims, strides []int) []int {
	n := tensor.Shape(dims).NumElements()
	res := make([]int, n)
	idx := make([]int, len(dims))
	for e := range n {
		for d, k := len(dims)-1, e; d >= 0; d-- {
			idx[d] = k % dims[d]
			k /= dims[d]
		}
		for d := range dims {
			res[e] += idx[d] * strides[d]
		}
	}
	return res
}

// TestPieces checks the split over many layouts, element sizes and page
// sizes: the pieces tile the output in order, each operand's elements in
// a piece are where the layout puts them, and each lies in one page.
func TestPieces(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		out, ins := randomLayout(rng, 5, 9)
		l := newLayout(out, ins...)
		sizes := []int{1, 1 << rng.IntN(4), 1 << rng.IntN(4), 1 << rng.IntN(4)}
		page := 8 << rng.IntN(6)
		strides := append(slices.Clone(l.strideList()), tensor.Shape(l.dimList()).Strides())
		want := make([][]int, len(strides))
		for x, st := range strides {
			want[x] = offsets(l.dimList(), st)
		}
		next := 0
		for _, p := range l.pieceList(sizes, page) {
			k := len(l.dimList()) - len(p.dims)
			if !slices.Equal(p.dims[1:], l.dimList()[k+1:]) || p.dims[0] < 1 {
				t.Fatalf("layout %v: piece dims %v are not a box", l.dimList(), p.dims)
			}
			for x, st := range strides {
				got := offsets(p.dims, st[k:])
				lo, hi := p.first[x]*sizes[x], (p.first[x]+p.reach[x]+1)*sizes[x]-1
				if lo/page != hi/page {
					t.Fatalf("layout %v sizes %v page %d: piece %v of operand %d spans bytes %d..%d", l.dimList(), sizes, page, p, x, lo, hi)
				}
				if want := offsets(p.dims, st[k:])[len(got)-1]; p.reach[x] != want {
					t.Fatalf("layout %v: piece %v reaches %d elements into operand %d, want %d", l.dimList(), p, p.reach[x], x, want)
				}
				for i, o := range got {
					if p.first[x]+o != want[x][next+i] {
						t.Fatalf("layout %v: piece %v element %d of operand %d at %d, want %d", l.dimList(), p, i, x, p.first[x]+o, want[x][next+i])
					}
				}
			}
			next += len(offsets(p.dims, p.dims))
		}
		if next != tensor.Shape(l.dimList()).NumElements() {
			t.Fatalf("layout %v: pieces cover %d elements, want %d", l.dimList(), next, tensor.Shape(l.dimList()).NumElements())
		}
	}
}

// TestPiecesFew checks that the split is not wasteful: operands of one
// page need one piece, and a contiguous operand of many pages one piece a
// page.
func TestPiecesFew(t *testing.T) {
	l := newLayout(tensor.Shape{1000, 1024}, tensor.Shape{1000, 1}, tensor.Shape{1000, 1024}, tensor.Shape{1, 1024})
	if n := len(l.pieceList([]int{1, 4, 4, 4}, 1<<30)); n != 1 {
		t.Errorf("one page: %d pieces, want 1", n)
	}
	if n, want := len(l.pieceList([]int{1, 4, 4, 4}, 1<<16)), (1000*1024*4+1<<16-1)>>16; n != want {
		t.Errorf("pages of 64 KiB: %d pieces, want %d", n, want)
	}
}

// TestReciprocal checks the kernel's division, done here as the shader
// does it, against Go's.
func TestReciprocal(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	div := func(n, d uint32) uint32 {
		m, l := reciprocal(d)
		p := uint64(n) * uint64(m)
		hi, lo := uint32(p>>32), uint32(p)
		return (hi<<1 | lo>>31) >> l
	}
	ds := []uint32{1, 2, 3, 5, 6, 7, 10, 641, 1000, 1024, 1<<20 + 1, 1<<30 - 1, 1 << 30, 1<<31 - 1}
	for range 300 {
		ds = append(ds, rng.Uint32N(1<<31-1)+1, rng.Uint32N(1000)+1)
	}
	for _, d := range ds {
		ns := []uint32{0, 1, d - 1, d, d + 1, 1<<31 - 1, 1<<31 - 1 - (1<<31-1)%d, 1<<31 - 2 - (1<<31-1)%d}
		for range 200 {
			ns = append(ns, rng.Uint32N(1<<31))
		}
		for _, n := range ns {
			if n >= 1<<31 {
				continue
			}
			if got := div(n, d); got != n/d {
				t.Fatalf("%d / %d = %d, want %d", n, d, got, n/d)
			}
		}
	}
}
