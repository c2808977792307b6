package device

import (
	"github.com/vkops/vkops/internal/core"
	"github.com/vkops/vkops/tensor"
)

// A Tensor is an array resident on a Device: ops read and write it there.
// It is safe for concurrent use. Its memory returns to the device's pool
// at Free, or once the tensor becomes unreachable (see the package doc).
type Tensor core.Tensor

func (t *Tensor) core() *core.Tensor { return (*core.Tensor)(t) }

// FromSlice uploads data as a tensor of the given shape (1-D when none).
// Its bytes are copied once, straight into the tensor's memory where the
// host maps it, or through staging memory where it does not.
func FromSlice[T tensor.Element](d *Device, data []T, shape ...int) (*Tensor, error) {
	t, err := core.FromSlice((*core.Device)(d), data, shape...)
	return (*Tensor)(t), err
}

// Wrap returns a tensor of the given shape (1-D when none) whose memory
// is data's own, where the device can use it: ops read data in place,
// and write it in place when the tensor is their output, with no copy
// between the slice and the device. MakeSlice makes slices that Wrap
// takes so; for any other, Wrap copies data into a new tensor where it
// cannot, as FromSlice does, and Wrapped reports false.
//
// The contract of a wrapped tensor:
//   - data is pinned and kept alive until the tensor is freed and the
//     device has finished the work that uses it; then it is the
//     caller's alone again.
//   - The device reads the slice when the work runs, not when it is
//     recorded: Wait (or Device.Sync) before writing the slice again
//     while an op that reads the tensor is pending.
//   - Likewise an op that writes the tensor writes the slice when it
//     runs: read the slice after Wait, as ToSlice would wait.
//   - A bool tensor holds the bytes the device wrote: ops that compute
//     bools write 0 or 1, but a select of bools copies what its inputs
//     held, and a Go bool must be 0 or 1 (ToSlice makes it so).
func Wrap[T tensor.Element](d *Device, data []T, shape ...int) (*Tensor, error) {
	t, err := core.Wrap((*core.Device)(d), data, shape...)
	return (*Tensor)(t), err
}

// MakeSlice returns a zeroed slice of n elements that Wrap imports
// rather than copies, on every device seen (their import alignment is
// 4 KiB), where n elements take a multiple of 16 bytes: it starts on a
// 4 KiB boundary and its capacity reaches the next one.
func MakeSlice[T tensor.Element](n int) []T { return core.MakeSlice[T](n) }

// ToSlice downloads t as []T, after the work that writes t; T must match
// t's element type. It allocates the slice and copies into it once.
func ToSlice[T tensor.Element](t *Tensor) ([]T, error) { return core.ToSlice[T](t.core()) }

// ToSliceInto downloads t into dst, which must hold Len elements of t's
// element type, after the work that writes t; it allocates nothing.
func ToSliceInto[T tensor.Element](t *Tensor, dst []T) error {
	return core.ToSliceInto(t.core(), dst)
}

// Value downloads the one element of t, a tensor of one element such as
// a reduction over every axis, after the work that writes it.
func Value[T tensor.Element](t *Tensor) (T, error) { return core.Value[T](t.core()) }

// View returns the tensor's memory as slices of T, one per page in
// order, once the work recorded so far that uses the tensor has
// finished: the host fills an input in place, or reads a result, with no
// copy. The host must map the tensor's memory: on a device whose memory
// it does not map, View reports ErrMisuse unless the tensor is wrapped,
// and ToSlice copies. The slices are the tensor's memory until Free; as
// with Wrap, Wait before writing an input that an op reads, or reading a
// result that one writes.
func View[T tensor.Element](t *Tensor) ([][]T, error) { return core.View[T](t.core()) }

// DType returns the element type.
func (t *Tensor) DType() tensor.DType { return t.core().DType() }

// Shape returns a copy of the shape.
func (t *Tensor) Shape() tensor.Shape { return t.core().Shape() }

// Len returns the number of elements.
func (t *Tensor) Len() int { return t.core().Len() }

// Device returns the device the tensor lives on.
func (t *Tensor) Device() *Device { return (*Device)(t.core().Device()) }

// String describes the tensor: "f32[2 3]".
func (t *Tensor) String() string { return t.core().String() }

// Wrapped reports whether the tensor's memory is the slice given to Wrap
// rather than a copy of it.
func (t *Tensor) Wrapped() bool { return t.core().Wrapped() }

// Wait waits until the work recorded so far that reads or writes the
// tensor has finished, and returns the error of the work that last wrote
// it, if that failed. After it the host may write the memory of a
// wrapped tensor or of a view again.
func (t *Tensor) Wait() error { return t.core().Wait() }

// Err reports why the tensor cannot be used: nil, ErrFreed, ErrClosed or
// ErrDeviceLost.
func (t *Tensor) Err() error { return t.core().Err() }

// Free returns the tensor's memory to the device's pool once the work
// that uses it has finished; an unreachable tensor is freed so too, but
// only when the garbage collector finds it. Freeing twice, or a tensor
// of a closed device, does nothing. A wrapped tensor's slice is the caller's again
// once that work has finished.
func (t *Tensor) Free() { t.core().Free() }

// Bytes returns the size of the tensor's data in bytes.
func (t *Tensor) Bytes() uint64 { return t.core().Bytes() }
