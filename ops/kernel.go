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
	"encoding/binary"
	"math"

	"github.com/vkops/vkops/internal/core"
	"github.com/vkops/vkops/shaders"
)

// kernel declares the kernel compiled from shaders/NAME.comp.
func kernel(name string, bindings, pushWords int) *core.Kernel {
	return &core.Kernel{Name: name, SPIRV: shaders.SPIRV(name), Bindings: bindings, PushSize: 4 * pushWords}
}

// words packs push constants: 32-bit little-endian words.
type words []byte

func (w words) u32(v ...uint32) words {
	for _, x := range v {
		w = binary.LittleEndian.AppendUint32(w, x)
	}
	return w
}

// u64 appends v as two words, low first, as a uvec2 reads it.
func (w words) u64(v uint64) words { return w.u32(uint32(v), uint32(v>>32)) }

// fitsU32 reports whether n can be a 32-bit index.
func fitsU32(n uint64) bool { return n <= math.MaxUint32 }

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
