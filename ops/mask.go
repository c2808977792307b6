package ops

import (
	"fmt"

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
	c := configure(opts)
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
	var buf [maxRank]int
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
		if out, clash = tensor.AppendBroadcast(buf[:0], as, bs); clash != nil {
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
	return runMask(m.name, m.code, detect, a.Device(), a.DType(), a.Dims(), operand{t: a}, operand{})
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
	bShape := b.shape()
	if b.t == nil && code >= opNot {
		bShape = a.shape()
	}
	return newElementwise(op, d, tensor.Bool, out, &maskFamilies,
		func(res *device.Tensor) elementwise { return maskRun(res, a, b, dt.Size(), code, keyOf(dt), detect) },
		a.shape(), bShape)
}

// maskRun returns the elementwise run that fills res with op code of a
// and b, w-byte elements read as key says; its variant is yet to be
// chosen. The op, how elements are read and IsInf's attributes are the
// kernel's own specialization constants.
func maskRun(res *device.Tensor, a, b operand, w int, code, key, detect uint32) elementwise {
	return elementwise{
		ts:     [maxOperands]*device.Tensor{a.t, b.t, res},
		sizes:  [maxOperands]int{w, w, 1},
		bits:   [2]uint64{a.bits, b.bits},
		width:  w,
		tuning: &maskTuning,
		spec:   [3]uint32{code, key, detect},
		nspec:  3,
	}
}

// The mask kernels are shaders/mask_w*.comp, one source compiled once
// per input element width and variant as Select's are per variant, and
// again for blocks of whole rows (mask_w*_rows.comp) and for row seams
// (mask_w*_seams.comp): bindings a, b, out
// and 28 words of push constants.
func maskVariants(w int) []*variant {
	name := fmt.Sprintf("mask_w%d", w)
	return []*variant{
		{name: "portable", kernel: kernel(name, 3, 28), rows: kernel(name+"_rows", 3, 28), seams: kernel(name+"_seams", 3, 28)},
		{name: "texel", kernel: maskTexelKernel(name + "_texel"), rows: maskTexelKernel(name + "_texel_rows"),
			seams: maskTexelKernel(name + "_texel_seams"), needs: hasSelectTexels},
		{name: "texel64", kernel: maskTexelKernel(name + "_texel64"), rows: maskTexelKernel(name + "_texel64_rows"),
			seams: maskTexelKernel(name + "_texel64_seams"), needs: func(d *device.Device) bool {
				return hasSelectTexels(d) && d.Info().Features.ShaderInt64
			}},
	}
}

func maskTexelKernel(name string) *device.Kernel {
	k := kernel(name, 3, 28)
	k.Kinds = []device.BindingKind{device.TexelRGBA32UI, device.TexelRGBA32UI, device.Storage}
	return k
}

// maskFamilies holds a family per input element width and class, keyed
// "mask/w4/same" and so on, as selectFamilies does.
var maskFamilies = elementwiseFamilies("mask", maskVariants, measureMask)

// measureMask times v on d as measureElementwise does: less-than of
// w-byte unsigned integers.
func measureMask(d *device.Device, v *variant, w int, c selectClass) (float64, error) {
	dt := uintOfSize(w)
	return measureElementwise(d, []tensor.DType{dt, dt, tensor.Bool}, c, func(l *layout, ts *[maxOperands]*device.Tensor) error {
		e := maskRun(ts[2], operand{t: ts[0]}, operand{t: ts[1]}, w, opLT, keyOf(dt), 0)
		e.v = v
		return e.dispatch(d, l)
	})
}

// maskTuning shapes the mask kernel's grid as selectTuning does
// select's, with chunks by input element size.
var maskTuning = elementwiseTuning{group: 256, chunks: [9]int{1: 4, 2: 2, 4: 2, 8: 2}, gpuChunks: 1, rowsMin: elementwiseRowsMin, gpuRowsMax: elementwiseGPURowsMax}
