package device

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
