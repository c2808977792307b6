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

	// live counts the Vulkan objects this device has created and not yet
	// destroyed, for leak tests.
	live atomic.Int64
}

// Live returns the number of Vulkan objects created through d and not yet
// destroyed.
func (d *Device) Live() int64 { return d.live.Load() }

// NewDevice creates a logical device on the physical device info describes,
// which must come from in.PhysicalDevices.
// It enables shaderInt64 where present, for the kernel variants that use it.
func (in *Instance) NewDevice(info *DeviceInfo) (*Device, error) {
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
	ci := &vk.DeviceCreateInfo{
		SType:                vk.StructureTypeDeviceCreateInfo,
		QueueCreateInfoCount: 1,
		PQueueCreateInfos:    qci,
		PEnabledFeatures:     feats,
	}
	var h vk.Device
	r := vk.CreateDevice(pd, ci, nil, &h)
	ci.Free()
	if err := check("vkCreateDevice", r); err != nil {
		return nil, err
	}
	var q vk.Queue
	vk.GetDeviceQueue(h, uint32(info.computeFamily), 0, &q)
	d := &Device{Info: info, in: in, pd: pd, h: h, queue: q}
	if C.vkops_load_device_fns(in.gipa, C.VkInstance(unsafe.Pointer(in.h)), C.VkDevice(unsafe.Pointer(h)), &d.fns) == 0 {
		vk.DestroyDevice(h, nil)
		return nil, fmt.Errorf("vk: device %s lacks a core entry point", info.Name)
	}
	return d, nil
}

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
