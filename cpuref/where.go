package cpuref

import (
	"fmt"
	"strings"

	"github.com/vkops/vkops/tensor"
)

// Operand is an input or other argument of Where: a tensor or a scalar.
// Exactly one of T and S must be set. A scalar's Bits must fit its
// element type, as tensor.NewScalar makes them.
type Operand struct {
	T *tensor.Host   // a tensor operand; it takes part in broadcasting
	S *tensor.Scalar // a scalar operand; it never shapes the output
}

// Where returns a tensor whose elements are input's where cond is true and
// other's where it is false: PyPTO where as docs/specs.md#where states it.
//
// cond must be a bool tensor. The output shape is the numpy broadcast of
// all tensor operands, cond included, so with only cond a tensor the
// output has cond's shape. input and other must share an element type,
// which is the output's. A scalar is not converted here: beside a tensor
// it must already carry the tensor's element type (tensor.NewScalar does
// the exact conversion), and two scalars must carry the same one.
func Where(cond *tensor.Host, input, other Operand) (*tensor.Host, error) {
	const op = "where"
	if err := checkHost(op, "cond", cond); err != nil {
		return nil, err
	}
	if cond.DType != tensor.Bool {
		return nil, fmt.Errorf("%s: cond must be bool, got %v", op, cond.DType)
	}
	a, err := operandHost(op, "input", input)
	if err != nil {
		return nil, err
	}
	b, err := operandHost(op, "other", other)
	if err != nil {
		return nil, err
	}
	if a.DType != b.DType {
		return nil, fmt.Errorf("%s: %s is %v but %s is %v", op, kind(input, "input"), a.DType, kind(other, "other"), b.DType)
	}

	// Only tensors shape the output; a scalar's 0-D host would fit any
	// shape anyway, but leaving it out keeps the error message honest.
	names := []string{"cond"}
	shapes := []tensor.Shape{cond.Shape}
	if input.T != nil {
		names = append(names, "input")
		shapes = append(shapes, input.T.Shape)
	}
	if other.T != nil {
		names = append(names, "other")
		shapes = append(shapes, other.T.Shape)
	}
	out, clash := tensor.Broadcast(shapes...)
	if clash != nil {
		parts := make([]string, len(names))
		for i := range names {
			parts[i] = fmt.Sprintf("%s shape %v", names[i], shapes[i])
		}
		list := strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
		return nil, fmt.Errorf("%s: %s do not broadcast (%v)", op, list, clash)
	}
	return blend(op, out, cond, a, b)
}

// operandHost checks o and returns it as a host tensor: a scalar becomes a
// 0-D tensor holding its bytes, which broadcasts to every shape.
func operandHost(op, name string, o Operand) (*tensor.Host, error) {
	switch {
	case o.T != nil && o.S != nil:
		return nil, fmt.Errorf("%s: %s is both a tensor and a scalar (set one of T and S)", op, name)
	case o.T != nil:
		if err := checkHost(op, name, o.T); err != nil {
			return nil, err
		}
		return o.T, nil
	case o.S != nil:
		s := *o.S
		if err := checkScalar(op, name, s); err != nil {
			return nil, err
		}
		return &tensor.Host{DType: s.DType, Data: s.Bytes()}, nil
	}
	return nil, fmt.Errorf("%s: %s is neither a tensor nor a scalar (set one of T and S)", op, name)
}

// checkScalar reports a scalar operand that NewScalar did not make: of
// no valid type, or with bits beyond its element's size, which Bytes
// would drop silently.
func checkScalar(op, name string, s tensor.Scalar) error {
	if !s.DType.Valid() {
		return fmt.Errorf("%s: %s scalar has invalid element type %v", op, name, s.DType)
	}
	if size := s.DType.Size(); size < 8 && s.Bits>>(8*size) != 0 {
		return fmt.Errorf("%s: %s scalar bits %#x do not fit %v", op, name, s.Bits, s.DType)
	}
	return nil
}

// kind names an operand for a type-mismatch message: "input" for a
// tensor, "input scalar" for a scalar.
func kind(o Operand, name string) string {
	if o.S != nil {
		return name + " scalar"
	}
	return name
}
