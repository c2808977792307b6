package ops

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/tensor"
)

// Broadcast is Select's auto_broadcast attribute
// (../shared/specs/README.md, "Select").
type Broadcast uint8

const (
	// BroadcastNumpy, the default, broadcasts then and else to each other,
	// numpy style, and cond one way to the result.
	BroadcastNumpy Broadcast = iota
	// BroadcastNone requires cond, then and else to have equal shapes.
	BroadcastNone
	// BroadcastPDPD gives the output then's shape; else, then cond, must
	// broadcast one way to it.
	BroadcastPDPD
)

// String returns the attribute's value as OpenVINO spells it: "numpy",
// "none" or "pdpd".
func (b Broadcast) String() string {
	switch b {
	case BroadcastNumpy:
		return "numpy"
	case BroadcastNone:
		return "none"
	case BroadcastPDPD:
		return "pdpd"
	}
	return fmt.Sprintf("broadcast(%d)", uint8(b))
}

// SelectOption configures Select.
type SelectOption func(*selectConfig)

type selectConfig struct {
	broadcast Broadcast
}

// WithBroadcast sets Select's auto_broadcast attribute; the default is
// BroadcastNumpy.
func WithBroadcast(b Broadcast) SelectOption {
	return func(c *selectConfig) { c.broadcast = b }
}

// Select returns a new tensor whose elements are then's where cond is true
// and els's where it is false: OpenVINO Select-1 as
// ../shared/specs/README.md decides it. cond must be bool; then and els
// must share an element type, which is the output's; elements are copied
// bit for bit. The inputs must live on one device and are not modified.
//
// Every rule is checked before anything runs, and a rejected input gives
// an error matching ErrInvalid whose message is the one cpuref.Select
// gives for the same input, such as
//
//	select: cond shape [3 5] cannot be broadcast one way to [2 3 4 5] (axis -2: 3 vs 4)
//
// One limit is the kernels' own: a broadcast that keeps more than eight
// dimensions once adjacent ones that broadcast alike are merged is
// refused, saying so.
func Select(cond, then, els *device.Tensor, opts ...SelectOption) (*device.Tensor, error) {
	const op = "select"
	var c selectConfig
	for _, o := range opts {
		o(&c)
	}
	// The mode is an attribute of the op, so it is checked before the data.
	if c.broadcast > BroadcastPDPD {
		return nil, invalidf("%s: unknown broadcast %q (want none, numpy or pdpd)", op, c.broadcast)
	}
	if err := checkTensors(op, []string{"cond", "then", "else"}, cond, then, els); err != nil {
		return nil, err
	}
	if cond.DType() != tensor.Bool {
		return nil, invalidf("%s: cond must be bool, got %v", op, cond.DType())
	}
	if then.DType() != els.DType() {
		return nil, invalidf("%s: then is %v but else is %v", op, then.DType(), els.DType())
	}
	cs, ts, es := cond.Shape(), then.Shape(), els.Shape()
	var out tensor.Shape
	switch c.broadcast {
	case BroadcastNone:
		if !cs.Equal(ts) || !ts.Equal(es) {
			return nil, invalidf("%s: broadcast none needs equal shapes: cond %v then %v else %v", op, cs, ts, es)
		}
		out = ts
	case BroadcastNumpy:
		// Step 1: then and else broadcast each other.
		var clash *tensor.Clash
		out, clash = tensor.Broadcast(ts, es)
		if clash != nil {
			return nil, invalidf("%s: then shape %v and else shape %v do not broadcast (%v)", op, ts, es, clash)
		}
		// Step 2: cond fits that result one way; it never widens it.
		if err := fitsOneWay(op, "cond", cs, out); err != nil {
			return nil, err
		}
	case BroadcastPDPD:
		out = ts
		if err := fitsOneWay(op, "else", es, out); err != nil {
			return nil, err
		}
		if err := fitsOneWay(op, "cond", cs, out); err != nil {
			return nil, err
		}
	}
	return blend(op, then.DType(), out, cond, operand{t: then}, operand{t: els})
}

// fitsOneWay reports, in cpuref's words, whether the operand's shape src
// broadcasts one way to dst.
func fitsOneWay(op, name string, src, dst tensor.Shape) error {
	if clash := tensor.FitsOneWay(src, dst); clash != nil {
		return invalidf("%s: %s shape %v cannot be broadcast one way to %v (%v)", op, name, src, dst, clash)
	}
	return nil
}

// operand is then or else of a blend: a tensor, or when t is nil a
// scalar's bits, which the kernel takes as push constants.
type operand struct {
	t    *device.Tensor
	bits uint64
}

func (o operand) shape() tensor.Shape {
	if o.t == nil {
		return nil
	}
	return o.t.Shape()
}

// maxOutputBytes mirrors the largest tensor tensor.New makes, so that an output
// too large to address is rejected with cpuref's words.
const maxOutputBytes = 1 << 48

// blend returns a new tensor of shape out and element type dt, holding
// a's element where cond's is true and b's where it is false. Each
// operand's shape must fit out one way and a and b must hold dt. If a
// dispatch fails, the output is freed.
func blend(op string, dt tensor.DType, out tensor.Shape, cond *device.Tensor, a, b operand) (*device.Tensor, error) {
	if err := out.Validate(); err != nil {
		return nil, invalidf("%s: output: %v", op, err)
	}
	n := out.NumElements()
	if n > maxOutputBytes/dt.Size() {
		return nil, invalidf("%s: output: shape %v of %v: %d elements are too many to address", op, out, dt, n)
	}
	l := newLayout(out, cond.Shape(), a.shape(), b.shape())
	if len(l.dims) > maxRank {
		return nil, rankError(op, l)
	}
	d := cond.Device()
	res, err := d.Empty(dt, out)
	if err != nil {
		return nil, fmt.Errorf("%s: output: %w", op, err)
	}
	if n == 0 {
		return res, nil
	}
	v, err := selectFamily(l, a, b, dt.Size()).pick(d)
	if err == nil {
		err = dispatchSelect(d, l, res, cond, a, b, v)
	}
	if err != nil {
		res.Free()
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return res, nil
}

// The select kernels are shaders/select*.comp, one source compiled once
// per variant: bindings cond, then, else, out and 28 words of push
// constants, which every variant reads alike.
var selectVariants = []*variant{
	{name: "portable", kernel: kernel("select", 4, 28)},
	{name: "texel", kernel: selectTexelKernel("select_texel"), needs: hasSelectTexels},
	{name: "texel64", kernel: selectTexelKernel("select_texel64"), needs: func(d *device.Device) bool {
		return hasSelectTexels(d) && d.Info().Features.ShaderInt64
	}},
}

// selectTexelKernel declares a variant that reads its inputs through
// rgba32ui texel buffers; bools come 16 to a texel, so one load covers a
// block's chunk of cond as it does in the portable kernel.
func selectTexelKernel(name string) *device.Kernel {
	k := kernel(name, 4, 28)
	k.Kinds = []device.BindingKind{device.TexelRGBA32UI, device.TexelRGBA32UI, device.TexelRGBA32UI, device.Storage}
	return k
}

func hasSelectTexels(d *device.Device) bool { return d.HasTexels(device.TexelRGBA32UI) }

// selectClass is the part of a plan that can change which variant is
// fastest besides the element width: whether every tensor operand runs
// contiguously beside the output (scalars pushed as constants count as
// contiguous: they cost no loads), or some are broadcast.
type selectClass int

const (
	selectSame selectClass = iota
	selectBroadcast
	selectClasses
)

func (c selectClass) String() string { return [...]string{"same", "bcast"}[c] }

// selectFamilies holds a family per element width (1, 2, 4 and 8 bytes)
// and class, keyed "select/w4/same" and so on.
var selectFamilies = func() (fs [9][selectClasses]*family) {
	for _, w := range []int{1, 2, 4, 8} {
		for c := range selectClasses {
			fs[w][c] = register(&family{
				key:      fmt.Sprintf("select/w%d/%v", w, c),
				variants: selectVariants,
				measure:  func(d *device.Device, v *variant) (float64, error) { return measureSelect(d, v, w, c) },
			})
		}
	}
	return fs
}()

// selectFamily returns the family that runs layout l of w-byte elements.
func selectFamily(l layout, a, b operand, w int) *family {
	c := selectSame
	if len(l.dims) != 1 || l.strides[0][0] != 1 || a.t != nil && l.strides[1][0] != 1 || b.t != nil && l.strides[2][0] != 1 {
		c = selectBroadcast
	}
	return selectFamilies[w][c]
}

// measureBytes is the size of each of then, else and the output in the
// run that measureSelect times: large enough that a dispatch's fixed
// cost is small beside it, small enough that measuring every variant of
// a family on first use takes a fraction of a second on lavapipe.
const measureBytes = 16 << 20

// measureSelect times v on d over measureBytes of w-byte elements, or a
// page where pages are smaller (tests' tiny pages would make it
// thousands of dispatches), in class c: same-shape operands, or cond
// broadcast along rows and else along columns ([r, 1] and [1, k]
// against [r, k], with rows k of up to 1024 elements). It returns the
// fastest of five timed runs after one that builds the pipeline: other
// work on the machine only ever slows a run down, and on a CPU driver it
// comes in bursts.
func measureSelect(d *device.Device, v *variant, w int, c selectClass) (float64, error) {
	dt := map[int]tensor.DType{1: tensor.U8, 2: tensor.U16, 4: tensor.U32, 8: tensor.U64}[w]
	n := int(min(measureBytes, d.PageSize())) / w
	k := min(n, 1024)
	out := tensor.Shape{n / k, k}
	shapes := []tensor.Shape{out, out, out}
	if c == selectBroadcast {
		shapes = []tensor.Shape{{n / k, 1}, out, {1, k}}
	}
	var ts []*device.Tensor
	defer func() {
		for _, t := range ts {
			t.Free()
		}
	}()
	for i, s := range append(shapes, out) {
		t, err := d.Empty([]tensor.DType{tensor.Bool, dt, dt, dt}[i], s)
		if err != nil {
			return 0, err
		}
		ts = append(ts, t)
	}
	l := newLayout(out, shapes...)
	run := func() error { return dispatchSelect(d, l, ts[3], ts[0], operand{t: ts[1]}, operand{t: ts[2]}, v) }
	if err := run(); err != nil {
		return 0, err
	}
	if err := d.Sync(); err != nil {
		return 0, err
	}
	best := math.Inf(1)
	for range 5 {
		ns, err := d.GPUTime(run)
		if err != nil {
			return 0, err
		}
		best = min(best, ns)
	}
	return best, nil
}

// selectTuning shapes the select kernel's grid: invocations per
// workgroup (at most; the device may allow fewer) and, by element size,
// 16-element chunks per invocation, so that each invocation writes 64
// bytes or more (fewer chunks where rows of a whole number of chunks
// need them). Tests change it to reach other code paths cheaply, such
// as grids of more than 65535 workgroups, or texel views smaller than a
// page.
var selectTuning = struct {
	group  int
	chunks [9]int
	// texelBytes, when nonzero, stands for the device's
	// maxTexelBufferElements in bytes of rgba32ui texels.
	texelBytes uint64
}{group: 256, chunks: [9]int{1: 4, 2: 2, 4: 1, 8: 1}}

// selectSpan returns the bytes that one binding of variant v may cover:
// a page, or for a texel variant the largest power of two that its views
// can hold (maxTexelBufferElements), if that is less. Pages are powers
// of two too, so pieces planned for the smaller span still lie in one
// page each. While device.HasTexels admits texel variants only where a
// whole page fits, the page is the span; tests shrink the limit to plan
// views smaller than pages.
func selectSpan(d *device.Device, v *variant) int {
	span := d.PageSize()
	if v.kernel.Kinds != nil {
		limit := selectTuning.texelBytes
		if limit == 0 {
			limit = uint64(d.Info().Limits.MaxTexelBufferElements) * 16
		}
		span = min(span, uint64(1)<<(bits.Len64(limit)-1))
	}
	return int(span)
}

// b2u returns 1 for true, 0 for false: a bool specialization constant.
func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// dispatchSelect fills res with variant v, one dispatch per piece of the
// layout. An operand without a tensor is pushed as a constant.
func dispatchSelect(d *device.Device, l layout, res, cond *device.Tensor, a, b operand, v *variant) error {
	ts := []*device.Tensor{cond, a.t, b.t, res}
	w := res.DType().Size()
	lim := d.Info().Limits
	group := uint32(min(selectTuning.group, int(lim.MaxComputeWorkGroupInvocations), int(lim.MaxComputeWorkGroupSize[0])))
	var pushed uint32
	if a.t == nil {
		pushed |= 1
	}
	if b.t == nil {
		pushed |= 2
	}
	sizes := []int{1, w, w, w}
	return l.spans(ts, sizes, selectSpan(d, v), func(s *span) error {
		rank, kd, masks := s.rank, s.dims, s.masks
		base := [4]uint32(s.base)
		n := uint32(1)
		for i := range rank {
			n *= kd[i]
		}
		// Where rows are whole chunks, blocks of the most chunks that
		// rows hold a whole number of, so that no block straddles rows.
		chunks := uint32(selectTuning.chunks[w])
		for rank > 1 && kd[0]%16 == 0 && kd[0]%(16*chunks) != 0 {
			chunks--
		}
		elems := 16 * chunks
		// Contiguous operands stay 16-byte aligned block after block when
		// they start aligned as the output does and rows come in whole
		// vectors; then the kernel can skip its funnel shifts.
		aligned := uint32(1)
		if rank > 1 && kd[0]%16 != 0 {
			aligned = 0
		}
		for x := range 3 {
			if ts[x] != nil && masks>>(8*x)&1 == 0 && (int(base[x])-int(base[3]))*sizes[x]%16 != 0 {
				aligned = 0
			}
		}
		// The operands that stay constant along the innermost dimension,
		// which the kernel's block path reads once instead of by vectors.
		var inner uint32
		for x := range 3 {
			if masks>>(8*x)&1 != 0 {
				inner |= 1 << x
			}
		}
		launch := func(base [4]uint32, n uint32, whole bool) error {
			kd := kd
			if rank == 1 {
				kd[0] = n
			}
			blocks := (base[3]+n+elems-1)/elems - base[3]/elems
			grid, err := d.Grid(uint64((blocks + group - 1) / group))
			if err != nil {
				return err
			}
			push := words{}.u32(kd[:]...).u32(s.magic[:]...).u32(s.shift[:]...).u32(masks).u32(base[:]...).u32(grid[0]).u64(a.bits).u64(b.bits)
			spec := []uint32{group, uint32(w), uint32(rank), pushed, chunks, aligned, inner, b2u(whole)}
			return d.Dispatch(v.kernel, spec, s.args, push, grid)
		}
		// Blocks that are whole and lie in one innermost run take a path
		// without the element-by-element code: on SIMD-on-CPU drivers
		// such as lavapipe, a path that any lane of a SIMD group might
		// take costs every lane its time. A kernel told so (WHOLE) runs
		// only such blocks: every block of a piece whose rows and start
		// are whole blocks, or the middle of a one-dimensional piece,
		// whose ends then run apart.
		first, end := base[3], base[3]+n
		var err error
		lo, hi := (first+elems-1)/elems*elems, end/elems*elems
		switch {
		case rank > 1 && first%elems == 0 && kd[0]%elems == 0:
			err = launch(base, n, true)
		case rank == 1 && lo < hi:
			for _, r := range [][2]uint32{{first, lo}, {lo, hi}, {hi, end}} {
				if r[0] == r[1] {
					continue
				}
				sub := base
				for x := range 3 {
					if ts[x] != nil && inner>>x&1 == 0 {
						sub[x] += r[0] - first
					}
				}
				sub[3] = r[0]
				if err = launch(sub, r[1]-r[0], r[0] == lo); err != nil {
					break
				}
			}
		default:
			err = launch(base, n, false)
		}
		return err
	})
}
