package ops

import (
	"fmt"
	"slices"

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
	if err := dispatchSelect(d, l, res, cond, a, b); err != nil {
		res.Free()
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return res, nil
}

// selectKernel is shaders/select.comp: bindings cond, then, else, out
// and 28 words of push constants.
var selectKernel = kernel("select", 4, 28)

// selectTuning shapes the select kernel's grid: invocations per
// workgroup (at most; the device may allow fewer) and, by element size,
// 16-element chunks per invocation, so that each invocation writes 64
// bytes or more. Tests change it to reach other code paths cheaply, such
// as grids of more than 65535 workgroups.
var selectTuning = struct {
	group  int
	chunks [9]int
}{group: 256, chunks: [9]int{1: 4, 2: 2, 4: 1, 8: 1}}

// dispatchSelect fills res, one dispatch per piece of the layout. An
// operand without a tensor is pushed as a constant.
func dispatchSelect(d *device.Device, l layout, res, cond *device.Tensor, a, b operand) error {
	ts := []*device.Tensor{cond, a.t, b.t, res}
	w := res.DType().Size()
	sizes := []int{1, w, w, w}
	lim := d.Info().Limits
	group := uint32(min(selectTuning.group, int(lim.MaxComputeWorkGroupInvocations), int(lim.MaxComputeWorkGroupSize[0])))
	chunks := uint32(selectTuning.chunks[w])
	elems := 16 * chunks
	var pushed uint32
	if a.t == nil {
		pushed |= 1
	}
	if b.t == nil {
		pushed |= 2
	}
	strides := append(slices.Clone(l.strides), tensor.Shape(l.dims).Strides())
	for _, p := range l.pieces(sizes, int(d.PageSize())) {
		// A leading dimension of one is a prefix coordinate like the others.
		dims, k := p.dims, len(l.dims)-len(p.dims)
		for len(dims) > 1 && dims[0] == 1 {
			dims, k = dims[1:], k+1
		}
		rank := len(dims)
		var (
			args  [4]device.Arg
			base  [4]uint32
			masks uint32
		)
		for x, t := range ts {
			if t == nil {
				continue
			}
			for i, st := range strides[x][k:] {
				if st == 0 && x < 3 {
					masks |= 1 << (8*x + rank - 1 - i)
				}
			}
			lo := uint64(p.first[x] * sizes[x])
			arg, skip, err := t.Window(lo, lo+uint64((p.span(strides[x])+1)*sizes[x]))
			if err != nil {
				return err
			}
			args[x], base[x] = arg, uint32(skip/uint64(sizes[x]))
		}
		args[3].Write = true
		for x := 1; x < 3; x++ {
			if ts[x] == nil {
				args[x] = args[0] // bound but never read
			}
		}

		// Shape and reciprocals, innermost first.
		var kd, magic [8]uint32
		var shifts [2]uint32
		n := uint32(1)
		for i := range rank {
			kd[i] = uint32(dims[rank-1-i])
			n *= kd[i]
			m, s := reciprocal(kd[i])
			magic[i] = m
			shifts[i/4] |= s << (8 * (i % 4))
		}
		// Contiguous operands stay 16-byte aligned block after block when
		// they start aligned as the output does and rows come in whole
		// vectors; then the kernel can skip its funnel shifts.
		aligned := uint32(1)
		if rank > 1 && dims[rank-1]%16 != 0 {
			aligned = 0
		}
		for x := range 3 {
			if ts[x] != nil && masks>>(8*x)&1 == 0 && (int(base[x])-int(base[3]))*sizes[x]%16 != 0 {
				aligned = 0
			}
		}
		blocks := (base[3]+n+elems-1)/elems - base[3]/elems
		grid, err := d.Grid(uint64((blocks + group - 1) / group))
		if err != nil {
			return err
		}
		push := words{}.u32(kd[:]...).u32(magic[:]...).u32(shifts[:]...).u32(masks).u32(base[:]...).u32(grid[0]).u64(a.bits).u64(b.bits)
		spec := []uint32{group, uint32(w), uint32(rank), pushed, chunks, aligned}
		if err := d.Dispatch(selectKernel, spec, args[:], push, grid); err != nil {
			return err
		}
	}
	return nil
}
