package vk

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// DeviceType orders devices by preference: the larger, the better.
type DeviceType int

// Device types, worst to best, as device.Open prefers them.
const (
	TypeOther DeviceType = iota
	TypeCPU
	TypeVirtual
	TypeIntegrated
	TypeDiscrete
)

// String names the type as Vulkan does: "discrete-gpu", "cpu", ...
func (t DeviceType) String() string {
	return [...]string{"other", "cpu", "virtual-gpu", "integrated-gpu", "discrete-gpu"}[t]
}

// Heap is one memory heap.
type Heap struct {
	Size        uint64 `json:"size"`
	DeviceLocal bool   `json:"device_local"`
}

// MemoryType is one memory type and the heap it draws on.
type MemoryType struct {
	Heap         int  `json:"heap"`
	DeviceLocal  bool `json:"device_local"`
	HostVisible  bool `json:"host_visible"`
	HostCoherent bool `json:"host_coherent"`
	HostCached   bool `json:"host_cached"`
}

// Limits are the device limits that vkops plans with.
type Limits struct {
	MaxStorageBufferRange           uint32    `json:"max_storage_buffer_range"`
	MaxMemoryAllocationSize         uint64    `json:"max_memory_allocation_size"`
	MaxComputeWorkGroupCount        [3]uint32 `json:"max_compute_work_group_count"`
	MaxComputeWorkGroupSize         [3]uint32 `json:"max_compute_work_group_size"`
	MaxComputeWorkGroupInvocations  uint32    `json:"max_compute_work_group_invocations"`
	MaxComputeSharedMemorySize      uint32    `json:"max_compute_shared_memory_size"`
	MaxPushConstantsSize            uint32    `json:"max_push_constants_size"`
	MaxTexelBufferElements          uint32    `json:"max_texel_buffer_elements"`
	MaxBoundDescriptorSets          uint32    `json:"max_bound_descriptor_sets"`
	MaxMemoryAllocationCount        uint32    `json:"max_memory_allocation_count"`
	MinStorageBufferOffsetAlignment uint64    `json:"min_storage_buffer_offset_alignment"`
	MinTexelBufferOffsetAlignment   uint64    `json:"min_texel_buffer_offset_alignment"`
	// MinImportedHostPointerAlignment is what host memory imported as
	// device memory (Features.HostImport) must be aligned to, address
	// and size; 0 where the device cannot import it.
	MinImportedHostPointerAlignment uint64  `json:"min_imported_host_pointer_alignment,omitempty"`
	NonCoherentAtomSize             uint64  `json:"non_coherent_atom_size"`
	TimestampPeriod                 float32 `json:"timestamp_period_ns"`
	TimestampComputeAndGraphics     bool    `json:"timestamp_compute_and_graphics"`
}

// Features are the optional capabilities that kernel variants may use.
type Features struct {
	ShaderInt64              bool     `json:"shader_int64"`
	ShaderFloat64            bool     `json:"shader_float64"`
	ShaderInt16              bool     `json:"shader_int16"`
	ShaderInt8               bool     `json:"shader_int8"`
	ShaderFloat16            bool     `json:"shader_float16"`
	StorageBuffer8BitAccess  bool     `json:"storage_buffer_8bit_access"`
	StorageBuffer16BitAccess bool     `json:"storage_buffer_16bit_access"`
	SubgroupSize             uint32   `json:"subgroup_size"`
	SubgroupCompute          bool     `json:"subgroup_in_compute"`
	SubgroupOps              []string `json:"subgroup_operations"`
	// PushDescriptors: the device has VK_KHR_push_descriptor.
	PushDescriptors bool `json:"push_descriptors"`
	// HostImport: the device has VK_EXT_external_memory_host, and
	// Vulkan 1.1 for the external-memory structures it extends: buffers
	// may be bound to host memory, such as a Go slice's (Device.ImportBuffer).
	HostImport bool `json:"host_import"`
}

// DeviceInfo describes a physical device.
type DeviceInfo struct {
	Index         int          `json:"index"`
	Name          string       `json:"name"`
	Type          DeviceType   `json:"-"`
	TypeName      string       `json:"type"`
	VendorID      uint32       `json:"vendor_id"`
	DeviceID      uint32       `json:"device_id"`
	DriverID      DriverID     `json:"driver_id"` // 0 where the device predates Vulkan 1.2
	DriverName    string       `json:"driver_name"`
	DriverInfo    string       `json:"driver_info"`
	DriverVersion uint32       `json:"driver_version"`
	APIVersion    string       `json:"api_version"`
	UUID          string       `json:"uuid"`
	Heaps         []Heap       `json:"heaps"`
	MemoryTypes   []MemoryType `json:"memory_types"`
	Limits        Limits       `json:"limits"`
	Features      Features     `json:"features"`

	pd             vk.PhysicalDevice
	apiVersion     uint32
	computeFamily  int
	pipelineUUID   [16]byte
	subgroupOpBits uint32
}

// DriverID is a VkDriverId: which driver runs a device, whatever its name.
type DriverID uint32

// Driver IDs that vkops has measured on.
const (
	DriverMesaLLVMpipe DriverID = C.VK_DRIVER_ID_MESA_LLVMPIPE // lavapipe
)

// Vendor names the PCI vendor when it is a known one.
func (d *DeviceInfo) Vendor() string {
	switch d.VendorID {
	case 0x10de:
		return "NVIDIA"
	case 0x1002:
		return "AMD"
	case 0x8086:
		return "Intel"
	case 0x13b5:
		return "ARM"
	case 0x5143:
		return "Qualcomm"
	case 0x10005:
		return "Mesa"
	}
	return fmt.Sprintf("0x%x", d.VendorID)
}

// HasSubgroupOp reports whether compute shaders may use the subgroup
// operation class named ("basic", "vote", "arithmetic", "ballot", ...).
func (d *DeviceInfo) HasSubgroupOp(name string) bool {
	for _, op := range d.Features.SubgroupOps {
		if op == name {
			return d.Features.SubgroupCompute
		}
	}
	return false
}

var subgroupOpNames = []string{"basic", "vote", "arithmetic", "ballot", "shuffle", "shuffle_relative", "clustered", "quad"}

// PhysicalDevices lists the devices that have a compute queue, in the
// loader's order; Index is the position in that list.
func (in *Instance) PhysicalDevices() ([]*DeviceInfo, error) {
	pds, err := in.physical()
	if err != nil {
		return nil, err
	}
	var out []*DeviceInfo
	for _, pd := range pds {
		info := in.describe(pd)
		if info.computeFamily < 0 {
			continue
		}
		info.Index = len(out)
		out = append(out, info)
	}
	return out, nil
}

func (in *Instance) physical() ([]vk.PhysicalDevice, error) {
	var n uint32
	if err := check("vkEnumeratePhysicalDevices", vk.EnumeratePhysicalDevices(in.h, &n, nil)); err != nil {
		return nil, err
	}
	pds := make([]vk.PhysicalDevice, n)
	if n > 0 {
		if err := check("vkEnumeratePhysicalDevices", vk.EnumeratePhysicalDevices(in.h, &n, pds)); err != nil {
			return nil, err
		}
	}
	return pds[:n], nil
}

func (in *Instance) describe(pd vk.PhysicalDevice) *DeviceInfo {
	var p vk.PhysicalDeviceProperties
	vk.GetPhysicalDeviceProperties(pd, &p)
	p.Deref()
	p.Limits.Deref()
	var f vk.PhysicalDeviceFeatures
	vk.GetPhysicalDeviceFeatures(pd, &f)
	f.Deref()
	var mp vk.PhysicalDeviceMemoryProperties
	vk.GetPhysicalDeviceMemoryProperties(pd, &mp)
	mp.Deref()

	l := p.Limits
	info := &DeviceInfo{
		pd:            pd,
		Name:          cstr(p.DeviceName[:]),
		VendorID:      p.VendorID,
		DeviceID:      p.DeviceID,
		DriverVersion: p.DriverVersion,
		APIVersion:    fmt.Sprintf("%d.%d.%d", p.ApiVersion>>22, p.ApiVersion>>12&0x3ff, p.ApiVersion&0xfff),
		apiVersion:    p.ApiVersion,
		pipelineUUID:  p.PipelineCacheUUID,
		Limits: Limits{
			MaxStorageBufferRange:           l.MaxStorageBufferRange,
			MaxComputeWorkGroupCount:        l.MaxComputeWorkGroupCount,
			MaxComputeWorkGroupSize:         l.MaxComputeWorkGroupSize,
			MaxComputeWorkGroupInvocations:  l.MaxComputeWorkGroupInvocations,
			MaxComputeSharedMemorySize:      l.MaxComputeSharedMemorySize,
			MaxPushConstantsSize:            l.MaxPushConstantsSize,
			MaxTexelBufferElements:          l.MaxTexelBufferElements,
			MaxBoundDescriptorSets:          l.MaxBoundDescriptorSets,
			MaxMemoryAllocationCount:        l.MaxMemoryAllocationCount,
			MinStorageBufferOffsetAlignment: uint64(l.MinStorageBufferOffsetAlignment),
			MinTexelBufferOffsetAlignment:   uint64(l.MinTexelBufferOffsetAlignment),
			NonCoherentAtomSize:             uint64(l.NonCoherentAtomSize),
			TimestampPeriod:                 l.TimestampPeriod,
			TimestampComputeAndGraphics:     l.TimestampComputeAndGraphics == vk.True,
		},
		Features: Features{
			ShaderInt64:   f.ShaderInt64 == vk.True,
			ShaderFloat64: f.ShaderFloat64 == vk.True,
			ShaderInt16:   f.ShaderInt16 == vk.True,
		},
	}
	info.Type = deviceType(p.DeviceType)
	info.TypeName = info.Type.String()
	info.describeMemory(&mp)
	in.describeQueues(info)
	in.describeExtensions(info, p.ApiVersion)
	if info.UUID == "" {
		info.UUID = fmt.Sprintf("%x", p.PipelineCacheUUID)
	}
	return info
}

// deviceType returns the DeviceType of a Vulkan device type.
func deviceType(t vk.PhysicalDeviceType) DeviceType {
	switch t {
	case vk.PhysicalDeviceTypeDiscreteGpu:
		return TypeDiscrete
	case vk.PhysicalDeviceTypeIntegratedGpu:
		return TypeIntegrated
	case vk.PhysicalDeviceTypeVirtualGpu:
		return TypeVirtual
	case vk.PhysicalDeviceTypeCpu:
		return TypeCPU
	}
	return TypeOther
}

// describeMemory fills info's heaps and memory types from mp.
func (info *DeviceInfo) describeMemory(mp *vk.PhysicalDeviceMemoryProperties) {
	for i := range mp.MemoryHeaps[:mp.MemoryHeapCount] {
		h := mp.MemoryHeaps[i]
		h.Deref()
		info.Heaps = append(info.Heaps, Heap{Size: uint64(h.Size), DeviceLocal: h.Flags&vk.MemoryHeapFlags(vk.MemoryHeapDeviceLocalBit) != 0})
	}
	for i := range mp.MemoryTypes[:mp.MemoryTypeCount] {
		t := mp.MemoryTypes[i]
		t.Deref()
		fl := t.PropertyFlags
		info.MemoryTypes = append(info.MemoryTypes, MemoryType{
			Heap:         int(t.HeapIndex),
			DeviceLocal:  fl&vk.MemoryPropertyFlags(vk.MemoryPropertyDeviceLocalBit) != 0,
			HostVisible:  fl&vk.MemoryPropertyFlags(vk.MemoryPropertyHostVisibleBit) != 0,
			HostCoherent: fl&vk.MemoryPropertyFlags(vk.MemoryPropertyHostCoherentBit) != 0,
			HostCached:   fl&vk.MemoryPropertyFlags(vk.MemoryPropertyHostCachedBit) != 0,
		})
	}
}

// handles returns in and info's physical device as the C shim takes them.
func (in *Instance) handles(info *DeviceInfo) (C.VkInstance, C.VkPhysicalDevice) {
	return C.VkInstance(unsafe.Pointer(in.h)), C.VkPhysicalDevice(unsafe.Pointer(info.pd))
}

// describeQueues sets info.computeFamily: the queue family vkops runs
// on, -1 where none has compute.
func (in *Instance) describeQueues(info *DeviceInfo) {
	info.computeFamily = -1
	var flags [64]C.uint32_t
	inst, pd := in.handles(info)
	nq := min(int(C.vkops_queue_flags(in.gipa, inst, pd, &flags[0], C.uint32_t(len(flags)))), len(flags))
	for i, f := range flags[:nq] {
		if f&C.VK_QUEUE_COMPUTE_BIT == 0 {
			continue
		}
		// A family with compute but no graphics is a GPU's async compute
		// queue: take it over the first family with compute.
		if info.computeFamily < 0 || f&C.VK_QUEUE_GRAPHICS_BIT == 0 {
			info.computeFamily = i
		}
	}
}

// describeExtensions fills what info learns beyond Vulkan 1.0's
// queries, for a device of Vulkan version api: its driver, subgroups,
// 8- and 16-bit storage, host memory import and push descriptors.
func (in *Instance) describeExtensions(info *DeviceInfo, api uint32) {
	inst, pd := in.handles(info)
	// The 1.0 floor, raised from maintenance3 where the device has 1.1.
	info.Limits.MaxMemoryAllocationSize = 1 << 30
	ext := C.CString(hostImportExt)
	info.Features.HostImport = api >= vk.MakeVersion(1, 1, 0) && C.vkops_has_device_ext(in.gipa, inst, pd, ext) != 0
	C.free(unsafe.Pointer(ext))
	var x C.vkops_props2
	C.vkops_query_props2(in.gipa, inst, pd, C.uint32_t(api), cbool(info.Features.HostImport), &x)
	if x.has_props2 != 0 {
		info.DriverID = DriverID(x.driver_id)
		info.DriverName = C.GoString(&x.driver_name[0])
		info.DriverInfo = C.GoString(&x.driver_info[0])
		uuid := C.GoBytes(unsafe.Pointer(&x.device_uuid[0]), 16)
		info.UUID = fmt.Sprintf("%x-%x-%x-%x-%x", uuid[0:4], uuid[4:6], uuid[6:8], uuid[8:10], uuid[10:16])
		if m := uint64(x.max_memory_allocation_size); m > 0 {
			info.Limits.MaxMemoryAllocationSize = m
		}
		info.Features.SubgroupSize = uint32(x.subgroup_size)
		info.Features.SubgroupCompute = x.subgroup_stages&C.VK_SHADER_STAGE_COMPUTE_BIT != 0
		info.subgroupOpBits = uint32(x.subgroup_ops)
		for i, name := range subgroupOpNames {
			if info.subgroupOpBits&(1<<i) != 0 {
				info.Features.SubgroupOps = append(info.Features.SubgroupOps, name)
			}
		}
		info.Features.StorageBuffer8BitAccess = x.storage_buffer_8bit != 0
		info.Features.StorageBuffer16BitAccess = x.storage_buffer_16bit != 0
		info.Features.ShaderFloat16 = x.shader_float16 != 0
		info.Features.ShaderInt8 = x.shader_int8 != 0
		info.Limits.MinImportedHostPointerAlignment = uint64(x.min_imported_host_pointer_alignment)
	}
	if info.Limits.MinImportedHostPointerAlignment == 0 {
		info.Features.HostImport = false
	}
	ext = C.CString(pushDescriptorExt)
	info.Features.PushDescriptors = C.vkops_has_device_ext(in.gipa, inst, pd, ext) != 0
	C.free(unsafe.Pointer(ext))
}
