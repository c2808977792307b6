package bench

import (
	"fmt"
	"strconv"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/tensor"
)

// Transfer returns the cases that move n bytes: host to device, device to
// host, and the device's own copy (vkCmdCopyBuffer), the baseline that op
// bandwidth is compared with; each beside a Go copy() of the same bytes
// (HostCopy). Uploads and downloads run as the device moves bytes by
// default (pattern "-"), and by each way a discrete GPU may
// (Options.Transfers), on a second device opened on the same one with
// that option and Options.Staging, so that lavapipe runs them too:
//
//	staged   through staging buffers in pipelined chunks
//	direct   uploads written into device-local mapped memory
//	import   copy commands from and to the caller's pages, imported
//	dma      a copy command alone between a resident tensor and a Go
//	         slice wrapped (Wrap): the bandwidth of a copy from pinned
//	         host memory, which the others are measured against
//
// A way the device lacks is skipped (ErrSkip). The host's bytes are
// written before timing.
func Transfer(n int) []*Case {
	cs := []*Case{transferCase("upload", n, ""), transferCase("download", n, "")}
	for _, way := range []string{"staged", "direct", "import", "dma"} {
		cs = append(cs, transferCase("upload", n, way))
		if way != "direct" {
			cs = append(cs, transferCase("download", n, way))
		}
	}
	return append(cs, Copy(n))
}

// transferCase is an upload (Write of n bytes) or a download (Read), or
// for "dma" a copy from or into a wrapped slice.
func transferCase(op string, n int, way string) *Case {
	shape := tensor.Shape{n}
	up := op == "upload"
	return &Case{Op: op, Pattern: way, DType: tensor.U8, Shape: shape, Bytes: uint64(n), HostOnly: true, HostCopy: uint64(n),
		Setup: func(d *device.Device) (func() error, func(), error) {
			td, closeTD, err := transferDevice(d, way)
			if err != nil {
				return nil, nil, err
			}
			host := written(n)
			x, err := bridge.Device(td).Empty(tensor.U8, shape)
			if err == nil && !up {
				err = x.Write(host)
			}
			if err != nil {
				x.Free()
				closeTD()
				return nil, nil, err
			}
			cleanup := func() { x.Free(); closeTD() }
			switch {
			case way != "dma" && up:
				return func() error { return syncAfter(td, x.Write(host)) }, cleanup, nil
			case way != "dma":
				return func() error { return x.Read(host) }, cleanup, nil
			}
			w, err := wrapped(td, host)
			if err != nil {
				cleanup()
				return nil, nil, err
			}
			dst, src := x, w
			if !up {
				dst, src = bridge.Tensor(w), bridge.UserTensor(x)
			}
			return func() error { return syncAfter(td, bridge.Device(td).Copy(dst, bridge.Tensor(src))) }, func() { w.Free(); cleanup() }, nil
		}}
}

// transferDevice returns the device a transfer case of this way runs on,
// and what closes it: d itself for the default way and "dma", else a
// device opened on the same one with Staging and the way as Transfers,
// or ErrSkip where it cannot move bytes that way.
func transferDevice(d *device.Device, way string) (*device.Device, func(), error) {
	if way == "" || way == "dma" {
		return d, func() {}, nil
	}
	td, err := device.Open(device.Options{Device: strconv.Itoa(d.Info().Index), Staging: true, Transfers: way, CacheDir: "-"})
	if err != nil {
		return nil, nil, err
	}
	if bridge.Device(td).Transfers() != way {
		td.Close()
		return nil, nil, fmt.Errorf("%w: %s cannot move bytes the %s way", ErrSkip, d, way)
	}
	return td, func() { td.Close() }, nil
}

// wrapped wraps host on d, or reports ErrSkip where d cannot.
func wrapped(d *device.Device, host []byte) (*device.Tensor, error) {
	w, err := device.Wrap(d, host)
	if err != nil {
		return nil, err
	}
	if !w.Wrapped() {
		w.Free()
		return nil, fmt.Errorf("%w: %s cannot wrap a slice of %d bytes", ErrSkip, d, len(host))
	}
	return w, nil
}

// written returns n bytes, each written, starting on a multiple of
// wrapAlign: the zero pages of memory never written would read faster
// than a caller's data.
func written(n int) []byte {
	b := aligned[byte](n)
	for i := range b {
		b[i] = byte(i*7 + 1)
	}
	return b
}

// syncAfter waits for the work that err's call recorded on d.
func syncAfter(d *device.Device, err error) error {
	if err != nil {
		return err
	}
	return d.Sync()
}

// Copy returns the case that copies n bytes on the device with
// vkCmdCopyBuffer: bytes read plus written.
func Copy(n int) *Case {
	shape := tensor.Shape{n}
	return &Case{Op: "copy", DType: tensor.U8, Shape: shape, Bytes: 2 * uint64(n), HostCopy: uint64(n), Setup: func(d *device.Device) (func() error, func(), error) {
		src, err := bridge.Device(d).Empty(tensor.U8, shape)
		if err != nil {
			return nil, nil, err
		}
		dst, err := bridge.Device(d).Empty(tensor.U8, shape)
		if err != nil {
			src.Free()
			return nil, nil, err
		}
		if err := src.Write(make([]byte, n)); err != nil {
			src.Free()
			dst.Free()
			return nil, nil, err
		}
		return func() error { return bridge.Device(d).Copy(dst, src) }, func() { src.Free(); dst.Free() }, nil
	}}
}
