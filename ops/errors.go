package ops

import (
	"errors"
	"fmt"

	"github.com/vkops/vkops/device"
)

// ErrInvalid matches (with errors.Is) every error that an op returns for
// inputs its rules reject: shapes, element types, scalars, options. Other
// errors come from the device.
var ErrInvalid = errors.New("invalid input")

// invalidError is a rule violation; its message is the op's whole error.
// cause, when set, is the device's sentinel behind it (device.ErrFreed).
type invalidError struct {
	msg   string
	cause error
}

func (e *invalidError) Error() string        { return e.msg }
func (e *invalidError) Is(target error) bool { return target == ErrInvalid }
func (e *invalidError) Unwrap() error        { return e.cause }

func invalidf(format string, args ...any) error {
	return &invalidError{msg: fmt.Sprintf(format, args...)}
}

// misusef is invalidf for a call the device package calls misuse, a nil
// tensor or tensors of two devices: its error matches device.ErrMisuse
// too, as the device's own calls' do.
func misusef(format string, args ...any) error {
	return &invalidError{msg: fmt.Sprintf(format, args...), cause: device.ErrMisuse}
}

// checkTensors reports, in order, a nil or freed tensor or one that lives
// on another device than the first.
func checkTensors(op string, names []string, ts ...*device.Tensor) error {
	for i, t := range ts {
		if err := checkTensor(op, names[i], t); err != nil {
			return err
		}
		if t.Device() != ts[0].Device() {
			return misusef("%s: %s is on another device than %s", op, names[i], names[0])
		}
	}
	return nil
}

func checkTensor(op, name string, t *device.Tensor) error {
	if t == nil || t.Device() == nil {
		return misusef("%s: %s is nil", op, name)
	}
	switch err := t.Err(); {
	case errors.Is(err, device.ErrFreed):
		return &invalidError{msg: fmt.Sprintf("%s: %s %v was freed", op, name, t), cause: device.ErrFreed}
	case err != nil: // the device is closed or lost
		return fmt.Errorf("%s: %s: %w", op, name, err)
	}
	return nil
}
