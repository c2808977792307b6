package ops

import (
	"math"
	"slices"
	"unsafe"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/core"
	"github.com/vkops/vkops/shaders/spec"
	"github.com/vkops/vkops/tensor"
)

// A reduction is planned in three steps, all on the host and all before
// anything is dispatched:
//
//  1. The axes are normalised and the shape collapsed: dimensions of size
//     1 are dropped and neighbours of the same kind merged, leaving
//     alternating kept and reduced dimensions.
//  2. Passes: each pass views its input as [B, R, C] bytes and reduces R,
//     the largest reduced dimension left, into [B, C]; a pass with C = 1
//     reduces contiguous rows (reduce_inner.glsl), any other reduces
//     across rows (reduce_outer.glsl). Taking the largest first makes the
//     first pass, which reads everything, shrink the data the most; the
//     passes after it read a fraction. A single reduced dimension, the
//     usual case, is a single pass; an outer pass over rows that are not
//     whole 16-byte vectors may become two (regroup).
//  3. Pieces: each pass is cut into boxes of [B, R, C] whose input and
//     output bytes each lie in one page, since a binding covers one page.
//     Each piece is one dispatch, planned by innerPlan or outerPlan: its
//     push and spec constants, and its class (rows, split rows, columns),
//     whose family's chosen variant runs it.

// reduceTuning sets how work is spread over invocations on lavapipe.
// Tests change it to reach the split paths with small tensors.
var reduceTuning = reduceTune{
	groupSize: 64,
	// Enough invocations to keep every lavapipe thread and a small GPU
	// busy. lavapipe read long rows cut into chunks of 64 KiB, and columns
	// in blocks walked by 1024 invocations, 10-20% faster than with 4096.
	target: 1024,
	// lavapipe pays about a microsecond per workgroup: below some KiB per
	// invocation the workgroups cost more than the reading. Short rows
	// read 8-17% faster 16 KiB to an invocation than 4 KiB.
	minWork: 16 << 10,
	// Its streaming reductions ran best with 16 KiB and more per
	// invocation, so rows are cut no shorter.
	minChunk: 16 << 10,
	// Eight 16-byte columns side by side per row: lavapipe read 20-25%
	// faster with them than with four, and slower with sixteen, whose
	// accumulators no longer fit in registers.
	vecs: 8,
	// Splitting a dispatch's units makes them share output words: a fill
	// and a barrier first, which cost lavapipe more than one thread
	// reading this much.
	minSplit: 256 << 10,
	// Regrouping rows costs a second pass, a dispatch and a temporary:
	// worth it from a MiB. ([8192,1537] over axis 0 ran 3.5x faster.)
	minRegroup: 1 << 20,
	// Compiling the unrolled reads is most of a reduction's first call:
	// LLVM took 0.16 s for a [32,128] bool over axis 0 with eight columns
	// side by side, 0.03 s with one (lavapipe 22.3.6, empty caches).
	// Their 20-25% saves less than 50 us a call below a MiB.
	minUnroll: 1 << 20,
	// vkCmdCopyBuffer is a memcpy here, about twice as fast as a
	// shader's stores: the bytes of a reduction over size-1 axes are
	// copied, then made 0 or 1 in place where they are not.
	copyIdentity: true,
	// lavapipe compiles a kernel at its first dispatch: a reduction of
	// bool[32 128] over axis 1 took 56-61 ms cold (empty caches) on the
	// reading paths, 30-40 on reduce_small.glsl (fresh processes, in
	// turn). Passes of 4 KiB took the same device time on either
	// ([32 128] over each axis and both, [30 6]: within 5%, 400 runs
	// each in turn), a launch's cost being all there is.
	smallMax: cpuReduceSmallMax,
}

// cpuReduceSmallMax is the CPU profile's reduceTune.smallMax.
const cpuReduceSmallMax = 4 << 10

// reduceQuickTuning is the CPU profile's tuning for a reduction whose
// own plans would dispatch a pipeline new to the device (reducer.tuning):
// every pass that lies in one page runs on reduce_small.glsl, any other
// on the loops, none on the unrolled reads, since lavapipe compiles a
// kernel at its first dispatch. Cold first calls on bool[16M] (fresh
// processes, empty caches, 2026-12-03): reduce-or over axis 0 of
// [4096 16384] 145-212 → 53 ms, over axis 1 90-122 → 41-42, over axis 1
// of [256 256 256] 88-91 → 31, reduce-and over axis 1 of [524288 32]
// 58-73 → 38-40; the runs after them took 1.1-5x as long on these plans
// (axis 0 27-29 ms against 5.5-8), which the next call leaves.
var reduceQuickTuning = func() reduceTune {
	tu := reduceTuning
	tu.smallMax, tu.minUnroll = math.MaxUint64, math.MaxUint64
	return tu
}()

// reduceTuningGPU is reduceTuning for GPUs, which hide memory latency
// with many invocations in flight (an H100 holds 270,000), each reading
// little: lavapipe's tuning read [4096,16384] rows at 34 GB/s there, this
// one at 1.8 TB/s. BenchmarkReduceTuning chose it on an H100, one knob at
// a time from a first guess (groupSize 256, target 2^18, minWork 1 KiB,
// minChunk 512, vecs 2), which the suite's shapes ran 1.31x slower. No
// pass is small (smallMax 0): a GPU's first call has not been measured
// on reduce_small.glsl.
var reduceTuningGPU = reduceTune{
	groupSize:  128,
	target:     1 << 20,
	minWork:    256,
	minChunk:   64,
	vecs:       1,
	minSplit:   64 << 10,
	minRegroup: 1 << 20,
}

// reduceTuningFor returns the tuning of the profile d plans by.
func reduceTuningFor(d *device.Device) reduceTune { return *profileOf(d).reduce }

// reduceTune is how a reduction spreads its work; see reduceTuning.
type reduceTune struct {
	groupSize uint64 // invocations per workgroup
	target    uint64 // invocations worth splitting rows or columns for
	minWork   uint64 // fewest bytes an invocation should read
	minChunk  uint64 // fewest bytes of a row an inner invocation reads
	vecs      uint64 // 16-byte columns an outer invocation reads side by side
	minSplit  uint64 // fewest bytes a dispatch reads for its units to be split
	// minRegroup is the fewest bytes an outer pass over unaligned rows
	// reads for regroup to rewrite it.
	minRegroup uint64
	// minUnroll is the fewest bytes a piece reads for the unrolled paths:
	// vecs columns side by side, and rows of whole vectors read at once
	// (PATH_ROWVECS). Below it, the loops read: 0 unrolls at any size.
	minUnroll uint64
	// copyIdentity copies the bytes of a reduction over size-1 axes
	// before its pass makes them 0 or 1 in place (reducer.identity),
	// rather than have the mask kernel write them.
	copyIdentity bool
	// smallMax is the most bytes a pass may read to run whole in one
	// dispatch of reduce_small.glsl (smallPlan), a kernel quick to
	// compile; 0 runs none there.
	smallMax uint64
}

// The planning functions append to a slice the caller passes, as
// strconv's Append functions do: with room in it, typically a small array
// on the caller's stack, planning an op allocates nothing.

// reducedAxes normalises axes for a tensor of the given rank and appends
// to dst which dimensions are reduced, with the messages of cpuref.
func reducedAxes(dst []bool, op string, rank int, axes []int) ([]bool, error) {
	start := len(dst)
	for range rank {
		dst = append(dst, false)
	}
	reduced := dst[start:]
	if isAllAxes(axes) {
		for i := range reduced {
			reduced[i] = true
		}
		return dst, nil
	}
	for i, a := range axes {
		d := a
		if d < 0 {
			d += rank
		}
		if d < 0 || d >= rank {
			if rank == 0 {
				return nil, invalidf("%s: axis %d is out of range for rank 0 (a 0-D tensor has no axes)", op, a)
			}
			return nil, invalidf("%s: axis %d is out of range for rank %d (want %d..%d)", op, a, rank, -rank, rank-1)
		}
		if reduced[d] {
			// The axis as given that named d first.
			j := slices.IndexFunc(axes[:i], func(b int) bool { return b == d || b+rank == d })
			return nil, invalidf("%s: axis %d repeats axis %d (after normalising)", op, a, axes[j])
		}
		reduced[d] = true
	}
	return dst, nil
}

// reduceOutputShape appends the output shape (reduced dimensions kept as
// 1 or dropped) to dst and checks it as cpuref does.
func reduceOutputShape(dst tensor.Shape, op string, shape tensor.Shape, reduced []bool, keepDims bool) (tensor.Shape, error) {
	start := len(dst)
	for d, n := range shape {
		if reduced[d] {
			n = 1
		}
		dst = append(dst, n)
	}
	kept := dst[start:]
	// Reducing a zero-size dimension makes the output larger than data:
	// [0 n] gives [1 n], which may be too large to hold.
	if _, err := checkOutput(op, tensor.Bool, kept); err != nil {
		return nil, err
	}
	if keepDims {
		return dst, nil
	}
	out := dst[:start]
	for d, n := range shape {
		if !reduced[d] {
			out = append(out, n)
		}
	}
	return out, nil
}

// reduceDim is one dimension of a collapsed shape.
type reduceDim struct {
	n       uint64
	reduced bool
}

// reduceCollapse appends to dst the dimensions of shape without those of
// size 1, which change no result, and with neighbours of the same kind
// merged, which are one dimension in row-major order. No dimension may
// be 0.
func reduceCollapse(dst []reduceDim, shape tensor.Shape, reduced []bool) []reduceDim {
	for d, n := range shape {
		dst = reduceAppendDim(dst, reduceDim{uint64(n), reduced[d]})
	}
	return dst
}

// reduceAppendDim appends x to the collapsed dims, dropping or merging it.
func reduceAppendDim(dims []reduceDim, x reduceDim) []reduceDim {
	switch {
	case x.n == 1:
		return dims
	case len(dims) > 0 && dims[len(dims)-1].reduced == x.reduced:
		dims[len(dims)-1].n *= x.n
		return dims
	}
	return append(dims, x)
}

// reducePass reduces data viewed as [b, r, c] bytes over r. With tail,
// the tail bytes of its input past that view follow its output as they
// are, for the next pass to fold: see regroup.
type reducePass struct{ b, r, c, tail uint64 }

// outBytes returns the bytes of the pass's output, its tail included.
func (ps reducePass) outBytes() uint64 { return ps.b*ps.c + ps.tail }

// reducePasses appends to dst the passes that reduce the collapsed dims,
// largest reduced dimension first, and uses dims as scratch. With nothing
// to reduce it appends one inner pass over rows of one byte, which copies
// data as 0/1 bytes: the identity.
func reducePasses(dst []reducePass, dims []reduceDim) []reducePass {
	ps := dst
	start := len(dst)
	for {
		best := -1
		for i, d := range dims {
			// Ties go to the later dimension: an inner pass streams.
			if d.reduced && (best < 0 || d.n >= dims[best].n) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		p := reducePass{b: 1, r: dims[best].n, c: 1}
		for _, d := range dims[:best] {
			p.b *= d.n
		}
		for _, d := range dims[best+1:] {
			p.c *= d.n
		}
		ps = append(ps, p)
		// Drop the reduced dimension, merging its neighbours, in place:
		// the result is never longer than what it has read.
		rest := dims[:0]
		for i, d := range dims {
			if i != best {
				rest = reduceAppendDim(rest, d)
			}
		}
		dims = rest
	}
	if len(ps) == start {
		n := uint64(1)
		for _, d := range dims {
			n *= d.n
		}
		ps = append(ps, reducePass{b: n, r: 1, c: 1})
	}
	return ps
}

// regroup rewrites each outer pass whose rows are not whole 16-byte
// vectors, [B, R, C] with C not a multiple of 16, as two: [B, R/g, g*C],
// whose rows are, then [B, g, C], where g = 16 / gcd(C, 16). Or and And
// do not care which rows are folded first, and the first pass, which
// reads everything, then takes the outer kernel's vector path, many
// times faster than its path for unaligned words; the second reads g
// output rows. Where g does not divide R, a single batch's last R%g rows
// are the first pass's tail, copied after its output for the second
// pass, [1, g + R%g, C], to fold: [1000, 30889] over axis 0 ran 8x as
// fast so as with the words. (Several batches' tails are not contiguous:
// those passes stay as they are.) Passes reading less than minRegroup
// bytes, or whose R holds fewer than four groups, stay as they are.
//
// It appends the passes to dst, which must not share memory with ps.
func (t reduceTune) regroup(dst, ps []reducePass) []reducePass {
	out := dst
	for _, p := range ps {
		g := 16 / gcd(p.c, 16)
		rem := p.r % g
		if p.inner() || g == 1 || rem != 0 && p.b > 1 || p.r/g < 4 || p.b*p.r*p.c < t.minRegroup {
			out = append(out, p)
			continue
		}
		out = append(out, reducePass{b: p.b, r: p.r / g, c: g * p.c, tail: rem * p.c}, reducePass{b: p.b, r: g + rem, c: p.c})
	}
	return out
}

// reducePiece is the box of a pass's [B, R, C] view that one dispatch
// covers: batches [b0, b0+nb), rows [r0, r1) and columns [c0, c1) of
// each. A piece of several batches covers them whole.
type reducePiece struct {
	b0, nb, r0, r1, c0, c1 uint64
}

// inSpan returns the input bytes [lo, hi) that piece p of pass ps reads.
func (ps reducePass) inSpan(p reducePiece) (lo, hi uint64) {
	return (p.b0*ps.r+p.r0)*ps.c + p.c0, ((p.b0+p.nb-1)*ps.r+p.r1-1)*ps.c + p.c1
}

// outSpan returns the output bytes [lo, hi) that piece p of pass ps writes.
func (ps reducePass) outSpan(p reducePiece) (lo, hi uint64) {
	return p.b0*ps.c + p.c0, (p.b0+p.nb-1)*ps.c + p.c1
}

// pieces cuts pass ps into pieces whose input bytes lie in one page and
// whose output bytes lie in one page, greedily: as many whole batches as
// fit, else as many rows of one batch, else one row's columns page by
// page, and appends them to dst. The pieces cover every element exactly
// once, in order.
func (ps reducePass) pieces(dst []reducePiece, page uint64) []reducePiece {
	end := func(off uint64) uint64 { return (off/page + 1) * page } // the end of off's page
	out := dst
	for b := uint64(0); b < ps.b; b++ {
		in0, out0 := b*ps.r*ps.c, b*ps.c
		if k := min(ps.b-b, (end(in0)-in0)/(ps.r*ps.c), (end(out0)-out0)/ps.c); k > 0 {
			out = append(out, reducePiece{b, k, 0, ps.r, 0, ps.c})
			b += k - 1
			continue
		}
		// Batch b spans pages. Its output spans at most a page per cut.
		for c0 := uint64(0); c0 < ps.c; {
			c1 := min(ps.c, end(out0+c0)-out0)
			for r := uint64(0); r < ps.r; {
				s := (b*ps.r+r)*ps.c + c0
				if room, w := end(s)-s, c1-c0; room >= w {
					k := min(ps.r-r, (room-w)/ps.c+1)
					out = append(out, reducePiece{b, 1, r, r + k, c0, c1})
					r += k
					continue
				}
				// This row's columns cross a page boundary.
				for cc := c0; cc < c1; {
					ce := min(c1, cc+end(s+cc-c0)-(s+cc-c0))
					out = append(out, reducePiece{b, 1, r, r + 1, cc, ce})
					cc = ce
				}
				r++
			}
			c0 = c1
		}
	}
	return out
}

// reduceClamp clamps n to what a 32-bit push constant holds; the kernels
// only see clamped values where the result does not depend on them.
func reduceClamp(n uint64) uint32 { return uint32(min(n, math.MaxUint32)) }

// reduceCeil returns ceil(a / b).
func reduceCeil(a, b uint64) uint64 { return (a + b - 1) / b }

// inner reports whether the pass reduces contiguous rows, of one byte
// when it only normalises bytes to 0/1.
func (ps reducePass) inner() bool { return ps.c == 1 }

// split decides how many invocations share one output unit: chunks of
// each row (inner) or blocks of rows (outer), from the units a dispatch
// covers and the length to split. It returns the count and the length of
// each part, a multiple of align. Units are split only when they are a
// quarter of target or fewer: with more, which would be split two or
// three ways, lavapipe gained less than the fill and barrier that shared
// outputs need cost ([256,256,256] over axis 1 ran in 0.9x the time
// unsplit).
func (t reduceTune) split(units, length, minPart, align uint64) (parts, partLen uint64) {
	parts = 1
	if 4*units <= t.target && length > minPart {
		parts = min(reduceCeil(t.target, units), reduceCeil(length, minPart))
	}
	partLen = reduceCeil(reduceCeil(length, parts), align) * align
	return reduceCeil(length, partLen), partLen
}

// spread shares out the units of a dispatch, each unitWork bytes to read
// along length: several units per invocation when one is less than
// minWork (up to minWork bytes, and no more units than leave target
// invocations), else one, or a part of one (see split) when the dispatch
// reads minSplit bytes or more.
func (t reduceTune) spread(units, unitWork, length, minPart, align uint64) (perInv, parts, partLen uint64) {
	if unitWork < t.minWork || units*unitWork < t.minSplit {
		// No fewer than target invocations while there are units for
		// them: a small dispatch's few invocations would run in one
		// workgroup, on one lavapipe thread, some lanes of it.
		perInv := min(reduceCeil(t.minWork, unitWork), reduceCeil(units, t.target))
		return max(perInv, 1), 1, reduceCeil(length, align) * align
	}
	parts, partLen = t.split(units, length, minPart, align)
	return 1, parts, partLen
}

// reduceMaxRowVecs is the longest row, in vectors, that the shader reads
// as straight-line code (spec.ReducePathRowVecs): one pipeline per length up to it.
// On lavapipe rows of 256 bytes read 2x as fast so as by the loop of
// spec.ReducePathVectors,
// of 512 bytes 1.5x, of 1 KiB 1.2x; of 2 KiB 0.9x.
const reduceMaxRowVecs = 64

// reduceShort is the shader's SHORT: rows shorter than this, and not of
// whole vectors, are read a word at a time.
const reduceShort = 32

// reduceLong is the bytes of the shader's STEP vectors with texel loads:
// rows or chunks of at least this many compile its unrolled loop in.
const reduceLong = 256

// reduceMaxTiny is the longest row, in bytes, that the shader reads
// sixteen rows to an output vector (spec.ReducePathTiny): one pipeline per length up
// to it. Rows of 2 to 8 bytes read 0.1-1 GB/s a word at a time.
const reduceMaxTiny = 15

// planPass appends to dst the launches that run pass ps of op on target
// t, each binding the pass's input as operand 0 and its output as
// operand 1: a fill of the output with the identity where invocations
// share output units, then a kernel launch for each piece, whose
// reduceClass's family picks the kernel. Planning is pure, as the
// elementwise planner is: nothing in it reads or records on a device.
func (tu *reduceTune) planPass(dst []launch, ps reducePass, t *target, op *reduceOp) []launch {
	var pieceBuf [4]reducePiece
	pieces := ps.pieces(pieceBuf[:0], t.page)
	if len(pieces) == 1 && ps.r > 1 && ps.smallRowsOK() && ps.b*ps.r*ps.c <= tu.smallMax {
		return append(dst, tu.smallPlan(ps, t, op))
	}
	fill := len(dst)
	dst = append(dst, launch{kind: launchFill, word: op.identityWord()})
	shared := len(pieces) > 1
	for _, pp := range pieces {
		inLo, inHi := ps.inSpan(pp)
		outLo, outHi := ps.outSpan(pp)
		inSkip, outSkip := inLo%t.page%t.align, outLo%t.page%t.align
		var ln launch
		var sh bool
		if ps.inner() {
			ln, sh = tu.innerPlan(ps, pp, inSkip, outSkip)
		} else {
			ln, sh = tu.outerPlan(ps, pp, inSkip, outSkip)
		}
		ln.ranges[0], ln.ranges[1] = [2]uint64{inLo, inHi}, [2]uint64{outLo, outHi}
		tu.finish(&ln, t, op)
		shared = shared || sh
		dst = append(dst, ln)
	}
	if !shared {
		dst = append(dst[:fill], dst[fill+1:]...)
	}
	return dst
}

// finish completes a kernel launch of op planned for ln.invocations
// invocations on target t: its grid, the grid in its push constants'
// spec.Grid, and the group size and fold among its specialization
// constants. The invocations fit 32 bits: a piece lies in one page,
// which holds fewer bytes than that, and every invocation reads some.
func (tu *reduceTune) finish(ln *launch, t *target, op *reduceOp) {
	// The grid cannot fail to fit: the smallest grid every device offers
	// holds 2^32 invocations.
	ln.grid, _ = core.SpreadGroups(reduceCeil(uint64(ln.invocations), tu.groupSize), t.grid)
	g := (*spec.Grid)(unsafe.Pointer(&ln.push))
	g.N, g.GroupsX = ln.invocations, ln.grid[0]
	ln.setSpec(uint32(spec.RGroup), uint32(tu.groupSize))
	ln.setSpec(uint32(spec.RFold), op.fold)
}

// reduceSmallRows is the most rows reduce_small.glsl folds into an output
// byte. lavapipe ends every loop of an invocation after 65535 iterations
// of them all (gallivm's LP_MAX_TGSI_LOOP_ITERATIONS), silently: one
// invocation folds four columns, a loop iteration a row.
const reduceSmallRows = 1 << 13

// reduceSmallVecRows is the most bytes of a row reduce_small.glsl folds
// into an output byte a vector at a time (spec.ReducePathSmallVecs): an
// invocation's four rows of 4096 vectors are 16384 loop iterations.
const reduceSmallVecRows = 1 << 16

// smallRowsOK reports whether reduce_small.glsl's loops reach the end of
// pass ps's rows (reduceSmallRows, reduceSmallVecRows).
func (ps reducePass) smallRowsOK() bool {
	if ps.inner() && ps.r%16 == 0 {
		return ps.r <= reduceSmallVecRows
	}
	return ps.r <= reduceSmallRows
}

// smallPlan plans pass ps of op, whose input and output each lie in one
// page from its first byte, as one launch of reduce_small.glsl: an
// invocation for each output word.
func (tu *reduceTune) smallPlan(ps reducePass, t *target, op *reduceOp) launch {
	outputs := ps.b * ps.c
	ln := launch{kind: launchKernel, class: reduceSmallClass, invocations: uint32(reduceCeil(outputs, 4))}
	ln.ranges[0], ln.ranges[1] = [2]uint64{0, ps.b * ps.r * ps.c}, [2]uint64{0, outputs}
	setPush(&ln, &spec.ReduceSmallPush{Outputs: uint32(outputs), Rows: uint32(ps.r), Cols: uint32(ps.c)})
	tu.finish(&ln, t, op)
	path := spec.ReducePathSmallBytes
	switch {
	case ps.inner() && ps.r%16 == 0:
		path = spec.ReducePathSmallVecs
	case ps.inner():
		path = spec.ReducePathSmallRows
	case ps.c%4 == 0:
		path = spec.ReducePathSmallWords
	}
	ln.setSpec(uint32(spec.RPath), uint32(path))
	return ln
}

// innerPlan plans piece p of inner pass ps, whose bindings start inSkip
// and outSkip bytes before the data, for reduce_inner.glsl, and reports
// whether its invocations share output words.
func (tu *reduceTune) innerPlan(ps reducePass, p reducePiece, inSkip, outSkip uint64) (launch, bool) {
	rowLen := p.r1 - p.r0
	if ps.tinyOK(p, inSkip, outSkip) {
		return tu.tinyPlan(p, inSkip, outSkip), false
	}
	first := outSkip / 4
	nWords := reduceCeil(outSkip+p.nb, 4) - first
	perInv, chunks, chunkBytes := tu.spread(nWords, min(p.nb, 4)*rowLen, rowLen, tu.minChunk, 16)
	whole := p.r0 == 0 && p.r1 == ps.r
	ln := launch{kind: launchKernel, class: reduceRows, invocations: uint32(reduceCeil(nWords, perInv) * chunks)}
	if chunks > 1 {
		ln.class = reduceSplit
	}
	setPush(&ln, &spec.ReduceInnerPush{FirstWord: uint32(first), Words: uint32(nWords), PerInv: uint32(perInv),
		Chunks: uint32(chunks), ChunkBytes: uint32(chunkBytes), InSkip: uint32(inSkip), RowLen: uint32(rowLen),
		Rows: uint32(p.nb), OutSkip: uint32(outSkip), Tail: reduceClamp(ps.b - p.b0), Whole: b2u(whole)})
	path, rowVecs := spec.ReducePathMasked, uint64(1)
	switch {
	case (inSkip|rowLen)%16 == 0 && chunks == 1 && rowLen/16 <= reduceMaxRowVecs && p.nb*rowLen >= tu.minUnroll:
		path, rowVecs = spec.ReducePathRowVecs, rowLen/16
	case (inSkip|rowLen)%16 == 0: // chunkBytes is a multiple of 16 too
		path = spec.ReducePathVectors
	case rowLen < reduceShort:
		path = spec.ReducePathShort
	}
	setInnerSpec(&ln, uint32(path), min(rowLen, chunkBytes) >= reduceLong, uint32(rowVecs), 1)
	return ln, chunks > 1 || !whole
}

// tinyOK reports whether piece p of inner pass ps may take the tiny-row
// path: rows of at most reduceMaxTiny bytes, the input and output on
// 16-byte vectors, and no output vector shared with another piece, so
// either the piece's output ends on a vector or it is the pass's last,
// whose vector's rest is padding.
func (ps reducePass) tinyOK(p reducePiece, inSkip, outSkip uint64) bool {
	return ps.r <= reduceMaxTiny && inSkip%16 == 0 && outSkip%16 == 0 &&
		((outSkip+p.nb)%16 == 0 || p.b0+p.nb == ps.b)
}

// tinyPlan plans piece p, of tiny rows (see tinyOK), for
// spec.ReducePathTiny: each invocation writes whole output vectors, 16
// rows each, and reads at least minWork bytes.
func (tu *reduceTune) tinyPlan(p reducePiece, inSkip, outSkip uint64) launch {
	rowLen := p.r1 - p.r0
	vecs := reduceCeil(p.nb, 16)
	perInv := max(tu.minWork/(16*rowLen), 1)
	ln := launch{kind: launchKernel, class: reduceRows, invocations: uint32(reduceCeil(vecs, perInv))}
	setPush(&ln, &spec.ReduceInnerPush{FirstWord: uint32(outSkip / 16), Words: uint32(vecs), PerInv: uint32(perInv),
		Chunks: 1, ChunkBytes: 16, InSkip: uint32(inSkip), RowLen: uint32(rowLen), Rows: uint32(p.nb),
		OutSkip: uint32(outSkip), Tail: uint32(p.nb), Whole: 1})
	setInnerSpec(&ln, spec.ReducePathTiny, false, 1, uint32(rowLen))
	return ln
}

// outerPlan plans piece p of outer pass ps, whose bindings start inSkip
// and outSkip bytes before the data, for reduce_outer.glsl, and reports
// whether its invocations share output units.
func (tu *reduceTune) outerPlan(ps reducePass, p reducePiece, inSkip, outSkip uint64) (launch, bool) {
	vec := ps.vecOK(p, inSkip, outSkip)
	rows, cspan := p.r1-p.r0, p.c1-p.c0
	var first, units, perInv, blocks, blockRows uint64
	vecs := uint64(1)
	if vec {
		// The kernel reads vecs vectors of a row side by side, no more
		// than a batch's row holds (it would read the last again): plan
		// in groups of vecs.
		vecs = min(tu.vecs, cspan/16)
		if p.nb*rows*cspan < tu.minUnroll {
			vecs = 1
		}
		first = outSkip / 16
		units = reduceCeil(outSkip+p.nb*cspan, 16) - first
		perInv, blocks, blockRows = tu.spread(reduceCeil(units, vecs), 16*vecs*rows, rows, reduceCeil(tu.minWork, 16*vecs), 1)
		perInv *= vecs
	} else {
		// The kernel reads windows of four words: plan in groups of 4.
		first = outSkip / 4
		units = reduceCeil(outSkip+p.nb*cspan, 4) - first
		perInv, blocks, blockRows = tu.spread(reduceCeil(units, 4), 16*rows, rows, reduceCeil(tu.minWork, 16), 1)
		perInv *= 4
	}
	whole := p.r0 == 0 && p.r1 == ps.r
	// The strides only matter where they stay inside one page: between
	// the rows or batches of a piece that has several.
	var rowStride, batchStride uint64
	if rows > 1 {
		rowStride = ps.c
	}
	if p.nb > 1 {
		batchStride = ps.r * ps.c
	}
	ln := launch{kind: launchKernel, class: reduceCols, invocations: uint32(reduceCeil(units, perInv) * blocks)}
	setPush(&ln, &spec.ReduceOuterPush{FirstUnit: uint32(first), Units: uint32(units), PerInv: uint32(perInv),
		Blocks: uint32(blocks), BlockRows: uint32(blockRows), Rows: uint32(rows), CSpan: uint32(cspan),
		Batches: uint32(p.nb), RowStride: uint32(rowStride), BatchStride: uint32(batchStride),
		InSkip: uint32(inSkip), OutSkip: uint32(outSkip), Tail: reduceClamp(ps.b*ps.c - (p.b0*ps.c + p.c0)), Whole: b2u(whole)})
	ln.setSpec(uint32(spec.RVec), b2u(vec))
	ln.setSpec(uint32(spec.RVecs), uint32(vecs))
	// Rows of fewer than 16 bytes, one after another, read several to a
	// vector: [5 1108615 3] over axis 1 ran in 0.25x the time. Blocks of
	// fewer than 64 bytes keep the row by row reads: [65100 2 8] ran
	// 1.8x as long with them.
	short := !vec && rows > 1 && cspan == ps.c && cspan < 16 && blockRows*cspan >= 64
	ln.setSpec(uint32(spec.RShort), b2u(short))
	// The vector path's pipeline holds the atomics that combine shared
	// outputs only where some are shared (reduce_outer.glsl, OWNED).
	shared := blocks > 1 || !whole
	ln.setSpec(uint32(spec.ROwned), b2u(vec && !shared))
	return ln, shared
}

// setPush sets ln's push constants to p, a struct of shaders/spec.
func setPush[P any](ln *launch, p *P) { ln.npush = copy(ln.push[:], pushBytes(p)) }

// setInnerSpec sets reduce_inner.glsl's own specialization constants.
func setInnerSpec(ln *launch, path uint32, long bool, rowVecs, tiny uint32) {
	ln.setSpec(uint32(spec.RPath), path)
	ln.setSpec(uint32(spec.RLong), b2u(long))
	ln.setSpec(uint32(spec.RRowVecs), rowVecs)
	ln.setSpec(uint32(spec.RTiny), tiny)
}

// vecOK reports whether piece p of pass ps may take the outer kernel's
// vector path: every row, batch and column run, and both bindings, start
// on 16 bytes.
func (ps reducePass) vecOK(p reducePiece, inSkip, outSkip uint64) bool {
	return ps.c%16 == 0 && (p.c1-p.c0)%16 == 0 && inSkip%16 == 0 && outSkip%16 == 0
}
