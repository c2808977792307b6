package vk

/*
#cgo noescape vkops_record
#cgo nocallback vkops_record
#cgo noescape vkops_record_n
#cgo nocallback vkops_record_n
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"time"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// Commands is a command pool with one primary command buffer, a fence that
// signals when a submission of it completes, and, unless the device
// pushes descriptors, a descriptor pool for the sets its dispatches use.
// One Commands records and runs one batch at a time; Reset makes it
// reusable once the fence has signalled.
type Commands struct {
	d      *Device
	pool   vk.CommandPool
	cb     vk.CommandBuffer
	fence  vk.Fence
	dpool  vk.DescriptorPool
	sets   int // dispatches recorded since the last Reset (a set from dpool each, unless pushed)
	maxSet int
	qpool  vk.QueryPool
	nq     uint32
	// binds is Dispatch's scratch: C memory's layout in Go memory that
	// lives as long as c, so that recording allocates nothing.
	binds [MaxSetBindings]C.vkops_binding
	// bound is the pipeline the command buffer has bound: binding it
	// again for the next dispatch of the same kernel is work for the
	// driver when it runs the batch, not only when recording.
	bound C.VkPipeline
}

// MaxSetBindings is the most bindings a pipeline may have.
const MaxSetBindings = C.VKOPS_MAX_BINDINGS

// NewCommands creates a batch recorder for maxSets dispatches (the sets
// its descriptor pool holds), and timestamps query slots (0 for none).
func (d *Device) NewCommands(maxSets int, timestamps uint32) (*Commands, error) {
	c := &Commands{d: d, maxSet: maxSets}
	if err := c.create(timestamps); err != nil {
		c.Destroy()
		return nil, err
	}
	return c, nil
}

func (c *Commands) create(timestamps uint32) error {
	d := c.d
	pci := &vk.CommandPoolCreateInfo{
		SType:            vk.StructureTypeCommandPoolCreateInfo,
		Flags:            vk.CommandPoolCreateFlags(vk.CommandPoolCreateResetCommandBufferBit),
		QueueFamilyIndex: uint32(d.Info.computeFamily),
	}
	var pool vk.CommandPool
	r := vk.CreateCommandPool(d.h, pci, nil, &pool)
	pci.Free()
	if err := check("vkCreateCommandPool", r); err != nil {
		return err
	}
	c.pool = pool
	d.live.Add(1)
	ai := &vk.CommandBufferAllocateInfo{
		SType:              vk.StructureTypeCommandBufferAllocateInfo,
		CommandPool:        c.pool,
		Level:              vk.CommandBufferLevelPrimary,
		CommandBufferCount: 1,
	}
	cbs := make([]vk.CommandBuffer, 1)
	r = vk.AllocateCommandBuffers(d.h, ai, cbs)
	ai.Free()
	if err := check("vkAllocateCommandBuffers", r); err != nil {
		return err
	}
	c.cb = cbs[0]
	fci := &vk.FenceCreateInfo{SType: vk.StructureTypeFenceCreateInfo}
	var fence vk.Fence
	r = vk.CreateFence(d.h, fci, nil, &fence)
	fci.Free()
	if err := check("vkCreateFence", r); err != nil {
		return err
	}
	c.fence = fence
	d.live.Add(1)
	if !d.pushDesc {
		if err := c.createDescriptorPool(); err != nil {
			return err
		}
	}
	if timestamps > 0 {
		qci := &vk.QueryPoolCreateInfo{
			SType:      vk.StructureTypeQueryPoolCreateInfo,
			QueryType:  vk.QueryTypeTimestamp,
			QueryCount: timestamps,
		}
		var qpool vk.QueryPool
		r = vk.CreateQueryPool(d.h, qci, nil, &qpool)
		qci.Free()
		if err := check("vkCreateQueryPool", r); err != nil {
			return err
		}
		c.qpool = qpool
		c.nq = timestamps
		d.live.Add(1)
	}
	return nil
}

func (c *Commands) createDescriptorPool() error {
	d := c.d
	sizes := []vk.DescriptorPoolSize{
		{Type: vk.DescriptorTypeStorageBuffer, DescriptorCount: uint32(c.maxSet * MaxSetBindings)},
		{Type: vk.DescriptorTypeStorageTexelBuffer, DescriptorCount: uint32(c.maxSet * MaxSetBindings)},
	}
	var pinner runtime.Pinner
	defer pinner.Unpin()
	pin(&pinner, &sizes[0])
	dci := &vk.DescriptorPoolCreateInfo{
		SType:         vk.StructureTypeDescriptorPoolCreateInfo,
		MaxSets:       uint32(c.maxSet),
		PoolSizeCount: uint32(len(sizes)),
		PPoolSizes:    sizes,
	}
	var dpool vk.DescriptorPool
	r := vk.CreateDescriptorPool(d.h, dci, nil, &dpool)
	dci.Free()
	if err := check("vkCreateDescriptorPool", r); err != nil {
		return err
	}
	c.dpool = dpool
	d.live.Add(1)
	return nil
}

// Destroy releases everything; the batch must not be in flight.
func (c *Commands) Destroy() {
	d := c.d
	if c.qpool != nil {
		vk.DestroyQueryPool(d.h, c.qpool, nil)
		c.qpool = nil
		d.live.Add(-1)
	}
	if c.dpool != nil {
		vk.DestroyDescriptorPool(d.h, c.dpool, nil)
		c.dpool = nil
		d.live.Add(-1)
	}
	if c.fence != nil {
		vk.DestroyFence(d.h, c.fence, nil)
		c.fence = nil
		d.live.Add(-1)
	}
	if c.pool != nil {
		vk.DestroyCommandPool(d.h, c.pool, nil)
		c.pool = nil
		d.live.Add(-1)
	}
}

// Begin starts recording, after Reset or on a new Commands.
func (c *Commands) Begin() error {
	c.bound = nil
	if err := check("vkBeginCommandBuffer", vk.Result(C.vkops_begin(&c.d.fns, c.ccb()))); err != nil {
		return err
	}
	if c.nq > 0 {
		C.vkops_reset_query_pool(&c.d.fns, c.ccb(), C.VkQueryPool(unsafe.Pointer(c.qpool)), 0, C.uint32_t(c.nq))
	}
	return nil
}

func (c *Commands) ccb() C.VkCommandBuffer { return C.VkCommandBuffer(unsafe.Pointer(c.cb)) }

// SetsLeft returns how many more dispatches fit in this batch: its
// descriptor pool's sets, or as many where descriptors are pushed.
func (c *Commands) SetsLeft() int { return c.maxSet - c.sets }

// Binding is what one shader binding sees: a range of a buffer, or for a
// texel-buffer binding, a view.
type Binding struct {
	Buffer *Buffer
	Offset uint64
	Range  uint64
	View   *BufferView
}

// Dispatch records a dispatch of p over groups workgroups with the given
// bindings and push constants, after a Barrier when barrier is set. It
// binds the pipeline only when the last dispatch recorded used another,
// makes one call into C and allocates nothing.
func (c *Commands) Dispatch(p *Pipeline, binds []Binding, push []byte, groups [3]uint32, barrier bool) error {
	if err := c.checkDispatch(p, binds, push, groups); err != nil {
		return err
	}
	if c.sets >= c.maxSet {
		return fmt.Errorf("vk: batch is out of descriptor sets")
	}
	c.fill(binds)
	r := vk.Result(C.vkops_record(&c.d.fns, C.VkDevice(unsafe.Pointer(c.d.h)), c.ccb(),
		C.VkDescriptorPool(unsafe.Pointer(c.dpool)), &p.c, &c.binds[0], pushPtr(push),
		C.uint32_t(groups[0]), C.uint32_t(groups[1]), C.uint32_t(groups[2]), cbool(barrier), cbool(p.c.pipeline != c.bound)))
	if err := check("vkAllocateDescriptorSets", r); err != nil {
		return err
	}
	c.bound = p.c.pipeline
	c.sets++
	return nil
}

func (c *Commands) checkDispatch(p *Pipeline, binds []Binding, push []byte, groups [3]uint32) error {
	desc := &p.desc
	if len(binds) != len(desc.Bindings) {
		return fmt.Errorf("vk: pipeline %s takes %d bindings, got %d", desc.Name, len(desc.Bindings), len(binds))
	}
	if uint32(len(push)) != desc.PushSize {
		return fmt.Errorf("vk: pipeline %s takes %d bytes of push constants, got %d", desc.Name, desc.PushSize, len(push))
	}
	lim := c.d.Info.Limits.MaxComputeWorkGroupCount
	for i, g := range groups {
		if g == 0 || g > lim[i] {
			return fmt.Errorf("vk: pipeline %s: %d workgroups in dimension %d (limit %d)", desc.Name, g, i, lim[i])
		}
	}
	return nil
}

// fill copies binds into c's scratch for C.
func (c *Commands) fill(binds []Binding) {
	for i, b := range binds {
		if b.View != nil {
			c.binds[i] = C.vkops_binding{view: C.VkBufferView(unsafe.Pointer(b.View.h))}
			continue
		}
		c.binds[i] = C.vkops_binding{buffer: C.VkBuffer(unsafe.Pointer(b.Buffer.h)), offset: C.VkDeviceSize(b.Offset), rng: C.VkDeviceSize(b.Range)}
	}
}

func pushPtr(push []byte) unsafe.Pointer {
	if len(push) == 0 {
		return nil
	}
	return unsafe.Pointer(&push[0])
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// TimeDispatches measures the driver's own cost of a dispatch: it records
// n dispatches of p with the given bindings, push constants and groups
// into one command buffer, each pushing its bindings or binding a
// descriptor set of its own as Dispatch does, with a Barrier between
// consecutive ones when chained is set; then it submits them and returns the wall time from the submit
// until the fence signals, per dispatch. Nothing of vkops runs between
// the dispatches, so this is the floor that recording ops one by one
// approaches. The device's queue must be idle and not used meanwhile.
func (d *Device) TimeDispatches(p *Pipeline, binds []Binding, push []byte, groups [3]uint32, n int, chained bool) (time.Duration, error) {
	if n <= 0 {
		return 0, fmt.Errorf("vk: TimeDispatches of %d dispatches", n)
	}
	c, err := d.NewCommands(n, 0)
	if err != nil {
		return 0, err
	}
	defer c.Destroy()
	if err := c.checkDispatch(p, binds, push, groups); err != nil {
		return 0, err
	}
	if err := c.Begin(); err != nil {
		return 0, err
	}
	c.fill(binds)
	r := vk.Result(C.vkops_record_n(&d.fns, C.VkDevice(unsafe.Pointer(d.h)), c.ccb(),
		C.VkDescriptorPool(unsafe.Pointer(c.dpool)), &p.c, &c.binds[0], pushPtr(push),
		C.uint32_t(groups[0]), C.uint32_t(groups[1]), C.uint32_t(groups[2]), C.uint32_t(n), cbool(chained)))
	if err := check("vkAllocateDescriptorSets", r); err != nil {
		return 0, err
	}
	if err := check("vkEndCommandBuffer", vk.Result(C.vkops_end(&d.fns, c.ccb()))); err != nil {
		return 0, err
	}
	start := time.Now()
	r = vk.Result(C.vkops_submit(&d.fns, C.VkQueue(unsafe.Pointer(d.queue)), c.ccb(), C.VkFence(unsafe.Pointer(c.fence))))
	if err := check("vkQueueSubmit", r); err != nil {
		return 0, err
	}
	if err := c.Wait(^uint64(0)); err != nil {
		return 0, err
	}
	return time.Since(start) / time.Duration(n), nil
}

// Barrier makes every earlier compute and transfer write visible to every
// later compute, transfer and host access.
func (c *Commands) Barrier() {
	stages := C.VkPipelineStageFlags(C.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | C.VK_PIPELINE_STAGE_TRANSFER_BIT)
	C.vkops_barrier(&c.d.fns, c.ccb(),
		stages, C.VK_ACCESS_SHADER_WRITE_BIT|C.VK_ACCESS_TRANSFER_WRITE_BIT,
		stages|C.VK_PIPELINE_STAGE_HOST_BIT,
		C.VK_ACCESS_SHADER_READ_BIT|C.VK_ACCESS_SHADER_WRITE_BIT|C.VK_ACCESS_TRANSFER_READ_BIT|
			C.VK_ACCESS_TRANSFER_WRITE_BIT|C.VK_ACCESS_HOST_READ_BIT)
}

// HostBarrier makes host writes to mapped memory, made before the submit,
// visible to the batch. (Submission already does so; this is for clarity
// where a batch is recorded before the host writes its inputs.)
func (c *Commands) HostBarrier() {
	C.vkops_barrier(&c.d.fns, c.ccb(), C.VK_PIPELINE_STAGE_HOST_BIT, C.VK_ACCESS_HOST_WRITE_BIT,
		C.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT|C.VK_PIPELINE_STAGE_TRANSFER_BIT,
		C.VK_ACCESS_SHADER_READ_BIT|C.VK_ACCESS_TRANSFER_READ_BIT)
}

// Copy records a buffer-to-buffer copy.
func (c *Commands) Copy(dst *Buffer, dstOff uint64, src *Buffer, srcOff, size uint64) {
	C.vkops_copy(&c.d.fns, c.ccb(), C.VkBuffer(unsafe.Pointer(src.h)), C.VkDeviceSize(srcOff),
		C.VkBuffer(unsafe.Pointer(dst.h)), C.VkDeviceSize(dstOff), C.VkDeviceSize(size))
}

// Fill records a fill of size bytes (a multiple of 4) with a 32-bit word.
func (c *Commands) Fill(dst *Buffer, off, size uint64, word uint32) {
	C.vkops_fill(&c.d.fns, c.ccb(), C.VkBuffer(unsafe.Pointer(dst.h)), C.VkDeviceSize(off), C.VkDeviceSize(size), C.uint32_t(word))
}

// Timestamp records the time at which all earlier commands have finished,
// into query slot i.
func (c *Commands) Timestamp(i uint32) {
	C.vkops_timestamp(&c.d.fns, c.ccb(), C.VkQueryPool(unsafe.Pointer(c.qpool)), C.uint32_t(i))
}

// Timestamps reads n query slots after the batch has completed, in
// nanoseconds since an arbitrary origin.
func (c *Commands) Timestamps(n uint32) ([]float64, error) {
	raw := make([]uint64, n)
	r := vk.GetQueryPoolResults(c.d.h, c.qpool, 0, n, uint(8*n), unsafe.Pointer(&raw[0]), 8,
		vk.QueryResultFlags(vk.QueryResult64Bit|vk.QueryResultWaitBit))
	if err := check("vkGetQueryPoolResults", r); err != nil {
		return nil, err
	}
	out := make([]float64, n)
	for i, t := range raw {
		out[i] = float64(t) * float64(c.d.Info.Limits.TimestampPeriod)
	}
	return out, nil
}

// Submit ends recording and submits the batch; Wait or Done tell when it
// has completed.
func (c *Commands) Submit() error {
	if err := check("vkEndCommandBuffer", vk.Result(C.vkops_end(&c.d.fns, c.ccb()))); err != nil {
		return err
	}
	r := vk.Result(C.vkops_submit(&c.d.fns, C.VkQueue(unsafe.Pointer(c.d.queue)), c.ccb(), C.VkFence(unsafe.Pointer(c.fence))))
	return check("vkQueueSubmit", r)
}

// Wait waits up to timeout nanoseconds for the submitted batch to
// complete. It returns an *Error with Result VK_TIMEOUT when it has not.
func (c *Commands) Wait(timeout uint64) error {
	return check("vkWaitForFences", c.wait(max(timeout, 1)))
}

// wait waits for the batch's fence; a timeout of 0 polls it.
func (c *Commands) wait(timeout uint64) vk.Result {
	return vk.Result(C.vkops_wait(&c.d.fns, C.VkDevice(unsafe.Pointer(c.d.h)), C.VkFence(unsafe.Pointer(c.fence)), C.uint64_t(timeout)))
}

// Done reports, without blocking, whether the submitted batch has
// completed.
func (c *Commands) Done() (bool, error) { return fenceDone(c.wait(0)) }

// Poll polls the submitted batch for up to d, without blocking, and
// reports whether it has completed. With yield it gives up the CPU
// between polls to any thread that wants it: on a CPU device, the
// driver's own.
func (c *Commands) Poll(d time.Duration, yield bool) (bool, error) {
	y := C.int(0)
	if yield {
		y = 1
	}
	return fenceDone(vk.Result(C.vkops_poll(&c.d.fns, C.VkDevice(unsafe.Pointer(c.d.h)), C.VkFence(unsafe.Pointer(c.fence)),
		C.uint64_t(max(d, 0)), y)))
}

// fenceDone reads a fence status: signalled, not yet, or an error.
func fenceDone(r vk.Result) (bool, error) {
	switch r {
	case vk.Success:
		return true, nil
	case vk.NotReady:
		return false, nil
	default:
		return false, check("vkGetFenceStatus", r)
	}
}

// Reset readies a completed batch for recording again.
func (c *Commands) Reset() error {
	c.sets = 0
	r := C.vkops_reset(&c.d.fns, C.VkDevice(unsafe.Pointer(c.d.h)), C.VkFence(unsafe.Pointer(c.fence)),
		C.VkDescriptorPool(unsafe.Pointer(c.dpool)), c.ccb())
	return check("vkResetFences, vkResetDescriptorPool or vkResetCommandBuffer", vk.Result(r))
}
