package core

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"sync"

	"github.com/vkops/vkops/vk"
)

// Kernel is a compute shader with the interface it declares: set 0 holds
// Bindings bindings 0..Bindings-1, storage buffers unless Kinds says
// otherwise, and it takes PushSize bytes of push constants. Ops declare
// their kernels as package variables; the device builds each pipeline on
// first use.
type Kernel struct {
	Name string
	// Module returns the kernel's SPIR-V, which is called once, when a
	// device first builds one of the kernel's pipelines: ops declares
	// hundreds of kernels, and reading all their modules as the package
	// started took 16-25 ms and 26 MB in every process (lavapipe's
	// machine, GODEBUG=inittrace=1).
	Module   func() []byte
	Bindings int
	Kinds    []BindingKind // per binding; nil means all Storage
	PushSize int

	once    sync.Once
	spirv   []byte
	sumOnce sync.Once
	digest  [sha256.Size]byte
}

// code returns the kernel's SPIR-V, from Module on first use.
func (k *Kernel) code() []byte {
	k.once.Do(func() { k.spirv = k.Module() })
	return k.spirv
}

// sum returns the digest of the kernel's SPIR-V, which names its pruned
// modules in the cache directory.
func (k *Kernel) sum() [sha256.Size]byte {
	k.sumOnce.Do(func() { k.digest = sha256.Sum256(k.code()) })
	return k.digest
}

// BindingKind is how a kernel sees one binding.
type BindingKind int

const (
	// Storage is a storage buffer (SSBO): every device has it.
	Storage BindingKind = iota
	// TexelRGBA32UI is a storage texel buffer (uimageBuffer, rgba32ui):
	// 16 bytes per texel read as a uvec4. On lavapipe imageLoad is several
	// times faster than SSBO loads.
	TexelRGBA32UI
	// TexelRGBA8UI is a storage texel buffer (uimageBuffer, rgba8ui): 4
	// bytes per texel, each byte read as one uint.
	TexelRGBA8UI
)

func (k BindingKind) format() vk.TexelFormat {
	if k == TexelRGBA8UI {
		return vk.RGBA8UI
	}
	return vk.RGBA32UI
}

func (k BindingKind) vk() vk.DescriptorKind {
	if k == Storage {
		return vk.StorageBuffer
	}
	return vk.StorageTexelBuffer
}

// HasTexels reports whether kernels may use bindings of this kind on the
// device: the format supports storage texel buffers and a whole page fits
// in maxTexelBufferElements.
func (d *Device) HasTexels(k BindingKind) bool {
	return k >= 0 && int(k) < len(d.texels) && d.texels[k]
}

// findTexels fills d.texels at Open: ops ask on every call, and the
// format query is a call into the driver.
func (d *Device) findTexels() {
	for k := range d.texels {
		k := BindingKind(k)
		f := k.format()
		d.texels[k] = k == Storage ||
			d.dev.SupportsStorageTexel(f) && d.pageSize/f.TexelBytes() <= uint64(d.info.Limits.MaxTexelBufferElements)
	}
}

func (k *Kernel) kind(i int) BindingKind {
	if k.Kinds == nil {
		return Storage
	}
	return k.Kinds[i]
}

// Arg binds a byte range of one page of a tensor to a kernel binding.
type Arg struct {
	T      *Tensor
	Page   int
	Offset uint64 // within the page, a multiple of Device.Alignment
	Size   uint64 // bytes; 0 means to the end of the page's allocation
	Write  bool   // the kernel writes it
}

// Pages returns how many pages the tensor's bytes span.
func (t *Tensor) Pages() int { return len(t.pages) }

// Window returns an Arg covering bytes [lo, hi) of the tensor, which must
// lie within one page, and the bytes between the binding's start and lo:
// bindings start at offsets aligned as the device requires, and kernels
// skip the difference.
func (t *Tensor) Window(lo, hi uint64) (a Arg, skip uint64, err error) {
	ps := t.d.pageSize
	if hi < lo || hi > t.bytes || (hi > lo && lo/ps != (hi-1)/ps) {
		return Arg{}, 0, fmt.Errorf("device: window [%d, %d) of %v crosses a page boundary or the end", lo, hi, t)
	}
	page := int(lo / ps)
	off := lo % ps
	start := off - off%t.d.Alignment()
	size := (hi - lo + off - start + 15) &^ 15
	if page < len(t.pages) {
		size = min(size, t.pages[page].size)
	}
	return Arg{T: t, Page: page, Offset: start, Size: size}, off - start, nil
}

// Alignment returns the byte alignment of binding offsets (at least 16):
// one alignment for storage and texel bindings alike.
func (d *Device) Alignment() uint64 {
	l := &d.info.Limits
	return max(l.MinStorageBufferOffsetAlignment, l.MinTexelBufferOffsetAlignment, 16)
}

// Grid spreads groups workgroups over the three dispatch dimensions
// within the device's maxComputeWorkGroupCount, as SpreadGroups does.
func (d *Device) Grid(groups uint64) ([3]uint32, error) {
	return SpreadGroups(groups, d.info.Limits.MaxComputeWorkGroupCount)
}

// SpreadGroups spreads groups workgroups over the three dispatch
// dimensions within limit, a maxComputeWorkGroupCount. Kernels compute
// their linear group index as (z*Y + y)*X + x and skip indexes past
// groups.
//
// X holds at most 65535 groups, the least every device offers, even where
// the device allows more (NVIDIA: 2^31-1): every device then lays out a
// grid the same way, and the Y path that lavapipe's tests cover is the
// one each device runs.
func SpreadGroups(groups uint64, limit [3]uint32) ([3]uint32, error) {
	if groups == 0 {
		return [3]uint32{}, fmt.Errorf("device: dispatch of zero workgroups")
	}
	x := min(groups, uint64(min(limit[0], 65535)))
	y := min((groups+x-1)/x, uint64(limit[1]))
	z := (groups + x*y - 1) / (x * y)
	if z > uint64(limit[2]) {
		return [3]uint32{}, fmt.Errorf("device: %d workgroups exceed the device's grid %v", groups, limit)
	}
	return [3]uint32{uint32(x), uint32(y), uint32(z)}, nil
}

// maxSpec is the most specialization constants a kernel may take.
const maxSpec = 32

// pipelineKey names a pipeline by value, so that looking one up allocates
// nothing.
type pipelineKey struct {
	k    *Kernel
	n    int
	spec [maxSpec]uint32
}

// keyOf returns the key of k's pipeline with spec constants, of which
// there are at most maxSpec.
func keyOf(k *Kernel, spec []uint32) pipelineKey {
	key := pipelineKey{k: k, n: len(spec)}
	copy(key.spec[:], spec)
	return key
}

// Fresh reports whether a dispatch of k with spec constants would be the
// device's first ask for that pipeline: it is not built in this process,
// no earlier Fresh asked for it, and no earlier process left its pruned
// module in the cache directory, which that process wrote when it built
// the pipeline, as Mesa's cache beside it kept the compiled code. A caller
// with a kernel quicker to compile runs that one in place of a fresh
// pipeline, and the pipeline from the next ask on, as a JIT compiles a
// function once it is called again.
func (d *Device) Fresh(k *Kernel, spec []uint32) bool {
	if len(spec) > maxSpec {
		return false // Dispatch reports it
	}
	key := keyOf(k, spec)
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.pipelines[key]; ok {
		return false
	}
	if _, ok := d.asked[key]; ok {
		return false
	}
	if d.asked == nil {
		d.asked = map[pipelineKey]struct{}{}
	}
	d.asked[key] = struct{}{}
	return !d.prunedKept(k, spec)
}

// maxViews bounds the texel views kept per buffer: past it, a buffer's
// views are dropped (and destroyed once the work recorded so far is done)
// so that binding ever new windows of one buffer does not grow without end.
const maxViews = 256

// pipeline returns the pipeline of k with spec constants, building it on
// first use; d.mu must be held.
func (d *Device) pipeline(k *Kernel, spec []uint32) (*vk.Pipeline, error) {
	if len(spec) > maxSpec {
		return nil, fmt.Errorf("device: kernel %s: %d specialization constants (at most %d)", k.Name, len(spec), maxSpec)
	}
	key := keyOf(k, spec)
	if p, ok := d.pipelines[key]; ok {
		return p, nil
	}
	binds := make([]vk.DescriptorKind, k.Bindings)
	for i := range binds {
		binds[i] = k.kind(i).vk()
	}
	// The driver gets the module pruned for these constants
	// (spirv.Prune): lavapipe translates every path before it folds
	// them. It built a fused ReLU's pipeline in 14 ms instead of 26,
	// Greater's in 7.4 instead of 15 and Maximum's in 7.4 instead of 28,
	// and a warm reduce-or's first call took 4.8 ms, not 10.8;
	// bench/ab.py found the steady state no slower (elementwise: 63
	// cases, geometric mean 0.98; reductions: 14 cases, 1.00). The
	// cache directory keeps the pruned modules (prunedModule).
	p, err := d.dev.NewPipeline(d.cache, vk.PipelineDesc{
		Name:     k.Name,
		SPIRV:    d.prunedModule(k, spec),
		Bindings: binds,
		PushSize: uint32(k.PushSize),
		Spec:     slices.Clone(spec),
	})
	if err != nil {
		return nil, d.fail(err)
	}
	d.pipelines[key] = p
	d.newPipes++
	return p, nil
}

// view returns the texel view through which a binding of this kind
// reads b; d.mu must be held.
func (d *Device) view(b vk.Binding, kind BindingKind) (*vk.BufferView, error) {
	buf := b.Buffer
	if buf.Views() >= maxViews {
		old := buf.DropViews()
		d.stream.later(func() {
			for _, v := range old {
				v.Destroy()
			}
		})
	}
	// A view covers whole texels; pages are padded to 16 bytes, so
	// rounding up stays inside the allocation.
	f := kind.format()
	tb := f.TexelBytes()
	v, err := buf.View(f, b.Offset, (b.Range+tb-1)/tb*tb)
	if err != nil {
		return nil, d.fail(err)
	}
	return v, nil
}

// Dispatch records a dispatch of k (with specialization constants spec,
// by constant_id from 0) over the given workgroups. The work runs when its
// batch is submitted: when a result is read, on Sync or Flush, or when the
// batch is full. A barrier goes before it only when it depends on work
// recorded since the last one: it reads bytes that work wrote, or writes
// bytes it read or wrote. Once a kernel's pipeline is built, recording a
// dispatch allocates nothing and makes one call into the driver.
func (d *Device) Dispatch(k *Kernel, spec []uint32, args []Arg, push []byte, groups [3]uint32) error {
	if len(args) != k.Bindings || (k.Kinds != nil && len(k.Kinds) != k.Bindings) {
		return fmt.Errorf("device: kernel %s takes %d bindings, got %d", k.Name, k.Bindings, len(args))
	}
	if len(args) > vk.MaxSetBindings {
		return fmt.Errorf("device: kernel %s: %d bindings (at most %d)", k.Name, len(args), vk.MaxSetBindings)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.enter(); err != nil {
		return err
	}
	defer d.leave()
	// Starting a batch may wait for an older one with d.mu released, so it
	// comes before the checks and before d.binds is filled; so does
	// waiting for a host copy of a tensor bound (Tensor.beginHost).
	var b *batch
	for {
		var err error
		if b, err = d.stream.recording(); err != nil {
			return err
		}
		if err := d.usable(); err != nil {
			return err
		}
		if !hostBusy(args) {
			break
		}
		d.hostIdle.Wait()
	}
	binds := d.binds[:len(args)]
	var accs [vk.MaxSetBindings]access
	if err := d.bind(k, args, binds, accs[:len(args)]); err != nil {
		return err
	}
	p, err := d.pipeline(k, spec)
	if err != nil {
		return err
	}
	for i := range binds {
		if kind := k.kind(i); kind != Storage {
			if binds[i].View, err = d.view(binds[i], kind); err != nil {
				return err
			}
		}
	}
	acc := accs[:len(args)]
	barrier := d.stream.needBarrier(acc)
	if err := b.cmds.Dispatch(p, binds, push, groups, barrier); err != nil {
		return err
	}
	d.stream.noted(b, acc, barrier)
	if d.capture != nil {
		d.capture.dispatch(k, p, binds, push, groups)
	}
	for _, a := range args {
		a.T.lastUse = b.res
		if a.Write {
			a.T.lastWrite = b.res
		}
	}
	b.n++
	if b.n >= b.limit || b.cmds.SetsLeft() == 0 {
		return d.stream.submit()
	}
	return nil
}

// bind fills binds and accs, one each for args, checking each argument
// against its tensor and page, and the device's limits. d.mu is held.
func (d *Device) bind(k *Kernel, args []Arg, binds []vk.Binding, accs []access) error {
	for i, a := range args {
		if a.T == nil || a.T.d != d {
			return usagef(ErrMisuse, "device: kernel %s binding %d: tensor is nil or from another device", k.Name, i)
		}
		if err := a.T.usable(); err != nil {
			return err
		}
		if a.Page < 0 || a.Page >= len(a.T.pages) {
			return fmt.Errorf("device: kernel %s binding %d: page %d of %v does not exist", k.Name, i, a.Page, a.T)
		}
		s := a.T.pages[a.Page]
		size := a.Size
		if size == 0 {
			size = s.size - a.Offset
		}
		if a.Offset%d.Alignment() != 0 || a.Offset+size > s.size || size > uint64(d.info.Limits.MaxStorageBufferRange) {
			return fmt.Errorf("device: kernel %s binding %d: range [%d, +%d) is misaligned or outside page %d of %v",
				k.Name, i, a.Offset, size, a.Page, a.T)
		}
		binds[i] = vk.Binding{Buffer: s.buf, Offset: s.off + a.Offset, Range: size}
		lo := uint64(a.Page)*d.pageSize + a.Offset
		accs[i] = access{a.T, lo, lo + size, a.Write}
	}
	return nil
}
