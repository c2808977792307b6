package core

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/vkops/vkops/vk"
)

// Work is recorded into a batch (one command buffer) and submitted when
// the batch is full or when someone needs a result. Batches complete in
// submission order on the one queue, so waiting for batch n waits only
// for the work up to n.
const (
	batchSets = 256 // dispatches per batch (descriptor sets in its pool)
	// firstBatch is the dispatches after which a batch recorded while
	// the device is idle is submitted; each batch after it may hold twice
	// as many as the one before, up to batchSets. The device starts
	// working after a few ops instead of a full batch, and every batch
	// takes longer to run than the next one takes to record.
	firstBatch  = 16
	maxInflight = 4 // submitted batches before recording waits for the oldest
	timestamps  = 2
)

// result is what became of one batch: shared by the tensors it wrote, so
// that a read of one of them reports the batch's failure.
type result struct {
	seq  uint64
	done bool
	err  error
}

type batch struct {
	cmds    *vk.Commands
	res     *result
	n       int           // dispatches recorded
	limit   int           // dispatches after which it is submitted
	release []func()      // run once the batch has completed
	spans   []span        // returned to the pool once the batch has completed
	staged  []stagedSlice // staging buffers kept for reuse once the batch has completed
	held    uint64        // the heap's bytes in spans
	work    uint64        // bytes its commands read and write, ranges counted whole
	timed   bool
}

// stagedSlice is a staging buffer and its placement.
type stagedSlice struct {
	buf *vk.Buffer
	p   vk.Placement
}

type stream struct {
	d *Device
	// One goroutine at a time waits for the oldest batch, with d.mu
	// released so that others keep recording; the rest wait on idle.
	waiting  bool
	idle     *sync.Cond
	rec      *batch   // being recorded, or nil
	inflight []*batch // submitted, oldest first
	spare    []*batch
	next     uint64 // seq of the next batch
	done     uint64 // every batch up to this seq has completed
	timing   bool
	gpuNanos float64
	limit    int   // the limit of the batch recorded last
	fault    error // the next submit fails with it (tests only)
	discard  bool  // batches are dropped, not submitted (benchmarks of recording only)
	// epoch counts the barriers recorded: tensor accesses noted in the
	// current epoch are those a new command may depend on.
	epoch uint64
	// held is the heap's bytes in the pages of freed tensors that wait
	// in batches for their work to complete (releaseLater).
	held uint64
	// wrapped is what the commands since the last barrier did to any
	// wrapped tensor: two wraps of one slice are two tensors over the
	// same memory, so each wrapped tensor's accesses count for all.
	wrapped hazard
}

func (s *stream) init(d *Device) { s.d, s.next, s.epoch, s.idle = d, 1, 1, sync.NewCond(&d.mu) }

// recording returns the batch to record into, starting one if needed;
// d.mu must be held.
func (s *stream) recording() (*batch, error) {
	// waitOldest may let another goroutine start a batch meanwhile.
	for s.rec == nil && len(s.inflight) >= maxInflight {
		if err := s.waitOldest(); err != nil {
			return nil, err
		}
	}
	if s.rec != nil {
		return s.rec, nil
	}
	var b *batch
	if n := len(s.spare); n > 0 {
		b, s.spare = s.spare[n-1], s.spare[:n-1]
	} else {
		cmds, err := s.d.dev.NewCommands(batchSets, timestamps)
		if err != nil {
			return nil, s.d.fail(err)
		}
		b = &batch{cmds: cmds}
	}
	if err := b.cmds.Begin(); err != nil {
		s.spare = append(s.spare, b)
		return nil, s.d.fail(err)
	}
	b.n, b.limit, b.work = 0, firstBatch, 0
	if len(s.inflight) > 0 || s.discard { // dropped batches never leave the device idle
		b.limit = min(max(2*s.limit, firstBatch), batchSets)
	}
	s.limit = b.limit
	b.res = &result{seq: s.next}
	s.next++
	b.timed = s.timing
	if b.timed {
		b.cmds.Timestamp(0)
	}
	s.rec = b
	return b, nil
}

// access is one command's use of bytes [lo, hi) of a tensor.
type access struct {
	t      *Tensor
	lo, hi uint64
	write  bool
}

// hazard is what the commands recorded since the last barrier did to a
// tensor: the hull of the byte ranges they wrote and read.
type hazard struct {
	epoch uint64 // the stream's epoch it belongs to; older ones are void
	w, r  [2]uint64
}

func overlaps(r [2]uint64, lo, hi uint64) bool { return r[0] < hi && lo < r[1] }

func hull(r [2]uint64, lo, hi uint64) [2]uint64 {
	if r[0] == r[1] {
		return [2]uint64{lo, hi}
	}
	return [2]uint64{min(r[0], lo), max(r[1], hi)}
}

// needBarrier reports whether a command making these accesses depends on
// one recorded since the last barrier: it reads what one wrote, or writes
// what one read or wrote. Independent commands run without barriers
// between them. d.mu must be held.
func (s *stream) needBarrier(acc []access) bool {
	for _, a := range acc {
		if a.t.wrapped && s.wrapped.epoch == s.epoch && (s.wrapped.w[0] != s.wrapped.w[1] || a.write) {
			return true // it may alias a wrap of the same slice
		}
		h := &a.t.hz
		if h.epoch == s.epoch && (overlaps(h.w, a.lo, a.hi) || a.write && overlaps(h.r, a.lo, a.hi)) {
			return true
		}
	}
	return false
}

// noted records the accesses of a command just recorded in b, after a
// barrier before it when barrier is set.
func (s *stream) noted(b *batch, acc []access, barrier bool) {
	if barrier {
		s.epoch++
	}
	for _, a := range acc {
		b.work += a.hi - a.lo
		if a.t.wrapped {
			s.note(&s.wrapped, a)
		}
		s.note(&a.t.hz, a)
	}
}

// note adds an access to h, a hazard of the current epoch.
func (s *stream) note(h *hazard, a access) {
	if h.epoch != s.epoch {
		*h = hazard{epoch: s.epoch}
	}
	if a.write {
		h.w = hull(h.w, a.lo, a.hi)
	} else {
		h.r = hull(h.r, a.lo, a.hi)
	}
}

// order puts a barrier before a copy command with these accesses when it
// depends on an earlier one, and notes them.
func (s *stream) order(b *batch, acc ...access) {
	need := s.needBarrier(acc)
	if need {
		b.cmds.Barrier()
	}
	s.noted(b, acc, need)
}

// submit sends the recording batch, if any; d.mu must be held.
func (s *stream) submit() error {
	b := s.rec
	if b == nil {
		return nil
	}
	s.rec = nil
	// Make every write visible to the host and to the next batch.
	b.cmds.Barrier()
	s.epoch++
	if b.timed {
		b.cmds.Timestamp(1)
	}
	if s.discard {
		s.retire(b, nil)
		return nil
	}
	err := b.cmds.Submit()
	if f := s.fault; f != nil {
		s.fault = nil
		err = f
		_ = b.cmds.Wait(^uint64(0)) // the real submission ran; its result is discarded
	}
	if err != nil {
		err = s.d.fail(err)
		s.retire(b, err)
		return err
	}
	s.inflight = append(s.inflight, b)
	return nil
}

// flushFor makes sure the batch with the given seq is submitted.
func (s *stream) flushFor(seq uint64) error {
	if s.rec != nil && s.rec.res.seq <= seq {
		return s.submit()
	}
	return nil
}

// waitFor waits until the batch of r has completed and returns its error;
// d.mu must be held, and may be released while waiting, so callers check
// again afterwards that what they use is still there.
func (s *stream) waitFor(r *result) error {
	if r == nil || r.done {
		if r != nil {
			return r.err
		}
		return nil
	}
	if err := s.flushFor(r.seq); err != nil {
		return err
	}
	for !r.done {
		if len(s.inflight) == 0 {
			return fmt.Errorf("device: internal error: batch %d neither recorded nor in flight", r.seq)
		}
		if err := s.waitOldest(); err != nil && !r.done {
			return err
		}
	}
	return r.err
}

// waitOldest waits for the oldest batch in flight and retires it; d.mu
// must be held, and is released while waiting. When another goroutine is
// already waiting, it waits for that one instead and returns nil: callers
// loop until what they need has completed.
func (s *stream) waitOldest() error {
	if s.waiting {
		s.idle.Wait()
		return nil
	}
	s.waiting = true
	b := s.inflight[0] // only the waiter removes it
	s.d.mu.Unlock()
	s.spin(b)
	var err error
	for {
		if err = b.cmds.Wait(1e9); err == nil || !timedOut(err) {
			break
		}
	}
	s.d.mu.Lock()
	s.waiting = false
	// Shifted rather than resliced, so that appends reuse the array.
	s.inflight = s.inflight[:copy(s.inflight, s.inflight[1:])]
	if err != nil {
		err = s.d.fail(err)
	}
	s.retire(b, err)
	s.idle.Broadcast()
	return err
}

// reap retires the batches in flight that have completed, oldest first,
// without waiting: the pages of tensors freed while those batches used
// them return to the pool, for the allocation that asks. d.mu must be
// held; nothing is done while another goroutine waits for the oldest,
// which it alone retires.
func (s *stream) reap() {
	for !s.waiting && len(s.inflight) > 0 {
		b := s.inflight[0]
		done, err := b.cmds.Done()
		if !done && err == nil {
			return
		}
		s.inflight = s.inflight[:copy(s.inflight, s.inflight[1:])]
		if err != nil {
			err = s.d.fail(err)
		}
		s.retire(b, err)
		s.idle.Broadcast()
	}
}

// timedOut reports whether err is a wait's VK_TIMEOUT. It is a function
// of its own because errors.As allocates its target: waits that succeed
// do not get that far.
func timedOut(err error) bool {
	var ve *vk.Error
	return errors.As(err, &ve) && ve.Timeout()
}

// spinWait is how long a wait on a GPU polls the batch's fence before it
// blocks. On an H100, submitting a tiny op and waiting for it took 60-81
// us with a blocking wait and 28-32 us polling; a poll of 50 us missed a
// 16M-element Greater (58 us on the device), one of 1 ms caught it. The
// price is a core kept busy meanwhile.
const spinWait = 1 * time.Millisecond

// A CPU device runs a batch on the cores a poll would take: there a wait
// polls only a batch of at most cpuSpinDispatches dispatches and
// cpuSpinWork bytes, for at most cpuSpinWait, and yields the CPU between
// polls to the driver's threads. On lavapipe (2 vCPUs) a reduce-or of
// bool[16 1024] and a Sync took 51-78 us an op so, 95-128 with a
// blocking wait; with its download instead, 44-83 against 98-125. In
// bench/ab.py's wall time the suite's ops of 16K and 64K elements took
// 0.92 and 0.84 of the time (8 rounds), those of 1M 0.99. Polling 200 us
// without yielding slowed a reduce-or of 4 MiB from 419-435 us to
// 539-591: the poll took a core from the kernel.
const (
	cpuSpinDispatches = 2
	cpuSpinWork       = 1 << 20
	cpuSpinWait       = 200 * time.Microsecond
)

// spin polls b until it completes, fails or the device's poll time has
// passed. What it finds, the wait after it reports.
func (s *stream) spin(b *batch) {
	if !s.d.IsCPU() {
		b.cmds.Poll(spinWait, false)
		return
	}
	if b.n <= cpuSpinDispatches && b.work <= cpuSpinWork {
		b.cmds.Poll(cpuSpinWait, true)
	}
}

func (s *stream) retire(b *batch, err error) {
	b.res.done, b.res.err = true, err
	s.done = max(s.done, b.res.seq)
	if err == nil && b.timed {
		if ts, terr := b.cmds.Timestamps(timestamps); terr == nil {
			s.gpuNanos += ts[1] - ts[0]
		}
	}
	for _, f := range b.release {
		f()
	}
	b.release = b.release[:0]
	s.held -= b.held
	b.held = 0
	s.d.releasePages(b.spans)
	b.spans = b.spans[:0]
	for _, st := range b.staged {
		s.d.putStaging(st.buf, st.p)
	}
	b.staged = b.staged[:0]
	if err == nil && b.cmds.Reset() == nil {
		s.spare = append(s.spare, b)
		return
	}
	b.cmds.Destroy()
}

// drain submits and waits for everything.
func (s *stream) drain() error {
	if err := s.submit(); err != nil {
		return err
	}
	var errs []error
	for len(s.inflight) > 0 {
		errs = append(errs, s.waitOldest())
	}
	return errors.Join(errs...)
}

// destroy frees every batch; the device must be idle. Batches still
// recorded or in flight are there only when the device was lost: what
// they hold (staging buffers) is freed with them.
func (s *stream) destroy() {
	if s.rec != nil {
		s.inflight = append(s.inflight, s.rec)
		s.rec = nil
	}
	for _, b := range s.inflight {
		for _, f := range b.release {
			f()
		}
		b.release = nil
		for _, st := range b.staged {
			st.buf.Destroy()
		}
		b.staged = nil
	}
	for _, b := range append(s.inflight, s.spare...) {
		b.cmds.Destroy()
	}
	s.inflight, s.spare = nil, nil
}

// later runs f once everything recorded so far has completed, or now if
// nothing is pending; d.mu must be held.
func (s *stream) later(f func()) {
	switch {
	case s.rec != nil:
		s.rec.release = append(s.rec.release, f)
	case len(s.inflight) > 0:
		last := s.inflight[len(s.inflight)-1]
		last.release = append(last.release, f)
	default:
		f()
	}
}

// releaseLater returns pages to the pool once everything recorded so far
// has completed, or now if nothing is pending; d.mu must be held. Unlike
// later it allocates nothing once the batches have room.
func (s *stream) releaseLater(pages []span) {
	var b *batch
	switch {
	case s.rec != nil:
		b = s.rec
	case len(s.inflight) > 0:
		b = s.inflight[len(s.inflight)-1]
	default:
		s.d.releasePages(pages)
		return
	}
	b.spans = append(b.spans, pages...)
	for _, sp := range pages {
		n := s.d.pool.footprint(sp)
		b.held += n
		s.held += n
	}
	if b == s.rec && b.held > s.d.pool.heapLimit/heldShare {
		_ = s.submit() // a failure is the batch's result, which its readers get
	}
}

// heldShare: a batch being recorded that holds more than this share of
// the heap in pages of freed tensors is submitted at once, so that the
// pages come back (reap) while the loop that frees them goes on. A loop
// making 64 MiB Where outputs and freeing them unread otherwise filled
// lavapipe's 2 GiB heap with fresh memory, page faults and all, before
// the first batch ran: its first 20 iterations took 158 ms each, 55 ms
// with this rule (a loaded 2-core machine).
const heldShare = 16

// putStagingLater keeps a staging buffer for reuse once everything
// recorded so far has completed; d.mu must be held, and some batch be
// recorded or in flight. Like releaseLater it allocates nothing once the
// batches have room.
func (s *stream) putStagingLater(buf *vk.Buffer, p vk.Placement) {
	b := s.rec
	if b == nil {
		b = s.inflight[len(s.inflight)-1]
	}
	b.staged = append(b.staged, stagedSlice{buf, p})
}

// fail turns a Vulkan error into the error ops report; device loss makes
// the device unusable. d.mu must be held.
func (d *Device) fail(err error) error {
	var ve *vk.Error
	if errors.As(err, &ve) {
		switch {
		case ve.DeviceLost():
			d.lost = fmt.Errorf("%w: %v", ErrDeviceLost, err)
			return d.lost
		case ve.OutOfMemory():
			return fmt.Errorf("%w: %v", ErrOutOfMemory, err)
		}
	}
	return err
}

// Sync submits all recorded work and waits for it to complete.
func (d *Device) Sync() error {
	if err := d.check(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	return d.stream.drain()
}

// Flush submits recorded work without waiting for it.
func (d *Device) Flush() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.usable(); err != nil {
		return err
	}
	return d.stream.submit()
}

// GPUTime runs f, with every batch it records timed by GPU timestamps, and
// returns the device time those batches took in nanoseconds. Work pending
// before the call is finished first and not counted. Calls may nest (an
// op that measures its kernel variants on first use inside a caller's
// GPUTime): the outer call counts the inner call's batches too. A Close
// meanwhile waits for f to return, so f must not call Close itself.
func (d *Device) GPUTime(f func() error) (float64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.enter(); err != nil {
		return 0, err
	}
	defer d.leave()
	if err := d.stream.drain(); err != nil {
		return 0, err
	}
	outer := d.stream.timing
	base := d.stream.gpuNanos
	d.stream.timing = true
	d.mu.Unlock()
	ferr := f()
	d.mu.Lock()
	err := d.stream.drain()
	ns := d.stream.gpuNanos - base
	d.stream.timing = outer
	if !outer {
		d.stream.gpuNanos = 0
	}
	return ns, errors.Join(ferr, err)
}
