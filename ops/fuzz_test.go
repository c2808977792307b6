package ops

import (
	"bytes"
	"errors"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/shaders/spec"
	"github.com/vkops/vkops/tensor"
)

// Fuzz targets for the shape planners (issue #6), which run on the host
// before anything is dispatched: the broadcast layout and its split into
// pieces (broadcast.go, for Select and Where), the reduction's axes,
// collapse, passes and pieces (reduce_plan.go), and the kernels' division
// by reciprocals. Each must never panic, keep its invariants, and, where
// the tensors are small enough to compute on the host, give cpuref's
// result when its plan is carried out element by element. The seed
// corpora are under testdata/fuzz/<target>; make fuzz runs every target.

// fzBytes hands out a fuzz input a byte at a time, zeros once it ends.
type fzBytes []byte

func (b *fzBytes) next() int {
	if len(*b) == 0 {
		return 0
	}
	v := (*b)[0]
	*b = (*b)[1:]
	return int(v)
}

// fzDim maps a byte to a dimension: mostly small sizes that broadcast and
// split in interesting ways, zero now and then, and from 224 up powers of
// two up to 2^39, which only the arithmetic checks can afford.
func fzDim(b int) int {
	if b >= 224 {
		return 1 << (8 + b - 224)
	}
	return []int{0, 1, 1, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 64, 1000}[b%16]
}

// fzShape reads a shape: a rank byte (0..8, and bit 7 marks a scalar
// operand, returned as nil) then one byte per dimension.
func fzShape(b *fzBytes) (tensor.Shape, bool) {
	r := b.next()
	if r&0x80 != 0 {
		return nil, true
	}
	s := make(tensor.Shape, r%9)
	for i := range s {
		s[i] = fzDim(b.next())
	}
	return s, false
}

// fzProduct returns the product of dims, and false when it overflows.
func fzProduct(dims []int) (int, bool) {
	n := 1
	for _, d := range dims {
		hi, lo := bits.Mul64(uint64(n), uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		n = int(lo)
	}
	return n, true
}

// fzDot is the offset of a multi-index under strides.
func fzDot(idx, strides []int) int {
	s := 0
	for i, x := range idx {
		s += x * strides[i]
	}
	return s
}

// fzNext advances a row-major multi-index over dims.
func fzNext(idx, dims []int) {
	for i := len(idx) - 1; i >= 0; i-- {
		if idx[i]++; idx[i] < dims[i] {
			return
		}
		idx[i] = 0
	}
}

// fzIndex returns the multi-index of row-major offset e over dims.
func fzIndex(e int, dims []int) []int {
	idx := make([]int, len(dims))
	for i := len(dims) - 1; i >= 0; i-- {
		if dims[i] > 0 {
			idx[i] = e % dims[i]
			e /= dims[i]
		}
	}
	return idx
}

// fzRandom returns a host tensor of random bytes (bools 0 or 1).
func fzRandom(rng *rand.Rand, dt tensor.DType, shape tensor.Shape) *tensor.Host {
	h, err := tensor.New(dt, shape)
	if err != nil {
		panic(err)
	}
	for i := range h.Data {
		h.Data[i] = byte(rng.Uint32())
		if dt == tensor.Bool {
			h.Data[i] &= 1
		}
	}
	return h
}

// FuzzBroadcastPlan draws Select's and Where's operand shapes and modes,
// an element size and a page size, and checks the plan the ops would
// make: the collapsed layout maps every output element to the same
// element of every operand as the full broadcast does, with row-major
// strides; its pieces tile the output exactly once, in order, each a box
// whose bytes in every operand lie in one page; and carrying the pieces
// out on the host gives cpuref's output.
func FuzzBroadcastPlan(f *testing.F) {
	f.Add(uint8(0), []byte{2, 4, 5, 4, 2, 3, 4, 5, 2, 4, 5}, uint8(2), uint8(9), uint64(1))
	f.Add(uint8(0), []byte{3, 8, 1, 5, 4, 8, 1, 4, 5, 2, 1, 5}, uint8(3), uint8(3), uint64(2))
	f.Add(uint8(1), []byte{2, 13, 14, 2, 13, 14, 2, 13, 14}, uint8(0), uint8(4), uint64(3))
	f.Add(uint8(2), []byte{1, 1, 2, 5, 9, 1, 9}, uint8(1), uint8(2), uint64(4))
	f.Add(uint8(3), []byte{2, 7, 1, 0x80, 1, 6}, uint8(3), uint8(1), uint64(5))
	f.Add(uint8(3), []byte{0, 0x80, 0x80}, uint8(0), uint8(0), uint64(6))
	f.Add(uint8(0), []byte{0, 2, 230, 1, 2, 1, 230}, uint8(2), uint8(27), uint64(7))
	f.Add(uint8(0), []byte{8, 4, 1, 4, 1, 4, 1, 4, 1, 8, 1, 4, 1, 4, 1, 4, 1, 4, 8, 4, 1, 4, 1, 4, 1, 4, 1}, uint8(0), uint8(5), uint64(8))
	f.Add(uint8(0), []byte{1, 0, 2, 0, 250, 2, 250, 0}, uint8(0), uint8(10), uint64(9))
	f.Fuzz(func(t *testing.T, mode uint8, shapes []byte, elem uint8, pageLog uint8, seed uint64) {
		b := fzBytes(shapes)
		cs, _ := fzShape(&b)
		as, aScalar := fzShape(&b)
		bs, bScalar := fzShape(&b)
		where := mode%4 == 3
		if !where {
			aScalar, bScalar = false, false
			as, bs = as.Clone(), bs.Clone() // nil is 0-D for Select
		}
		w := 1 << (elem % 4)
		dt := []tensor.DType{tensor.U8, tensor.U16, tensor.U32, tensor.U64}[elem%4]

		// The output shape, as Select and Where decide it.
		var out tensor.Shape
		var clash *tensor.Clash
		modeName := []string{"numpy", "none", "pdpd", "where"}[mode%4]
		switch modeName {
		case "numpy":
			if out, clash = tensor.Broadcast(as, bs); clash == nil {
				clash = tensor.FitsOneWay(cs, out)
			}
		case "none":
			if !cs.Equal(as) || !as.Equal(bs) {
				return
			}
			out = as
		case "pdpd":
			out = as
			if clash = tensor.FitsOneWay(bs, out); clash == nil {
				clash = tensor.FitsOneWay(cs, out)
			}
		case "where":
			shapes := []tensor.Shape{cs}
			for _, s := range []struct {
				s      tensor.Shape
				scalar bool
			}{{as, aScalar}, {bs, bScalar}} {
				if !s.scalar {
					shapes = append(shapes, s.s)
				}
			}
			out, clash = tensor.Broadcast(shapes...)
		}
		if clash != nil {
			return
		}
		if out.Validate() != nil {
			return // blend rejects it before planning
		}
		n := out.NumElements()
		if n > maxOutputBytes/w {
			return
		}
		ins := []tensor.Shape{cs, as, bs}
		scalar := []bool{false, aScalar, bScalar}
		for x, s := range ins {
			if scalar[x] {
				ins[x] = nil
			} else if tensor.FitsOneWay(s, out) != nil {
				t.Fatalf("%s: operand %d shape %v does not fit the output %v", modeName, x, s, out)
			}
		}
		l := newLayout(out, ins...)
		if l.rank > maxRank {
			if l.rank > len(out) {
				t.Fatalf("out %v: collapsed to %d dims", out, l.rank)
			}
			return // rankError: refused before anything is allocated
		}
		dims, lst := l.dimList(), l.strideList()

		// The collapsed layout.
		if p, ok := fzProduct(dims); !ok || p != n {
			t.Fatalf("out %v: collapsed dims %v hold %d elements, want %d", out, dims, p, n)
		}
		if len(dims) == 0 || len(dims) > max(len(out), 1) || len(lst) != 3 {
			t.Fatalf("out %v: collapsed to dims %v with %d operands", out, dims, len(lst))
		}
		for i, d := range dims {
			if d == 1 && len(dims) > 1 {
				t.Fatalf("out %v: collapsed dims %v keep a 1 at %d", out, dims, i)
			}
		}
		for x, st := range lst {
			if len(st) != len(dims) {
				t.Fatalf("out %v: operand %d has %d strides for %d dims", out, x, len(st), len(dims))
			}
			// Row-major over the dimensions the operand is not broadcast in,
			// and reaching its last element exactly.
			p := 1
			for d := len(dims) - 1; d >= 0; d-- {
				if s := st[d]; s != 0 {
					if s != p {
						t.Fatalf("out %v operand %d %v: strides %v over %v are not row-major", out, x, ins[x], st, dims)
					}
					p *= dims[d]
				}
			}
			if n > 0 && ins[x] != nil && p != ins[x].NumElements() {
				t.Fatalf("out %v operand %d %v: strides %v over %v reach %d elements, want %d", out, x, ins[x], st, dims, p, ins[x].NumElements())
			}
		}
		if n == 0 {
			return // nothing is dispatched
		}
		if n <= 1<<12 {
			// Every element maps where the uncollapsed broadcast maps it.
			for x, s := range ins {
				full := tensor.BroadcastStrides(s, out)
				for e := range n {
					if got, want := fzDot(fzIndex(e, dims), lst[x]), fzDot(fzIndex(e, out), full); got != want {
						t.Fatalf("out %v operand %d %v: element %d at %d collapsed, %d uncollapsed", out, x, s, e, got, want)
					}
				}
			}
		}

		// The pieces, on pages of 8 bytes to 1 GiB.
		page := 8 << (pageLog % 28)
		sizes := []int{1, w, w, w}
		biggest := 0
		for x, s := range ins {
			if s != nil {
				biggest = max(biggest, s.NumElements()*sizes[x])
			}
		}
		biggest = max(biggest, n*w)
		if n > 1<<16 && page < biggest {
			return // too many pieces to walk in a fuzz iteration
		}
		strides := append(slices.Clone(lst), tensor.Shape(dims).Strides())
		pieces := l.pieceList(sizes, page)
		if page >= biggest && len(pieces) != 1 {
			t.Fatalf("out %v: every operand fits one page of %d bytes, yet %d pieces", out, page, len(pieces))
		}
		var rng *rand.Rand
		var hosts [3]*tensor.Host
		var scalars [3][]byte
		var res []byte
		if n <= 1<<12 {
			rng = rand.New(rand.NewPCG(seed, 1))
			for x, s := range ins {
				switch {
				case x == 0:
					hosts[x] = fzRandom(rng, tensor.Bool, s)
				case s != nil:
					hosts[x] = fzRandom(rng, dt, s)
				default:
					scalars[x] = fzRandom(rng, dt, tensor.Shape{}).Data
				}
			}
			res = make([]byte, n*w)
		}
		next := 0
		for _, p := range pieces {
			k := len(dims) - len(p.dims)
			if k < 0 || len(p.dims) == 0 || p.dims[0] < 1 || !slices.Equal(p.dims[1:], dims[k+1:]) || len(p.first) != 4 {
				t.Fatalf("layout %v: piece %+v is not a box of it", dims, p)
			}
			if p.dims[0] > dims[k] {
				t.Fatalf("layout %v: piece %+v is longer than its dimension", dims, p)
			}
			count, _ := fzProduct(p.dims)
			// The output is contiguous: the pieces tile it in order.
			if p.first[3] != next {
				t.Fatalf("layout %v page %d: piece %+v starts the output at %d, want %d", dims, page, p, p.first[3], next)
			}
			at := fzIndex(next, dims)
			for x, st := range strides {
				if want := fzDot(at, st); p.first[x] != want {
					t.Fatalf("layout %v: piece %+v starts operand %d at %d, want %d", dims, p, x, p.first[x], want)
				}
				lo, hi := p.first[x]*sizes[x], (p.first[x]+p.reach[x]+1)*sizes[x]-1
				if lo/page != hi/page {
					t.Fatalf("layout %v sizes %v page %d: piece %+v reads operand %d bytes %d..%d, across pages", dims, sizes, page, p, x, lo, hi)
				}
			}
			if res != nil {
				// Carry the piece out on the host, as the kernel does.
				idx := make([]int, len(p.dims))
				for range count {
					var off [4]int
					for x, st := range strides {
						off[x] = p.first[x] + fzDot(idx, st[k:])
					}
					src := 1
					if hosts[0].Data[off[0]] == 0 {
						src = 2
					}
					v := scalars[src]
					if hosts[src] != nil {
						v = hosts[src].Data[off[src]*w : off[src]*w+w]
					}
					copy(res[off[3]*w:], v)
					fzNext(idx, p.dims)
				}
			}
			next += count
		}
		if next != n {
			t.Fatalf("layout %v page %d: pieces cover %d elements, want %d", dims, page, next, n)
		}
		if res == nil {
			return
		}
		var want *tensor.Host
		var err error
		if where {
			var opnd [2]cpuref.Operand
			for i := range opnd {
				if hosts[i+1] != nil {
					opnd[i].T = hosts[i+1]
				} else {
					s := tensor.Scalar{DType: dt}
					for k, c := range scalars[i+1] {
						s.Bits |= uint64(c) << (8 * k)
					}
					opnd[i].S = &s
				}
			}
			want, err = cpuref.Where(hosts[0], opnd[0], opnd[1])
		} else {
			want, err = cpuref.Select(hosts[0], hosts[1], hosts[2], modeName)
		}
		if err != nil {
			t.Fatalf("cpuref rejects what the planner accepted: %v", err)
		}
		if !want.Shape.Equal(out) || !bytes.Equal(want.Data, res) {
			t.Fatalf("%s cond %v then %v else %v page %d: the pieces give % x, cpuref %v % x", modeName, cs, ins[1], ins[2], page, res, want.Shape, want.Data)
		}
	})
}

// FuzzReducePlan draws a shape, axes (in range or not, repeated or not),
// keep_dims and a page size, and checks the reduction's planning: the
// axes are refused exactly when cpuref's rules refuse them, with
// ops.ErrInvalid; the output shape is cpuref's; the collapsed dims
// alternate, hold every element and keep the reduced ones apart; the
// passes chain from data to output, largest reduced dimension first;
// each pass's pieces cover its input once and write every output element,
// each within one page; and carrying the passes and pieces out on the
// host gives cpuref's result.
func FuzzReducePlan(f *testing.F) {
	f.Add([]byte{14, 12, 15, 5}, []byte{2, 3}, true, false, uint8(8), uint64(1))
	f.Add([]byte{4, 5, 6, 7}, []byte{1, 3}, false, true, uint8(0), uint64(2))
	f.Add([]byte{9, 0, 5}, []byte{1}, false, false, uint8(3), uint64(3))
	f.Add([]byte{}, []byte{}, true, true, uint8(1), uint64(4))
	f.Add([]byte{7, 7}, []byte{0xff, 1}, false, false, uint8(2), uint64(5))
	f.Add([]byte{15, 15, 15}, []byte{0, 2}, true, false, uint8(4), uint64(6))
	f.Add([]byte{240, 250}, []byte{1}, false, true, uint8(23), uint64(7))
	f.Add([]byte{0, 254, 254}, []byte{0}, true, false, uint8(0), uint64(8))
	f.Add([]byte{3, 1, 14, 1, 9}, []byte{0, 0xfe, 0xfc}, false, false, uint8(5), uint64(9))
	f.Fuzz(func(t *testing.T, dims, axesIn []byte, keepDims, and bool, pageLog uint8, seed uint64) {
		if len(dims) > 8 || len(axesIn) > 9 {
			return
		}
		shape := make(tensor.Shape, len(dims))
		for i, b := range dims {
			shape[i] = fzDim(int(b))
		}
		if shape.Validate() != nil {
			return // no tensor has this shape
		}
		rank := len(shape)
		axes := make([]int, len(axesIn))
		for i, b := range axesIn {
			axes[i] = int(int8(b))
		}
		op := "reduce_logical_or"
		if and {
			op = "reduce_logical_and"
		}

		// The axes, by the rules, independently.
		wantOK, seen := true, map[int]bool{}
		for _, a := range axes {
			d := a
			if d < 0 {
				d += rank
			}
			if d < 0 || d >= rank || seen[d] {
				wantOK = false
			}
			seen[d] = true
		}
		reduced, err := reducedAxes(nil, op, rank, axes)
		if wantOK != (err == nil) || err != nil && !errors.Is(err, ErrInvalid) {
			t.Fatalf("rank %d axes %v: reducedAxes gives %v, want ok=%v", rank, axes, err, wantOK)
		}
		if err != nil {
			return
		}
		if len(reduced) != rank {
			t.Fatalf("rank %d: %d reduced flags", rank, len(reduced))
		}
		for d, r := range reduced {
			if r != seen[d] {
				t.Fatalf("rank %d axes %v: dimension %d reduced %v", rank, axes, d, r)
			}
		}

		// The output shape.
		var kept, dropped tensor.Shape
		for d, n := range shape {
			if reduced[d] {
				kept = append(kept, 1)
			} else {
				kept, dropped = append(kept, n), append(dropped, n)
			}
		}
		outShape, err := reduceOutputShape(nil, op, shape, reduced, keepDims)
		nOut, fits := fzProduct(kept)
		if !fits || nOut > maxOutputBytes {
			if err == nil || !errors.Is(err, ErrInvalid) {
				t.Fatalf("shape %v axes %v: an output of %v elements (fits %v) is accepted: %v", shape, axes, nOut, fits, err)
			}
			return
		}
		want := dropped
		if keepDims {
			want = kept
		}
		if err != nil || !outShape.Equal(want) {
			t.Fatalf("shape %v axes %v keep %v: output %v, %v; want %v", shape, axes, keepDims, outShape, err, want)
		}
		nIn := shape.NumElements()
		if nOut == 0 || nIn == 0 {
			return // no work, or a fill of the identity
		}

		// Collapse.
		cdims := reduceCollapse(nil, shape, reduced)
		total, red := uint64(1), uint64(1)
		for i, d := range cdims {
			if d.n <= 1 || i > 0 && cdims[i-1].reduced == d.reduced {
				t.Fatalf("shape %v axes %v: collapsed %v", shape, axes, cdims)
			}
			total *= d.n
			if d.reduced {
				red *= d.n
			}
		}
		if total != uint64(nIn) || total/red != uint64(nOut) {
			t.Fatalf("shape %v axes %v: collapsed %v holds %d elements, %d reduced; want %d and %d", shape, axes, cdims, total, red, nIn, nIn/nOut)
		}

		// Passes.
		ps := reducePasses(nil, slices.Clone(cdims))
		if len(ps) == 0 {
			t.Fatalf("collapsed %v: no passes", cdims)
		}
		size, rs := uint64(nIn), uint64(1)
		for i, p := range ps {
			if p.b == 0 || p.r == 0 || p.c == 0 || p.b*p.r*p.c != size {
				t.Fatalf("collapsed %v: pass %d %+v does not read the %d bytes before it", cdims, i, p, size)
			}
			if i > 0 && p.r > ps[i-1].r {
				t.Fatalf("collapsed %v: passes %v are not largest first", cdims, ps)
			}
			size, rs = p.b*p.c, rs*p.r
		}
		if size != uint64(nOut) || rs != red {
			t.Fatalf("collapsed %v: passes %v end with %d elements, reduce %d; want %d and %d", cdims, ps, size, rs, nOut, red)
		}

		// Pieces, on pages of 16 bytes to 128 MiB, and the passes carried
		// out on the host through them.
		page := uint64(16) << (pageLog % 24)
		var data []byte
		if nIn <= 1<<14 {
			data = fzRandom(rand.New(rand.NewPCG(seed, 2)), tensor.Bool, shape).Data
		}
		src := data
		for _, p := range ps {
			n := p.b * p.r * p.c
			if n > 1<<16 && page < n {
				return // too many pieces to walk in a fuzz iteration
			}
			pieces := p.pieces(nil, page)
			if page >= n && len(pieces) != 1 {
				t.Fatalf("pass %+v fits one page of %d bytes, yet %d pieces", p, page, len(pieces))
			}
			var seen []uint8
			if n <= 1<<16 {
				seen = make([]uint8, n)
			}
			var dst []byte
			if src != nil {
				dst = make([]byte, p.b*p.c)
				if and {
					for j := range dst {
						dst[j] = 1
					}
				}
			}
			covered := uint64(0)
			for _, pp := range pieces {
				if pp.nb == 0 || pp.r0 >= pp.r1 || pp.c0 >= pp.c1 || pp.b0+pp.nb > p.b || pp.r1 > p.r || pp.c1 > p.c {
					t.Fatalf("pass %+v page %d: empty or outside piece %+v", p, page, pp)
				}
				if pp.nb > 1 && (pp.r0 != 0 || pp.r1 != p.r || pp.c0 != 0 || pp.c1 != p.c) {
					t.Fatalf("pass %+v page %d: piece %+v has several batches but not whole", p, page, pp)
				}
				inLo, inHi := p.inSpan(pp)
				outLo, outHi := p.outSpan(pp)
				if inLo/page != (inHi-1)/page || outLo/page != (outHi-1)/page {
					t.Fatalf("pass %+v piece %+v reads [%d, %d) and writes [%d, %d): more than a page of %d", p, pp, inLo, inHi, outLo, outHi, page)
				}
				covered += pp.nb * (pp.r1 - pp.r0) * (pp.c1 - pp.c0)
				for b := pp.b0; b < pp.b0+pp.nb; b++ {
					for r := pp.r0; r < pp.r1; r++ {
						for c := pp.c0; c < pp.c1; c++ {
							at := (b*p.r+r)*p.c + c
							if seen != nil {
								seen[at]++
							}
							if dst != nil {
								v := src[at] != 0
								o := &dst[b*p.c+c]
								if and && !v {
									*o = 0
								} else if !and && v {
									*o = 1
								}
							}
						}
					}
				}
			}
			checkReduceLaunches(t, p, page)
			if covered != n {
				t.Fatalf("pass %+v page %d: pieces cover %d elements, want %d", p, page, covered, n)
			}
			for j, k := range seen {
				if k != 1 {
					t.Fatalf("pass %+v page %d: element %d covered %d times", p, page, j, k)
				}
			}
			src = dst
		}
		if src == nil {
			return
		}
		ref := cpuref.ReduceLogicalOr
		if and {
			ref = cpuref.ReduceLogicalAnd
		}
		wantH, err := ref(&tensor.Host{DType: tensor.Bool, Shape: shape, Data: data}, axes, keepDims)
		if err != nil {
			t.Fatalf("cpuref rejects what the planner accepted: %v", err)
		}
		if !wantH.Shape.Equal(outShape) || !bytes.Equal(wantH.Data, src) {
			t.Fatalf("%s %v axes %v page %d: the passes give %v, cpuref %v %v", op, shape, axes, page, src, wantH.Shape, wantH.Data)
		}

		// How a pass's rows or columns are split among invocations.
		for _, p := range ps {
			for _, align := range []uint64{1, 16} {
				parts, partLen := reduceTuning.split(p.b*p.c, p.r, reduceTuning.minChunk, align)
				if parts < 1 || partLen%align != 0 || parts*partLen < p.r || (parts-1)*partLen >= p.r {
					t.Fatalf("split(%d, %d, %d, %d) = %d parts of %d", p.b*p.c, p.r, reduceTuning.minChunk, align, parts, partLen)
				}
			}
		}
	})
}

// checkReduceLaunches checks the launches that plan pass p on pages of
// page bytes, with both profiles' tunings (the CPU's with and without
// small passes, and its quick one): each kernel launch binds bytes
// of one page of its input and one of its output, each as many as its
// grid has room for invocations, no invocation runs more loop
// iterations than lavapipe allows (reduceLoopBound), OWNED is set
// where the outer kernel's invocations own their outputs (ownsRight),
// and a fill comes first or not at all.
func checkReduceLaunches(t *testing.T, p reducePass, page uint64) {
	t.Helper()
	tg := target{page: page, align: 16, grid: [3]uint32{65535, 65535, 65535}}
	for _, tu := range []*reduceTune{&reduceTuning, &shippedReduceTuning, &reduceTuningGPU, &reduceQuickTuning} {
		for i, ln := range tu.planPass(nil, p, &tg, reduceAndOp) {
			if ln.kind == launchFill {
				if i != 0 || ln.word != 0x01010101 {
					t.Fatalf("pass %+v page %d: launch %d fills %#x", p, page, i, ln.word)
				}
				continue
			}
			groups := uint64(ln.grid[0]) * uint64(ln.grid[1]) * uint64(ln.grid[2])
			if ln.invocations == 0 || groups*tu.groupSize < uint64(ln.invocations) {
				t.Fatalf("pass %+v page %d: launch %d of %d invocations in a grid of %v", p, page, i, ln.invocations, ln.grid)
			}
			for x, r := range ln.ranges[:2] {
				if r[0] >= r[1] || r[0]/page != (r[1]-1)/page {
					t.Fatalf("pass %+v page %d: launch %d binds bytes %v of operand %d", p, page, i, r, x)
				}
			}
			if n := reduceLoopBound(&ln); n > lavapipeLoopMax {
				t.Fatalf("pass %+v page %d: launch %d (%s) may run %d loop iterations an invocation, lavapipe at most %d",
					p, page, i, reduceLaunchString(&ln), n, lavapipeLoopMax)
			}
			if !ownsRight(&ln) {
				t.Fatalf("pass %+v page %d: launch %d (%s) has OWNED %d", p, page, i, reduceLaunchString(&ln), ln.spec[spec.ROwned])
			}
		}
	}
}

// FuzzReciprocal checks the division the kernels do for every index
// below 2^31 by every dimension from 1 to 2^31-1: n*m >> (31+l), the
// 64-bit product taken as the shader does it, from its high and low
// words.
func FuzzReciprocal(f *testing.F) {
	for _, c := range [][2]uint32{{0, 1}, {1<<31 - 1, 1}, {1<<31 - 1, 3}, {1<<31 - 1, 1<<31 - 1}, {12345, 641}, {1 << 30, 1<<30 + 1}, {1<<31 - 2, 7}} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, n, d uint32) {
		n %= 1 << 31
		d = d%(1<<31-1) + 1
		m, l := reciprocal(d)
		if l > 31 {
			t.Fatalf("reciprocal(%d) = %d, %d: shift too large", d, m, l)
		}
		p := uint64(n) * uint64(m)
		hi, lo := uint32(p>>32), uint32(p)
		if got := (hi<<1 | lo>>31) >> l; got != n/d {
			t.Fatalf("%d / %d = %d by reciprocal (%d, %d), want %d", n, d, got, m, l, n/d)
		}
	})
}
