package core

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"sync"

	"github.com/vkops/vkops/vk"
)

// span is a range of a buffer that holds (part of) a tensor.
type span struct {
	buf   *vk.Buffer
	off   uint64
	size  uint64 // bytes usable, at least what was asked
	class int    // small class index, classDedicated or classImported
	// pin, on the last page of a wrapped tensor, pins the Go memory its
	// pages import until they are destroyed.
	pin *runtime.Pinner
}

// The classes of spans that are whole buffers.
const (
	classDedicated = -1 // a large buffer of the pool's own
	classImported  = -2 // a buffer over imported host memory (Wrap)
)

// pins keeps the Pinners of wrapped tensors reachable while they pin:
// the runtime panics on finding a Pinner unreachable that still pins,
// and a Device dropped without Close should leak, not crash.
var pins sync.Map // *runtime.Pinner -> struct{}

// Small allocations are carved from slabs: one buffer per slab, sliced
// into equal power-of-two slots, so that many small tensors cost neither a
// VkBuffer nor a vkAllocateMemory each (drivers cap allocations at a few
// thousand). Large ones get a buffer of their own, rounded up to a size
// class and kept on a free list for reuse.
const (
	minSmallShift = 8  // 256 B: also every device's minStorageBufferOffsetAlignment bound
	maxSmallShift = 20 // 1 MiB
	slabBytes     = 16 << 20
	// cacheLimit bounds the bytes of freed dedicated buffers kept for reuse.
	cacheLimit = 1 << 30
)

// slabClass hands out the slots of one size: freed ones first, then the
// unused tail of its newest slab, then a new slab.
type slabClass struct {
	free []span
	cur  *vk.Buffer
	next uint64 // offset of cur's first slot never handed out
}

type pool struct {
	dev       *vk.Device
	placement vk.Placement // of the buffers it makes: DeviceLocal, or DeviceMapped for direct uploads
	heapLimit uint64       // bytes this pool may hold, from the device heap size
	inUse     uint64       // bytes of live allocations, slabs counted whole
	slabs     []*vk.Buffer
	small     [maxSmallShift - minSmallShift + 1]slabClass
	smallFree uint64 // bytes of the slots in the small classes' free lists
	large     map[uint64][]*vk.Buffer
	cached    uint64
	cacheFIFO []*vk.Buffer
	live      map[*vk.Buffer]bool            // dedicated buffers handed out, for destroy
	imports   map[*vk.Buffer]*runtime.Pinner // buffers over imported host memory and their pins, for destroy
	// guard, when set, follows every span with guardBytes of a known
	// pattern, checked when the span comes back: a kernel that writes past
	// its binding is found by the test that ran it, not as heap
	// corruption in the driver much later (lavapipe's device memory is
	// the process heap). Only mapped memory can be guarded.
	guard    bool
	guardErr error // the first overwritten guard found
}

const (
	guardBytes = 256 // a slot of the smallest class: binding offsets stay aligned
	guardByte  = 0xa5
)

func newPool(dev *vk.Device) *pool {
	p := &pool{dev: dev, large: map[uint64][]*vk.Buffer{}, live: map[*vk.Buffer]bool{}, imports: map[*vk.Buffer]*runtime.Pinner{}}
	for _, h := range dev.Info.Heaps {
		if h.DeviceLocal {
			p.heapLimit = max(p.heapLimit, h.Size)
		}
	}
	if p.heapLimit == 0 {
		p.heapLimit = 1 << 62
	}
	return p
}

// sizeClass rounds a large size up to a multiple of an eighth of its power
// of two, so reuse wastes at most 12.5%.
func sizeClass(n uint64) uint64 {
	if n <= 1<<16 {
		return (n + 4095) &^ 4095
	}
	step := uint64(1) << (bits.Len64(n-1) - 4)
	return (n + step - 1) &^ (step - 1)
}

// get returns a span of at least n bytes (n > 0).
func (p *pool) get(n uint64) (span, error) {
	if !p.guard {
		return p.getSpan(n)
	}
	s, err := p.getSpan(n + guardBytes)
	if err != nil || s.buf.Mapped() == nil {
		return s, err
	}
	s.size -= guardBytes
	g := s.buf.Mapped()[s.off+s.size:][:guardBytes]
	for i := range g {
		g[i] = guardByte
	}
	return s, nil
}

// checkGuard records in p.guardErr whether the guard after s was written.
func (p *pool) checkGuard(s span) {
	g := s.buf.Mapped()[s.off+s.size:][:guardBytes]
	for i, b := range g {
		if b != guardByte {
			if p.guardErr == nil {
				p.guardErr = fmt.Errorf("device: memory past the end of a %d-byte span was written: guard byte %d is %#x", s.size, i, b)
			}
			return
		}
	}
}

func (p *pool) getSpan(n uint64) (span, error) {
	if n <= 1<<maxSmallShift {
		shift := max(minSmallShift, bits.Len64(n-1))
		c := &p.small[shift-minSmallShift]
		slot := uint64(1) << shift
		if k := len(c.free); k > 0 {
			s := c.free[k-1]
			c.free = c.free[:k-1]
			p.smallFree -= slot
			return s, nil
		}
		if c.cur == nil || c.next+slot > slabBytes {
			b, err := p.newBuffer(slabBytes)
			if err != nil {
				return span{}, err
			}
			p.slabs = append(p.slabs, b)
			c.cur, c.next = b, 0
		}
		s := span{buf: c.cur, off: c.next, size: slot, class: shift - minSmallShift}
		c.next += slot
		return s, nil
	}
	size := sizeClass(n)
	if l := p.large[size]; len(l) > 0 {
		b := l[len(l)-1]
		p.large[size] = l[:len(l)-1]
		p.cached -= size
		p.unfifo(b)
		p.inUse += size
		p.live[b] = true
		return span{buf: b, size: size, class: classDedicated}, nil
	}
	b, err := p.newBuffer(size)
	if err != nil {
		return span{}, err
	}
	p.live[b] = true
	return span{buf: b, size: size, class: classDedicated}, nil
}

func (p *pool) newBuffer(size uint64) (*vk.Buffer, error) {
	if p.inUse+p.cached+size > p.heapLimit {
		p.trim(0)
		if p.inUse+size > p.heapLimit {
			return nil, fmt.Errorf("%w: a buffer of %s more would exceed the heap", ErrOutOfMemory, humanBytes(size))
		}
	}
	b, err := p.dev.NewBuffer(size, p.placement)
	var ve *vk.Error
	if errors.As(err, &ve) && ve.OutOfMemory() {
		p.trim(0)
		b, err = p.dev.NewBuffer(size, p.placement)
	}
	if err != nil {
		if errors.As(err, &ve) && ve.OutOfMemory() {
			return nil, fmt.Errorf("%w: %s: %v", ErrOutOfMemory, humanBytes(size), err)
		}
		return nil, err
	}
	p.inUse += size
	return b, nil
}

// imported returns a span over b, a buffer over imported host memory,
// and keeps b until put or destroy destroys it. A pin given with it is
// released then.
func (p *pool) imported(b *vk.Buffer, pin *runtime.Pinner) span {
	p.imports[b] = pin
	if pin != nil {
		pins.Store(pin, struct{}{})
	}
	return span{buf: b, size: b.Size(), class: classImported, pin: pin}
}

// unpin releases a pin that imported took.
func unpin(pin *runtime.Pinner) {
	pin.Unpin()
	pins.Delete(pin)
}

// put returns a span; the device must be done with it.
func (p *pool) put(s span) {
	if s.class == classImported {
		delete(p.imports, s.buf)
		s.buf.Destroy()
		if s.pin != nil {
			unpin(s.pin)
		}
		return
	}
	if p.guard && s.buf.Mapped() != nil {
		p.checkGuard(s)
		s.size += guardBytes
	}
	if s.class >= 0 {
		p.small[s.class].free = append(p.small[s.class].free, s)
		p.smallFree += s.size
		return
	}
	p.inUse -= s.size
	delete(p.live, s.buf)
	p.large[s.size] = append(p.large[s.size], s.buf)
	p.cached += s.size
	p.cacheFIFO = append(p.cacheFIFO, s.buf)
	p.trim(cacheLimit)
}

// trim destroys cached free buffers, oldest first, until at most limit
// bytes stay cached.
func (p *pool) trim(limit uint64) {
	for p.cached > limit && len(p.cacheFIFO) > 0 {
		b := p.cacheFIFO[0]
		p.cacheFIFO = p.cacheFIFO[1:]
		size := b.Size()
		l := p.large[size]
		for i, x := range l {
			if x == b {
				p.large[size] = append(l[:i], l[i+1:]...)
				break
			}
		}
		p.cached -= size
		b.Destroy()
	}
}

func (p *pool) unfifo(b *vk.Buffer) {
	for i, x := range p.cacheFIFO {
		if x == b {
			p.cacheFIFO = append(p.cacheFIFO[:i], p.cacheFIFO[i+1:]...)
			return
		}
	}
}

// destroy frees every buffer, those of tensors never freed too, and
// forgets them; the device must be idle.
// Wrapped tensors never freed are unpinned here.
func (p *pool) destroy() {
	p.trim(0)
	for b := range p.live {
		b.Destroy()
	}
	for _, b := range p.slabs {
		b.Destroy()
	}
	for b, pin := range p.imports {
		b.Destroy()
		if pin != nil {
			unpin(pin)
		}
	}
	*p = pool{dev: p.dev}
}

// fits reports whether n more bytes could be allocated without exceeding
// the heap, counting cached free buffers as reclaimable.
func (p *pool) fits(n uint64) bool { return p.inUse+n <= p.heapLimit }

// footprint is the bytes of the heap that span s holds: its slot or
// buffer, guard included; none for imported host memory.
func (p *pool) footprint(s span) uint64 {
	switch {
	case s.class == classImported:
		return 0
	case p.guard && s.buf.Mapped() != nil:
		return s.size + guardBytes
	}
	return s.size
}

// free returns the bytes the pool holds for no tensor: slots in the
// small classes' free lists, the unused tails of their newest slabs,
// and cached large buffers.
func (p *pool) free() uint64 {
	n := p.smallFree + p.cached
	for _, c := range p.small {
		if c.cur != nil {
			n += slabBytes - c.next
		}
	}
	return n
}

// freeSlabs destroys the slabs none of whose slots is in use, so that
// their memory can serve allocations of other sizes: a loop of small
// tensors that once filled the heap leaves it usable for large ones.
// It scans the free lists, so it runs only when an allocation failed.
func (p *pool) freeSlabs() {
	for i := range p.small {
		c := &p.small[i]
		slot := uint64(1) << (i + minSmallShift)
		freeIn := map[*vk.Buffer]uint64{}
		for _, s := range c.free {
			freeIn[s.buf] += slot
		}
		empty := func(b *vk.Buffer) bool {
			handedOut := uint64(slabBytes)
			if b == c.cur {
				handedOut = c.next
			}
			return freeIn[b] == handedOut
		}
		c.free = slices.DeleteFunc(c.free, func(s span) bool { return empty(s.buf) })
		p.slabs = slices.DeleteFunc(p.slabs, func(b *vk.Buffer) bool {
			if _, ok := freeIn[b]; !ok || !empty(b) {
				return false
			}
			p.smallFree -= freeIn[b]
			p.inUse -= slabBytes
			if b == c.cur {
				c.cur = nil
			}
			b.Destroy()
			return true
		})
	}
}
