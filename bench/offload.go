package bench

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/ops"
	"github.com/vkops/vkops/tensor"
)

// offloadData is the data of the offload cases: a select of n float32
// elements from Go slices, the job a Go program hands to a device.
type offloadData struct {
	cond      []bool
	then, els []float32
	n         int
}

// newOffloadData makes the offload's operands, each written before any
// case is timed: cond[i] is bit 63 of splitmix64(i), true about half
// the time at random; then[i] = i and else[i] = -(i+1), so that every
// element of the result tells which operand it came from.
// bench/peers.py makes the same arrays. Each starts on a multiple of
// wrapAlign bytes, as Go's large slices do, so that Wrap can use them
// whatever the size.
func newOffloadData(n int) *offloadData {
	o := &offloadData{cond: aligned[bool](n), then: aligned[float32](n), els: aligned[float32](n), n: n}
	for i := range n {
		o.cond[i] = splitmix64(uint64(i))>>63 == 1
		o.then[i] = float32(i)
		o.els[i] = -float32(i + 1)
	}
	return o
}

// wrapAlign is the alignment the offload's slices start on: 64 KiB, as
// much as any device asks of memory to import (lavapipe asks 4 KiB).
const wrapAlign = 64 << 10

// aligned returns a slice of n elements that starts on a multiple of
// wrapAlign bytes, with room up to the next multiple after its end.
func aligned[T any](n int) []T {
	var z T
	size := int(unsafe.Sizeof(z))
	back := make([]T, n+2*wrapAlign/size)
	skip := (wrapAlign - int(uintptr(unsafe.Pointer(unsafe.SliceData(back))))%wrapAlign) % wrapAlign / size
	return back[skip : skip+n]
}

// splitmix64 is the i-th output of SplitMix64 seeded with 0.
func splitmix64(i uint64) uint64 {
	z := (i + 1) * 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// check reports the first element of got that is not, bit for bit, the
// select of the offload's operands.
func (o *offloadData) check(got []float32) error {
	if len(got) != o.n {
		return fmt.Errorf("result of %d elements, want %d", len(got), o.n)
	}
	for i, g := range got {
		want := o.els[i]
		if o.cond[i] {
			want = o.then[i]
		}
		if math.Float32bits(g) != math.Float32bits(want) {
			return fmt.Errorf("element %d is %v, want %v", i, g, want)
		}
	}
	return nil
}

// checkPages is check of a result in pages (device.View).
func (o *offloadData) checkPages(pages [][]float32) error {
	var got []float32
	if len(pages) == 1 {
		got = pages[0]
	} else {
		for _, p := range pages {
			got = append(got, p...)
		}
	}
	return o.check(got)
}

// checkEqual reports the first element of got that differs from want.
func checkEqual[T comparable](got, want []T) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d elements, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Errorf("element %d is %v, want %v", i, got[i], want[i])
		}
	}
	return nil
}

// Offload returns the cases of a whole offload from Go slices and its
// parts, on n elements (op "offload", by pattern):
//
//	whole      FromSlice of cond ([]bool), then and else ([]float32),
//	           ops.Select, ToSlice of the result: the whole job
//	wrap       the same job with no copy: Wrap of the three slices,
//	           ops.Select, its result read through View (downloaded by
//	           ToSlice where the host does not map it: a discrete GPU);
//	           where the device cannot wrap, the case is skipped (ErrSkip)
//	resident   the same select on operands already on the device, its
//	           result read through View where the host maps it: the
//	           kernel alone
//	fromslice  FromSlice of cond (bool) and of then (f32) alone
//	toslice    ToSlice of a resident f32 tensor alone
//
// Every input is written before timing, and every result is checked bit
// for bit after it: a wrong result fails the case. The parts carry a Go
// copy() of their bytes as their denominator (Case.HostCopy). It panics
// unless CheckSize(n) is nil.
func Offload(n int) []*Case {
	mustSize(n)
	shape := tensor.Shape{n}
	data := lazyOffloadData(n)
	whole := &Case{Op: "offload", Pattern: "whole", DType: tensor.F32, Shape: shape, Bytes: uint64(13 * n), HostOnly: true,
		MinWarmup: resultWarmup}
	whole.Setup = func(d *device.Device) (func() error, func(), error) {
		o := data()
		var got []float32
		whole.verify = func() error { return o.check(got) }
		run := func() error {
			var err error
			got, err = offloadFromSlices(d, o)
			return err
		}
		return run, func() { whole.verify = nil }, nil
	}
	return []*Case{whole, wrapCase(n, data), residentCase(n, data), fromSliceCase(n, tensor.Bool, data), fromSliceCase(n, tensor.F32, data),
		toSliceCase(n, data)}
}

// wrapCase is the offload through Wrap and View.
func wrapCase(n int, data func() *offloadData) *Case {
	c := &Case{Op: "offload", Pattern: "wrap", DType: tensor.F32, Shape: tensor.Shape{n}, Bytes: uint64(13 * n), HostOnly: true}
	c.Setup = func(d *device.Device) (func() error, func(), error) {
		if ok, _ := bridge.Device(d).CanWrap(); !ok {
			return nil, nil, fmt.Errorf("%w: %s cannot import host memory", ErrSkip, d)
		}
		o := data()
		var y *device.Tensor
		var got [][]float32
		c.verify = func() error { return o.checkPages(got) }
		run := func() error {
			y.Free()
			y = nil
			ts, err := wrapSlices(d, o)
			if err != nil {
				return err
			}
			defer freeAll(ts)
			if y, err = ops.Select(ts[0], ts[1], ts[2]); err != nil {
				return err
			}
			got, err = resultPages(y)
			return err
		}
		return run, func() { c.verify = nil; y.Free() }, nil
	}
	return c
}

// resultPages reads a result in place where the host maps it (View),
// and downloads it elsewhere (ToSlice), as on a discrete GPU, whose
// kernels read wrapped operands across the bus.
func resultPages(y *device.Tensor) ([][]float32, error) {
	if bridge.Device(y.Device()).Unified() {
		return device.View[float32](y)
	}
	got, err := device.ToSlice[float32](y)
	return [][]float32{got}, err
}

// wrapSlices wraps the offload's slices, and fails unless each is used
// in place.
func wrapSlices(d *device.Device, o *offloadData) ([]*device.Tensor, error) {
	c, err := device.Wrap(d, o.cond)
	if err != nil {
		return nil, err
	}
	ts := []*device.Tensor{c}
	for _, s := range [][]float32{o.then, o.els} {
		t, err := device.Wrap(d, s)
		if err != nil {
			freeAll(ts)
			return nil, err
		}
		ts = append(ts, t)
	}
	for _, t := range ts {
		if !t.Wrapped() {
			freeAll(ts)
			return nil, fmt.Errorf("device.Wrap copied %v, whose slice starts on a multiple of %d bytes", t, wrapAlign)
		}
	}
	return ts, nil
}

// resultWarmup is the warm-up of the cases that allocate a result slice
// per run (ToSlice): the Go heap grows to its goal over the first few.
// In a fresh process, each of the first five 64 MiB results was memory
// the process had never touched, 16k page faults that took 38-46 ms
// (and up to 140); from the sixth on the heap reused freed ones, and
// ToSlice took 4 ms. The cold case measures the first ones.
const resultWarmup = 8

// lazyOffloadData makes the offload's data on first use and keeps it for
// the cases that share it.
func lazyOffloadData(n int) func() *offloadData {
	var o *offloadData
	return func() *offloadData {
		if o == nil {
			o = newOffloadData(n)
		}
		return o
	}
}

// offloadFromSlices is the whole offload through FromSlice and ToSlice.
func offloadFromSlices(d *device.Device, o *offloadData) ([]float32, error) {
	c, err := device.FromSlice(d, o.cond)
	if err != nil {
		return nil, err
	}
	defer c.Free()
	a, err := device.FromSlice(d, o.then)
	if err != nil {
		return nil, err
	}
	defer a.Free()
	b, err := device.FromSlice(d, o.els)
	if err != nil {
		return nil, err
	}
	defer b.Free()
	y, err := ops.Select(c, a, b)
	if err != nil {
		return nil, err
	}
	defer y.Free()
	return device.ToSlice[float32](y)
}

// residentCase is the select on resident operands, its result read
// through the mapped view.
func residentCase(n int, data func() *offloadData) *Case {
	c := &Case{Op: "offload", Pattern: "resident", DType: tensor.F32, Shape: tensor.Shape{n}, Bytes: uint64(13 * n), HostOnly: true}
	c.Setup = func(d *device.Device) (func() error, func(), error) {
		o := data()
		ts, err := uploadSlices(d, o)
		if err != nil {
			return nil, nil, err
		}
		var y *device.Tensor
		c.verify = func() error {
			got, err := device.ToSlice[float32](y)
			if err != nil {
				return err
			}
			return o.check(got)
		}
		run := func() error {
			y.Free()
			var err error
			if y, err = ops.Select(ts[0], ts[1], ts[2]); err != nil {
				return err
			}
			if bridge.Device(d).Unified() {
				_, err = device.View[float32](y)
			}
			return err
		}
		return run, func() { c.verify = nil; y.Free(); freeAll(ts) }, nil
	}
	return c
}

func uploadSlices(d *device.Device, o *offloadData) ([]*device.Tensor, error) {
	c, err := device.FromSlice(d, o.cond)
	if err != nil {
		return nil, err
	}
	a, err := device.FromSlice(d, o.then)
	if err != nil {
		c.Free()
		return nil, err
	}
	b, err := device.FromSlice(d, o.els)
	if err != nil {
		c.Free()
		a.Free()
		return nil, err
	}
	return []*device.Tensor{c, a, b}, nil
}

// fromSliceCase is FromSlice of the offload's cond (bool) or then (f32).
func fromSliceCase(n int, dt tensor.DType, data func() *offloadData) *Case {
	bytes := uint64(n * dt.Size())
	c := &Case{Op: "offload", Pattern: "fromslice", DType: dt, Shape: tensor.Shape{n}, Bytes: bytes, HostOnly: true, HostCopy: bytes}
	c.Setup = func(d *device.Device) (func() error, func(), error) {
		o := data()
		var last *device.Tensor
		c.verify = func() error {
			if dt == tensor.Bool {
				got, err := device.ToSlice[bool](last)
				if err != nil {
					return err
				}
				return checkEqual(got, o.cond)
			}
			got, err := device.ToSlice[float32](last)
			if err != nil {
				return err
			}
			return checkEqual(got, o.then)
		}
		run := func() error {
			last.Free()
			var err error
			if dt == tensor.Bool {
				last, err = device.FromSlice(d, o.cond)
			} else {
				last, err = device.FromSlice(d, o.then)
			}
			return err
		}
		return run, func() { c.verify = nil; last.Free() }, nil
	}
	return c
}

// toSliceCase is ToSlice of a resident f32 tensor.
func toSliceCase(n int, data func() *offloadData) *Case {
	bytes := uint64(4 * n)
	c := &Case{Op: "offload", Pattern: "toslice", DType: tensor.F32, Shape: tensor.Shape{n}, Bytes: bytes, HostOnly: true, HostCopy: bytes,
		MinWarmup: resultWarmup}
	c.Setup = func(d *device.Device) (func() error, func(), error) {
		o := data()
		x, err := device.FromSlice(d, o.then)
		if err != nil {
			return nil, nil, err
		}
		var got []float32
		c.verify = func() error { return checkEqual(got, o.then) }
		run := func() error {
			got, err = device.ToSlice[float32](x)
			return err
		}
		return run, func() { c.verify = nil; x.Free() }, nil
	}
	return c
}

// ColdOffload is the first offload of a process and the ones after it.
type ColdOffload struct {
	Op      string  `json:"op"`      // "offload"
	Pattern string  `json:"pattern"` // "cold"
	Path    string  `json:"path"`    // the pattern of the case it repeats: "whole" or "wrap"
	Device  string  `json:"device"`
	DType   string  `json:"dtype"` // "f32"
	Shape   []int   `json:"shape"`
	ColdMS  float64 `json:"cold_ms"` // the first offload after Open
	WarmMS  float64 `json:"warm_ms"` // the median of the runs after it
	Ratio   float64 `json:"cold_over_warm"`
	// The page faults of the first run and the median of the others
	// (Linux's minor faults; 0 where unknown): the memory the process
	// touched for the first time, whose cost the first run pays.
	ColdFaults int64 `json:"cold_page_faults"`
	WarmFaults int64 `json:"warm_page_faults"`
}

// MeasureCold opens a device with opts and times its first offload of
// n elements by path ("whole": FromSlice and ToSlice, or "wrap": Wrap and
// View, ErrSkip where the device cannot wrap), then runs more: the job a
// program that offloads once pays. Its operands are written before the
// device is opened. Run it in a fresh process (`vkops bench --cold`):
// the pages a process has not touched yet are part of what it measures.
// Every result is checked bit for bit.
func MeasureCold(opts device.Options, n, runs int, path string) (ColdOffload, error) {
	mustSize(n)
	res := ColdOffload{Op: "offload", Pattern: "cold", Path: path, DType: "f32", Shape: []int{n}}
	if path != "whole" && path != "wrap" {
		return res, fmt.Errorf("bench offload/cold: path %q: want whole or wrap", path)
	}
	o := newOffloadData(n)
	d, err := device.Open(opts)
	if err != nil {
		return res, err
	}
	defer d.Close()
	res.Device = d.String()
	if ok, _ := bridge.Device(d).CanWrap(); path == "wrap" && !ok {
		return res, fmt.Errorf("%w: %s cannot import host memory", ErrSkip, d)
	}
	var times, faults []float64
	for i := range 1 + max(runs, 1) {
		f := pageFaults()
		start := time.Now()
		check, err := offloadOnce(d, o, path)
		times = append(times, float64(time.Since(start).Nanoseconds())/1e6)
		faults = append(faults, float64(pageFaults()-f))
		if err == nil {
			err = check()
		}
		if err != nil {
			return res, fmt.Errorf("bench offload/cold: run %d: %w", i, err)
		}
	}
	res.ColdMS, res.WarmMS = times[0], median(times[1:])
	res.ColdFaults, res.WarmFaults = int64(faults[0]), int64(median(faults[1:]))
	res.Ratio = res.ColdMS / res.WarmMS
	return res, nil
}

// offloadOnce runs the offload by path, and returns what checks its
// result and frees what holds it.
func offloadOnce(d *device.Device, o *offloadData, path string) (check func() error, err error) {
	if path == "whole" {
		got, err := offloadFromSlices(d, o)
		return func() error { return o.check(got) }, err
	}
	ts, err := wrapSlices(d, o)
	if err != nil {
		return nil, err
	}
	defer freeAll(ts)
	y, err := ops.Select(ts[0], ts[1], ts[2])
	if err != nil {
		return nil, err
	}
	got, err := resultPages(y)
	if err != nil {
		y.Free()
		return nil, err
	}
	return func() error { defer y.Free(); return o.checkPages(got) }, nil
}

// pageFaults returns the minor page faults of this process so far, from
// /proc/self/stat: 0 where there is none.
func pageFaults() int64 {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	// The command name, field 2, may hold spaces: count from its end.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 8 {
		return 0
	}
	n, _ := strconv.ParseInt(f[7], 10, 64) // minflt, field 10
	return n
}
