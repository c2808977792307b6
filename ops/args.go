package ops

import (
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/core"
	"github.com/vkops/vkops/tensor"
)

// operand is an input of an elementwise op as its checks and the engine
// see it: a tensor, on the device (t) or a node of an Expr not computed
// yet (node, its shape in dims), or else a scalar, whose bits the kernel
// takes as push constants.
type operand struct {
	t    *device.Tensor
	node int32 // the node's index in its Expr, plus one
	dims tensor.Shape
	bits uint64
}

// isTensor reports whether o is a tensor, not a scalar.
func (o operand) isTensor() bool { return o.t != nil || o.node != 0 }

// shape returns a tensor's shape, nil for a scalar.
func (o operand) shape() tensor.Shape {
	if o.t != nil {
		return bridge.Tensor(o.t).Dims()
	}
	return o.dims
}

// whereArg is an operand of an op while its checks run: a tensor, or a
// scalar whose type is settled by the op's rules.
type whereArg struct {
	operand
	name  string
	dt    tensor.DType   // the tensor's or typed scalar's; unset for a plain number
	dev   *device.Device // a tensor's
	typed bool           // a typed scalar
	s     tensor.Scalar  // a typed scalar
	value any            // a plain number
}

// tensorArg returns t, a tensor checked by checkTensor, as operand name.
func tensorArg(t *device.Tensor, name string) whereArg {
	return whereArg{operand: operand{t: t}, name: name, dt: t.DType(), dev: t.Device()}
}

// argOf classifies v, operand name of op, and checks it as far as it
// can alone: a *device.Tensor (usable, and on dev, operand devName's
// device, where dev is set), a Node of e (checked when it was made, so
// that it carries its first error), or a scalar: an Element, a
// tensor.Scalar or a Go number.
func argOf(op, name string, v any, dev *device.Device, devName string, e *Expr) (whereArg, error) {
	a := whereArg{name: name}
	switch x := v.(type) {
	case nil:
		return a, misusef("%s: %s is nil", op, name)
	case *core.Tensor:
		// vkops's own code (bench, tests) holds core's tensors.
		return argOf(op, name, bridge.UserTensor(x), dev, devName, e)
	case *device.Tensor:
		if err := checkTensor(op, name, x); err != nil {
			return a, err
		}
		a = tensorArg(x, name)
	case Node:
		n, err := e.node(op, name, x)
		if err != nil {
			return a, err
		}
		a.node, a.dims, a.dt, a.dev = x.i, n.dims, n.dt, n.dev
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
	if a.isTensor() && dev != nil && a.dev != dev {
		return a, misusef("%s: %s is on another device than %s", op, name, devName)
	}
	return a, nil
}
