package ops

import (
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/shaders/spec"
	"github.com/vkops/vkops/tensor"
)

// The mask ops of docs/specs.md#mask-ops share everything but a line
// of shaders/mask.glsl: Select's planner (layout, pieces, spans), its
// broadcast rules and options, Where's scalars, and one kernel family per
// element width measured as Select's are. An op is a maskOp value, its
// exported function in compare.go, logical.go or classify.go, and an
// OP_ constant in the shader.

// maskOp is one mask op: its name (as the CLI spells it, and as errors
// begin), the shader's OP_ code, and which element types it takes. The
// ops of values (minmax.go) share the mask ops' rules and are maskOps
// too.
type maskOp struct {
	name string
	code uint32
	// values is whether the output has the inputs' element type, not
	// bool: Maximum, Minimum and Clamp, which shaders/minmax.glsl runs.
	values bool
	// swap runs the op as code with a and b exchanged: Greater is Less
	// with its operands the other way round.
	swap bool
	// types is what the inputs must be, for the error message; accept
	// checks it. nil accepts every type.
	types  string
	accept func(tensor.DType) bool
}

// The ops' codes (shaders/spec, OP_ in GLSL).
const (
	opEQ       uint32 = spec.OpEQ
	opNE       uint32 = spec.OpNE
	opLT       uint32 = spec.OpLT
	opLE       uint32 = spec.OpLE
	opAnd      uint32 = spec.OpAnd
	opOr       uint32 = spec.OpOr
	opXor      uint32 = spec.OpXor
	opNot      uint32 = spec.OpNot
	opIsNaN    uint32 = spec.OpIsNaN
	opIsInf    uint32 = spec.OpIsInf
	opIsFinite uint32 = spec.OpIsFinite
)

// keyOf is how the kernel reads elements of dt (shaders/spec, KEY_ in
// GLSL).
func keyOf(dt tensor.DType) uint32 {
	switch {
	case dt == tensor.Bool:
		return spec.KeyBool
	case dt.IsSigned():
		return spec.KeyInt
	case dt == tensor.F16:
		return spec.KeyF16
	case dt == tensor.BF16:
		return spec.KeyBF16
	case dt == tensor.F32:
		return spec.KeyF32
	case dt == tensor.F64:
		return spec.KeyF64
	}
	return spec.KeyUint
}

// binary checks a and b for m and runs it. Each is a *device.Tensor or a
// scalar as Where takes them; a scalar is converted exactly to the
// tensor's element type and then stands for a 0-D tensor, so that
// broadcasting treats it as cpuref treats a 0-D operand.
func (m *maskOp) binary(a, b any, opts []SelectOption) (*device.Tensor, error) {
	c := configure(opts)
	var buf [maxRank]int
	call, err := m.resolveBinary(c, a, b, nil, &buf)
	if err != nil {
		return nil, err
	}
	if m.values {
		return runValues(m.name, m.code, call.dev, call.dt, call.out, call.x, call.y, operand{}, nil)
	}
	return runMask(m.name, m.code, 0, call.dev, call.dt, call.out, call.x, call.y, nil)
}

// maskCall is a binary mask op, or a Clamp, whose rules hold: its
// inputs' element type and device, its output's shape, and its operands
// in the order the kernel takes them (z: Clamp's max).
type maskCall struct {
	dt      tensor.DType
	dev     *device.Device
	out     tensor.Shape
	x, y, z operand
}

// outType returns the element type of m's output on inputs of type dt.
func (m *maskOp) outType(dt tensor.DType) tensor.DType {
	if m.values {
		return dt
	}
	return tensor.Bool
}

// resolveBinary checks m's rules on a and b, each a tensor, a node of e or
// a scalar, in order, with cpuref's messages, and last that the output
// can be held (checkOutput). The output's shape goes in buf.
func (m *maskOp) resolveBinary(c selectConfig, a, b any, e *Expr, buf *[maxRank]int) (maskCall, error) {
	op := m.name
	var call maskCall
	if c.broadcast > BroadcastPDPD {
		return call, invalidf("%s: unknown broadcast %q (want none, numpy or pdpd)", op, c.broadcast)
	}
	var args [2]whereArg
	var ref *whereArg // the first tensor operand
	for i, v := range []any{a, b} {
		var dev *device.Device
		if ref != nil {
			dev = ref.dev
		}
		arg, err := argOf(op, [...]string{"a", "b"}[i], v, dev, "a", e)
		if err != nil {
			return call, err
		}
		args[i] = arg
		if ref == nil && arg.isTensor() {
			ref = &args[i]
		}
	}
	if ref == nil {
		return call, invalidf("%s: a and b are both scalars; one must be a tensor", op)
	}
	call.dt, call.dev = ref.dt, ref.dev
	if args[0].isTensor() && args[1].isTensor() && args[0].dt != args[1].dt {
		return call, invalidf("%s: a is %v but b is %v", op, args[0].dt, args[1].dt)
	}
	if err := m.check(call.dt); err != nil {
		return call, err
	}
	for i := range args {
		if err := args[i].convert(op, call.dt); err != nil {
			return call, err
		}
	}
	as, bs := args[0].shape(), args[1].shape()
	switch c.broadcast {
	case BroadcastNone:
		if !as.Equal(bs) {
			return call, invalidf("%s: broadcast none needs equal shapes: a %v b %v", op, as, bs)
		}
		call.out = as
	case BroadcastPDPD:
		if err := fitsOneWay(op, "b", bs, as); err != nil {
			return call, err
		}
		call.out = as
	default:
		var clash *tensor.Clash
		if call.out, clash = tensor.AppendBroadcast(buf[:0], as, bs); clash != nil {
			return call, invalidf("%s: a shape %v and b shape %v do not broadcast (%v)", op, as, bs, clash)
		}
	}
	if _, err := checkOutput(op, m.outType(call.dt), call.out); err != nil {
		return call, err
	}
	call.x, call.y = args[0].operand, args[1].operand
	if m.swap {
		call.x, call.y = call.y, call.x
	}
	return call, nil
}

// unary checks a for m and runs it; detect is IsInf's attributes.
func (m *maskOp) unary(a *device.Tensor, detect uint32) (*device.Tensor, error) {
	if err := checkTensor(m.name, "a", a); err != nil {
		return nil, err
	}
	if err := m.check(a.DType()); err != nil {
		return nil, err
	}
	// b is a pushed scalar, never read.
	return runMask(m.name, m.code, detect, a.Device(), a.DType(), bridge.Tensor(a).Dims(), operand{t: a}, operand{}, nil)
}

func (m *maskOp) check(dt tensor.DType) error {
	if m.accept != nil && !m.accept(dt) {
		return invalidf("%s: a must be %s, got %v", m.name, m.types, dt)
	}
	return nil
}

func isBool(dt tensor.DType) bool { return dt == tensor.Bool }

// runMask returns the bool tensor of shape out holding op code of a and
// b, elements of type dt; unary ops ignore b, a pushed scalar of no
// shape. If a dispatch fails, the output is freed.
func runMask(op string, code, detect uint32, d *device.Device, dt tensor.DType, out tensor.Shape, a, b operand, dst *device.Tensor) (*device.Tensor, error) {
	r := maskElem.newRun(dt.Size())
	r.ts[0], r.ts[1] = a.t, b.t
	r.shapes[0], r.shapes[1] = a.shape(), b.shape()
	r.bits = [2]uint64{a.bits, b.bits}
	r.nspec = copy(r.spec[:], []uint32{code, keyOf(dt), detect})
	return r.execute(op, d, tensor.Bool, out, dst)
}

// maskElem describes the mask ops to the engine: inputs a and b of the
// op's width (either may be a pushed scalar, and a unary op's b always
// is), a bool output, and as its own constants the op's code, how its
// elements are read (keyOf) and IsInf's attributes (shaders/mask.glsl).
// Its families are timed on less-than of unsigned integers.
var maskElem = (&elemOp{
	name: "mask", inputs: 2, boolOut: true, rows: true,
	chunks:    [9]int{1: 4, 2: 2, 4: 2, 8: 2},
	probes:    []probe{{}},
	probeSpec: []uint32{opLT, 0, 0},
}).register()
