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

// OpenDescriptors opens a device whose dispatches bind their buffers by
// pushing descriptors (push, where the device has VK_KHR_push_descriptor)
// or by writing a descriptor set each (!push, as on devices without it),
// whatever the driver's default.
func OpenDescriptors(opts Options, push bool) (*Device, error) {
	opts.descriptors = vk.DescriptorsSets
	if push {
		opts.descriptors = vk.DescriptorsPush
	}
	return Open(opts)
}

// PushDescriptors reports whether d's dispatches push their bindings.
func (d *Device) PushDescriptors() bool { return d.dev.PushDescriptors() }
