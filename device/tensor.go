package device

import (
	"fmt"

	"github.com/vkops/vkops/tensor"
	"github.com/vkops/vkops/vk"
)

// Tensor is a tensor resident on a device. Its bytes are split into pages
// of at most Device.PageSize bytes, each one bindable to a shader; ops
// plan their dispatches over the pages (see Bind). A tensor is safe for
// concurrent use, but the ops that write it must be ordered by the caller.
type Tensor struct {
	d     *Device
	dtype tensor.DType
	shape tensor.Shape
	bytes uint64
	pages []span
	// Room for the shape and pages of most tensors, so that making one
	// is one allocation.
	dims  [4]int
	page0 [1]span

	// Guarded by d.mu.
	freed     bool
	lastWrite *result // the batch that last wrote it; nil when none pending
	lastUse   *result // the batch that last read or wrote it
	hz        hazard  // its use by the commands since the last barrier
}

// DType returns the element type.
func (t *Tensor) DType() tensor.DType { return t.dtype }

// Shape returns a copy of the shape.
func (t *Tensor) Shape() tensor.Shape { return t.shape.Clone() }

// Dims returns the shape without copying it, for code that only reads
// it, such as planning an op, where a copy per call would be garbage per
// op. The caller must not modify it.
func (t *Tensor) Dims() tensor.Shape { return t.shape }

// Len returns the number of elements.
func (t *Tensor) Len() int { return t.shape.NumElements() }

// Bytes returns the size of the tensor's data in bytes.
func (t *Tensor) Bytes() uint64 { return t.bytes }

// Device returns the device the tensor lives on.
func (t *Tensor) Device() *Device { return t.d }

// String describes the tensor: "f32[2 3]".
func (t *Tensor) String() string { return fmt.Sprintf("%v%v", t.dtype, t.shape) }

// Empty allocates a tensor whose contents are undefined until an op or
// Write fills them.
func (d *Device) Empty(dt tensor.DType, shape tensor.Shape) (*Tensor, error) {
	if err := tensor.CheckSize(dt, shape); err != nil {
		return nil, fmt.Errorf("device: %w", err)
	}
	n := uint64(shape.NumElements())
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.usable(); err != nil {
		return nil, err
	}
	t := d.newTensor()
	*t = Tensor{d: d, dtype: dt, bytes: n * uint64(dt.Size())}
	t.shape = append(t.dims[:0:len(t.dims)], shape...)
	t.pages = t.page0[:0:len(t.page0)]
	// Refuse what cannot fit before allocating any page of it.
	if !d.pool.fits(t.bytes) {
		return nil, fmt.Errorf("device: tensor %v%v (%s): %w: the %s heap has %s in use",
			dt, t.shape, humanBytes(t.bytes), ErrOutOfMemory, humanBytes(d.pool.heapLimit), humanBytes(d.pool.inUse))
	}
	for off := uint64(0); off < t.bytes; off += d.pageSize {
		// Pages are padded to whole 16-byte words: kernels read and write
		// 32-bit words and vectors of four, never past the allocation.
		want := (min(d.pageSize, t.bytes-off) + 15) &^ 15
		s, err := d.pool.get(want)
		if err != nil {
			d.releasePages(t.pages)
			return nil, fmt.Errorf("device: tensor %v%v (%s): %w", dt, t.shape, humanBytes(t.bytes), err)
		}
		t.pages = append(t.pages, s)
	}
	return t, nil
}

// tensorBlock is how many tensors newTensor allocates at once.
const tensorBlock = 64

// newTensor returns memory for a tensor; d.mu must be held. Ops make a
// tensor each, so tensors come from blocks of tensorBlock: one
// allocation per block rather than per op. A block lives until none of
// its tensors is referenced, a few KiB at most.
func (d *Device) newTensor() *Tensor {
	if len(d.tensors) == 0 {
		d.tensors = make([]Tensor, tensorBlock)
	}
	t := &d.tensors[0]
	d.tensors = d.tensors[1:]
	return t
}

func (d *Device) releasePages(pages []span) {
	for _, s := range pages {
		d.pool.put(s)
	}
}

// Upload copies a host tensor to a new device tensor.
func (d *Device) Upload(h *tensor.Host) (*Tensor, error) {
	if h == nil {
		return nil, usagef(ErrMisuse, "device: upload of a nil host tensor")
	}
	if err := h.Check(); err != nil {
		return nil, fmt.Errorf("device: upload: %w", err)
	}
	t, err := d.Empty(h.DType, h.Shape)
	if err != nil {
		return nil, err
	}
	if err := t.Write(h.Data); err != nil {
		t.Free()
		return nil, err
	}
	return t, nil
}

// FromSlice uploads data as a tensor of the given shape (1-D when none).
func FromSlice[T tensor.Element](d *Device, data []T, shape ...int) (*Tensor, error) {
	h, err := tensor.FromSlice(data, shape...)
	if err != nil {
		return nil, fmt.Errorf("device: %w", err)
	}
	return d.Upload(h)
}

// ToSlice downloads t as []T; T must match t's element type.
func ToSlice[T tensor.Element](t *Tensor) ([]T, error) {
	h, err := t.Download()
	if err != nil {
		return nil, err
	}
	return tensor.ToSlice[T](h)
}

// Write replaces the tensor's contents with data (little-endian elements,
// exactly Bytes long), after the work that uses the tensor has finished.
func (t *Tensor) Write(data []byte) error {
	if err := t.check(); err != nil {
		return err
	}
	if uint64(len(data)) != t.bytes {
		return usagef(ErrSize, "device: write of %d bytes to %v, which holds %d", len(data), t, t.bytes)
	}
	d := t.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := t.usable(); err != nil {
		return err
	}
	// The last user's own failure is no reason not to overwrite it.
	if err := d.stream.waitFor(t.lastUse); err != nil && !t.lastUse.done {
		return err
	}
	if err := t.usable(); err != nil {
		return err
	}
	if t.bytes == 0 {
		return nil
	}
	if d.unified {
		for i, s := range t.pages {
			copy(s.buf.Mapped()[s.off:], data[uint64(i)*d.pageSize:min(uint64(i+1)*d.pageSize, t.bytes)])
		}
		t.lastWrite = nil
		return nil
	}
	return t.stage(data)
}

// Download copies the tensor to the host, after the work that writes it.
// If that work failed, Download returns its error.
func (t *Tensor) Download() (*tensor.Host, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	h := &tensor.Host{DType: t.dtype, Shape: t.shape.Clone(), Data: make([]byte, t.bytes)}
	if err := t.Read(h.Data); err != nil {
		return nil, err
	}
	return h, nil
}

// Read copies the tensor's bytes into dst, which must be Bytes long.
func (t *Tensor) Read(dst []byte) error {
	if err := t.check(); err != nil {
		return err
	}
	if uint64(len(dst)) != t.bytes {
		return usagef(ErrSize, "device: read of %v (%d bytes) into %d bytes", t, t.bytes, len(dst))
	}
	d := t.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := t.usable(); err != nil {
		return err
	}
	if err := d.stream.waitFor(t.lastWrite); err != nil {
		return err
	}
	if err := t.usable(); err != nil {
		return err
	}
	if t.bytes == 0 {
		return nil
	}
	if d.unified {
		t.readMapped(dst)
		return nil
	}
	return t.unstage(dst)
}

// readMapped copies the bytes of a tensor on a unified device into dst,
// which is Bytes long.
func (t *Tensor) readMapped(dst []byte) {
	for i, s := range t.pages {
		lo := uint64(i) * t.d.pageSize
		copy(dst[lo:min(lo+t.d.pageSize, t.bytes)], s.buf.Mapped()[s.off:])
	}
}

// Peek copies the tensor's bytes into dst, which must be Bytes long, if
// the host can read them at once: on a unified device, with no write of
// the tensor pending. Otherwise, or if the tensor cannot be used, it
// returns false and dst is unchanged. It never waits, so an op may ask
// what a small operand holds, such as a one-element cond, without
// leaving the device's stream of work.
func (t *Tensor) Peek(dst []byte) bool {
	if t == nil || t.d == nil || uint64(len(dst)) != t.bytes {
		return false
	}
	d := t.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if t.usable() != nil || !d.unified || t.lastWrite != nil && (!t.lastWrite.done || t.lastWrite.err != nil) {
		return false
	}
	t.readMapped(dst)
	return true
}

// Mapped returns the tensor's own memory, for a tensor of one page on a
// unified device, once the work that writes it has finished: a zero-copy
// view, valid until the tensor is written again or freed. ok is false
// where no such view exists.
func (t *Tensor) Mapped() (b []byte, ok bool, err error) {
	if err := t.check(); err != nil {
		return nil, false, err
	}
	d := t.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := t.usable(); err != nil {
		return nil, false, err
	}
	if !d.unified || len(t.pages) > 1 {
		return nil, false, nil
	}
	if err := d.stream.waitFor(t.lastWrite); err != nil {
		return nil, false, err
	}
	if err := t.usable(); err != nil {
		return nil, false, err
	}
	if t.bytes == 0 {
		return []byte{}, true, nil
	}
	s := t.pages[0]
	return s.buf.Mapped()[s.off : s.off+t.bytes], true, nil
}

// Free returns the tensor's memory to the device's pool once the work
// that uses it has finished. Freeing twice, or a tensor of a closed
// device, does nothing.
func (t *Tensor) Free() {
	if t == nil || t.d == nil {
		return
	}
	d := t.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if t.freed || d.closed {
		t.freed = true
		return
	}
	t.freed = true
	pages := t.pages
	t.pages = nil
	if t.lastUse == nil || t.lastUse.done {
		d.releasePages(pages)
		return
	}
	d.stream.releaseLater(pages)
}

// Err reports why the tensor cannot be used: nil, freed, or its device
// closed or lost. Ops check their operands with it before planning.
func (t *Tensor) Err() error {
	if err := t.check(); err != nil {
		return err
	}
	t.d.mu.Lock()
	defer t.d.mu.Unlock()
	return t.usable()
}

func (t *Tensor) check() error {
	if t == nil || t.d == nil {
		return usagef(ErrMisuse, "device: nil tensor")
	}
	return nil
}

// usable reports why the tensor cannot be used; d.mu must be held.
func (t *Tensor) usable() error {
	if t.freed {
		return fmt.Errorf("device: %v: %w", t, ErrFreed)
	}
	return t.d.usable()
}

// stage uploads through a host-visible buffer and a copy command, for
// devices whose memory the host cannot map.
func (t *Tensor) stage(data []byte) error {
	d := t.d
	for i, s := range t.pages {
		lo := uint64(i) * d.pageSize
		chunk := data[lo:min(lo+d.pageSize, t.bytes)]
		size := (uint64(len(chunk)) + 15) &^ 15
		st, err := d.getStaging(size, vk.Upload)
		if err != nil {
			return err
		}
		copy(st.Mapped(), chunk)
		b, err := d.stream.recording()
		if err != nil {
			d.putStaging(st, vk.Upload)
			return err
		}
		d.stream.order(b, access{t, lo, lo + size, true})
		b.cmds.Copy(s.buf, s.off, st, 0, size)
		b.release = append(b.release, func() { d.putStaging(st, vk.Upload) })
		t.lastWrite, t.lastUse = b.res, b.res
	}
	// Submitted now, the copies share no batch with the ops recorded next,
	// whose failure would otherwise lose the upload with them.
	return d.stream.submit()
}

// unstage downloads through a host-visible buffer and a copy command.
func (t *Tensor) unstage(dst []byte) error {
	d := t.d
	var bufs []*vk.Buffer
	defer func() {
		for _, b := range bufs {
			d.putStaging(b, vk.Readback)
		}
	}()
	for i, s := range t.pages {
		lo := uint64(i) * d.pageSize
		size := (min(d.pageSize, t.bytes-lo) + 15) &^ 15
		st, err := d.getStaging(size, vk.Readback)
		if err != nil {
			return err
		}
		bufs = append(bufs, st)
		b, err := d.stream.recording()
		if err != nil {
			return err
		}
		d.stream.order(b, access{t, lo, lo + size, false})
		b.cmds.Copy(st, 0, s.buf, s.off, size)
		t.lastUse = b.res
	}
	if err := d.stream.waitFor(t.lastUse); err != nil {
		return err
	}
	if err := t.usable(); err != nil {
		return err
	}
	for i, st := range bufs {
		lo := uint64(i) * d.pageSize
		copy(dst[lo:min(lo+d.pageSize, t.bytes)], st.Mapped())
	}
	return nil
}

// Fill records a fill of dst with copies of a 32-bit word
// (vkCmdFillBuffer), such as four copies of a byte or two of a 16-bit
// element.
func (d *Device) Fill(dst *Tensor, word uint32) error {
	if err := dst.check(); err != nil {
		return err
	}
	if dst.d != d {
		return usagef(ErrMisuse, "device: fill of a tensor of another device")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := dst.usable(); err != nil {
		return err
	}
	for i, s := range dst.pages {
		b, err := d.stream.recording()
		if err != nil {
			return err
		}
		lo := uint64(i) * d.pageSize
		size := (min(d.pageSize, dst.bytes-lo) + 15) &^ 15
		d.stream.order(b, access{dst, lo, lo + size, true})
		b.cmds.Fill(s.buf, s.off, size, word)
		dst.lastUse, dst.lastWrite = b.res, b.res
	}
	return nil
}

// Tile records copies of src's bytes into dst, end to end, until dst is
// full; dst must hold a whole number of them. The first comes from src,
// and each later copy doubles what dst holds up to tileBlock bytes; that
// block is then copied on to the end. n copies take about log2(n) copy
// commands (vkCmdCopyBuffer) while dst is small, each after a barrier,
// then one per block.
func (d *Device) Tile(dst, src *Tensor) error {
	if err := d.checkPair("tile", dst, src); err != nil {
		return err
	}
	if src.bytes == 0 || dst.bytes%src.bytes != 0 {
		return usagef(ErrSize, "device: tile of %v (%d bytes) into %v (%d bytes), not a whole number of copies", src, src.bytes, dst, dst.bytes)
	}
	return d.tile(dst, src)
}

// tile records what Tile and Copy do, once their tensors are checked.
func (d *Device) tile(dst, src *Tensor) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := src.usable(); err != nil {
		return err
	}
	if err := dst.usable(); err != nil {
		return err
	}
	if err := d.copyBytes(dst, 0, src, 0, src.bytes); err != nil {
		return err
	}
	k := src.bytes
	for k < dst.bytes && k < tileBlock {
		n := min(k, dst.bytes-k)
		if err := d.copyBytes(dst, k, dst, 0, n); err != nil {
			return err
		}
		k += n
	}
	for at := k; at < dst.bytes; at += k {
		if err := d.copyBytes(dst, at, dst, 0, min(k, dst.bytes-at)); err != nil {
			return err
		}
	}
	return nil
}

// tileBlock is the most bytes that Tile doubles: copies of a block that
// stays in the CPU's caches, with no barrier between them, filled
// 48-64 MiB outputs on lavapipe in 0.75-0.83 of the time that doubling
// to the end took, whose last copies read tens of MiB from memory.
const tileBlock = 1 << 20

// checkPair checks the tensors of a copy command (op) on d: neither
// nil, both d's.
func (d *Device) checkPair(op string, dst, src *Tensor) error {
	if err := dst.check(); err != nil {
		return err
	}
	if err := src.check(); err != nil {
		return err
	}
	if dst.d != d || src.d != d {
		return usagef(ErrMisuse, "device: %s between tensors of different devices", op)
	}
	return nil
}

// copyBytes records a copy of bytes [from, from+n) of src to [at, at+n)
// of dst, one command for each part that lies in one page of both; d.mu
// must be held.
func (d *Device) copyBytes(dst *Tensor, at uint64, src *Tensor, from, n uint64) error {
	for n > 0 {
		sp, dp := src.pages[from/d.pageSize], dst.pages[at/d.pageSize]
		so, do := from%d.pageSize, at%d.pageSize
		m := min(n, d.pageSize-so, d.pageSize-do)
		b, err := d.stream.recording()
		if err != nil {
			return err
		}
		d.stream.order(b, access{src, from, from + m, false}, access{dst, at, at + m, true})
		b.cmds.Copy(dp.buf, dp.off+do, sp.buf, sp.off+so, m)
		src.lastUse, dst.lastUse, dst.lastWrite = b.res, b.res, b.res
		from, at, n = from+m, at+m, n-m
	}
	return nil
}

// Copy records a copy of src's bytes into dst (vkCmdCopyBuffer); both must
// hold the same number of bytes.
func (d *Device) Copy(dst, src *Tensor) error {
	if err := d.checkPair("copy", dst, src); err != nil {
		return err
	}
	if dst.bytes != src.bytes {
		return usagef(ErrSize, "device: copy of %v (%d bytes) into %v (%d bytes)", src, src.bytes, dst, dst.bytes)
	}
	return d.tile(dst, src)
}
