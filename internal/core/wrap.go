package core

import (
	"runtime"
	"unsafe"

	"github.com/vkops/vkops/tensor"
)

// Wrap returns a tensor of the given shape (1-D when none) whose memory
// is data's own, where the device can use it: ops read data in place,
// and write it in place when the tensor is their output (Write, Fill,
// Copy), with no copy between the slice and the device.
//
// That takes a device that imports host memory (CanWrap), a slice that
// starts on a multiple of the device's alignment (4096 on lavapipe; Go
// places slices of 32 KiB or more on whole pages of their own), whose
// length in bytes is a multiple of 16, and whose capacity reaches the
// next multiple of the alignment. Otherwise Wrap copies data into a new
// tensor, as FromSlice does, and Wrapped reports false; a tensor of no
// elements is always wrapped.
//
// The contract of a wrapped tensor:
//   - data is pinned and kept alive (runtime.Pinner) until the tensor
//     is freed and the device has finished the work that uses it; then
//     it is the caller's alone again.
//   - The device reads the slice when the work runs, not when it is
//     recorded: a write to the slice while an op that reads the tensor
//     is pending may be seen by the op, in part or whole. Wait (or
//     Device.Sync) before writing it again.
//   - Likewise an op that writes the tensor writes the slice when it
//     runs: read the slice after Wait, as ToSlice would wait.
//   - The tensor may be wrapped several times, as several tensors:
//     writes through any of them are seen through all.
//   - A bool tensor holds the bytes the device wrote: ops that compute
//     bools write 0 or 1, but a select of bools copies what its inputs
//     held, and a Go bool must be 0 or 1 (ToSlice makes it so).
func Wrap[T tensor.Element](d *Device, data []T, shape ...int) (*Tensor, error) {
	dt, err := checkSlice("device: wrap: ", data, shape)
	if err != nil {
		return nil, err
	}
	s := sliceShape(data, shape)
	var z T
	size := uint64(unsafe.Sizeof(z))
	if t, err := d.wrap(dt, s, unsafe.Pointer(unsafe.SliceData(data)), uint64(cap(data))*size); t != nil || err != nil {
		return t, err
	}
	return FromSlice(d, data, shape...)
}

// wrapAlign is the host import alignment MakeSlice serves: every
// driver seen asks for 4 KiB (lavapipe; NVIDIA 580 on H100 and H200).
const wrapAlign = 4096

// MakeSlice returns a zeroed slice of n elements that starts on a
// wrapAlign boundary and whose capacity reaches the next one, so that
// Wrap imports it where its bytes are a multiple of 16.
func MakeSlice[T tensor.Element](n int) []T {
	var z T
	size := int(unsafe.Sizeof(z))
	if n <= 0 {
		return make([]T, 0)
	}
	span := (n*size + wrapAlign - 1) / wrapAlign * wrapAlign / size
	// Slices of 32 KiB or more start on a page of their own; room for
	// one more alignment's worth lets a smaller one start on a boundary.
	s := make([]T, span+wrapAlign/size)
	off := 0
	if r := int(uintptr(unsafe.Pointer(unsafe.SliceData(s))) % wrapAlign); r != 0 {
		off = (wrapAlign - r) / size
	}
	return s[off : off+n : off+span]
}

// Wrapped reports whether the tensor's memory is the slice given to Wrap
// rather than a copy of it.
func (t *Tensor) Wrapped() bool { return t != nil && t.wrapped }

// wrap returns a tensor over the capBytes of host memory at p, or nil
// where the device cannot use them (see Wrap).
func (d *Device) wrap(dt tensor.DType, shape tensor.Shape, p unsafe.Pointer, capBytes uint64) (*Tensor, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.usable(); err != nil {
		return nil, err
	}
	bytes := uint64(shape.NumElements()) * uint64(dt.Size())
	align := d.dev.HostImportAlignment()
	mem := (bytes + align - 1) / max(align, 1) * align
	if bytes > 0 && (align == 0 || uintptr(p)%uintptr(align) != 0 || bytes%16 != 0 || mem > capBytes) {
		return nil, nil
	}
	t := d.newTensor(dt, shape)
	t.wrapped = true
	if bytes == 0 {
		t.track()
		return t, nil
	}
	pin := new(runtime.Pinner)
	pin.Pin(p)
	for off := uint64(0); off < t.bytes; off += d.pageSize {
		b, err := d.dev.ImportBuffer(unsafe.Add(p, off), min(d.pageSize, mem-off), min(d.pageSize, t.bytes-off))
		if err != nil {
			// The driver refuses this memory, or has no room for more:
			// the caller copies instead.
			d.releasePages(t.pages)
			t.pages = t.pages[:0] // its block's finalizer releases what is left
			pin.Unpin()
			return nil, nil
		}
		var last *runtime.Pinner
		if off+d.pageSize >= t.bytes {
			last = pin
		}
		t.pages = append(t.pages, d.pool.imported(b, last))
	}
	t.track()
	return t, nil
}

// View returns the tensor's memory as slices of T, one per page in
// order, once the work recorded so far that uses the tensor has
// finished (Wait): the host fills an input in place, or reads a result,
// with no copy. T must match the tensor's element type, and the host
// must map the tensor's memory: a unified device (Device.Unified) or a
// wrapped tensor; elsewhere View reports ErrMisuse, and ToSlice copies.
//
// The slices are the tensor's memory until it is freed: after Free they
// must not be used. As with Wrap, the device reads and writes them when
// its work runs: Wait before writing an input that an op reads, or
// reading a result that one writes. A []bool holds the bytes the device
// wrote (see Wrap).
func View[T tensor.Element](t *Tensor) ([][]T, error) {
	if err := checkElem[T](t, "View"); err != nil {
		return nil, err
	}
	d := t.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := t.usable(); err != nil {
		return nil, err
	}
	if !t.hostReads() {
		return nil, usagef(ErrMisuse, "device: View of %v: the host does not map %s's memory (Device.Unified); ToSlice copies it", t, d.info.Name)
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.leave()
	if err := t.waitIdle(); err != nil {
		return nil, err
	}
	var z T
	size := uint64(unsafe.Sizeof(z))
	views := make([][]T, len(t.pages))
	for i, s := range t.pages {
		n := min(d.pageSize, t.bytes-uint64(i)*d.pageSize)
		views[i] = unsafe.Slice((*T)(unsafe.Pointer(&s.buf.Mapped()[s.off])), n/size)
	}
	return views, nil
}

// SharesMemory reports whether t and u hold some of the same bytes: the
// same tensor, or tensors over one slice wrapped twice (Wrap). The
// pool's tensors never share memory.
func (t *Tensor) SharesMemory(u *Tensor) bool {
	if t == u {
		return true
	}
	if t == nil || u == nil || !t.wrapped || !u.wrapped || t.d != u.d {
		return false
	}
	t.d.mu.Lock()
	defer t.d.mu.Unlock()
	for _, a := range t.pages {
		for _, b := range u.pages {
			if a.addr() < b.addr()+b.size && b.addr() < a.addr()+a.size {
				return true
			}
		}
	}
	return false
}

// addr is the host address of s's first byte, in a buffer the host maps.
func (s span) addr() uint64 {
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(s.buf.Mapped())))) + s.off
}
