package ops

import (
	"fmt"
	"math"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/tensor"
)

// The mask ops of ../shared/specs/masks.md share everything but a line
// of shaders/mask.glsl: Select's planner (layout, pieces, spans), its
// broadcast rules and options, Where's scalars, and one kernel family per
// element width measured as Select's are. An op is a maskOp value, its
// exported function in compare.go, logical.go or classify.go, and an
// OP_ constant in the shader.

// maskOp is one mask op: its name (as the CLI spells it, and as errors
// begin), the shader's OP_ code, and which element types it takes.
type maskOp struct {
	name string
	code uint32
	// swap runs the op as code with a and b exchanged: Greater is Less
	// with its operands the other way round.
	swap bool
	// types is what the inputs must be, for the error message; accept
	// checks it. nil accepts every type.
	types  string
	accept func(tensor.DType) bool
}

// The shader's OP_ codes (shaders/mask.glsl).
const (
	opEQ uint32 = iota
	opNE
	opLT
	opLE
	opAnd
	opOr
	opXor
	opNot
	opIsNaN
	opIsInf
	opIsFinite
)

// keyOf is how the kernel reads elements of dt: the shader's KEY_ codes.
func keyOf(dt tensor.DType) uint32 {
	switch {
	case dt == tensor.Bool:
		return 2
	case dt.IsSigned():
		return 1
	case dt == tensor.F16:
		return 3
	case dt == tensor.BF16:
		return 4
	case dt == tensor.F32:
		return 5
	case dt == tensor.F64:
		return 6
	}
	return 0
}

// binary checks a and b for m and runs it. Each is a *device.Tensor or a
// scalar as Where takes them; a scalar is converted exactly to the
// tensor's element type and then stands for a 0-D tensor, so that
// broadcasting treats it as cpuref treats a 0-D operand.
func (m *maskOp) binary(a, b any, opts []SelectOption) (*device.Tensor, error) {
	op := m.name
	var c selectConfig
	for _, o := range opts {
		o(&c)
	}
	if c.broadcast > BroadcastPDPD {
		return nil, invalidf("%s: unknown broadcast %q (want none, numpy or pdpd)", op, c.broadcast)
	}
	args := [2]whereArg{}
	var ref *device.Tensor // the first tensor operand
	for i, v := range []any{a, b} {
		name := [...]string{"a", "b"}[i]
		if t, ok := v.(*device.Tensor); ok {
			if err := checkTensor(op, name, t); err != nil {
				return nil, err
			}
			if ref != nil && t.Device() != ref.Device() {
				return nil, invalidf("%s: b is on another device than a", op)
			}
			if ref == nil {
				ref = t
			}
			args[i] = whereArg{operand: operand{t: t}, name: name, dt: t.DType()}
			continue
		}
		arg, err := whereOperand(op, name, v, nil)
		if err != nil {
			return nil, err
		}
		args[i] = arg
	}
	if ref == nil {
		return nil, invalidf("%s: a and b are both scalars; one must be a tensor", op)
	}
	dt := ref.DType()
	if args[0].t != nil && args[1].t != nil && args[0].dt != args[1].dt {
		return nil, invalidf("%s: a is %v but b is %v", op, args[0].dt, args[1].dt)
	}
	if err := m.check(dt); err != nil {
		return nil, err
	}
	for i := range args {
		if err := args[i].convert(op, dt); err != nil {
			return nil, err
		}
	}
	as, bs := args[0].shape(), args[1].shape()
	var out tensor.Shape
	switch c.broadcast {
	case BroadcastNone:
		if !as.Equal(bs) {
			return nil, invalidf("%s: broadcast none needs equal shapes: a %v b %v", op, as, bs)
		}
		out = as
	case BroadcastPDPD:
		if err := fitsOneWay(op, "b", bs, as); err != nil {
			return nil, err
		}
		out = as
	default:
		var clash *tensor.Clash
		if out, clash = tensor.Broadcast(as, bs); clash != nil {
			return nil, invalidf("%s: a shape %v and b shape %v do not broadcast (%v)", op, as, bs, clash)
		}
	}
	x, y := args[0].operand, args[1].operand
	if m.swap {
		x, y = y, x
	}
	return runMask(op, m.code, 0, ref.Device(), dt, out, x, y)
}

// unary checks a for m and runs it; detect is IsInf's attributes.
func (m *maskOp) unary(a *device.Tensor, detect uint32) (*device.Tensor, error) {
	if err := checkTensor(m.name, "a", a); err != nil {
		return nil, err
	}
	if err := m.check(a.DType()); err != nil {
		return nil, err
	}
	// b is never read: it is laid out as a, so that it merges as a does.
	return runMask(m.name, m.code, detect, a.Device(), a.DType(), a.Shape(), operand{t: a}, operand{})
}

func (m *maskOp) check(dt tensor.DType) error {
	if m.accept != nil && !m.accept(dt) {
		return invalidf("%s: a must be %s, got %v", m.name, m.types, dt)
	}
	return nil
}

func isBool(dt tensor.DType) bool { return dt == tensor.Bool }

// runMask returns the bool tensor of shape out holding op code of a and
// b, elements of type dt; unary ops ignore b, whose shape is then a's.
// If a dispatch fails, the output is freed.
func runMask(op string, code, detect uint32, d *device.Device, dt tensor.DType, out tensor.Shape, a, b operand) (*device.Tensor, error) {
	if err := out.Validate(); err != nil {
		return nil, invalidf("%s: output: %v", op, err)
	}
	n := out.NumElements()
	if n > maxOutputBytes {
		return nil, invalidf("%s: output: shape %v of bool: %d elements are too many to address", op, out, n)
	}
	bShape := b.shape()
	if b.t == nil && code >= opNot {
		bShape = a.shape()
	}
	l := newLayout(out, a.shape(), bShape)
	if len(l.dims) > maxRank {
		return nil, rankError(op, l)
	}
	res, err := d.Empty(tensor.Bool, out)
	if err != nil {
		return nil, fmt.Errorf("%s: output: %w", op, err)
	}
	if n == 0 {
		return res, nil
	}
	k := maskKernel{code: code, key: keyOf(dt), detect: detect}
	v, err := maskFamily(l, a, b, dt.Size()).pick(d)
	if err == nil {
		err = k.dispatch(d, l, res, a, b, dt.Size(), v)
	}
	if err != nil {
		res.Free()
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return res, nil
}

// The mask kernels are shaders/mask*.comp, one source compiled once per
// variant as Select's are: bindings a, b, out and 28 words of push
// constants.
var maskVariants = []*variant{
	{name: "portable", kernel: kernel("mask", 3, 28)},
	{name: "texel", kernel: maskTexelKernel("mask_texel"), needs: hasSelectTexels},
	{name: "texel64", kernel: maskTexelKernel("mask_texel64"), needs: func(d *device.Device) bool {
		return hasSelectTexels(d) && d.Info().Features.ShaderInt64
	}},
}

func maskTexelKernel(name string) *device.Kernel {
	k := kernel(name, 3, 28)
	k.Kinds = []device.BindingKind{device.TexelRGBA32UI, device.TexelRGBA32UI, device.Storage}
	return k
}

// maskFamilies holds a family per input element width and class, keyed
// "mask/w4/same" and so on, as selectFamilies does.
var maskFamilies = func() (fs [9][selectClasses]*family) {
	for _, w := range []int{1, 2, 4, 8} {
		for c := range selectClasses {
			fs[w][c] = register(&family{
				key:      fmt.Sprintf("mask/w%d/%v", w, c),
				variants: maskVariants,
				measure:  func(d *device.Device, v *variant) (float64, error) { return measureMask(d, v, w, c) },
			})
		}
	}
	return fs
}()

// maskFamily returns the family that runs layout l of w-byte inputs:
// "same" when every tensor operand runs contiguously beside the output.
func maskFamily(l layout, a, b operand, w int) *family {
	c := selectSame
	if len(l.dims) != 1 || a.t != nil && l.strides[0][0] != 1 || b.t != nil && l.strides[1][0] != 1 {
		c = selectBroadcast
	}
	return maskFamilies[w][c]
}

// measureMask times v on d as measureSelect does: less-than of w-byte
// unsigned integers over measureBytes (or a page) per input, same-shape
// or with a broadcast along rows and b along columns.
func measureMask(d *device.Device, v *variant, w int, c selectClass) (float64, error) {
	dt := map[int]tensor.DType{1: tensor.U8, 2: tensor.U16, 4: tensor.U32, 8: tensor.U64}[w]
	n := int(min(measureBytes, d.PageSize())) / w
	k := min(n, 1024)
	out := tensor.Shape{n / k, k}
	shapes := []tensor.Shape{out, out}
	if c == selectBroadcast {
		shapes = []tensor.Shape{{n / k, 1}, {1, k}}
	}
	var ts []*device.Tensor
	defer func() {
		for _, t := range ts {
			t.Free()
		}
	}()
	for i, s := range append(shapes, out) {
		t, err := d.Empty([]tensor.DType{dt, dt, tensor.Bool}[i], s)
		if err != nil {
			return 0, err
		}
		ts = append(ts, t)
	}
	l := newLayout(out, shapes...)
	k2 := maskKernel{code: opLT, key: keyOf(dt)}
	run := func() error { return k2.dispatch(d, l, ts[2], operand{t: ts[0]}, operand{t: ts[1]}, w, v) }
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

// maskTuning shapes the mask kernel's grid as selectTuning does
// select's: invocations per workgroup and, by input element size,
// 16-element chunks per invocation. Tests change it to reach other code
// paths cheaply.
var maskTuning = struct {
	group  int
	chunks [9]int
}{group: 256, chunks: [9]int{1: 4, 2: 2, 4: 2, 8: 2}}

// maskKernel is what picks the pipeline besides the plan: the op, how
// elements are read, IsInf's attributes.
type maskKernel struct {
	code, key, detect uint32
}

// dispatch fills res with variant v, one dispatch per piece of the
// layout, as dispatchSelect does. An operand without a tensor is pushed
// as a constant.
func (k maskKernel) dispatch(d *device.Device, l layout, res *device.Tensor, a, b operand, w int, v *variant) error {
	ts := []*device.Tensor{a.t, b.t, res}
	lim := d.Info().Limits
	group := uint32(min(maskTuning.group, int(lim.MaxComputeWorkGroupInvocations), int(lim.MaxComputeWorkGroupSize[0])))
	var pushed uint32
	if a.t == nil {
		pushed |= 1
	}
	if b.t == nil {
		pushed |= 2
	}
	sizes := []int{w, w, 1}
	return l.spans(ts, sizes, selectSpan(d, v), func(s *span) error {
		rank, kd, masks := s.rank, s.dims, s.masks
		base := [3]uint32(s.base)
		n := uint32(1)
		for i := range rank {
			n *= kd[i]
		}
		chunks := uint32(maskTuning.chunks[w])
		for rank > 1 && kd[0]%16 == 0 && kd[0]%(16*chunks) != 0 {
			chunks--
		}
		elems := 16 * chunks
		aligned := uint32(1)
		if rank > 1 && kd[0]%16 != 0 {
			aligned = 0
		}
		var inner uint32
		for x := range 2 {
			if masks>>(8*x)&1 != 0 {
				inner |= 1 << x
			}
			if pushed>>x&1 == 0 && masks>>(8*x)&1 == 0 && (int(base[x])-int(base[2]))*w%16 != 0 {
				aligned = 0
			}
		}
		launch := func(base [3]uint32, n uint32, whole bool) error {
			kd := kd
			if rank == 1 {
				kd[0] = n
			}
			blocks := (base[2]+n+elems-1)/elems - base[2]/elems
			grid, err := d.Grid(uint64((blocks + group - 1) / group))
			if err != nil {
				return err
			}
			push := words{}.u32(kd[:]...).u32(s.magic[:]...).u32(s.shift[:]...).u32(masks).u32(base[:]...).u32(grid[0], 0).u64(a.bits).u64(b.bits)
			spec := []uint32{group, uint32(w), uint32(rank), pushed, chunks, aligned, inner, b2u(whole), k.code, k.key, k.detect}
			return d.Dispatch(v.kernel, spec, s.args, push, grid)
		}
		// As in dispatchSelect: whole blocks in one innermost run take
		// a kernel without the element-by-element path.
		first, end := base[2], base[2]+n
		lo, hi := (first+elems-1)/elems*elems, end/elems*elems
		switch {
		case rank > 1 && first%elems == 0 && kd[0]%elems == 0:
			return launch(base, n, true)
		case rank == 1 && lo < hi:
			for _, r := range [][2]uint32{{first, lo}, {lo, hi}, {hi, end}} {
				if r[0] == r[1] {
					continue
				}
				sub := base
				for x := range 2 {
					if pushed>>x&1 == 0 && inner>>x&1 == 0 {
						sub[x] += r[0] - first
					}
				}
				sub[2] = r[0]
				if err := launch(sub, r[1]-r[0], r[0] == lo); err != nil {
					return err
				}
			}
			return nil
		}
		return launch(base, n, false)
	})
}
