package ops

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/vkops/vkops/tensor"
)

func TestReduceCollapse(t *testing.T) {
	d := func(n uint64, r bool) reduceDim { return reduceDim{n, r} }
	for _, c := range []struct {
		shape   tensor.Shape
		reduced []bool
		want    []reduceDim
	}{
		{nil, nil, nil},
		{tensor.Shape{6, 12, 10, 24}, []bool{false, false, true, true}, []reduceDim{d(72, false), d(240, true)}},
		{tensor.Shape{6, 12, 10, 24}, []bool{false, true, false, false}, []reduceDim{d(6, false), d(12, true), d(240, false)}},
		{tensor.Shape{2, 1, 3}, []bool{true, false, true}, []reduceDim{d(6, true)}},
		{tensor.Shape{1, 1}, []bool{true, false}, nil},
		{tensor.Shape{4, 5, 6, 7}, []bool{false, true, false, true}, []reduceDim{d(4, false), d(5, true), d(6, false), d(7, true)}},
	} {
		if got := reduceCollapse(nil, c.shape, c.reduced); !slices.Equal(got, c.want) {
			t.Errorf("reduceCollapse(%v, %v) = %v, want %v", c.shape, c.reduced, got, c.want)
		}
	}
}

// Passes take the largest reduced dimension first, and each pass's
// output is the next one's input.
func TestReducePasses(t *testing.T) {
	d := func(n uint64, r bool) reduceDim { return reduceDim{n, r} }
	p := func(b, r, c uint64) reducePass { return reducePass{b: b, r: r, c: c} }
	for _, c := range []struct {
		dims []reduceDim
		want []reducePass
	}{
		{nil, []reducePass{p(1, 1, 1)}},
		{[]reduceDim{d(7, false)}, []reducePass{p(7, 1, 1)}},
		{[]reduceDim{d(72, false), d(240, true)}, []reducePass{p(72, 240, 1)}},
		{[]reduceDim{d(240, true), d(72, false)}, []reducePass{p(1, 240, 72)}},
		{[]reduceDim{d(6, false), d(12, true), d(240, false)}, []reducePass{p(6, 12, 240)}},
		// [64 64 64 64] over axes 1 and 3: the tie goes to the inner axis.
		{[]reduceDim{d(64, false), d(64, true), d(64, false), d(64, true)}, []reducePass{p(262144, 64, 1), p(64, 64, 64)}},
		// A short inner axis waits for the long middle one.
		{[]reduceDim{d(10, false), d(1000, true), d(10, false), d(2, true)}, []reducePass{p(10, 1000, 20), p(100, 2, 1)}},
		{[]reduceDim{d(3, true), d(5, false), d(4, true)}, []reducePass{p(15, 4, 1), p(1, 3, 5)}},
	} {
		if got := reducePasses(nil, slices.Clone(c.dims)); !slices.Equal(got, c.want) {
			t.Errorf("reducePasses(%v) = %v, want %v", c.dims, got, c.want)
		}
	}
}

// Pieces must cover every element of [B, R, C] exactly once, with the
// input and output bytes of each inside one page, and several batches
// only whole.
func TestReducePieces(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 1))
	check := func(ps reducePass, page uint64) {
		t.Helper()
		name := fmt.Sprintf("pass %v page %d", ps, page)
		seen := make([]uint8, ps.b*ps.r*ps.c)
		for _, p := range ps.pieces(nil, page) {
			if p.nb == 0 || p.r0 >= p.r1 || p.c0 >= p.c1 || p.b0+p.nb > ps.b || p.r1 > ps.r || p.c1 > ps.c {
				t.Fatalf("%s: empty or outside piece %+v", name, p)
			}
			if p.nb > 1 && (p.r0 != 0 || p.r1 != ps.r || p.c0 != 0 || p.c1 != ps.c) {
				t.Fatalf("%s: piece %+v has several batches but not whole", name, p)
			}
			inLo, inHi := ps.inSpan(p)
			outLo, outHi := ps.outSpan(p)
			if inLo/page != (inHi-1)/page || outLo/page != (outHi-1)/page {
				t.Fatalf("%s: piece %+v reads [%d, %d) and writes [%d, %d): more than a page", name, p, inLo, inHi, outLo, outHi)
			}
			for b := p.b0; b < p.b0+p.nb; b++ {
				for r := p.r0; r < p.r1; r++ {
					for c := p.c0; c < p.c1; c++ {
						seen[(b*ps.r+r)*ps.c+c]++
					}
				}
			}
		}
		for i, n := range seen {
			if n != 1 {
				t.Fatalf("%s: element %d covered %d times", name, i, n)
			}
		}
	}
	for _, page := range []uint64{16, 64, 4096} {
		for range 300 {
			ps := reducePass{b: uint64(1 + rng.IntN(20)), r: uint64(1 + rng.IntN(40)), c: uint64(1 + rng.IntN(90))}
			check(ps, page)
		}
		check(reducePass{b: 1, r: 1000, c: 1}, page)
		check(reducePass{b: 3, r: 1, c: 1000}, page)
	}
}

// split never gives a part shorter than minPart unless the length is,
// covers the length exactly, and aligns the part length.
func TestReduceSplit(t *testing.T) {
	tu := reduceTune{target: 4096}
	for _, c := range []struct {
		units, length, minPart, align uint64
		parts, partLen                uint64
	}{
		{1024, 16384, 16 << 10, 16, 1, 16384},
		{1, 1 << 27, 16 << 10, 16, 4096, 1 << 15},
		{1, 100, 16, 16, 7, 16},
		{1, 100, 16, 1, 7, 15},
		{5000, 1 << 20, 16, 16, 1, 1 << 20},
		{1, 3, 16 << 10, 16, 1, 16},
		{1024, 4096, 16, 1, 4, 1024},
	} {
		parts, partLen := tu.split(c.units, c.length, c.minPart, c.align)
		if parts != c.parts || partLen != c.partLen {
			t.Errorf("split(%d, %d, %d, %d) = %d, %d; want %d, %d", c.units, c.length, c.minPart, c.align, parts, partLen, c.parts, c.partLen)
		}
		if (parts-1)*partLen >= c.length || parts*partLen < c.length {
			t.Errorf("split(%d, %d, ...): %d parts of %d do not cover the length exactly", c.units, c.length, parts, partLen)
		}
	}
}
