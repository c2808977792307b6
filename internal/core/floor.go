package core

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/vkops/vkops/vk"
)

// Replay is a dispatch captured from an op, to be recorded again many
// times by itself: what the driver alone costs for the op's work, the
// floor that the op's own per-call cost is measured against.
type Replay struct {
	d      *Device
	k      *Kernel
	p      *vk.Pipeline
	binds  []vk.Binding // views are looked up again for each Time
	push   []byte
	groups [3]uint32
	// Dispatches is how many dispatches f recorded; the replay is the
	// last of them.
	Dispatches int
}

func (r *Replay) dispatch(k *Kernel, p *vk.Pipeline, binds []vk.Binding, push []byte, groups [3]uint32) {
	r.k, r.p, r.groups = k, p, groups
	r.binds = slices.Clone(binds)
	for i := range r.binds {
		r.binds[i].View = nil
	}
	r.push = slices.Clone(push)
	r.Dispatches++
}

// Capture runs f and returns the last dispatch it recorded. The tensors
// that dispatch binds must stay alive, not freed, while the Replay is
// used. Capture does not nest, and f must not run on other goroutines.
func (d *Device) Capture(f func() error) (*Replay, error) {
	d.mu.Lock()
	if d.capture != nil {
		d.mu.Unlock()
		return nil, errors.New("device: Capture does not nest")
	}
	r := &Replay{d: d}
	d.capture = r
	d.mu.Unlock()
	err := f()
	d.mu.Lock()
	d.capture = nil
	d.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if r.Dispatches == 0 {
		return nil, errors.New("device: Capture: f recorded no dispatch")
	}
	return r, nil
}

// Kernel returns the kernel of the captured dispatch: which of an op's
// paths ran, for tests.
func (r *Replay) Kernel() *Kernel { return r.k }

// Workgroups returns how many workgroups the captured dispatch ran: how
// the plan spread its work, for tests.
func (r *Replay) Workgroups() uint64 {
	return uint64(r.groups[0]) * uint64(r.groups[1]) * uint64(r.groups[2])
}

// Time records n copies of the captured dispatch into one command buffer,
// each pushing its bindings or binding a descriptor set of its own as
// Dispatch does (Options.Descriptors), chained by
// barriers or independent; submits them once the device is idle and
// returns the wall time per dispatch from the submit until they have all
// completed. vkops's own code runs only before the submit, so this is
// the driver's floor for the work. The copies all write the captured
// output, with the same values.
func (r *Replay) Time(n int, chained bool) (time.Duration, error) {
	d := r.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.enter(); err != nil {
		return 0, err
	}
	defer d.leave()
	// The queue is the stream's too: it must be idle and stay so.
	if err := d.stream.drain(); err != nil {
		return 0, err
	}
	binds := slices.Clone(r.binds)
	for i := range binds {
		if kind := r.k.kind(i); kind != Storage {
			v, err := d.view(binds[i], kind)
			if err != nil {
				return 0, err
			}
			binds[i].View = v
		}
	}
	t, err := d.dev.TimeDispatches(r.p, binds, r.push, r.groups, n, chained)
	if err != nil {
		return 0, fmt.Errorf("device: timing %d dispatches of %s: %w", n, r.k.Name, d.fail(err))
	}
	return t, nil
}
