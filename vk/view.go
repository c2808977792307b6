package vk

import (
	vk "github.com/vulkan-go/vulkan"
)

// TexelFormat is a format that a texel-buffer view reads data as.
type TexelFormat int

const (
	// RGBA32UI reads 16 bytes per texel as four uints.
	RGBA32UI TexelFormat = iota
	// RGBA8UI reads 4 bytes per texel as four uints, one byte each.
	RGBA8UI
)

func (f TexelFormat) vk() vk.Format {
	if f == RGBA8UI {
		return vk.FormatR8g8b8a8Uint
	}
	return vk.FormatR32g32b32a32Uint
}

// TexelBytes returns the size of one texel.
func (f TexelFormat) TexelBytes() uint64 {
	if f == RGBA8UI {
		return 4
	}
	return 16
}

// SupportsStorageTexel reports whether f can back a storage texel buffer.
func (d *Device) SupportsStorageTexel(f TexelFormat) bool {
	var fp vk.FormatProperties
	vk.GetPhysicalDeviceFormatProperties(d.pd, f.vk(), &fp)
	fp.Deref()
	return fp.BufferFeatures&vk.FormatFeatureFlags(vk.FormatFeatureStorageTexelBufferBit) != 0
}

// BufferView is a texel-buffer view over a range of a buffer.
type BufferView struct {
	d *Device
	h vk.BufferView
}

// NewView creates a view of size bytes of b from offset, read as f.
func (b *Buffer) NewView(f TexelFormat, offset, size uint64) (*BufferView, error) {
	ci := &vk.BufferViewCreateInfo{
		SType:  vk.StructureTypeBufferViewCreateInfo,
		Buffer: b.h,
		Format: f.vk(),
		Offset: vk.DeviceSize(offset),
		Range:  vk.DeviceSize(size),
	}
	var h vk.BufferView
	r := vk.CreateBufferView(b.d.h, ci, nil, &h)
	ci.Free()
	if err := check("vkCreateBufferView", r); err != nil {
		return nil, err
	}
	b.d.live.Add(1)
	return &BufferView{d: b.d, h: h}, nil
}

type viewKey struct {
	f            TexelFormat
	offset, size uint64
}

// View returns a view of size bytes of b from offset, read as f: the
// same one for the same arguments, made on first use and kept until b is
// destroyed or DropViews hands it over. Ops bind the same ranges of the
// same buffers over and over; creating a view each time was a call into
// the driver per binding.
func (b *Buffer) View(f TexelFormat, offset, size uint64) (*BufferView, error) {
	k := viewKey{f, offset, size}
	if v, ok := b.views[k]; ok {
		return v, nil
	}
	v, err := b.NewView(f, offset, size)
	if err != nil {
		return nil, err
	}
	if b.views == nil {
		b.views = map[viewKey]*BufferView{}
	}
	b.views[k] = v
	return v, nil
}

// Views returns how many views View keeps for b.
func (b *Buffer) Views() int { return len(b.views) }

// DropViews forgets the views View made and returns them, for the caller
// to destroy once the device is done with them.
func (b *Buffer) DropViews() []*BufferView {
	vs := make([]*BufferView, 0, len(b.views))
	for _, v := range b.views {
		vs = append(vs, v)
	}
	clear(b.views)
	return vs
}

// Destroy destroys the view.
func (v *BufferView) Destroy() {
	if v == nil || v.h == nil {
		return
	}
	vk.DestroyBufferView(v.d.h, v.h, nil)
	v.h = nil
	v.d.live.Add(-1)
}
