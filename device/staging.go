package device

import (
	"math/bits"

	"github.com/vkops/vkops/vk"
)

// staging keeps the host-visible buffers of staged transfers for reuse.
// Allocating one per transfer cost NVIDIA's driver more than the copy: it
// pins fresh host memory each time, and uploads of 64 MiB moved 1 GB/s.
type staging struct {
	free  [vk.Readback + 1][]*vk.Buffer // by placement: Upload, Readback
	bytes uint64                        // held in free
}

// stagingKeep bounds the bytes of idle staging buffers a device keeps.
const stagingKeep = 256 << 20

// stagingSize is the size of buffer that serves a transfer of n bytes: a
// power of two from 64 KiB, so that buffers fit transfers of other sizes.
func stagingSize(n uint64) uint64 {
	return max(uint64(1)<<bits.Len64(max(n, 1)-1), 64<<10)
}

// getStaging returns a buffer of placement p for n bytes, a kept one if
// one fits; d.mu must be held.
func (d *Device) getStaging(n uint64, p vk.Placement) (*vk.Buffer, error) {
	size := stagingSize(n)
	free := d.staging.free[p]
	for i, b := range free {
		if b.Size() == size {
			d.staging.free[p] = append(free[:i], free[i+1:]...)
			d.staging.bytes -= size
			return b, nil
		}
	}
	b, err := d.dev.NewBuffer(size, p)
	if err != nil {
		return nil, d.fail(err)
	}
	return b, nil
}

// putStaging keeps b for a later transfer, or destroys it when the device
// keeps enough; d.mu must be held, or the device be closing.
func (d *Device) putStaging(b *vk.Buffer, p vk.Placement) {
	if d.staging.bytes+b.Size() > stagingKeep {
		b.Destroy()
		return
	}
	d.staging.free[p] = append(d.staging.free[p], b)
	d.staging.bytes += b.Size()
}

// destroyStaging frees the kept buffers; the device must be idle.
func (d *Device) destroyStaging() {
	for p, free := range d.staging.free {
		for _, b := range free {
			b.Destroy()
		}
		d.staging.free[p] = nil
	}
	d.staging.bytes = 0
}
