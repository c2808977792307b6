package ops

import (
	"encoding/binary"
	"fmt"
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

// SelectOption configures Select, and the binary mask ops alike;
// WithBroadcast makes one. It is a value, not a function, so that
// passing options allocates nothing.
type SelectOption struct {
	broadcast Broadcast
}

// selectConfig is what the options of a call come to: the last of each
// kind wins.
type selectConfig struct {
	broadcast Broadcast
}

func configure(opts []SelectOption) selectConfig {
	var c selectConfig
	for _, o := range opts {
		c.broadcast = o.broadcast
	}
	return c
}

// WithBroadcast sets Select's auto_broadcast attribute; the default is
// BroadcastNumpy.
func WithBroadcast(b Broadcast) SelectOption { return SelectOption{broadcast: b} }

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
	c := configure(opts)
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
	cs, ts, es := cond.Dims(), then.Dims(), els.Dims()
	var buf [maxRank]int
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
		out, clash = tensor.AppendBroadcast(buf[:0], ts, es)
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
		// Quoting a copy of dst keeps it from escaping (see blend).
		return invalidf("%s: %s shape %v cannot be broadcast one way to %v (%v)", op, name, src, dst.Clone(), clash)
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
	return o.t.Dims()
}

// blend returns a new tensor of shape out and element type dt, holding
// a's element where cond's is true and b's where it is false. Each
// operand's shape must fit out one way and a and b must hold dt; out may
// be on the caller's stack (see newElementwise).
func blend(op string, dt tensor.DType, out tensor.Shape, cond *device.Tensor, a, b operand) (*device.Tensor, error) {
	return newElementwise(op, cond.Device(), dt, out, &selectFamilies,
		func(res *device.Tensor) elementwise { return selectRun(res, cond, a, b) },
		cond.Dims(), a.shape(), b.shape())
}

// selectRun returns the elementwise run that fills res from cond, a and
// b; its variant is yet to be chosen.
func selectRun(res, cond *device.Tensor, a, b operand) elementwise {
	w := res.DType().Size()
	return elementwise{
		ts:     [maxOperands]*device.Tensor{cond, a.t, b.t, res},
		sizes:  [maxOperands]int{1, w, w, w},
		bits:   [2]uint64{a.bits, b.bits},
		width:  w,
		tuning: &selectTuning,
		direct: selectDirect,
	}
}

// selectDirect fills the output of select run e without the select
// kernel where cond is one element whose value the host can read at once
// (device.Tensor.Peek): the output is then the operand cond picks,
// broadcast. A scalar is filled (vkCmdFillBuffer), and an operand
// broadcast only along outer axes, such as a row over every row, tiled
// (device.Device.Tile): one that holds every element is one copy. On
// lavapipe these run as memcpy and memset, 2.5 times as fast as the
// kernel in geometric mean (BENCHMARKS.md at a602088, "One-element
// conds"). An operand broadcast only along inner axes, such as a
// column, is expanded where that beats the kernel (expandWins). Other
// broadcasts, and pushed 8-byte scalars whose halves differ, take the
// kernel.
func selectDirect(e *elementwise, d *device.Device) (bool, error) {
	cond, res := e.ts[0], e.ts[3]
	var c [1]byte
	if cond.Len() != 1 || !cond.Peek(c[:]) {
		return false, nil
	}
	x := 2
	if c[0] != 0 {
		x = 1
	}
	t, bits := e.ts[x], e.bits[x-1]
	known := t == nil // whether bits holds the picked value
	if t != nil && t.Len() == 1 {
		var b [8]byte
		known = t.Peek(b[:e.width])
		bits = binary.LittleEndian.Uint64(b[:])
	}
	if word, ok := fillWord(bits, e.width); ok && known {
		return true, d.Fill(res, word)
	}
	if t == nil {
		return false, nil
	}
	if repeats(t.Dims(), res.Dims()) {
		return true, d.Tile(res, t)
	}
	if r, ok := rowsOf(t.Dims(), res.Dims()); ok && expandWins(r, e.width) {
		return expand(d, expandKernel(d), res, t, r)
	}
	return false, nil
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

// The select kernels are shaders/select*.comp, one source compiled once
// per variant, and once more per variant for blocks of whole rows
// (select*_rows.comp) and for row seams (select*_seams.comp): bindings
// cond, then, else, out and 30 words of push constants, which every
// variant reads alike.
var selectVariants = []*variant{
	{name: "portable", kernel: kernel("select", 4, 30), rows: kernel("select_rows", 4, 30), seams: kernel("select_seams", 4, 30)},
	{name: "texel", kernel: selectTexelKernel("select_texel"), rows: selectTexelKernel("select_texel_rows"),
		seams: selectTexelKernel("select_texel_seams"), needs: hasSelectTexels},
	{name: "texel64", kernel: selectTexelKernel("select_texel64"), rows: selectTexelKernel("select_texel64_rows"),
		seams: selectTexelKernel("select_texel64_seams"), needs: func(d *device.Device) bool {
			return hasSelectTexels(d) && d.Info().Features.ShaderInt64
		}},
}

// selectTexelKernel declares a variant that reads its inputs through
// rgba32ui texel buffers; bools come 16 to a texel, so one load covers a
// block's chunk of cond as it does in the portable kernel.
func selectTexelKernel(name string) *device.Kernel {
	k := kernel(name, 4, 30)
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
var selectFamilies = elementwiseFamilies("select", func(int) []*variant { return selectVariants }, measureSelect)

// measureSelect times v on d as measureElementwise does, over w-byte
// elements: a select of three tensors, which mostly loads, plus one with
// then and else pushed, as Where's scalars are, which mostly stores,
// its time scaled to the bytes of the first so that both weigh alike. A
// GPU may tie variants on the first and not on the second: on an H100,
// f32 with scalars took 0.085 ms with 16-byte stores and 0.055 ms with
// the 32-byte stores of texel64, three tensors 0.084 ms with either.
func measureSelect(d *device.Device, v *variant, w int, c selectClass) (float64, error) {
	dt := uintOfSize(w)
	run := func(dts ...tensor.DType) (float64, error) {
		return measureElementwise(d, dts, c, func(l *layout, ts *[maxOperands]*device.Tensor) error {
			e := selectRun(ts[3], ts[0], operand{t: ts[1]}, operand{t: ts[2]})
			e.v = v
			return e.dispatch(d, l)
		})
	}
	loads, err := run(tensor.Bool, dt, dt, dt)
	if err != nil {
		return 0, err
	}
	stores, err := run(tensor.Bool, tensor.Invalid, tensor.Invalid, dt)
	if err != nil {
		return 0, err
	}
	return loads + stores*float64(1+3*w)/float64(1+w), nil
}

// uintOfSize returns the unsigned integer type of w bytes.
func uintOfSize(w int) tensor.DType {
	return map[int]tensor.DType{1: tensor.U8, 2: tensor.U16, 4: tensor.U32, 8: tensor.U64}[w]
}

// selectTuning shapes the select kernel's grid (elementwiseTuning): by
// element size, chunks such that each invocation writes 64 bytes or more
// (fewer chunks where rows of a whole number of chunks need them).
var selectTuning = elementwiseTuning{group: 256, chunks: [9]int{1: 4, 2: 2, 4: 1, 8: 1}, gpuChunks: 1, rowsMin: elementwiseRowsMin, gpuRowsMax: elementwiseGPURowsMax}

// texelBytes, when nonzero, stands for the device's
// maxTexelBufferElements in bytes of rgba32ui texels: tests shrink it to
// plan texel views smaller than a page.
var texelBytes uint64

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
		limit := texelBytes
		if limit == 0 {
			limit = uint64(d.Info().Limits.MaxTexelBufferElements) * 16
		}
		span = min(span, uint64(1)<<(bits.Len64(limit)-1))
	}
	return int(span)
}

// b2u returns 1 for true, 0 for false: a bool as a push or
// specialization constant.
func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}
