package vk

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// Buffer is a VkBuffer bound to memory of its own. Where that memory is
// host-visible it is mapped for the buffer's whole life.
type Buffer struct {
	d      *Device
	h      vk.Buffer
	mem    vk.DeviceMemory
	size   uint64
	mapped []byte
	views  map[viewKey]*BufferView // made by View
	// imported: mem is host memory that ImportBuffer imported, and mapped
	// that memory as the host has it, not a mapping of the buffer's own.
	imported bool
}

// Size returns the buffer's size in bytes.
func (b *Buffer) Size() uint64 { return b.size }

// Mapped returns the buffer's memory as host bytes, or nil when the buffer
// is not host-visible. The slice is valid until Destroy.
func (b *Buffer) Mapped() []byte { return b.mapped }

// Placement says which memory a buffer needs.
type Placement int

const (
	// DeviceLocal is memory the device reads fastest; host-visible too
	// where Unified reports that such memory is the device's own.
	DeviceLocal Placement = iota
	// Upload is host-visible memory the host writes and the device reads.
	Upload
	// Readback is host-visible memory the device writes and the host
	// reads: cached where the device offers it.
	Readback
	// DeviceMapped is device-local memory the host can map: on a
	// discrete GPU, its memory through the PCIe BAR, which the host
	// writes (write-combined) and must never read: reads cross the bus
	// uncached. HasDeviceMapped reports whether the device has it.
	DeviceMapped
)

// HasDeviceMapped reports whether the device has memory of placement
// DeviceMapped: device-local, host-visible and coherent.
func (d *Device) HasDeviceMapped() bool {
	return d.memoryType(^uint32(0), DeviceMapped, true) >= 0
}

// Unified reports whether the device's own memory is also host-visible and
// coherent, so that tensors can be mapped and need no staging copies:
// integrated GPUs and CPU drivers such as lavapipe. Discrete GPUs with
// resizable BAR also offer such memory, but host reads of it cross the
// bus uncached, so they stage.
func (d *Device) Unified() bool {
	if d.Info.Type != TypeIntegrated && d.Info.Type != TypeCPU {
		return false
	}
	return d.memoryType(^uint32(0), DeviceLocal, true) >= 0
}

// memoryType picks the first allowed type with the properties placement
// wants; mapped demands host-visible and coherent memory.
//
// Upload and Readback memory is the host's own where the device offers
// it (not device-local): pinned memory that the host writes and reads at
// its own speed and the device's copy engines cross the bus from. NVIDIA
// lists its BAR (device-local, host-visible, coherent) before it, which
// the host writes across the bus, write-combined, and must not read.
func (d *Device) memoryType(allowed uint32, p Placement, mapped bool) int {
	type want struct{ local, visible, coherent, cached, host bool }
	var prefs []want
	switch {
	case p == DeviceMapped || p == DeviceLocal && mapped:
		prefs = []want{{local: true, visible: true, coherent: true}}
	case p == DeviceLocal:
		prefs = []want{{local: true}}
	case p == Upload:
		prefs = []want{{visible: true, coherent: true, host: true}, {visible: true, coherent: true}}
	case p == Readback:
		prefs = []want{{visible: true, coherent: true, cached: true, host: true}, {visible: true, coherent: true, cached: true},
			{visible: true, coherent: true}}
	}
	for _, w := range prefs {
		for i, t := range d.Info.MemoryTypes {
			if allowed&(1<<i) == 0 {
				continue
			}
			if (!w.local || t.DeviceLocal) && (!w.visible || t.HostVisible) && (!w.host || !t.DeviceLocal) &&
				(!w.coherent || t.HostCoherent) && (!w.cached || t.HostCached) {
				return i
			}
		}
	}
	return -1
}

const bufferUsage = vk.BufferUsageStorageBufferBit | vk.BufferUsageTransferSrcBit | vk.BufferUsageTransferDstBit |
	vk.BufferUsageStorageTexelBufferBit | vk.BufferUsageUniformTexelBufferBit

// NewBuffer creates a buffer of size bytes with its own memory. On a
// unified device DeviceLocal buffers are mapped; Upload and Readback
// buffers always are. A failed allocation returns an *Error whose
// OutOfMemory method reports true.
func (d *Device) NewBuffer(size uint64, p Placement) (*Buffer, error) {
	if size == 0 {
		return nil, fmt.Errorf("vk: buffer of zero bytes")
	}
	ci := &vk.BufferCreateInfo{
		SType:       vk.StructureTypeBufferCreateInfo,
		Size:        vk.DeviceSize(size),
		Usage:       vk.BufferUsageFlags(bufferUsage),
		SharingMode: vk.SharingModeExclusive,
	}
	var h vk.Buffer
	r := vk.CreateBuffer(d.h, ci, nil, &h)
	ci.Free()
	if err := check("vkCreateBuffer", r); err != nil {
		return nil, err
	}
	var req vk.MemoryRequirements
	vk.GetBufferMemoryRequirements(d.h, h, &req)
	req.Deref()
	mapped := p != DeviceLocal || d.Unified()
	ti := d.memoryType(req.MemoryTypeBits, p, mapped)
	if ti < 0 {
		vk.DestroyBuffer(d.h, h, nil)
		return nil, fmt.Errorf("vk: no memory type for a %v buffer", p)
	}
	ai := &vk.MemoryAllocateInfo{
		SType:           vk.StructureTypeMemoryAllocateInfo,
		AllocationSize:  req.Size,
		MemoryTypeIndex: uint32(ti),
	}
	var mem vk.DeviceMemory
	r = vk.AllocateMemory(d.h, ai, nil, &mem)
	ai.Free()
	if err := check("vkAllocateMemory", r); err != nil {
		vk.DestroyBuffer(d.h, h, nil)
		return nil, err
	}
	if err := check("vkBindBufferMemory", vk.BindBufferMemory(d.h, h, mem, 0)); err != nil {
		vk.FreeMemory(d.h, mem, nil)
		vk.DestroyBuffer(d.h, h, nil)
		return nil, err
	}
	b := &Buffer{d: d, h: h, mem: mem, size: size}
	if mapped {
		var ptr unsafe.Pointer
		if err := check("vkMapMemory", vk.MapMemory(d.h, mem, 0, vk.DeviceSize(vk.WholeSize), 0, &ptr)); err != nil {
			vk.FreeMemory(d.h, mem, nil)
			vk.DestroyBuffer(d.h, h, nil)
			return nil, err
		}
		b.mapped = unsafe.Slice((*byte)(ptr), size)
	}
	d.live.Add(2)
	return b, nil
}

// Destroy frees the buffer, its memory and the views View made of it.
// The device must be done with them.
func (b *Buffer) Destroy() {
	if b == nil || b.h == nil {
		return
	}
	for _, v := range b.views {
		v.Destroy()
	}
	b.views = nil
	if b.mapped != nil && !b.imported {
		vk.UnmapMemory(b.d.h, b.mem)
	}
	b.mapped = nil
	vk.DestroyBuffer(b.d.h, b.h, nil)
	vk.FreeMemory(b.d.h, b.mem, nil)
	b.h = nil
	b.d.live.Add(-2)
}

// String names the placement.
func (p Placement) String() string {
	return [...]string{"device-local", "upload", "readback", "device-mapped"}[p]
}

// HostImportAlignment returns what host memory given to ImportBuffer
// must be aligned to, its address and its size; 0 where the device
// cannot import host memory.
func (d *Device) HostImportAlignment() uint64 {
	if !d.hostImport {
		return 0
	}
	return d.Info.Limits.MinImportedHostPointerAlignment
}

// ImportBuffer makes a buffer of size bytes over host memory: the memSize
// bytes at p, imported as device memory (VK_EXT_external_memory_host),
// so that the device reads and writes them in place. p and memSize must
// be multiples of HostImportAlignment and size at most memSize. The
// memory must stay valid, and Go memory pinned (runtime.Pinner), until
// the buffer is destroyed. Mapped returns the memory at p, size bytes.
// Drivers may refuse some memory, such as memory mapped from a file: the
// caller then copies instead.
func (d *Device) ImportBuffer(p unsafe.Pointer, memSize, size uint64) (*Buffer, error) {
	align := d.HostImportAlignment()
	switch {
	case align == 0:
		return nil, fmt.Errorf("vk: %s cannot import host memory (no %s)", d.Info.Name, hostImportExt)
	case uintptr(p)%uintptr(align) != 0 || memSize%align != 0 || size == 0 || size > memSize:
		return nil, fmt.Errorf("vk: import of %d bytes at %p for a buffer of %d: want both aligned to %d, the buffer no larger", memSize, p, size, align)
	}
	var h C.VkBuffer
	var types C.uint32_t
	var need C.VkDeviceSize
	r := vk.Result(C.vkops_host_buffer(&d.fns, C.VkDevice(unsafe.Pointer(d.h)), p, C.VkDeviceSize(size), C.VkBufferUsageFlags(bufferUsage),
		&h, &types, &need))
	if err := check("vkCreateBuffer (host memory)", r); err != nil {
		return nil, err
	}
	buf := vk.Buffer(unsafe.Pointer(h))
	ti := d.memoryType(uint32(types), Upload, true)
	if ti < 0 || uint64(need) > memSize {
		vk.DestroyBuffer(d.h, buf, nil)
		return nil, fmt.Errorf("vk: no memory type for host memory at %p (types %#x), or it needs %d bytes of %d", p, uint32(types), uint64(need), memSize)
	}
	var mem C.VkDeviceMemory
	r = vk.Result(C.vkops_import_host(&d.fns, C.VkDevice(unsafe.Pointer(d.h)), h, p, C.VkDeviceSize(memSize), C.uint32_t(ti), &mem))
	if err := check("vkAllocateMemory (host memory)", r); err != nil {
		vk.DestroyBuffer(d.h, buf, nil)
		return nil, err
	}
	d.live.Add(2)
	return &Buffer{d: d, h: buf, mem: vk.DeviceMemory(unsafe.Pointer(mem)), size: size, mapped: unsafe.Slice((*byte)(p), size), imported: true}, nil
}
