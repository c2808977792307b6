package ops

import (
	"math"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/shaders/spec"
	"github.com/vkops/vkops/tensor"
)

// The ops of values of docs/specs.md#maximum-minimum-and-clamp:
// Maximum and Minimum (OpenVINO Maximum-1, Minimum-1) take their
// operands and options as the comparisons do (see Equal) and Clamp
// (Clamp-1) takes a tensor and two scalar bounds. Each returns a new
// tensor of its input's element type, every type of the table, bool
// included, whose elements are its operands' elements bit for bit
// (bools as 0 or 1). A NaN operand gives a NaN, the first operand's where
// both are; -0 is less than +0. They are maskOps that keep their
// inputs' type (maskOp.values), run by one kernel (shaders/minmax.glsl).

var (
	maximumOp = &maskOp{name: "maximum", code: spec.OpMax, values: true}
	minimumOp = &maskOp{name: "minimum", code: spec.OpMin, values: true}
	clampOp   = &maskOp{name: "clamp", code: spec.OpClamp, values: true}
)

// Maximum returns the greater of a and b element by element
// (Maximum-1): a NaN where either is one, and +0 for -0 against +0.
func Maximum(a, b any, opts ...SelectOption) (*device.Tensor, error) {
	return maximumOp.binary(a, b, opts)
}

// Minimum returns the lesser of a and b element by element (Minimum-1):
// a NaN where either is one, and -0 for -0 against +0.
func Minimum(a, b any, opts ...SelectOption) (*device.Tensor, error) {
	return minimumOp.binary(a, b, opts)
}

// Clamp returns x with each element limited to [min, max] (Clamp-1), as
// Minimum(Maximum(x, min), max): a min above max gives max everywhere,
// and a NaN stays a NaN. min and max are scalars as Where takes them,
// converted to x's element type by Where's rules, except that into an
// integer type a fractional min rounds up and a fractional max down, as
// Clamp-1 says. x is not modified.
func Clamp(x *device.Tensor, min, max any) (*device.Tensor, error) {
	call, err := resolveClamp(x, min, max, nil)
	if err != nil {
		return nil, err
	}
	return runValues(clampOp.name, clampOp.code, call.dev, call.dt, call.out, call.x, call.y, call.z, nil)
}

// resolveClamp checks Clamp's rules on x, a tensor or a node of e, and on
// its bounds min and max, in order, and that the output can be held.
// The call's x is the data, y and z the bounds' bits in x's type.
func resolveClamp(x, min, max any, e *Expr) (maskCall, error) {
	op := clampOp.name
	var call maskCall
	xa, err := argOf(op, "x", x, nil, "", e)
	if err != nil {
		return call, err
	}
	if !xa.isTensor() {
		return call, invalidf("%s: x is a scalar; it must be a tensor", op)
	}
	call.dt, call.dev, call.out = xa.dt, xa.dev, xa.shape()
	var bounds [2]operand
	for i, v := range []any{min, max} {
		name := [...]string{"min", "max"}[i]
		b, err := argOf(op, name, v, xa.dev, "x", e)
		if err != nil {
			return call, err
		}
		if b.isTensor() {
			return call, invalidf("%s: %s is a tensor; it must be a scalar", op, name)
		}
		if err := b.convertBound(op, call.dt, i == 0); err != nil {
			return call, err
		}
		bounds[i] = b.operand
	}
	if _, err := checkOutput(op, call.dt, call.out); err != nil {
		return call, err
	}
	call.x, call.y, call.z = xa.operand, bounds[0], bounds[1]
	return call, nil
}

// convertBound is convert for a bound of Clamp: into an integer type a
// fractional min rounds up to the next integer (ceil) and a fractional
// max down (floor), as Clamp-1 converts its float attributes; then the
// integer must fit the type.
func (a *whereArg) convertBound(op string, dt tensor.DType, min bool) error {
	if dt.IsFloat() || dt == tensor.Bool || a.typed && a.dt == dt {
		return a.convert(op, dt)
	}
	if a.typed {
		a.value, a.typed = scalarValue(a.s), false
	}
	var f float64
	switch v := a.value.(type) {
	case float64:
		f = v
	case float32:
		f = float64(v)
	case tensor.Float16:
		f = float64(v.Float32())
	case tensor.BFloat16:
		f = float64(v.Float32())
	default:
		return a.convert(op, dt)
	}
	r, dir := math.Floor(f), "down"
	if min {
		r, dir = math.Ceil(f), "up"
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || r == f {
		return a.convert(op, dt)
	}
	a.value = r
	if err := a.convert(op, dt); err != nil {
		// Quote the caller's bound, not only the integer it became.
		return invalidf("%s: %s scalar %v, rounded %s to %v, cannot be represented as %v", op, a.name, f, dir, r, dt)
	}
	return nil
}

// runValues returns the tensor of shape out and type dt holding op code
// (spec.OpMax, OpMin, OpClamp) of a, b and, for Clamp, c. Only the
// kernel's last two inputs can be pushed scalars, so a scalar a trades
// places with b, and the kernel is told (SWAP in shaders/minmax.glsl).
// If a dispatch fails, the output is freed.
func runValues(op string, code uint32, d *device.Device, dt tensor.DType, out tensor.Shape, a, b, c operand, dst *device.Tensor) (*device.Tensor, error) {
	var swap uint32
	if !a.isTensor() {
		a, b, swap = b, a, 1
	}
	r := minmaxElem.newRun(dt.Size())
	r.ts[0], r.ts[1], r.ts[2] = a.t, b.t, c.t
	r.shapes[0], r.shapes[1], r.shapes[2] = a.shape(), b.shape(), c.shape()
	r.bits = [2]uint64{b.bits, c.bits}
	r.nspec = copy(r.spec[:], []uint32{code, keyOf(dt), swap})
	return r.execute(op, d, dt, out, dst)
}

// minmaxElem describes Maximum, Minimum and Clamp to the engine: inputs
// a, b and c of the op's width (b and c may be pushed scalars; Maximum's
// and Minimum's c always is), the output of their type, and as its own
// constants the op's code, how its elements are read (keyOf) and SWAP
// (shaders/minmax.glsl). Its families are timed on Maximum of two
// tensors of unsigned integers. Each invocation writes 64 bytes or more
// on lavapipe, as Select's.
var minmaxElem = (&elemOp{
	name: "minmax", inputs: 3, rows: true,
	chunks:    [9]int{1: 4, 2: 2, 4: 1, 8: 1},
	probes:    []probe{{pushed: 0b100}},
	probeSpec: []uint32{spec.OpMax, spec.KeyUint, 0},
}).register()
