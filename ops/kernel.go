// Package ops runs tensor operations on a device: it checks shapes and
// types, plans broadcasts and reductions, chooses a kernel and dispatches
// it. Every rule is checked before anything is dispatched, and a failed op
// leaves its inputs as they were. docs/specs.md states each op's rules.
//
// Ops may be called from many goroutines on one device; an Expr may not.
// An op's errors match ErrInvalid where its rules reject the input, and
// otherwise the device's sentinels: device.ErrClosed, device.ErrFreed
// (a tensor freed, before the call or by another goroutine during it),
// device.ErrOutOfMemory. Package device says what Free and Close do to
// work in flight.
package ops

import (
	"unsafe"

	"github.com/vkops/vkops/internal/core"
	"github.com/vkops/vkops/shaders"
)

// kernel declares the kernel compiled from module NAME, whose push
// constants are P, a struct of shaders/spec.
func kernel[P any](name string, bindings int) *core.Kernel {
	var p P
	return &core.Kernel{Name: name, Module: func() []byte { return shaders.SPIRV(name) }, Bindings: bindings, PushSize: int(unsafe.Sizeof(p))}
}

// pushBytes returns push constants p, a struct of shaders/spec whose
// fields are uint32s, as the bytes the kernel reads: the host is
// little-endian, as every device is.
func pushBytes[P any](p *P) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), unsafe.Sizeof(*p))
}

// gcd returns the greatest common divisor of a and b.
func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// b2u returns 1 for true, 0 for false: a bool as a push or
// specialization constant.
func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}
