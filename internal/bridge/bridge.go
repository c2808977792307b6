// Package bridge converts between package device's Device and Tensor,
// which users hold, and package core's, whose kernel author's API the
// rest of vkops (ops, bench, the command, the tests) plans and records
// with. Each conversion is the same pointer, as a type of the other
// package: it costs nothing and keeps a tensor's identity.
package bridge

import (
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/core"
	"github.com/vkops/vkops/tensor"
)

// Device returns d as package core's Device.
func Device(d *device.Device) *core.Device { return (*core.Device)(d) }

// Tensor returns t as package core's Tensor.
func Tensor(t *device.Tensor) *core.Tensor { return (*core.Tensor)(t) }

// UserDevice returns d as package device's Device.
func UserDevice(d *core.Device) *device.Device { return (*device.Device)(d) }

// UserTensor returns t as package device's Tensor.
func UserTensor(t *core.Tensor) *device.Tensor { return (*device.Tensor)(t) }

// Upload is core's Device.Upload for a device of package device.
func Upload(d *device.Device, h *tensor.Host) (*device.Tensor, error) {
	t, err := Device(d).Upload(h)
	return UserTensor(t), err
}

// Empty is core's Device.Empty for a device of package device.
func Empty(d *device.Device, dt tensor.DType, shape tensor.Shape) (*device.Tensor, error) {
	t, err := Device(d).Empty(dt, shape)
	return UserTensor(t), err
}

// Result returns an op's result as package core's Tensor.
func Result(t *device.Tensor, err error) (*core.Tensor, error) { return Tensor(t), err }
