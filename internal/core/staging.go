package core

import (
	"math/bits"
	"runtime"
	"unsafe"

	"github.com/vkops/vkops/tensor"
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

// Staged transfers move a tensor in chunks of stageChunk bytes through
// stageDepth staging buffers: the host fills (or empties) one while the
// device copies others, each chunk submitted as soon as it is recorded.
const (
	stageChunk = 8 << 20
	stageDepth = 3
)

// stageSlot is one staging buffer of a transfer and the batch that last
// copied through it.
type stageSlot struct {
	buf *vk.Buffer
	res *result
}

// take makes sl ready for the next chunk: a buffer of n bytes of
// placement p when it has none, else once the copy through it has
// completed, reporting that copy's failure. d.mu must be held; it is
// released while waiting.
func (d *Device) take(sl *stageSlot, n uint64, p vk.Placement) error {
	if sl.buf == nil {
		var err error
		sl.buf, err = d.getStaging(n, p)
		return err
	}
	return d.stream.waitFor(sl.res)
}

// putSlots returns the buffers of a transfer's slots, at once where
// their copies have completed, else once they have. d.mu must be held.
func (d *Device) putSlots(slots []stageSlot, p vk.Placement) {
	for _, sl := range slots {
		switch {
		case sl.buf == nil:
		case sl.res == nil || sl.res.done:
			d.putStaging(sl.buf, p)
		default:
			d.stream.putStagingLater(sl.buf, p)
		}
	}
}

// chunk returns the size of a staged transfer's chunks for t: they never
// cross a page, since pages and chunks are powers of two.
func (t *Tensor) chunk() uint64 { return min(stageChunk, t.d.pageSize, (t.bytes+15)&^15) }

// stage uploads data through staging buffers and copy commands, for
// devices whose memory the host does not map; d.mu must be held, and
// the tensor's host write begun (beginHost).
func (t *Tensor) stage(data []byte) error {
	d := t.d
	chunk := t.chunk()
	var slots [stageDepth]stageSlot
	defer d.putSlots(slots[:], vk.Upload)
	for k, lo := 0, uint64(0); lo < t.bytes; k, lo = k+1, lo+chunk {
		sl := &slots[k%stageDepth]
		if err := d.take(sl, chunk, vk.Upload); err != nil {
			return err
		}
		n := min(chunk, t.bytes-lo)
		d.mu.Unlock()
		hostCopy(sl.buf.Mapped()[:n], data[lo:lo+n], false)
		d.mu.Lock()
		if err := t.usable(); err != nil {
			return err
		}
		b, err := d.stream.recording()
		if err != nil {
			return err
		}
		size := (n + 15) &^ 15
		s := t.pages[lo/d.pageSize]
		d.stream.order(b, access{t, lo, lo + size, true})
		b.cmds.Copy(s.buf, s.off+lo%d.pageSize, sl.buf, 0, size)
		t.lastWrite, t.lastUse, sl.res = b.res, b.res, b.res
		// Submitted now, the copy starts while the next chunk is filled,
		// and shares no batch with the ops recorded next, whose failure
		// would otherwise lose the upload with them.
		if err := d.stream.submit(); err != nil {
			return err
		}
	}
	return nil
}

// unstage downloads into dst through staging buffers and copy commands,
// the first stageDepth chunks copied ahead, each later one as soon as a
// buffer is emptied; with bools, each byte of dst is made 0 or 1. d.mu
// must be held, and the tensor's host read begun (beginHost).
func (t *Tensor) unstage(dst []byte, bools bool) error {
	d := t.d
	chunk := t.chunk()
	chunks := (t.bytes + chunk - 1) / chunk
	var slots [stageDepth]stageSlot
	defer d.putSlots(slots[:], vk.Readback)
	for k := range min(chunks, stageDepth) {
		if err := t.fetch(&slots[k], k, chunk); err != nil {
			return err
		}
	}
	for k := range chunks {
		sl := &slots[k%stageDepth]
		if err := d.stream.waitFor(sl.res); err != nil {
			return err
		}
		if err := t.usable(); err != nil {
			return err
		}
		lo := k * chunk
		n := min(chunk, t.bytes-lo)
		d.mu.Unlock()
		hostCopy(dst[lo:lo+n], sl.buf.Mapped()[:n], bools)
		d.mu.Lock()
		if next := k + stageDepth; next < chunks {
			if err := t.fetch(sl, next, chunk); err != nil {
				return err
			}
		}
	}
	return nil
}

// fetch records and submits the copy of chunk k of the tensor into sl's
// buffer; d.mu must be held.
func (t *Tensor) fetch(sl *stageSlot, k, chunk uint64) error {
	d := t.d
	if sl.buf == nil {
		var err error
		if sl.buf, err = d.getStaging(chunk, vk.Readback); err != nil {
			return err
		}
	}
	if err := t.usable(); err != nil {
		return err
	}
	b, err := d.stream.recording()
	if err != nil {
		return err
	}
	lo := k * chunk
	size := (min(chunk, t.bytes-lo) + 15) &^ 15
	s := t.pages[lo/d.pageSize]
	d.stream.order(b, access{t, lo, lo + size, false})
	b.cmds.Copy(sl.buf, 0, s.buf, s.off+lo%d.pageSize, size)
	t.lastUse, sl.res = b.res, b.res
	return d.stream.submit()
}

// importCopy uploads host (to) or downloads into it by copy commands
// between the tensor's pages and host's own memory, imported
// (Options.Transfers "import"), and waits for them: host must not change
// once the upload returns, nor be read before the download has landed.
// It reports false, doing nothing, where host does not lie on whole
// pages of the import alignment. d.mu must be held, and the host copy
// begun (beginHost).
func (t *Tensor) importCopy(host []byte, to, bools bool) (bool, error) {
	d := t.d
	align := d.dev.HostImportAlignment()
	p := unsafe.Pointer(unsafe.SliceData(host))
	if uintptr(p)%uintptr(align) != 0 || t.bytes%align != 0 {
		return false, nil
	}
	var pin runtime.Pinner
	pin.Pin(p)
	defer pin.Unpin()
	bufs := make([]*vk.Buffer, 0, len(t.pages))
	defer func() {
		for _, b := range bufs {
			b.Destroy()
		}
	}()
	var last *result
	var err error
	for i, s := range t.pages {
		lo := uint64(i) * d.pageSize
		n := min(d.pageSize, t.bytes-lo)
		var b *vk.Buffer
		if b, err = d.dev.ImportBuffer(unsafe.Add(p, lo), n, n); err != nil {
			if len(bufs) == 0 {
				return false, nil // the driver refuses this memory: stage it
			}
			err = d.fail(err)
			break
		}
		bufs = append(bufs, b)
		var rec *batch
		if rec, err = d.stream.recording(); err != nil {
			break
		}
		d.stream.order(rec, access{t, lo, lo + n, to})
		if to {
			rec.cmds.Copy(s.buf, s.off, b, 0, n)
			t.lastWrite = rec.res
		} else {
			rec.cmds.Copy(b, 0, s.buf, s.off, n)
		}
		t.lastUse, last = rec.res, rec.res
	}
	// The copies recorded must end before their buffers are destroyed,
	// even where a later page failed.
	if werr := d.stream.waitFor(last); err == nil {
		err = werr
	}
	if err != nil {
		return true, err
	}
	if !to && bools {
		tensor.CanonicalBools(host)
	}
	return true, nil
}
