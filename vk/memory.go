package vk

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
)

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
func (d *Device) memoryType(allowed uint32, p Placement, mapped bool) int {
	type want struct{ local, visible, coherent, cached bool }
	var prefs []want
	switch {
	case p == DeviceLocal && mapped:
		prefs = []want{{local: true, visible: true, coherent: true}}
	case p == DeviceLocal:
		prefs = []want{{local: true}}
	case p == Upload:
		prefs = []want{{visible: true, coherent: true}}
	case p == Readback:
		prefs = []want{{visible: true, coherent: true, cached: true}, {visible: true, coherent: true}}
	}
	for _, w := range prefs {
		for i, t := range d.Info.MemoryTypes {
			if allowed&(1<<i) == 0 {
				continue
			}
			if (!w.local || t.DeviceLocal) && (!w.visible || t.HostVisible) &&
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
	if b.mapped != nil {
		vk.UnmapMemory(b.d.h, b.mem)
		b.mapped = nil
	}
	vk.DestroyBuffer(b.d.h, b.h, nil)
	vk.FreeMemory(b.d.h, b.mem, nil)
	b.h = nil
	b.d.live.Add(-2)
}

// String names the placement.
func (p Placement) String() string {
	return [...]string{"device-local", "upload", "readback"}[p]
}
