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
// and other's where it is false: PyPTO where as docs/specs.md#where
// states it. cond must be a bool tensor. input and other are each a
// *device.Tensor, a typed scalar (an Element or a tensor.Scalar), or a
// plain Go number or bool.
//
// The output's shape is the numpy broadcast of the tensors among cond,
// input and other; scalars never shape it. Its element type is that of
// the tensor operands, which must agree. A scalar beside a tensor is
// converted to the tensor's type exactly, rounding to nearest even into
// f16, bf16 and f32; one the type cannot hold is an error. Without a
// tensor operand the scalars keep their own type, which must agree; a
// plain Go number has no type of its own: it takes the other scalar's,
// or f32 when both are plain, bool when both are Go bools (a mask, as
// numpy.where(c, True, False) gives). A tensor.Scalar of the output's type is
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
	var buf [maxRank]int
	w, err := resolveWhere(op, tensorArg(cond, "cond"), input, other, nil, &buf)
	if err != nil {
		return nil, err
	}
	return blend(op, w.dt, w.out, cond, w.a.operand, w.b.operand, nil)
}

// whereCall is a Where whose rules hold: its operands, their scalars
// converted, and its output's element type and shape.
type whereCall struct {
	a, b whereArg
	dt   tensor.DType
	out  tensor.Shape
}

// resolveWhere checks Where's rules on cond, a tensor or a node, and on
// input and other, each a tensor, a node of e or a scalar, in order, with
// cpuref's messages where it has them, and last that the output can be
// held (checkOutput). The output's shape goes in buf.
func resolveWhere(op string, cond whereArg, input, other any, e *Expr, buf *[maxRank]int) (whereCall, error) {
	var w whereCall
	if cond.dt != tensor.Bool {
		return w, invalidf("%s: cond must be bool, got %v", op, cond.dt)
	}
	var err error
	if w.a, err = argOf(op, "input", input, cond.dev, "cond", e); err != nil {
		return w, err
	}
	if w.b, err = argOf(op, "other", other, cond.dev, "cond", e); err != nil {
		return w, err
	}
	a, b := &w.a, &w.b
	// The output's type: the tensors', else the typed scalars', else
	// bool for two Go bools, as numpy's and torch's where give, else f32.
	w.dt = tensor.F32
	_, aBool := a.value.(bool)
	_, bBool := b.value.(bool)
	switch {
	case a.isTensor() && b.isTensor() && a.dt != b.dt:
		return w, invalidf("%s: input is %v but other is %v", op, a.dt, b.dt)
	case a.isTensor() || b.isTensor():
		w.dt = a.dt
		if !a.isTensor() {
			w.dt = b.dt
		}
	case a.typed && b.typed && a.dt != b.dt:
		return w, invalidf("%s: input scalar is %v but other scalar is %v", op, a.dt, b.dt)
	case a.typed:
		w.dt = a.dt
	case b.typed:
		w.dt = b.dt
	case aBool && bBool:
		w.dt = tensor.Bool
	}
	for _, o := range [2]*whereArg{a, b} {
		if err := o.convert(op, w.dt); err != nil {
			return w, err
		}
	}

	// Only tensors shape the output.
	var names [3]string
	var shapes [3]tensor.Shape
	names[0], shapes[0] = "cond", cond.shape()
	k := 1
	for _, o := range [2]*whereArg{a, b} {
		if o.isTensor() {
			names[k], shapes[k] = o.name, o.shape()
			k++
		}
	}
	out, clash := tensor.AppendBroadcast(buf[:0], shapes[:k]...)
	if clash != nil {
		parts := make([]string, k)
		for i := range parts {
			parts[i] = names[i] + " shape " + shapes[i].String()
		}
		list := strings.Join(parts[:k-1], ", ") + " and " + parts[k-1]
		return w, invalidf("%s: %s do not broadcast (%v)", op, list, clash)
	}
	if _, err := checkOutput(op, w.dt, out); err != nil {
		return w, err
	}
	w.out = out
	return w, nil
}

// convert turns a scalar into dt's bits, exactly. A typed scalar of type
// dt keeps its bits, NaN payloads included.
func (a *whereArg) convert(op string, dt tensor.DType) error {
	switch {
	case a.isTensor():
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
