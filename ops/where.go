package ops

import (
	"math"
	"strings"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/tensor"
)

// Element is a typed scalar operand of Where, PyPTO's Element(dtype,
// value); Scalar makes one.
type Element struct {
	v  any
	dt tensor.DType
}

// Scalar returns the scalar v of element type dt, an operand of Where. v
// is any value tensor.NewScalar accepts; Where reports a v that dt cannot
// hold exactly (300 as i8, -1 as u8, NaN as an integer).
func Scalar(v any, dt tensor.DType) Element { return Element{v, dt} }

// Where returns a new tensor whose elements are input's where cond is true
// and other's where it is false: PyPTO where as ../shared/specs/README.md
// decides it. cond must be a bool tensor. input and other are each a
// *device.Tensor, a typed scalar (an Element or a tensor.Scalar), or a
// plain Go number.
//
// The output's shape is the numpy broadcast of the tensors among cond,
// input and other; scalars never shape it. Its element type is that of
// the tensor operands, which must agree. A scalar beside a tensor is
// converted to the tensor's type exactly, rounding to nearest even into
// f16, bf16 and f32; one the type cannot hold is an error. Without a
// tensor operand the scalars keep their own type, which must agree; a
// plain Go number has no type of its own: it takes the other scalar's,
// or f32 when both are plain. A tensor.Scalar of the output's type is
// used bit for bit, NaN payloads included.
//
// Every rule is checked before anything runs, and a rejected input gives
// an error matching ErrInvalid; where cpuref.Where can express the same
// input, the message is the one it gives. Select's limit of eight merged
// dimensions applies.
func Where(cond *device.Tensor, input, other any) (*device.Tensor, error) {
	const op = "where"
	if err := checkTensor(op, "cond", cond); err != nil {
		return nil, err
	}
	if cond.DType() != tensor.Bool {
		return nil, invalidf("%s: cond must be bool, got %v", op, cond.DType())
	}
	a, err := whereOperand(op, "input", input, cond)
	if err != nil {
		return nil, err
	}
	b, err := whereOperand(op, "other", other, cond)
	if err != nil {
		return nil, err
	}

	// The output's type: the tensors', else the typed scalars', else f32.
	dt := tensor.F32
	switch {
	case a.t != nil && b.t != nil && a.dt != b.dt:
		return nil, invalidf("%s: input is %v but other is %v", op, a.dt, b.dt)
	case a.t != nil || b.t != nil:
		dt = a.dt
		if a.t == nil {
			dt = b.dt
		}
	case a.typed && b.typed && a.dt != b.dt:
		return nil, invalidf("%s: input scalar is %v but other scalar is %v", op, a.dt, b.dt)
	case a.typed:
		dt = a.dt
	case b.typed:
		dt = b.dt
	}
	for _, o := range [2]*whereArg{&a, &b} {
		if err := o.convert(op, dt); err != nil {
			return nil, err
		}
	}

	// Only tensors shape the output.
	var names [3]string
	var shapes [3]tensor.Shape
	names[0], shapes[0] = "cond", cond.Dims()
	k := 1
	for _, o := range [2]*whereArg{&a, &b} {
		if o.t != nil {
			names[k], shapes[k] = o.name, o.t.Dims()
			k++
		}
	}
	var buf [maxRank]int
	out, clash := tensor.AppendBroadcast(buf[:0], shapes[:k]...)
	if clash != nil {
		parts := make([]string, k)
		for i := range parts {
			parts[i] = names[i] + " shape " + shapes[i].String()
		}
		list := strings.Join(parts[:k-1], ", ") + " and " + parts[k-1]
		return nil, invalidf("%s: %s do not broadcast (%v)", op, list, clash)
	}
	return blend(op, dt, out, cond, a.operand, b.operand)
}

// whereArg is input or other of Where while its type is settled.
type whereArg struct {
	operand
	name  string
	dt    tensor.DType  // the tensor's or typed scalar's; unset for a plain number
	typed bool          // a typed scalar
	s     tensor.Scalar // a typed scalar
	value any           // a plain number
}

// whereOperand classifies v and checks it as far as it can alone.
func whereOperand(op, name string, v any, cond *device.Tensor) (whereArg, error) {
	a := whereArg{name: name}
	switch x := v.(type) {
	case nil:
		return a, invalidf("%s: %s is nil", op, name)
	case *device.Tensor:
		if err := checkTensor(op, name, x); err != nil {
			return a, err
		}
		if x.Device() != cond.Device() {
			return a, invalidf("%s: %s is on another device than cond", op, name)
		}
		a.t, a.dt = x, x.DType()
	case Element:
		if !x.dt.Valid() {
			return a, invalidf("%s: %s scalar has invalid element type %v", op, name, x.dt)
		}
		s, err := tensor.NewScalar(x.v, x.dt)
		if err != nil {
			return a, invalidf("%s: %s %v", op, name, err)
		}
		a.dt, a.typed, a.s = x.dt, true, s
	case tensor.Scalar:
		if !x.DType.Valid() {
			return a, invalidf("%s: %s scalar has invalid element type %v", op, name, x.DType)
		}
		// Bits beyond the element's size were not made by NewScalar.
		if size := x.DType.Size(); size < 8 && x.Bits>>(8*size) != 0 {
			return a, invalidf("%s: %s scalar bits %#x do not fit %v", op, name, x.Bits, x.DType)
		}
		a.dt, a.typed, a.s = x.DType, true, x
	default:
		// Any number converts to f64; anything else is not a number.
		if _, err := tensor.NewScalar(v, tensor.F64); err != nil {
			return a, invalidf("%s: %s %v", op, name, err)
		}
		a.value = v
	}
	return a, nil
}

// convert turns a scalar into dt's bits, exactly. A typed scalar of type
// dt keeps its bits, NaN payloads included.
func (a *whereArg) convert(op string, dt tensor.DType) error {
	switch {
	case a.t != nil:
		return nil
	case a.typed && a.dt == dt:
		a.bits = a.s.Bits
		return nil
	case a.typed:
		a.value = scalarValue(a.s)
	}
	s, err := tensor.NewScalar(a.value, dt)
	if err != nil {
		return invalidf("%s: %s %v", op, a.name, err)
	}
	a.bits = s.Bits
	return nil
}

// scalarValue returns the value s holds as a Go value of its own kind, so
// that tensor.NewScalar converts it on without loss.
func scalarValue(s tensor.Scalar) any {
	switch s.DType {
	case tensor.Bool:
		return s.Bits != 0
	case tensor.I8:
		return int8(s.Bits)
	case tensor.I16:
		return int16(s.Bits)
	case tensor.I32:
		return int32(s.Bits)
	case tensor.I64:
		return int64(s.Bits)
	case tensor.F16:
		return tensor.Float16(s.Bits)
	case tensor.BF16:
		return tensor.BFloat16(s.Bits)
	case tensor.F32:
		return math.Float32frombits(uint32(s.Bits))
	case tensor.F64:
		return math.Float64frombits(s.Bits)
	}
	return s.Bits // u8 to u64
}
