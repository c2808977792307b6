package bench

import (
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/tensor"
)

// Transfer returns the cases that move n bytes: host to device, device to
// host, and the device's own copy (vkCmdCopyBuffer), the baseline that op
// bandwidth is compared with.
func Transfer(n int) []*Case {
	shape := tensor.Shape{n}
	return []*Case{
		{Op: "upload", DType: tensor.U8, Shape: shape, Bytes: uint64(n), HostOnly: true, Setup: func(d *device.Device) (func() error, func(), error) {
			host := make([]byte, n)
			x, err := d.Empty(tensor.U8, shape)
			if err != nil {
				return nil, nil, err
			}
			return func() error { return x.Write(host) }, x.Free, nil
		}},
		{Op: "download", DType: tensor.U8, Shape: shape, Bytes: uint64(n), HostOnly: true, Setup: func(d *device.Device) (func() error, func(), error) {
			host := make([]byte, n)
			x, err := d.Empty(tensor.U8, shape)
			if err != nil {
				return nil, nil, err
			}
			if err := x.Write(host); err != nil {
				x.Free()
				return nil, nil, err
			}
			return func() error { return x.Read(host) }, x.Free, nil
		}},
		Copy(n),
	}
}

// Copy returns the case that copies n bytes on the device with
// vkCmdCopyBuffer: bytes read plus written.
func Copy(n int) *Case {
	shape := tensor.Shape{n}
	return &Case{Op: "copy", DType: tensor.U8, Shape: shape, Bytes: 2 * uint64(n), Setup: func(d *device.Device) (func() error, func(), error) {
		src, err := d.Empty(tensor.U8, shape)
		if err != nil {
			return nil, nil, err
		}
		dst, err := d.Empty(tensor.U8, shape)
		if err != nil {
			src.Free()
			return nil, nil, err
		}
		if err := src.Write(make([]byte, n)); err != nil {
			src.Free()
			dst.Free()
			return nil, nil, err
		}
		return func() error { return d.Copy(dst, src) }, func() { src.Free(); dst.Free() }, nil
	}}
}
