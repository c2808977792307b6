package core

import (
	"errors"
	"fmt"
	"runtime"
	"time"
	"unsafe"

	"github.com/vkops/vkops/tensor"
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
	// pages are set when the tensor is made and never change after,
	// freed or not: ops read them without d.mu.
	pages []span
	// wrapped: the pages are a Go slice's memory, imported (Wrap).
	wrapped bool
	// slot is the tensor's index in its tensorBlock, or -1.
	slot int8

	// Guarded by d.mu.
	freed     bool
	lastWrite *result // the batch that last wrote it; nil when none pending
	lastUse   *result // the batch that last read or wrote it
	hz        hazard  // its use by the commands since the last barrier
	// host counts the host copies of its bytes in progress, which run
	// with d.mu released: the number reading it, or -1 while one writes
	// it (beginHost).
	host int
}

// The accessors below take a nil tensor as one of no elements, on no
// device, so that code that describes a tensor, an error message among
// it, cannot panic; the calls that use a tensor report ErrMisuse.

// DType returns the element type; tensor.Invalid for a nil tensor.
func (t *Tensor) DType() tensor.DType {
	if t == nil {
		return tensor.Invalid
	}
	return t.dtype
}

// Shape returns a copy of the shape; nil for a nil tensor.
func (t *Tensor) Shape() tensor.Shape {
	if t == nil {
		return nil
	}
	return t.shape.Clone()
}

// Dims returns the shape without copying it, for code that only reads
// it, such as planning an op, where a copy per call would be garbage per
// op. The caller must not modify it.
func (t *Tensor) Dims() tensor.Shape {
	if t == nil {
		return nil
	}
	return t.shape
}

// Len returns the number of elements; 0 for a nil tensor.
func (t *Tensor) Len() int {
	if t == nil {
		return 0
	}
	return t.shape.NumElements()
}

// Bytes returns the size of the tensor's data in bytes.
func (t *Tensor) Bytes() uint64 {
	if t == nil {
		return 0
	}
	return t.bytes
}

// Device returns the device the tensor lives on; nil for a nil tensor.
func (t *Tensor) Device() *Device {
	if t == nil {
		return nil
	}
	return t.d
}

// String describes the tensor: "f32[2 3]", or "<nil>".
func (t *Tensor) String() string {
	if t == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%v%v", t.dtype, t.shape)
}

// Empty allocates a tensor whose contents are undefined until an op or
// Write fills them.
//
// Memory comes from the device's pool, where freed tensors return it.
// Where the heap has no room, Empty first runs the work recorded so far
// and waits for it, so that tensors freed while that work used them
// return their memory, and gives the pool's unused memory back to the
// driver; only then does it report ErrOutOfMemory, saying what holds
// the heap.
func (d *Device) Empty(dt tensor.DType, shape tensor.Shape) (*Tensor, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	if err := tensor.CheckSize(dt, shape); err != nil {
		return nil, fmt.Errorf("device: %w", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.leave()
	t := d.newTensor(dt, shape)
	if d.stream.held > 0 {
		// Freed tensors whose work has completed make room at no cost,
		// and fresh memory costs a page fault a page on first use.
		d.stream.reap()
	}
	err := d.allocPages(t)
	for step := 0; errors.Is(err, ErrOutOfMemory) && step < reclaimSteps; step++ {
		if err = d.reclaim(step); err == nil {
			err = d.allocPages(t)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("device: tensor %v%v (%s): %w", dt, t.shape, humanBytes(t.bytes), err)
	}
	t.track()
	return t, nil
}

// allocPages gives t, a new tensor, its pages, or none and the reason;
// d.mu must be held.
func (d *Device) allocPages(t *Tensor) error {
	// Refuse what cannot fit before allocating any page of it.
	if !d.pool.fits(t.bytes) {
		return d.heapFull(ErrOutOfMemory)
	}
	for off := uint64(0); off < t.bytes; off += d.pageSize {
		// Pages are padded to whole 16-byte words: kernels read and write
		// 32-bit words and vectors of four, never past the allocation.
		want := (min(d.pageSize, t.bytes-off) + 15) &^ 15
		s, err := d.pool.get(want)
		if err != nil {
			d.releasePages(t.pages)
			t.pages = t.pages[:0]
			return d.heapFull(err)
		}
		t.pages = append(t.pages, s)
	}
	return nil
}

// reclaim makes room in the heap after an allocation failed, in steps,
// each worth a try of its own: first it submits the work recorded so far
// and waits for it, which returns the pages of tensors freed while it
// used them (releaseLater); then it collects the tensors that became
// unreachable without Free (the Go heap grows too little for the
// collector to run by itself while the device's fills), and waits again;
// then it destroys the pool's cached buffers and empty slabs, whose
// memory serves other sizes. d.mu must be held; it is released while
// waiting.
func (d *Device) reclaim(step int) error {
	switch step {
	case 0:
	case 1:
		d.mu.Unlock()
		d.collectGarbage()
		d.mu.Lock()
	default:
		d.pool.trim(0)
		d.pool.freeSlabs()
		return nil
	}
	if err := d.stream.drain(); err != nil {
		return err
	}
	return d.usable()
}

// reclaimSteps is how many steps reclaim has.
const reclaimSteps = 3

// collectGarbage runs the garbage collector and waits for the
// finalizers it queued: for a sentinel's, then until no tensor's has run
// for a moment (they run in no set order), a second at most.
func (d *Device) collectGarbage() {
	done := make(chan struct{})
	// With a pointer: not a tiny object, whose finalizer may never run.
	sentinel := &struct{ p *int }{}
	runtime.SetFinalizer(sentinel, func(*struct{ p *int }) { close(done) })
	runtime.GC()
	deadline := time.Now().Add(time.Second)
	select {
	case <-done:
	case <-time.After(time.Until(deadline)):
	}
	for n := d.collected.Load(); time.Now().Before(deadline); {
		time.Sleep(200 * time.Microsecond)
		m := d.collected.Load()
		if m == n {
			return
		}
		n = m
	}
}

// heapUse returns the bytes of the heap that live tensors hold, and
// those of the free slots of the pool's slabs; d.mu must be held.
func (d *Device) heapUse() (live, slots uint64) {
	p := d.pool
	slots = p.free() - p.cached // in slabs, so counted in inUse
	return p.inUse - min(p.inUse, d.stream.held+slots), slots
}

// heapFull adds to err, an allocation's failure, what holds the heap;
// d.mu must be held.
func (d *Device) heapFull(err error) error {
	if !errors.Is(err, ErrOutOfMemory) {
		return err
	}
	p := d.pool
	live, slots := d.heapUse()
	return fmt.Errorf("%w: the %s heap has %s in use: %s by live tensors, %s by freed tensors that work not yet finished still uses, %s by free slots of the pool's slabs",
		err, humanBytes(p.heapLimit), humanBytes(p.inUse), humanBytes(live), humanBytes(d.stream.held), humanBytes(slots))
}

// tensorRoom holds the shape and the pages of most tensors, beside the
// tensor rather than in it: an object with a finalizer that points into
// itself stays reachable, and never finalized.
type tensorRoom struct {
	dims  [4]int
	page0 [1]span
}

// roomBlock is how many tensorRooms newTensor allocates at once: a block
// lives until none of its tensors is, a few KiB.
const roomBlock = 64

// smallTensor: a tensor of fewer bytes comes from a tensorBlock, whose
// finalizer frees its tensors once none of them is reachable; a larger
// one is an allocation of its own, with a finalizer of its own. Setting
// and running a finalizer costs about 0.3 µs (a Go benchmark, 2-core
// EPYC), 15% of an op on four elements in BenchmarkRecordOps, and little
// beside an op on 4 KiB or more; a block's dead tensors wait for its live
// ones, at most 63 × 4 KiB.
const smallTensor = 4096

// tensorBlock is where small tensors come from, 64 to an allocation.
// Once Free has freed all of them its finalizer goes: the common case,
// whose block then dies in one collection and costs no finalizer run.
type tensorBlock struct {
	ts    [blockLen]Tensor // first, so that a tensor's block is its address less its slot's
	freed int              // by Free; guarded by the device's mu
}

const blockLen = 64

// block returns the block of t, a tensor with a slot.
func (t *Tensor) block() *tensorBlock {
	return (*tensorBlock)(unsafe.Add(unsafe.Pointer(t), -int(t.slot)*int(unsafe.Sizeof(*t))))
}

// newTensor returns a tensor of dt and shape, which are valid, with no
// pages yet; d.mu must be held. track gives it its finalizer once its
// pages are set.
func (d *Device) newTensor(dt tensor.DType, shape tensor.Shape) *Tensor {
	if len(d.rooms) == 0 {
		d.rooms = make([]tensorRoom, roomBlock)
	}
	r := &d.rooms[0]
	d.rooms = d.rooms[1:]
	bytes := uint64(shape.NumElements()) * uint64(dt.Size())
	var t *Tensor
	if bytes < smallTensor {
		if len(d.block) == 0 {
			b := new(tensorBlock)
			runtime.SetFinalizer(b, (*tensorBlock).collect)
			d.block = b.ts[:]
		}
		slot := blockLen - len(d.block)
		t = &d.block[0]
		d.block = d.block[1:]
		*t = Tensor{d: d, dtype: dt, bytes: bytes, slot: int8(slot)}
	} else {
		t = &Tensor{d: d, dtype: dt, bytes: bytes, slot: -1}
	}
	t.shape = append(r.dims[:0:len(r.dims)], shape...)
	t.pages = r.page0[:0:len(r.page0)]
	return t
}

// track gives t, whose pages are set, a finalizer that frees it once it
// is unreachable, where its block's does not. A finalizer rather than
// runtime.AddCleanup, which costs two allocations more, and whose
// argument could not be the tensor.
func (t *Tensor) track() {
	if t.bytes >= smallTensor {
		runtime.SetFinalizer(t, (*Tensor).collect)
	}
}

// collect frees the tensors of an unreachable block that were not freed
// (and those whose making failed, which hold no pages), under one lock:
// the finalizer's goroutine contends with the device's callers for it.
func (b *tensorBlock) collect() {
	d := b.ts[0].d
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	for i := range b.ts {
		if t := &b.ts[i]; t.d != nil {
			t.collectLocked()
		}
	}
}

// collect frees a tensor that became unreachable without Free, once the
// work that used it has completed.
func (t *Tensor) collect() {
	d := t.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.closed {
		t.collectLocked()
	}
}

// collectLocked is collect with d.mu held, on an open device.
func (t *Tensor) collectLocked() {
	if !t.freed {
		t.freed = true
		t.release()
		t.d.collected.Add(1)
	}
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
// Its bytes are copied once, straight into the tensor's memory or, where
// the host does not map it, into staging memory (Options.Transfers).
func FromSlice[T tensor.Element](d *Device, data []T, shape ...int) (*Tensor, error) {
	dt, err := checkSlice("device: ", data, shape)
	if err != nil {
		return nil, err
	}
	t, err := d.Empty(dt, sliceShape(data, shape))
	if err != nil {
		return nil, err
	}
	if err := t.Write(tensor.Bytes(data)); err != nil {
		t.Free()
		return nil, err
	}
	return t, nil
}

// checkSlice is tensor.CheckSlice, its error prefixed with what; a slice
// whose length does not fill a good shape is ErrSize.
func checkSlice[T tensor.Element](what string, data []T, shape []int) (tensor.DType, error) {
	dt, err := tensor.CheckSlice(data, shape...)
	switch {
	case err == nil:
		return dt, nil
	case tensor.CheckSize(tensor.DTypeOf[T](), sliceShape(data, shape)) == nil:
		return dt, usagef(ErrSize, "%s%v", what, err)
	}
	return dt, usagef(ErrMisuse, "%s%v", what, err) // a shape no tensor has
}

func sliceShape[T tensor.Element](data []T, shape []int) tensor.Shape {
	if shape == nil {
		return tensor.Shape{len(data)}
	}
	return shape
}

// ToSlice downloads t as []T, after the work that writes t; T must match
// t's element type. It allocates the slice and copies into it once.
func ToSlice[T tensor.Element](t *Tensor) ([]T, error) {
	if err := checkElem[T](t, "ToSlice"); err != nil {
		return nil, err
	}
	if out, ok, err := appendMapped[T](t); ok || err != nil {
		return out, err
	}
	out := make([]T, t.Len())
	if err := ToSliceInto(t, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Value downloads the one element of t, after the work that writes it;
// a tensor of any other length is ErrMisuse.
func Value[T tensor.Element](t *Tensor) (T, error) {
	var v [1]T
	if err := checkElem[T](t, "Value"); err != nil {
		return v[0], err
	}
	if n := t.Len(); n != 1 {
		return v[0], usagef(ErrMisuse, "device: Value: %v holds %d elements, not one", t, n)
	}
	err := ToSliceInto(t, v[:])
	return v[0], err
}

// appendMapped is ToSlice of a tensor of one page that the host maps,
// by append: the runtime allocates memory that append overwrites
// without zeroing it first, where make zeroes it. On lavapipe, 64 MiB
// took 2.9x a copy() of its bytes by make and a copy, 1.1x by append.
// It reports false, doing nothing, for other tensors.
func appendMapped[T tensor.Element](t *Tensor) (out []T, ok bool, err error) {
	d := t.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if !t.hostReads() || len(t.pages) != 1 {
		return nil, false, nil
	}
	if err := d.enter(); err != nil {
		return nil, true, err
	}
	defer d.leave()
	if err := t.beginHost(false); err != nil {
		return nil, true, err
	}
	defer t.endHost(false)
	s := t.pages[0]
	var z T
	view := unsafe.Slice((*T)(unsafe.Pointer(&s.buf.Mapped()[s.off])), t.bytes/uint64(unsafe.Sizeof(z)))
	d.mu.Unlock()
	out = append([]T(nil), view...)
	if t.dtype == tensor.Bool {
		tensor.CanonicalBools(tensor.Bytes(out))
	}
	d.mu.Lock()
	return out, true, nil
}

// ToSliceInto downloads t into dst, which must hold Len elements of t's
// element type, after the work that writes t; it allocates nothing. A
// bool is true for any nonzero byte of t, and dst holds it as a Go bool:
// 1.
func ToSliceInto[T tensor.Element](t *Tensor, dst []T) error {
	if err := checkElem[T](t, "ToSliceInto"); err != nil {
		return err
	}
	if len(dst) != t.Len() {
		return usagef(ErrSize, "device: ToSliceInto of %v into %d elements", t, len(dst))
	}
	return t.read(tensor.Bytes(dst), t.dtype == tensor.Bool)
}

// checkElem checks that t is a usable tensor of T's element type, for
// fn: a freed tensor, or one of a closed device, reports that before
// any mistake of type or length.
func checkElem[T tensor.Element](t *Tensor, fn string) error {
	if err := t.Err(); err != nil {
		return err
	}
	if dt := tensor.DTypeOf[T](); dt != t.dtype {
		return usagef(ErrMisuse, "device: %s: %v holds %v, not %v", fn, t, t.dtype, dt)
	}
	return nil
}

// Write replaces the tensor's contents with data (little-endian elements,
// exactly Bytes long), after the work that uses the tensor has finished.
// The bytes are copied once, over several goroutines when there are many
// (GOMAXPROCS), with the device free for other callers meanwhile; ops
// recorded on the tensor meanwhile wait for the copy.
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
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	if err := t.beginHost(true); err != nil {
		return err
	}
	defer t.endHost(true)
	switch {
	case t.bytes == 0:
		return nil
	case t.hostWrites():
		pages := t.pages
		d.mu.Unlock()
		t.copyPages(pages, data, true, false)
		d.mu.Lock()
		t.lastWrite = nil
		return nil
	case d.importing:
		if ok, err := t.importCopy(data, true, false); ok || err != nil {
			return err
		}
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

// Read copies the tensor's bytes into dst, which must be Bytes long,
// after the work that writes the tensor; it allocates nothing. It copies
// as Write does.
func (t *Tensor) Read(dst []byte) error { return t.read(dst, false) }

// read is Read; with bools, each byte of dst is made 0 or 1.
func (t *Tensor) read(dst []byte, bools bool) error {
	if err := t.check(); err != nil {
		return err
	}
	if uint64(len(dst)) != t.bytes {
		return usagef(ErrSize, "device: read of %v (%d bytes) into %d bytes", t, t.bytes, len(dst))
	}
	d := t.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	if err := t.beginHost(false); err != nil {
		return err
	}
	defer t.endHost(false)
	switch {
	case t.bytes == 0:
		return nil
	case t.hostReads():
		pages := t.pages
		d.mu.Unlock()
		t.copyPages(pages, dst, false, bools)
		d.mu.Lock()
		return nil
	case d.importing:
		if ok, err := t.importCopy(dst, false, bools); ok || err != nil {
			return err
		}
	}
	return t.unstage(dst, bools)
}

// hostWrites reports whether the host writes the tensor's pages in
// place: they are mapped (a unified device, direct uploads) or a Go
// slice's (Wrap).
func (t *Tensor) hostWrites() bool { return t.d.unified || t.d.direct || t.wrapped }

// hostReads reports whether the host reads the tensor's pages in place.
func (t *Tensor) hostReads() bool { return t.d.unified || t.wrapped }

// copyPages copies host bytes, Bytes long, into the tensor's pages (to)
// or out of them, with d.mu released: beginHost keeps the pages.
func (t *Tensor) copyPages(pages []span, host []byte, to, bools bool) {
	ps := t.d.pageSize
	for i, s := range pages {
		lo := uint64(i) * ps
		h := host[lo:min(lo+ps, t.bytes)]
		m := s.buf.Mapped()[s.off : s.off+uint64(len(h))]
		if to {
			hostCopy(m, h, false)
		} else {
			hostCopy(h, m, bools)
		}
	}
}

// beginHost waits until the host may copy the tensor's bytes, and marks
// the copy begun: for a write, once the work that uses the tensor has
// finished and no other host copy of it runs; for a read, once the work
// that writes it has finished (reporting that work's failure) and no
// host write runs. d.mu must be held; it is released while waiting. Ops
// recorded on the tensor until endHost wait (Dispatch), and Free leaves
// its pages to endHost.
func (t *Tensor) beginHost(write bool) error {
	d := t.d
	for {
		if err := t.usable(); err != nil {
			return err
		}
		r := t.lastWrite
		if write {
			r = t.lastUse
		}
		switch {
		case r != nil && !r.done:
			// The last user's own failure is no reason not to overwrite it.
			if err := d.stream.waitFor(r); err != nil && (!write || !r.done) {
				return err
			}
		case !write && r != nil && r.err != nil:
			return r.err
		case t.host < 0 || write && t.host > 0:
			d.hostIdle.Wait()
		default:
			if write {
				t.host = -1
			} else {
				t.host++
			}
			return nil
		}
	}
}

// endHost marks a host copy that beginHost began as ended, and returns
// the pages of a tensor freed meanwhile; d.mu must be held.
func (t *Tensor) endHost(write bool) {
	d := t.d
	if write {
		t.host = 0
	} else {
		t.host--
	}
	if t.host == 0 && t.freed {
		t.release()
	}
	d.hostIdle.Broadcast()
}

// awaitHost waits until no host copy of the tensors that args name
// stands in the way of a command on them (hostBusy), and reports why
// one cannot be used; d.mu must be held, and is released while waiting.
func (d *Device) awaitHost(args ...Arg) error {
	for {
		for _, a := range args {
			if err := a.T.usable(); err != nil {
				return err
			}
		}
		if !hostBusy(args) {
			return nil
		}
		d.hostIdle.Wait()
	}
}

// hostBusy reports whether a host copy of one of the tensors that args
// bind runs, so that a command on them must wait for it: a write of the
// tensor, or a read where the command writes it. d.mu must be held.
func hostBusy(args []Arg) bool {
	for _, a := range args {
		if a.T != nil && (a.T.host < 0 || a.Write && a.T.host > 0) {
			return true
		}
	}
	return false
}

// Wait waits until the work recorded so far that reads or writes the
// tensor has finished, and any host copy of its bytes (Write, Read),
// and returns the error of the work that last wrote it, if that failed.
// After it the host may write the memory of a wrapped tensor (Wrap) or
// of a view (View) again.
func (t *Tensor) Wait() error {
	if err := t.check(); err != nil {
		return err
	}
	t.d.mu.Lock()
	defer t.d.mu.Unlock()
	if err := t.d.enter(); err != nil {
		return err
	}
	defer t.d.leave()
	return t.waitIdle()
}

// waitIdle is Wait with d.mu held; it is released while waiting.
func (t *Tensor) waitIdle() error {
	d := t.d
	for {
		if err := t.usable(); err != nil {
			return err
		}
		switch r := t.lastUse; {
		case r != nil && !r.done:
			if err := d.stream.waitFor(r); err != nil && !r.done {
				return err
			}
		case t.host < 0:
			d.hostIdle.Wait()
		case t.lastWrite != nil && t.lastWrite.err != nil:
			return t.lastWrite.err
		default:
			return nil
		}
	}
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
	if t.usable() != nil || !t.hostReads() || t.host < 0 || t.lastWrite != nil && (!t.lastWrite.done || t.lastWrite.err != nil) {
		return false
	}
	t.readMapped(dst)
	return true
}

// Mapped returns the tensor's own memory, for a tensor of one page on a
// unified device, once the work that writes it has finished: a zero-copy
// view, valid until the tensor is written again or freed. ok is false
// where no such view exists. View gives typed views of tensors of any
// number of pages.
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
	if !t.hostReads() || len(t.pages) > 1 {
		return nil, false, nil
	}
	if err := d.enter(); err != nil {
		return nil, false, err
	}
	defer d.leave()
	if err := t.waitIdle(); err != nil {
		return nil, false, err
	}
	if t.bytes == 0 {
		return []byte{}, true, nil
	}
	s := t.pages[0]
	return s.buf.Mapped()[s.off : s.off+t.bytes], true, nil
}

// Free returns the tensor's memory to the device's pool once the work
// that uses it has finished, and a host copy of it. Freeing twice, or a
// tensor of a closed device, does nothing. A wrapped tensor's slice
// (Wrap) stays pinned until then, and is the caller's again after.
func (t *Tensor) Free() {
	if t == nil || t.d == nil {
		return
	}
	d := t.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if t.freed || d.closed {
		return
	}
	t.freed = true
	if t.slot >= 0 {
		b := t.block()
		if b.freed++; b.freed == blockLen {
			runtime.SetFinalizer(b, nil)
		}
	}
	if t.host == 0 {
		t.release()
	}
}

// release returns the pages of a freed tensor, once the work recorded so
// far has completed; d.mu must be held. t.pages stays as it was: ops read
// it without d.mu (Window, Pages) while they plan, and never bind a
// freed tensor's pages, since Dispatch checks each tensor under d.mu.
func (t *Tensor) release() {
	d := t.d
	pages := t.pages
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

// usable reports why the tensor cannot be used; d.mu must be held. A
// closed or lost device comes first: every use of its tensors, freed or
// not, reports that.
func (t *Tensor) usable() error {
	if err := t.d.usable(); err != nil {
		return err
	}
	if t.freed {
		return fmt.Errorf("device: %v: %w", t, ErrFreed)
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
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	if err := d.awaitHost(Arg{T: dst, Write: true}); err != nil {
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

// copyCall runs record, which records copies from src into dst, within
// a call on d, with d.mu held, once the host is done with both.
func (d *Device) copyCall(dst, src *Tensor, record func() error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	if err := d.awaitHost(Arg{T: src}, Arg{T: dst, Write: true}); err != nil {
		return err
	}
	return record()
}

// tile records what Tile and Copy do, once their tensors are checked.
func (d *Device) tile(dst, src *Tensor) error {
	return d.copyCall(dst, src, func() error { return d.tileBytes(dst, src) })
}

// tileBytes records tile's copies; d.mu must be held.
func (d *Device) tileBytes(dst, src *Tensor) error {
	switch same, meet := overlap(dst, src); {
	case same:
		return nil // the bytes are in place already
	case meet:
		return usagef(ErrMisuse, "device: copy of %v into %v: their memory overlaps (wraps of one slice?), and a copy must not read what it writes", src, dst)
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

// overlap reports whether the memory of dst and src is the same, byte
// for byte (dst is src, or two wraps of one slice, as long), or meets
// otherwise, which a copy command must not (vkCmdCopyBuffer,
// VUID-vkCmdCopyBuffer-pRegions-00117). Only a wrapped tensor can share
// memory with another tensor: the pool's allocations never meet.
func overlap(dst, src *Tensor) (same, meet bool) {
	if dst == src {
		return true, false
	}
	if !dst.wrapped && !src.wrapped {
		return false, false
	}
	same = dst.bytes == src.bytes && dst.bytes > 0
	for i := range dst.pages {
		x, ok := dst.hostRange(i)
		for j := range src.pages {
			y, ok2 := src.hostRange(j)
			if !ok || !ok2 {
				return false, false // device memory that no wrap can share
			}
			meet = meet || x[0] < y[1] && y[0] < x[1]
			same = same && (i != j || x == y)
		}
	}
	return same, meet
}

// hostRange returns the host addresses of page i of the tensor, where
// the host maps it: [first byte, past the last).
func (t *Tensor) hostRange(i int) ([2]uintptr, bool) {
	s := t.pages[i]
	m := s.buf.Mapped()
	if m == nil {
		return [2]uintptr{}, false
	}
	n := min(t.d.pageSize, t.bytes-uint64(i)*t.d.pageSize)
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(m))) + uintptr(s.off)
	return [2]uintptr{lo, lo + uintptr(n)}, true
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

// CopyRange records a copy of bytes [from, from+n) of src to [at, at+n)
// of dst (vkCmdCopyBuffer), two tensors whose memory must not meet.
func (d *Device) CopyRange(dst *Tensor, at uint64, src *Tensor, from, n uint64) error {
	if err := d.checkPair("copy", dst, src); err != nil {
		return err
	}
	if from > src.bytes || n > src.bytes-from || at > dst.bytes || n > dst.bytes-at {
		return usagef(ErrSize, "device: copy of bytes [%d, %d) of %v (%d bytes) to [%d, %d) of %v (%d bytes)",
			from, from+n, src, src.bytes, at, at+n, dst, dst.bytes)
	}
	return d.copyCall(dst, src, func() error {
		if same, meet := overlap(dst, src); same || meet {
			return usagef(ErrMisuse, "device: copy of a range of %v into %v: their memory overlaps", src, dst)
		}
		return d.copyBytes(dst, at, src, from, n)
	})
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
