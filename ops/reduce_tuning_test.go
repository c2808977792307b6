package ops

import (
	"fmt"
	"math"
	"testing"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/tensor"
)

// BenchmarkReduceTuning searches the reduce tuning of the device, one
// knob at a time from reduceTuningFor's: each knob takes the value that
// gives the suite's reduce shapes the least geometric mean of device time
// (the best of three runs, over data where every byte must be read: all
// false, Or), and the next knob starts from there. It logs each step and
// both tunings' figures; it is how reduceTuningGPU was chosen:
//
//	go test ./ops -run '^$' -bench ReduceTuning -benchtime 1x -v
func BenchmarkReduceTuning(b *testing.B) {
	d := devtest.Open(b, device.Options{})
	type knob struct {
		name string
		set  func(t *reduceTune, v uint64)
		vals []uint64
	}
	knobs := []knob{
		{"groupSize", func(t *reduceTune, v uint64) { t.groupSize = v }, []uint64{64, 128, 256}},
		{"target", func(t *reduceTune, v uint64) { t.target = v }, []uint64{1 << 10, 1 << 14, 1 << 16, 1 << 18, 1 << 20}},
		{"minChunk", func(t *reduceTune, v uint64) { t.minChunk = v }, []uint64{64, 128, 256, 512, 1 << 10, 4 << 10, 16 << 10}},
		{"minWork", func(t *reduceTune, v uint64) { t.minWork = v }, []uint64{256, 1 << 10, 4 << 10, 16 << 10}},
		{"vecs", func(t *reduceTune, v uint64) { t.vecs = v }, []uint64{1, 2, 4, 8}},
		{"minSplit", func(t *reduceTune, v uint64) { t.minSplit = v }, []uint64{16 << 10, 64 << 10, 256 << 10}},
	}
	type benchCase struct {
		name    string
		x, y    *device.Tensor
		shape   tensor.Shape
		reduced []bool
	}
	var cases []benchCase
	for _, c := range []struct {
		shape tensor.Shape
		axes  []int
	}{
		{tensor.Shape{4096, 16384}, []int{1}},
		{tensor.Shape{4096, 16384}, []int{0}},
		{tensor.Shape{4096, 16384}, []int{0, 1}},
		{tensor.Shape{256, 256, 256}, []int{1}},
		{tensor.Shape{256, 256, 256}, []int{0, 2}},
		{tensor.Shape{64, 64, 64, 64}, []int{1, 3}},
		{tensor.Shape{8192, 1537}, []int{0}},
	} {
		x, err := bridge.Device(d).Empty(tensor.Bool, c.shape)
		if err != nil {
			b.Fatal(err)
		}
		defer x.Free()
		reduced, err := reducedAxes(nil, "bench", c.shape.Rank(), c.axes)
		if err != nil {
			b.Fatal(err)
		}
		outShape, err := reduceOutputShape(nil, "bench", c.shape, reduced, false)
		if err != nil {
			b.Fatal(err)
		}
		y, err := bridge.Device(d).Empty(tensor.Bool, outShape)
		if err != nil {
			b.Fatal(err)
		}
		defer y.Free()
		if err := (&reducer{d: d, op: reduceOrOp}).fill(bridge.UserTensor(x)); err != nil {
			b.Fatal(err)
		}
		cases = append(cases, benchCase{fmt.Sprintf("%v axes %v", c.shape, c.axes), bridge.UserTensor(x), bridge.UserTensor(y), c.shape, reduced})
	}
	// times returns each case's best device time under tu, and their
	// geometric mean.
	times := func(tu reduceTune) ([]float64, float64) {
		ns := make([]float64, len(cases))
		logSum := 0.0
		for i, c := range cases {
			r := newReducer(d, reduceOrOp)
			r.tune, r.families = tu, &reduceFamilies
			if err := r.run(c.x, c.y, c.shape, c.reduced); err != nil { // builds the pipelines
				b.Fatal(err)
			}
			for range 3 {
				t, err := bridge.Device(d).GPUTime(func() error { return r.run(c.x, c.y, c.shape, c.reduced) })
				if err != nil {
					b.Fatal(err)
				}
				if ns[i] == 0 || t < ns[i] {
					ns[i] = t
				}
			}
			logSum += math.Log(ns[i])
		}
		return ns, math.Exp(logSum / float64(len(cases)))
	}
	for range b.N {
		start := reduceTuningFor(d)
		startNs, startMean := times(start)
		tu, mean := start, startMean
		for _, k := range knobs {
			for _, v := range k.vals {
				t := tu
				k.set(&t, v)
				if t == tu {
					continue
				}
				if _, m := times(t); m < mean {
					tu, mean = t, m
				}
			}
			b.Logf("%-9s -> %+v: geometric mean %.1f us", k.name, tu, mean/1e3)
		}
		endNs, _ := times(tu)
		b.Logf("from %+v", start)
		b.Logf("to   %+v", tu)
		for i, c := range cases {
			gb := func(ns float64) float64 { return float64(c.x.Bytes()) / ns }
			b.Logf("%-32s %9.1f us %7.1f GB/s -> %9.1f us %7.1f GB/s", c.name, startNs[i]/1e3, gb(startNs[i]), endNs[i]/1e3, gb(endNs[i]))
		}
		b.ReportMetric(startMean/mean, "speedup")
	}
}
