package core

import "github.com/vkops/vkops/vk"

// FailNextSubmit makes the next batch submission fail as if the driver had
// returned VK_ERROR_OUT_OF_DEVICE_MEMORY, or VK_ERROR_DEVICE_LOST when
// lost is set.
func (d *Device) FailNextSubmit(lost bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stream.fault = vk.Fault("vkQueueSubmit", lost)
}

// DiscardBatches makes full batches be dropped instead of submitted, and
// their work count as done: benchmarks of recording alone use it.
func (d *Device) DiscardBatches(on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stream.discard = on
}

// ScribblePastEnd writes one byte just past the last page of t, as a
// kernel writing past its binding would. It reports false, writing
// nothing, where t's memory is not mapped and so has no guard.
func (t *Tensor) ScribblePastEnd() bool {
	t.d.mu.Lock()
	defer t.d.mu.Unlock()
	s := t.pages[len(t.pages)-1]
	m := s.buf.Mapped()
	if m == nil {
		return false
	}
	m[s.off+s.size] ^= 0xff
	return true
}

// KeptStaging returns how many staging buffers d keeps for reuse.
func (d *Device) KeptStaging() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, free := range d.staging.free {
		n += len(free)
	}
	return n
}
