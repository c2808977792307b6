package vk

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// Device is a logical device with one compute queue.
type Device struct {
	Info  *DeviceInfo
	in    *Instance
	pd    vk.PhysicalDevice
	h     vk.Device
	queue vk.Queue
	fns   C.vkops_device_fns
	// pushDesc: pipelines take push-descriptor layouts and dispatches
	// push their bindings (VK_KHR_push_descriptor enabled).
	pushDesc bool
	// hostImport: VK_EXT_external_memory_host is enabled (ImportBuffer).
	hostImport bool

	// live counts the Vulkan objects this device has created and not yet
	// destroyed, for leak tests.
	live atomic.Int64
}

// Live returns the number of Vulkan objects created through d and not yet
// destroyed.
func (d *Device) Live() int64 { return d.live.Load() }

// DeviceOptions configure NewDevice.
type DeviceOptions struct {
	// Descriptors chooses how dispatches bind their buffers.
	Descriptors DescriptorMode
}

// DescriptorMode is how dispatches bind their buffers: a descriptor set
// allocated and written for each, or pushed into the command buffer
// (VK_KHR_push_descriptor).
type DescriptorMode int

const (
	// DescriptorsAuto pushes descriptors where the device has the
	// extension, except on lavapipe: it applies pushed descriptors when
	// it runs the batch, and a batch of tiny dispatches ran about 5%
	// longer (1-8% across runs) than with sets written while recording,
	// which cost no more to record.
	DescriptorsAuto DescriptorMode = iota
	// DescriptorsPush pushes descriptors where the device has the
	// extension, sets otherwise.
	DescriptorsPush
	// DescriptorsSets writes a descriptor set per dispatch, as on devices
	// without the extension.
	DescriptorsSets
)

// pushes reports whether dispatches on a device described by info push
// their descriptors in mode m.
func (m DescriptorMode) pushes(info *DeviceInfo) bool {
	switch {
	case !info.Features.PushDescriptors || m == DescriptorsSets:
		return false
	case m == DescriptorsPush:
		return true
	}
	return info.DriverID != DriverMesaLLVMpipe
}

// NewDevice creates a logical device on the physical device info describes,
// which must come from in.PhysicalDevices.
// It enables shaderInt64 where present, for the kernel variants that use it,
// and VK_KHR_push_descriptor where opts.Descriptors chooses to push
// descriptors: dispatches then push their bindings into the command buffer
// instead of allocating and writing a descriptor set each.
func (in *Instance) NewDevice(info *DeviceInfo, opts DeviceOptions) (*Device, error) {
	pd := info.pd
	var pinner runtime.Pinner
	defer pinner.Unpin()
	prio := []float32{1}
	pin(&pinner, &prio[0])
	qci := []vk.DeviceQueueCreateInfo{{
		SType:            vk.StructureTypeDeviceQueueCreateInfo,
		QueueFamilyIndex: uint32(info.computeFamily),
		QueueCount:       1,
		PQueuePriorities: prio,
	}}
	feats := []vk.PhysicalDeviceFeatures{{}}
	if info.Features.ShaderInt64 {
		feats[0].ShaderInt64 = vk.True
	}
	pin(&pinner, &qci[0], &feats[0])
	pushDesc := opts.Descriptors.pushes(info)
	var exts []string
	if pushDesc {
		exts = append(exts, pushDescriptorExt+"\x00")
	}
	if info.Features.HostImport {
		exts = append(exts, hostImportExt+"\x00")
	}
	ci := &vk.DeviceCreateInfo{
		SType:                   vk.StructureTypeDeviceCreateInfo,
		QueueCreateInfoCount:    1,
		PQueueCreateInfos:       qci,
		EnabledExtensionCount:   uint32(len(exts)),
		PpEnabledExtensionNames: exts,
		PEnabledFeatures:        feats,
	}
	var h vk.Device
	r := vk.CreateDevice(pd, ci, nil, &h)
	ci.Free()
	if err := check("vkCreateDevice", r); err != nil {
		return nil, err
	}
	var q vk.Queue
	vk.GetDeviceQueue(h, uint32(info.computeFamily), 0, &q)
	d := &Device{Info: info, in: in, pd: pd, h: h, queue: q, pushDesc: pushDesc, hostImport: info.Features.HostImport}
	if C.vkops_load_device_fns(in.gipa, C.VkInstance(unsafe.Pointer(in.h)), C.VkDevice(unsafe.Pointer(h)), cbool(pushDesc),
		cbool(d.hostImport), &d.fns) == 0 {
		vk.DestroyDevice(h, nil)
		return nil, fmt.Errorf("vk: device %s lacks an entry point of Vulkan 1.0 or of the extensions enabled", info.Name)
	}
	return d, nil
}

// The names of the device extensions vkops enables where present.
const (
	pushDescriptorExt = "VK_KHR_push_descriptor"
	hostImportExt     = "VK_EXT_external_memory_host"
)

// PushDescriptors reports whether dispatches push their bindings
// (VK_KHR_push_descriptor) rather than write a descriptor set each.
func (d *Device) PushDescriptors() bool { return d.pushDesc }

// WaitIdle waits until the device has finished all work.
func (d *Device) WaitIdle() error { return check("vkDeviceWaitIdle", vk.DeviceWaitIdle(d.h)) }

// Close waits for the device to go idle and destroys it. Every object made
// from it must be destroyed first.
func (d *Device) Close() {
	if d == nil || d.h == nil {
		return
	}
	vk.DeviceWaitIdle(d.h)
	vk.DestroyDevice(d.h, nil)
	d.h = nil
}
