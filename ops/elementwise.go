package ops

import (
	"fmt"
	"math"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/tensor"
)

// Select and the mask ops are elementwise kernels of one design
// (shaders/select.glsl, shaders/mask.glsl): a layout split into pieces,
// each a dispatch whose push constants describe the piece's shape, each
// operand's broadcast and where it starts in its binding. This file is
// that shared part; an op adds its operands, its kernel variants and its
// own specialization constants.

// A span is what an elementwise kernel is told of one piece of a layout:
// each operand's binding and where the piece starts in it, which operands
// are broadcast along which dimension, and the piece's shape with the
// reciprocals that divide by it. Operands are the inputs, then the
// output; a nil tensor (a scalar pushed as a constant) is bound as the
// first tensor operand is, and never read.
type span struct {
	args  [maxOperands]device.Arg
	base  [maxOperands]uint32 // first element of each operand in its binding
	masks uint32              // bit 8*x+d: input x is broadcast in dimension d
	rank  int                 // dimensions, innermost first in dims
	dims  [maxRank]uint32
	magic [maxRank]uint32
	shift [2]uint32 // shift of dims[d] in byte d%4 of word d/4
}

// spans binds each piece of l for operands ts (inputs, then the output)
// of the given element sizes, every binding covering at most pageSize
// bytes, and calls f with each (by value, as pieces does).
func (l *layout) spans(ts *[maxOperands]*device.Tensor, sizes *[maxOperands]int, pageSize int, f func(s span) error) error {
	ops := l.inputs + 1
	out := l.inputs
	bound := 0
	for ts[bound] == nil {
		bound++
	}
	st := l.operandStrides()
	return l.pieces(sizes, pageSize, func(p piece) error {
		// A leading dimension of one is a prefix coordinate like the others.
		k, count := p.k, p.count
		if count == 1 && k < l.rank-1 {
			k++
			count = l.dims[k]
		}
		s := span{rank: l.rank - k}
		for x := range ops {
			t := ts[x]
			if t == nil {
				continue
			}
			if x < out {
				for i := k; i < l.rank; i++ {
					if st[x][i] == 0 {
						s.masks |= 1 << (8*x + l.rank - 1 - i)
					}
				}
			}
			lo := uint64(p.first[x] * sizes[x])
			arg, skip, err := t.Window(lo, lo+uint64((p.reach(l, &st[x])+1)*sizes[x]))
			if err != nil {
				return err
			}
			s.args[x], s.base[x] = arg, uint32(skip/uint64(sizes[x]))
		}
		s.args[out].Write = true
		for x := range ops {
			if ts[x] == nil {
				s.args[x] = s.args[bound]
			}
		}
		for i := range s.rank {
			n := count
			if i < s.rank-1 {
				n = l.dims[l.rank-1-i]
			}
			s.dims[i] = uint32(n)
			m, sh := reciprocal(s.dims[i])
			s.magic[i] = m
			s.shift[i/4] |= sh << (8 * (i % 4))
		}
		return f(s)
	})
}

// maxOutputBytes mirrors the largest tensor tensor.New makes, so that an
// output too large to address is rejected with cpuref's words.
const maxOutputBytes = 1 << 48

// newElementwise is what every elementwise op does once its operands are
// checked: it checks out as the shape of a new dt tensor, in cpuref's
// words, lays the inputs' shapes out over it, allocates the output on d
// and fills it with the run that mk makes for it, its variant picked
// from families. If a dispatch fails, the output is freed.
//
// Callers may keep out on the stack, so that an op allocates nothing but
// its output: errors quote a copy of it.
func newElementwise(op string, d *device.Device, dt tensor.DType, out tensor.Shape, families *[9][selectClasses]*family,
	mk func(res *device.Tensor) elementwise, ins ...tensor.Shape) (*device.Tensor, error) {
	if err := out.Validate(); err != nil {
		return nil, invalidf("%s: output: %v", op, err)
	}
	n := out.NumElements()
	if n > maxOutputBytes/dt.Size() {
		return nil, invalidf("%s: output: shape %v of %v: %d elements are too many to address", op, out.Clone(), dt, n)
	}
	l := newLayout(out, ins...)
	if l.rank > maxRank {
		return nil, rankError(op, &l)
	}
	res, err := d.Empty(dt, out)
	if err != nil {
		return nil, fmt.Errorf("%s: output: %w", op, err)
	}
	if n == 0 {
		return res, nil
	}
	e := mk(res)
	if err := e.run(d, &l, families); err != nil {
		res.Free()
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return res, nil
}

// run fills the output directly where e can (direct), else over l with
// e's variant, picked from families by its width and l's class.
func (e *elementwise) run(d *device.Device, l *layout, families *[9][selectClasses]*family) error {
	// A forced variant runs its kernel everywhere, so that tests of it
	// reach every plan.
	if e.direct != nil && forced() == "" {
		if done, err := e.direct(e, d); done || err != nil {
			return err
		}
	}
	v, err := families[e.width][elementwiseClass(l, &e.ts)].pick(d)
	if err != nil {
		return err
	}
	e.v = v
	return e.dispatch(d, l)
}

// elementwiseTuning shapes an elementwise kernel's grid: invocations per
// workgroup (at most; the device may allow fewer) and 16-element chunks
// per invocation, by element size on lavapipe and one count on a GPU.
// Tests change an op's tuning to reach other code paths cheaply, such as
// grids of more than 65535 workgroups.
type elementwiseTuning struct {
	group  int
	chunks [9]int
	// gpuChunks is chunks on a GPU, which wants the most invocations in
	// flight: on an H100 one chunk ran the masks 1.5-1.8x and i8 select
	// 1.65x as fast as lavapipe's counts (BenchmarkElementwiseTuning).
	gpuChunks int
	// rowsMin is the fewest elements of a piece that runs short rows in
	// blocks of whole rows (modeRows). Its pipelines, one per row length
	// and way of reading the inputs, are slow to build: a first call of
	// zoo-17 or zoo-23 with fresh caches took lavapipe 0.55-0.87 s,
	// against 25-30 ms for a block path's pipeline; the zoo's patterns of
	// 4M-16M elements save 7-27 ms a call, and the pipeline caches keep
	// the pipelines from run to run.
	rowsMin uint32
	// gpuRowsMax is the largest modeRows block a GPU takes. On an H100
	// blocks of up to 144 elements (rows of 2-10, 12 and 14) ran 1.1-3.3x
	// as fast as element by element, but those of 176 to 240 (rows of
	// 11, 13 and 15) up to 7x as slow, zoo-23 among them.
	gpuRowsMax uint32
}

// elementwiseRowsMin is the tunings' rowsMin: 4 MiB of f32.
const elementwiseRowsMin = 1 << 20

// elementwiseGPURowsMax is the tunings' gpuRowsMax.
const elementwiseGPURowsMax = 144

// chunksFor returns the chunks per invocation for elements of width bytes
// on d.
func (t *elementwiseTuning) chunksFor(d *device.Device, width int) uint32 {
	if d.IsCPU() {
		return uint32(t.chunks[width])
	}
	return uint32(t.gpuChunks)
}

// rowsFor reports whether a piece of n elements on d runs in blocks of g
// whole rows (modeRows).
func (t *elementwiseTuning) rowsFor(d *device.Device, n, g uint32) bool {
	return g != 0 && n >= max(g, t.rowsMin) && (d.IsCPU() || g <= t.gpuRowsMax)
}

// elementwise is one run of an elementwise kernel: its operands (inputs,
// then the output; a nil input, one of the last two, is a scalar whose
// bits are pushed), their element sizes, the variant and the op's own
// specialization constants, which follow the shared ones.
type elementwise struct {
	ts     [maxOperands]*device.Tensor
	sizes  [maxOperands]int
	bits   [2]uint64 // the last two inputs' bits where they are scalars
	width  int       // the element size that picks the tuning's chunks
	tuning *elementwiseTuning
	v      *variant
	spec   [3]uint32
	nspec  int
	// direct, where an op has one, fills the output without a kernel
	// when the operands allow it, and reports whether it did.
	direct func(e *elementwise, d *device.Device) (bool, error)
}

// dispatch fills the output over layout l, one dispatch per piece, or
// more: where rows are at least a block long, the blocks that lie whole
// in one innermost run, those that a row begins inside, and the piece's
// partial ends run in separate dispatches (modeWhole, modeSeams,
// modeEnds); rows shorter than a vector of 16 elements run in blocks of
// whole rows (modeRows), the piece's last elements and short rows in
// pieces that do not start on such a block element by element (modeAll).
// No kernel holds both paths: on SIMD-on-CPU drivers such as lavapipe, a
// path that any lane of a SIMD group might take costs every lane its
// time, and the other path's code slowed even the blocks that skipped it.
func (e *elementwise) dispatch(d *device.Device, l *layout) error {
	ins := l.inputs
	out := ins
	lim := &d.Info().Limits
	group := uint32(min(e.tuning.group, int(lim.MaxComputeWorkGroupInvocations), int(lim.MaxComputeWorkGroupSize[0])))
	var pushed uint32
	for i := range 2 {
		if e.ts[ins-2+i] == nil {
			pushed |= 1 << i
		}
	}
	return l.spans(&e.ts, &e.sizes, selectSpan(d, e.v), func(s span) error {
		rank, kd := s.rank, s.dims
		n := uint32(1)
		for i := range rank {
			n *= kd[i]
		}
		// Where rows are whole chunks shorter than a block that holds a
		// whole number of them, blocks of several rows (rowChunks, the
		// chunks of each), which the kernel steps through by the
		// odometer; on lavapipe, general-4d's rows of 16 bytes ran in
		// 0.52 of the time that way, rows of 16 f16 in 0.79, against a
		// block a row. Else, where rows are whole chunks, blocks of the
		// most chunks that rows hold a whole number of, so that no block
		// straddles rows.
		chunks := e.tuning.chunksFor(d, e.width)
		var rowChunks uint32
		if rank > 1 && kd[0]%16 == 0 && kd[0] < 16*chunks && 16*chunks%kd[0] == 0 &&
			s.base[out]%(16*chunks) == 0 && n >= 16*chunks {
			rowChunks = kd[0] / 16
		}
		for rowChunks == 0 && rank > 1 && kd[0]%16 == 0 && kd[0]%(16*chunks) != 0 {
			chunks--
		}
		// Rows of a chunk or more but shorter than a block: blocks of one
		// chunk, so that they take the vector paths (whole blocks and
		// seams), not the element path. (Rows of 17 to 31 u8 and f16 ran
		// in 0.33 to 0.53 of the time.)
		if rowChunks == 0 && rank > 1 && kd[0] >= 16 && kd[0] < 16*chunks {
			chunks = 1
		}
		elems := 16 * chunks
		// A contiguous operand stays 16-byte aligned block after block
		// (bit x of aligned) when it starts aligned as the output does and
		// steps with the output through every row: rows come in whole
		// vectors, or the operand is broadcast nowhere. Then the kernel
		// skips its funnel shifts. The inputs that stay constant along the
		// innermost dimension (inner) are read once per block instead of
		// by vectors.
		var aligned, inner, runon uint32
		for x := range ins {
			m := s.masks >> (8 * x) & 0xff
			if e.ts[x] != nil && m == 0 {
				runon |= 1 << x
			}
			if m&1 != 0 {
				inner |= 1 << x
			}
			if e.ts[x] != nil && m&1 == 0 && (int(s.base[x])-int(s.base[out]))*e.sizes[x]%16 == 0 &&
				(rank == 1 || kd[0]%16 == 0 || m == 0) {
				aligned |= 1 << x
			}
		}
		// The shared constants, the op's own from 8, modeRows's three
		// from 11, and modeWhole's rowChunks at 14.
		var spec [15]uint32
		copy(spec[:], []uint32{group, uint32(e.width), uint32(rank), pushed, chunks, aligned, inner})
		copy(spec[8:], e.spec[:e.nspec])
		launch := func(mode, skip, elems uint32) error {
			// Each invocation owns a block of elems elements, or a row
			// boundary: in modeSeams each row's start but the first, in
			// modeEnds the piece's start and end.
			spec[4] = elems / 16
			first := s.base[out]
			invocations := (first+n+elems-1)/elems - (first+skip)/elems
			switch mode {
			case modeSeams:
				invocations = n/kd[0] - 1
			case modeEnds:
				invocations = 2
			}
			grid, err := d.Grid(uint64((invocations + group - 1) / group))
			if err != nil {
				return err
			}
			var buf [4 * 32]byte
			push := words(buf[:0]).u32(kd[:]...).u32(s.magic[:]...).u32(s.shift[:]...).u32(s.masks).u32(s.base[:out+1]...).u32(grid[0], skip)
			if len(push)%8 != 0 { // the scalars are 8-byte aligned
				push = push.u32(0)
			}
			push = push.u64(e.bits[0]).u64(e.bits[1])
			spec[7] = mode
			k, nspec := e.v.kernel, 8+e.nspec
			switch mode {
			case modeWhole:
				if spec[14] != 0 {
					nspec = len(spec)
				}
			case modeRows:
				// Its modules' constants end at 13: no rowChunks.
				k, nspec = e.v.rows, 14
			case modeSeams:
				// Only inputs that run on are read as one run, which
				// keeps the whole blocks' alignment.
				sp := spec
				sp[5], sp[12] = aligned&runon, runon
				return d.Dispatch(e.v.seams, sp[:], s.args[:out+1], push, grid)
			}
			return d.Dispatch(k, spec[:nspec], s.args[:out+1], push, grid)
		}
		switch {
		case rowChunks != 0:
			// Blocks of several rows, then the rows after the last
			// whole block, a block each.
			spec[14] = rowChunks
			if err := launch(modeWhole, 0, elems); err != nil || n%elems == 0 {
				return err
			}
			spec[14] = 0
			return launch(modeWhole, n-n%elems, kd[0])
		case s.base[out]%elems == 0 && kd[0]%elems == 0:
			return launch(modeWhole, 0, elems)
		case kd[0] >= elems:
			if err := launch(modeWhole, 0, elems); err != nil {
				return err
			}
			if n/kd[0] > 1 {
				if err := launch(modeSeams, 0, elems); err != nil {
					return err
				}
			}
			return launch(modeEnds, 0, elems)
		}
		if g := e.rowGroup(&s, ins, d.IsCPU()); e.tuning.rowsFor(d, n, g) {
			// Blocks of whole rows, g elements each, then the last
			// n % g elements by modeAll.
			gather := e.gathered(&s, ins, g)
			spec[11], spec[12], spec[13] = kd[0], gather, e.twoRuns(&s, ins, g, gather)
			if err := launch(modeRows, 0, g); err != nil || n%g == 0 {
				return err
			}
			return launch(modeAll, n-n%g, elems)
		}
		return launch(modeAll, 0, elems)
	})
}

// The modes of an elementwise kernel: which blocks of a piece a dispatch
// runs (shaders/elementwise.glsl, MODE).
const (
	modeAll   = 0 // every block, element by element; rows shorter than a block
	modeWhole = 1 // the blocks that lie whole in one innermost run, by vectors
	modeSeams = 2 // beside modeWhole, the blocks a row begins inside, by vectors
	modeRows  = 3 // rows shorter than 16 elements, in blocks of whole rows
	modeEnds  = 4 // beside modeWhole, the piece's partial first and last blocks
)

// rowGroup returns the elements of a modeRows block for span s, or 0
// where it takes none: rows of 2 to 15 elements in a piece of more than
// one dimension, blocks of the fewest whole rows that are also whole
// 16-element vectors (lcm(rows, 16), at most 240 elements), the piece
// starting on such a block in the output binding. On lavapipe (cpu),
// rows of 1- and 2-byte elements that fit a 16-byte vector take blocks
// of 16 rows where the piece starts on one: a lane then pays its
// odometer and loads for up to 16x as many elements. Rows of 2 to 15
// i8 ran in 0.39-0.71 of the time, of 2 to 8 f16 in 0.64-0.88; rows of
// f32 ran up to 1.4x as long, and f16 rows of 10 and 12 no faster.
func (e *elementwise) rowGroup(s *span, ins int, cpu bool) uint32 {
	k := s.dims[0]
	if s.rank < 2 || k < 2 || k >= 16 {
		return 0
	}
	if cpu && e.width <= 2 && k*uint32(e.width) <= 16 && s.base[ins]%(16*k) == 0 {
		return 16 * k
	}
	g := k / uint32(reduceGCD(uint64(k), 16)) * 16
	if s.base[ins]%g != 0 {
		return 0
	}
	return g
}

// gathered returns the bit set of the inputs of span s that a modeRows
// block of g elements reads row by row: those neither broadcast
// along the rows (read once a row) nor running on through every block
// (read by vectors). An input runs on through a block when the
// dimensions it is not broadcast in, from the innermost, span a multiple
// of g elements, or all of the piece.
func (e *elementwise) gathered(s *span, ins int, g uint32) uint32 {
	var bits uint32
	for x := range ins {
		m := s.masks >> (8 * x) & 0xff
		if e.ts[x] == nil || m&1 != 0 {
			continue
		}
		run := uint32(1)
		d := 0
		for ; d < s.rank && m>>d&1 == 0; d++ {
			run *= s.dims[d]
		}
		if d < s.rank && run%g != 0 {
			bits |= 1 << x
		}
	}
	return bits
}

// twoRuns returns the bit set of the inputs of span s that a modeRows
// block of g elements reads as two runs (shaders/elementwise.glsl,
// twoRuns), and from bit 8, which of them are broadcast in dimension 1:
// of the inputs broadcast along the rows or, among those read row by row
// (gather, as gathered returns it), in dimension 1, those whose
// offsets keep one step from row to row (0 while the dimensions from 1
// on are broadcast, 1 while they are not) for at least a block's rows,
// so that no block sees two breaks. (Inputs whose rows run on through
// dimension 1 read fewer vectors that way only for very short rows, and
// more than doubled the size of the module.)
func (e *elementwise) twoRuns(s *span, ins int, g, gather uint32) uint32 {
	var bits uint32
	blockRows := uint64(g / s.dims[0])
	for x := range ins {
		m := s.masks >> (8 * x)
		step0 := m&2 != 0
		if e.ts[x] == nil || !(m&1 != 0 || gather>>x&1 != 0 && step0) {
			continue
		}
		rows, d := uint64(1), 1
		for ; d < s.rank && (m>>d&1 != 0) == step0; d++ {
			rows *= uint64(s.dims[d])
		}
		if d == s.rank || rows >= blockRows {
			bits |= 1<<x | (m>>1&1)<<(8+x)
		}
	}
	return bits
}

// elementwiseClass returns whether every tensor operand of l runs
// contiguously beside the output (scalars, nil in ts, count as
// contiguous: they cost no loads), or some are broadcast.
func elementwiseClass(l *layout, ts *[maxOperands]*device.Tensor) selectClass {
	if l.rank != 1 {
		return selectBroadcast
	}
	for x := range l.inputs {
		if ts[x] != nil && l.strides[x][0] != 1 {
			return selectBroadcast
		}
	}
	return selectSame
}

// elementwiseFamilies registers the families of an elementwise op: one
// per element width (1, 2, 4 and 8 bytes, indexing the result) and class,
// keyed "op/w4/same" and so on, each with the width's variants and timed
// by measure.
func elementwiseFamilies(op string, variants func(w int) []*variant,
	measure func(d *device.Device, v *variant, w int, c selectClass) (float64, error)) (fs [9][selectClasses]*family) {
	for _, w := range []int{1, 2, 4, 8} {
		vs := variants(w)
		for c := range selectClasses {
			fs[w][c] = register(&family{
				key:      fmt.Sprintf("%s/w%d/%v", op, w, c),
				variants: vs,
				measure:  func(d *device.Device, v *variant) (float64, error) { return measure(d, v, w, c) },
			})
		}
	}
	return fs
}

// measureBytes is the size of each operand in the runs that
// measureElementwise times: large enough that a dispatch's fixed cost is
// small beside it, small enough that measuring every variant of a family
// on first use takes a fraction of a second on lavapipe. A GPU measures
// gpuMeasureBytes: on an H100, 16 MiB took about 10 us, most of it fixed
// cost, and hid a 1.5x difference in how variants store.
const (
	measureBytes    = 16 << 20
	gpuMeasureBytes = 64 << 20
)

// measureElementwise times run on d over operands of types dts (inputs,
// then the output) of measureBytes of the widest elements (on a GPU,
// gpuMeasureBytes), or a page where pages are smaller (tests' tiny pages
// would make it thousands of dispatches), in class c: same-shape
// operands, or the first input broadcast along rows and the last tensor
// along columns ([r, 1] and [1, k] against [r, k], with rows k of up to
// 1024 elements). An input of type tensor.Invalid is pushed: it has no
// tensor, and its ts entry is nil. It returns the fastest of five timed
// runs after one that builds the pipeline: other work on the machine
// only ever slows a run down, and on a CPU driver it comes in bursts.
func measureElementwise(d *device.Device, dts []tensor.DType, c selectClass, run func(l *layout, ts *[maxOperands]*device.Tensor) error) (float64, error) {
	w := 1
	for _, dt := range dts {
		w = max(w, dt.Size())
	}
	size := uint64(measureBytes)
	if !d.IsCPU() {
		size = gpuMeasureBytes
	}
	n := int(min(size, d.PageSize())) / w
	k := min(n, 1024)
	out := tensor.Shape{n / k, k}
	ins := len(dts) - 1
	shapes := make([]tensor.Shape, ins)
	last := ins - 1
	for last > 0 && dts[last] == tensor.Invalid {
		last--
	}
	for x := range shapes {
		switch {
		case dts[x] == tensor.Invalid:
		case c == selectBroadcast && x == 0:
			shapes[x] = tensor.Shape{n / k, 1}
		case c == selectBroadcast && x == last:
			shapes[x] = tensor.Shape{1, k}
		default:
			shapes[x] = out
		}
	}
	var ts [maxOperands]*device.Tensor
	defer func() {
		for _, t := range ts {
			t.Free()
		}
	}()
	for x, dt := range dts {
		if dt == tensor.Invalid {
			continue
		}
		s := out
		if x < ins {
			s = shapes[x]
		}
		t, err := d.Empty(dt, s)
		if err != nil {
			return 0, err
		}
		ts[x] = t
	}
	l := newLayout(out, shapes...)
	timed := func() error { return run(&l, &ts) }
	if err := timed(); err != nil {
		return 0, err
	}
	if err := d.Sync(); err != nil {
		return 0, err
	}
	best := math.Inf(1)
	for range 5 {
		ns, err := d.GPUTime(timed)
		if err != nil {
			return 0, err
		}
		best = min(best, ns)
	}
	return best, nil
}
