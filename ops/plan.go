package ops

import (
	"math"
	"math/bits"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/core"
	"github.com/vkops/vkops/shaders/spec"
	"github.com/vkops/vkops/tensor"
)

// An elementwise op is planned into values, then recorded, as a
// reduction is (reduce_plan.go): both plan launches. The planner is pure: from the layout,
// the run and a target (the device's facts and its profile) it makes
// launches, each a kernel dispatch (its module, specialization and push
// constants, grid and the bytes it binds) or a command that fills the
// output without a kernel. Nothing in it reads or records on a device,
// so FuzzPlan checks its plans on the host.

// target is what the planner knows of a device and the variant that
// runs the op.
type target struct {
	prof  *profile
	page  uint64    // bytes of a tensor page
	span  int       // bytes one binding may cover: a page, or less for texel views
	align uint64    // the alignment of binding offsets
	group uint32    // invocations per workgroup
	grid  [3]uint32 // maxComputeWorkGroupCount
}

// texelBytes, when nonzero, stands for the device's
// maxTexelBufferElements in bytes of rgba32ui texels: tests shrink it to
// plan texel views smaller than a page.
var texelBytes uint64

// targetOf returns d's target; its span is a page until spanOf says
// what a variant's bindings hold.
func targetOf(d *device.Device) target {
	lim := &d.Info().Limits
	prof := profileOf(d)
	return target{prof: prof, page: bridge.Device(d).PageSize(), span: int(bridge.Device(d).PageSize()), align: bridge.Device(d).Alignment(), grid: lim.MaxComputeWorkGroupCount,
		group: uint32(min(prof.group, int(lim.MaxComputeWorkGroupInvocations), int(lim.MaxComputeWorkGroupSize[0])))}
}

// spanOf returns the bytes one binding of variant v may cover on d: a
// page, or for a texel variant, whose bindings are views that hold at
// most maxTexelBufferElements texels, the largest power of two of bytes
// that fits, if that is less. Pages are powers of two too, so pieces
// planned for the smaller span still lie in one page each.
func spanOf(d *device.Device, v *variant) int {
	span := bridge.Device(d).PageSize()
	if v.kernel.Kinds != nil {
		limit := texelBytes
		if limit == 0 {
			limit = uint64(d.Info().Limits.MaxTexelBufferElements) * 16
		}
		span = min(span, uint64(1)<<(bits.Len64(limit)-1))
	}
	return int(span)
}

// launchKind is what a launch does.
type launchKind uint8

const (
	launchKernel launchKind = iota // a dispatch of the op's kernel
	launchFill                     // the output filled with a word (vkCmdFillBuffer)
	launchTile                     // the output tiled with input src (device.Tile)
	launchExpand                   // each element of input src repeated r times in a row
)

// role is which of a variant's modules a dispatch runs.
type role uint8

const (
	roleMain  role = iota // modeAll, modeWhole, modeEnds
	roleRows              // modeRows
	roleSeams             // modeSeams
)

// maxSpec is the most specialization constants an elementwise kernel
// takes: the shared ones and the op's own.
const maxSpec = 24

// A launch is one step of an elementwise plan.
type launch struct {
	kind launchKind
	role role
	mode uint32
	// class is a reduction kernel's class, whose family picks the
	// variant (reduce_plan.go); an elementwise op picks by its layout.
	class reduceClass
	// spec holds the specialization constants by id (shaders/spec), nspec
	// of them; those a module does not use are 0, so that one pipeline
	// serves every plan that differs only there.
	spec  [maxSpec]uint32
	nspec int
	push  [4 * 32]byte
	npush int
	grid  [3]uint32
	// ranges are the bytes of each operand (inputs, then the output) that
	// the dispatch binds, and base where each begins in its binding, in
	// elements: bindings start at aligned offsets.
	ranges [maxOperands][2]uint64
	// first, invocations and elems say which blocks the dispatch covers:
	// elements first on of the piece, in blocks of elems elements
	// aligned in the output binding, one an invocation (modeSeams and
	// modeEnds: one a row start, or the piece's two ends).
	first, invocations, elems uint32
	word                      uint32 // launchFill
	src, repeat               int    // launchTile, launchExpand
}

// setSpec sets specialization constant id to v.
func (ln *launch) setSpec(id, v uint32) {
	ln.spec[id] = v
	ln.nspec = max(ln.nspec, int(id)+1)
}

// A box is one piece of a layout as a kernel sees it: where each
// operand's bytes lie, which inputs are broadcast along which
// dimension, and the piece's shape with the reciprocals that divide by
// it.
type box struct {
	ranges [maxOperands][2]uint64
	base   [maxOperands]uint32 // first element of each operand in its binding
	masks  uint32              // bit 8*x+d: input x is broadcast in dimension d
	rank   int                 // dimensions, innermost first in dims
	dims   [maxRank]uint32
	magic  [maxRank]uint32
	shift  [2]uint32 // shift of dims[d] in byte d%4 of word d/4
}

// n returns the elements of the box.
func (b *box) n() uint32 {
	n := uint32(1)
	for i := range b.rank {
		n *= b.dims[i]
	}
	return n
}

// appendPlan appends to dst the launches that fill r's output over
// layout l on target t: a fill, tile or expand where the output is an
// input broadcast (r.pick) and that is fastest, else the kernel's
// dispatches, piece by piece. Recording plans piece by piece instead
// (record), so that an op allocates nothing.
func (r *run) appendPlan(dst []launch, l *layout, t *target) []launch {
	if ln, ok := r.planPick(t); ok {
		return append(dst, ln)
	}
	st := l.operandStrides()
	l.pieces(&r.sizes, t.span, func(p piece) error {
		b := r.boxOf(l, &st, p, t)
		dst = r.planBox(dst, &b, t)
		return nil
	})
	return dst
}

// boxOf returns piece p of layout l (operand strides st) as a box.
func (r *run) boxOf(l *layout, st *[maxOperands][maxRank]int, p piece, t *target) box {
	out := l.inputs
	// A leading dimension of one is a prefix coordinate like the others.
	k, count := p.k, p.count
	if count == 1 && k < l.rank-1 {
		k++
		count = l.dims[k]
	}
	b := box{rank: l.rank - k}
	for x := range out + 1 {
		if x < out && r.ts[x] == nil {
			continue
		}
		if x < out {
			for i := k; i < l.rank; i++ {
				if st[x][i] == 0 {
					b.masks |= 1 << (8*x + l.rank - 1 - i)
				}
			}
		}
		if x == out && r.fold != 0 {
			b.ranges[x], b.base[x] = [2]uint64{0, r.fold}, uint32(p.first[x])
			continue
		}
		size := uint64(r.sizes[x])
		lo := uint64(p.first[x]) * size
		b.ranges[x] = [2]uint64{lo, lo + uint64(p.reach(l, &st[x])+1)*size}
		b.base[x] = uint32(lo % t.page % t.align / size)
	}
	for i := range b.rank {
		n := count
		if i < b.rank-1 {
			n = l.dims[l.rank-1-i]
		}
		b.dims[i] = uint32(n)
		m, sh := reciprocal(b.dims[i])
		b.magic[i] = m
		b.shift[i/4] |= sh << (8 * (i % 4))
	}
	return b
}

// planPick plans the output as input r.pick broadcast, without the op's
// kernel, where that is fastest: a known value is filled, an input
// broadcast only along outer axes (a row over every row) tiled, and one
// broadcast only along inner axes (a column) expanded where that beats
// the kernel (expandWins). On lavapipe fills and tiles run as memset and
// memcpy, 2.5 times as fast as the kernel in geometric mean
// (BENCHMARKS.md at a602088, "One-element conds"). Other broadcasts,
// and 8-byte values whose halves differ, take the kernel.
func (r *run) planPick(t *target) (launch, bool) {
	if r.pick < 0 || t.prof.general {
		return launch{}, false
	}
	out := r.op.inputs
	if word, ok := fillWord(r.pickBits, r.width); ok && r.pickKnown {
		return launch{kind: launchFill, word: word}, true
	}
	src := r.ts[r.pick]
	if src == nil {
		return launch{}, false
	}
	res := r.shapes[out]
	if repeats(r.shapes[r.pick], res) {
		return launch{kind: launchTile, src: r.pick}, true
	}
	rep, ok := rowsOf(r.shapes[r.pick], res)
	if ok && expandWins(rep, r.width) && expandable(rep, r.sizes[out], r.shapes[r.pick].NumElements(), res.NumElements(), t.page) {
		return launch{kind: launchExpand, src: r.pick, repeat: rep}, true
	}
	return launch{}, false
}

// repeats reports whether an operand of shape src, broadcast to out,
// is its elements over and over: its shape, past leading ones, is out's
// innermost dimensions.
func repeats(src, out tensor.Shape) bool {
	for len(src) > 0 && src[0] == 1 {
		src = src[1:]
	}
	return len(src) <= len(out) && src.Equal(out[len(out)-len(src):])
}

// fillWord returns the 32-bit word that repeats an element of w bytes
// with these bits, and false for an 8-byte element whose halves differ.
func fillWord(bits uint64, w int) (uint32, bool) {
	switch w {
	case 1:
		return uint32(bits&0xff) * 0x01010101, true
	case 2:
		return uint32(bits&0xffff) * 0x00010001, true
	case 4:
		return uint32(bits), true
	}
	return uint32(bits), uint32(bits) == uint32(bits>>32)
}

// planBox appends the dispatches of box b: where rows are at least a
// block long, the blocks that lie whole in one innermost run, those that
// a row begins inside, and the piece's partial ends run in separate
// dispatches (modeWhole, modeSeams, modeEnds); rows shorter than a
// vector of 16 elements run in blocks of whole rows (modeRows), the
// piece's last elements and short rows in pieces that do not start on
// such a block element by element (modeAll), as do pieces of at most
// the profile's elementsMax elements. No kernel holds both
// paths: on SIMD-on-CPU drivers such as lavapipe, a path that any lane
// of a SIMD group might take costs every lane its time, and the other
// path's code slowed even the blocks that skipped it.
func (r *run) planBox(dst []launch, b *box, t *target) []launch {
	p := r.newBoxPlan(b, t)
	n, kd0, first := b.n(), b.dims[0], b.base[r.op.inputs]
	switch {
	case t.prof.general || n <= t.prof.elementsMax:
		return append(dst, p.launch(spec.ModeAll, 0, p.elems))
	case p.rowChunks != 0:
		// Blocks of several rows, then the rows after the last whole
		// block, a block each.
		dst = append(dst, p.launch(spec.ModeWhole, 0, p.elems))
		if n%p.elems == 0 {
			return dst
		}
		p.rowChunks = 0
		return append(dst, p.launch(spec.ModeWhole, n-n%p.elems, kd0))
	case first%p.elems == 0 && kd0%p.elems == 0:
		return append(dst, p.launch(spec.ModeWhole, 0, p.elems))
	case kd0 >= p.elems && n/kd0 > 1 && !r.op.rows:
		return append(dst, p.launch(spec.ModeAll, 0, p.elems))
	case kd0 >= p.elems:
		dst = append(dst, p.launch(spec.ModeWhole, 0, p.elems))
		if n/kd0 > 1 {
			dst = append(dst, p.launch(spec.ModeSeams, 0, p.elems))
		}
		return append(dst, p.launch(spec.ModeEnds, 0, p.elems))
	}
	if g := r.rowGroup(b, t.prof.rows16); r.op.rows && t.prof.rowsFor(n, g) {
		// Blocks of whole rows, g elements each, then the last n % g
		// elements by modeAll.
		p.rowLen, p.gather = kd0, r.gathered(b, g)
		p.two = r.twoRuns(b, g, p.gather)
		dst = append(dst, p.launch(spec.ModeRows, 0, g))
		if n%g == 0 {
			return dst
		}
		return append(dst, p.launch(spec.ModeAll, n-n%g, p.elems))
	}
	return append(dst, p.launch(spec.ModeAll, 0, p.elems))
}

// A boxPlan is what the dispatches of one box share: the block, how
// each input is read, and the constants of modeRows.
type boxPlan struct {
	r         *run
	b         *box
	t         *target
	elems     uint32 // elements of a block
	rowChunks uint32 // modeWhole: the chunks of each row, where a block holds several rows
	aligned   uint32 // bit x: input x's vector loads are all 16-byte aligned
	inner     uint32 // bit x: input x is broadcast in dimension 0
	runon     uint32 // bit x: input x is broadcast nowhere
	pushed    uint32 // bit x: input x is a pushed scalar
	rowLen    uint32 // modeRows: the rows' length
	gather    uint32 // modeRows: the inputs read row by row (gathered)
	two       uint32 // modeRows: the inputs read as two runs (twoRuns)
}

// newBoxPlan chooses the block of box b and how each input is read.
func (r *run) newBoxPlan(b *box, t *target) boxPlan {
	p := boxPlan{r: r, b: b, t: t}
	chunks, kd0, rank := t.prof.chunksFor(r.op, r.width), b.dims[0], b.rank
	if uint64(b.n())*uint64(r.width) < t.prof.minChunks {
		chunks = 1
	}
	// A fold takes the profile's long blocks where rows hold them whole
	// (or run on, in one dimension), and else the op's own: one block
	// size, not each row length's divisor, so that folds build few
	// pipelines.
	if fc := uint32(16 * t.prof.foldChunks); r.fold != 0 && fc != 0 && kd0 >= fc && (rank == 1 || kd0%fc == 0) {
		chunks = fc / 16
	}
	out := r.op.inputs
	// Where rows are whole chunks shorter than a block that holds a whole
	// number of them, blocks of several rows (rowChunks, the chunks of
	// each), which the kernel steps through by the odometer; on lavapipe,
	// general-4d's rows of 16 bytes ran in 0.52 of the time that way,
	// rows of 16 f16 in 0.79, against a block a row. Else, where rows are
	// whole chunks, blocks of the most chunks that rows hold a whole
	// number of, so that no block straddles rows.
	if rank > 1 && kd0%16 == 0 && kd0 < 16*chunks && 16*chunks%kd0 == 0 &&
		b.base[out]%(16*chunks) == 0 && b.n() >= 16*chunks {
		p.rowChunks = kd0 / 16
	}
	for p.rowChunks == 0 && rank > 1 && kd0%16 == 0 && kd0%(16*chunks) != 0 {
		chunks--
	}
	// Rows of a chunk or more but shorter than a block: blocks of one
	// chunk, so that they take the vector paths (whole blocks and
	// seams), not the element path. (Rows of 17 to 31 u8 and f16 ran in
	// 0.33 to 0.53 of the time.)
	if p.rowChunks == 0 && rank > 1 && kd0 >= 16 && kd0 < 16*chunks {
		chunks = 1
	}
	p.elems = 16 * chunks
	// A contiguous input stays 16-byte aligned block after block (bit x
	// of aligned) when it starts aligned as the output does and steps
	// with the output through every row: rows come in whole vectors, or
	// the input is broadcast nowhere. Then the kernel skips its funnel
	// shifts. The inputs that stay constant along the innermost dimension
	// (inner) are read once per block instead of by vectors.
	for x := range out {
		m := b.masks >> (8 * x) & 0xff
		if r.ts[x] == nil {
			p.pushed |= 1 << x
			continue
		}
		if m == 0 {
			p.runon |= 1 << x
		}
		if m&1 != 0 {
			p.inner |= 1 << x
		}
		if m&1 == 0 && (int(b.base[x])-int(b.base[out]))*r.sizes[x]%16 == 0 && (rank == 1 || kd0%16 == 0 || m == 0) {
			p.aligned |= 1 << x
		}
	}
	return p
}

// launch returns the dispatch of mode over the box's blocks of elems
// elements, from element skip of the piece on. Each invocation owns a
// block, or a row boundary: in modeSeams each row's start but the
// first, in modeEnds the piece's start and end.
func (p *boxPlan) launch(mode, skip, elems uint32) launch {
	b, r, out := p.b, p.r, p.r.op.inputs
	first, n := b.base[out], b.n()
	ln := launch{kind: launchKernel, mode: mode, first: skip, elems: elems, ranges: b.ranges}
	ln.invocations = (first+n+elems-1)/elems - (first+skip)/elems
	switch mode {
	case spec.ModeSeams:
		ln.invocations, ln.role = n/b.dims[0]-1, roleSeams
	case spec.ModeEnds:
		ln.invocations = 2
	case spec.ModeRows:
		ln.role = roleRows
	}
	// The grid cannot fail to fit for a box a binding holds: pages hold
	// at most 2^30 bytes, and the smallest grid every device offers
	// holds 2^32 invocations.
	ln.grid, _ = core.SpreadGroups(uint64((ln.invocations+p.t.group-1)/p.t.group), p.t.grid)
	ln.spec, ln.nspec = p.specOf(mode, ln.role, elems)
	push := spec.ElementwisePush{Dims: b.dims, Magic: b.magic, Shifts: b.shift, Masks: b.masks, Base: b.base,
		GroupsX: ln.grid[0], Skip: skip, FoldLen: r.foldLen, FoldKeep: r.foldKeep}
	for i, bits := range r.bits {
		push.Scalar[i] = [2]uint32{uint32(bits), uint32(bits >> 32)}
	}
	ln.npush = copy(ln.push[:], pushBytes(&push))
	return ln
}

// specOf returns the specialization constants of a dispatch of mode in
// role's module over blocks of elems elements: the shared ones, then the
// op's own. The constants of other roles' modules are left 0.
func (p *boxPlan) specOf(mode uint32, ro role, elems uint32) (s [maxSpec]uint32, n int) {
	s[spec.Group], s[spec.Rank], s[spec.Pushed] = p.t.group, uint32(p.b.rank), p.pushed
	s[spec.Chunks], s[spec.Aligned], s[spec.Inner], s[spec.Mode] = elems/16, p.aligned, p.inner, mode
	switch ro {
	case roleMain:
		if mode == spec.ModeWhole {
			s[spec.RowChunks] = p.rowChunks
		}
	case roleRows:
		s[spec.RowLen], s[spec.Gather], s[spec.Two] = p.rowLen, p.gather, p.two
	case roleSeams:
		// Only inputs that run on are read as one run, which keeps the
		// whole blocks' alignment.
		s[spec.Aligned], s[spec.RunOn] = p.aligned&p.runon, p.runon
	}
	n = copy(s[spec.Op:], p.r.spec[:p.r.nspec])
	return s, int(spec.Op) + n
}

// rowGroup returns the elements of a modeRows block for box b, or 0
// where it takes none: rows of 2 to 15 elements in a piece of more than
// one dimension, blocks of the fewest whole rows that are also whole
// 16-element vectors (lcm(rows, 16), at most 240 elements), the piece
// starting on such a block in the output binding; with rows16 (see
// profile), blocks of 16 rows for rows of 1- and 2-byte elements that
// fit a 16-byte vector, where the piece starts on one.
func (r *run) rowGroup(b *box, rows16 bool) uint32 {
	k, out := b.dims[0], r.op.inputs
	if b.rank < 2 || k < 2 || k >= 16 {
		return 0
	}
	if rows16 && r.width <= 2 && k*uint32(r.width) <= 16 && b.base[out]%(16*k) == 0 {
		return 16 * k
	}
	g := k / uint32(gcd(uint64(k), 16)) * 16
	if b.base[out]%g != 0 {
		return 0
	}
	return g
}

// gathered returns the bit set of the inputs of box b that a modeRows
// block of g elements reads row by row: those neither broadcast along
// the rows (read once a row) nor running on through every block (read
// by vectors). An input runs on through a block when the dimensions it
// is not broadcast in, from the innermost, span a multiple of g
// elements, or all of the piece.
func (r *run) gathered(b *box, g uint32) uint32 {
	var set uint32
	for x := range r.op.inputs {
		m := b.masks >> (8 * x) & 0xff
		if r.ts[x] == nil || m&1 != 0 {
			continue
		}
		run := uint32(1)
		d := 0
		for ; d < b.rank && m>>d&1 == 0; d++ {
			run *= b.dims[d]
		}
		if d < b.rank && run%g != 0 {
			set |= 1 << x
		}
	}
	return set
}

// twoRuns returns the bit set of the inputs of box b that a modeRows
// block of g elements reads as two runs (shaders/elementwise.glsl,
// twoRuns), and from bit 8, which of them are broadcast in dimension 1:
// of the inputs broadcast along the rows or, among those read row by row
// (gather, as gathered returns it), in dimension 1, those whose offsets
// keep one step from row to row (0 while the dimensions from 1 on are
// broadcast, 1 while they are not) for at least a block's rows, so that
// no block sees two breaks. (Inputs whose rows run on through dimension
// 1 read fewer vectors that way only for very short rows, and more than
// doubled the size of the module.)
func (r *run) twoRuns(b *box, g, gather uint32) uint32 {
	var set uint32
	blockRows := uint64(g / b.dims[0])
	for x := range r.op.inputs {
		m := b.masks >> (8 * x)
		step0 := m&2 != 0
		if r.ts[x] == nil || !(m&1 != 0 || gather>>x&1 != 0 && step0) {
			continue
		}
		rows, d := uint64(1), 1
		for ; d < b.rank && (m>>d&1 != 0) == step0; d++ {
			rows *= uint64(b.dims[d])
		}
		if d == b.rank || rows >= blockRows {
			set |= 1<<x | (m>>1&1)<<(8+x)
		}
	}
	return set
}

// expandable reports whether the expand kernel can repeat each element
// of a source of srcLen elements r times into an output of outLen
// elements of w bytes: the rows must hold a 16-byte vector at least, the
// source lie in one page, and the output's elements be indexable.
func expandable(r, w, srcLen, outLen int, page uint64) bool {
	return r*w >= 16 && uint64(srcLen*w) <= page && outLen < math.MaxInt32 && outLen == srcLen*r
}
