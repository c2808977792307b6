package bench

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/ops"
	"github.com/vkops/vkops/tensor"
)

// PerOp is the fixed cost of an op apart from the data it moves, in
// microseconds of wall time per op, beside the driver's own floor for the
// same work measured in the same run.
type PerOp struct {
	Op  string `json:"tiny_op"` // the op timed: "select f32[4]"
	Ops int    `json:"ops"`     // ops per measurement
	// BatchedUS has the ops recorded back to back and submitted together
	// (the device splits them into command buffers as they fill);
	// SubmitEachUS submits and waits for each op on its own.
	BatchedUS    float64 `json:"batched_us_per_op"`
	SubmitEachUS float64 `json:"submit_each_us_per_op"`
	// Dispatches is how many dispatches one op records.
	Dispatches int `json:"dispatches_per_op"`
	// FloorUS is the driver's floor: the wall time per dispatch of the
	// op's own dispatch (pipeline, bindings, push constants, grid)
	// recorded Ops times into one command buffer with nothing of vkops
	// between, each binding its buffers as the op does (a descriptor set
	// of its own, or pushed descriptors), from the submit until all have
	// run. FloorChainedUS puts a barrier between them.
	FloorUS        float64 `json:"floor_us_per_dispatch"`
	FloorChainedUS float64 `json:"floor_chained_us_per_dispatch"`
	// Ratio is BatchedUS over the independent floor of the op's
	// dispatches: the median of the ratios of measurements taken side by
	// side, so that load on the machine weighs on both alike. 1 is the
	// driver's own cost.
	Ratio float64 `json:"batched_over_floor"`
}

// MeasurePerOp times n selects of four f32 elements on d, batched and
// one per submit, and the driver's floor for the select's dispatch
// (Device.Capture, Replay.Time). Each figure is the median of five
// rounds after one untimed; within a round the floor and the batched ops
// are measured back to back.
func MeasurePerOp(d *device.Device, n int) (PerOp, error) {
	res := PerOp{Op: "select f32[4]", Ops: n}
	cond, err := device.FromSlice(d, []bool{true, false, true, false})
	if err != nil {
		return res, err
	}
	defer cond.Free()
	a, err := device.FromSlice(d, []float32{1, 2, 3, 4})
	if err != nil {
		return res, err
	}
	defer a.Free()
	b, err := device.FromSlice(d, []float32{5, 6, 7, 8})
	if err != nil {
		return res, err
	}
	defer b.Free()
	op := func(each bool) error {
		y, err := ops.Select(cond, a, b)
		if err != nil {
			return err
		}
		y.Free()
		if each {
			return d.Sync()
		}
		return nil
	}
	// The floor replays the op's dispatch, which writes y: y lives until
	// the floor has been measured. The first op may choose its kernel
	// variant, so it runs before the one captured.
	if err := op(true); err != nil {
		return res, fmt.Errorf("bench: per-op overhead: %w", err)
	}
	var y *device.Tensor
	replay, err := bridge.Device(d).Capture(func() error {
		var err error
		y, err = ops.Select(cond, a, b)
		return err
	})
	if err != nil {
		return res, fmt.Errorf("bench: per-op floor: %w", err)
	}
	defer y.Free()
	res.Dispatches = replay.Dispatches
	timeOps := func(each bool) (float64, error) {
		start := time.Now()
		for range n {
			if err := op(each); err != nil {
				return 0, err
			}
		}
		if err := d.Sync(); err != nil {
			return 0, err
		}
		return float64(time.Since(start).Nanoseconds()) / 1e3 / float64(n), nil
	}
	floor := func(chained bool) (float64, error) {
		t, err := replay.Time(n, chained)
		return float64(t.Nanoseconds()) / 1e3, err
	}
	var batched, each, free, chained, ratios []float64
	for i := range 6 {
		f, err := floor(false)
		if err != nil {
			return res, fmt.Errorf("bench: per-op floor: %w", err)
		}
		bt, err := timeOps(false)
		if err != nil {
			return res, fmt.Errorf("bench: per-op overhead: %w", err)
		}
		fc, err := floor(true)
		if err != nil {
			return res, fmt.Errorf("bench: per-op floor: %w", err)
		}
		et, err := timeOps(true)
		if err != nil {
			return res, fmt.Errorf("bench: per-op overhead: %w", err)
		}
		if i > 0 { // the first warms the pool, the pipeline and the driver
			batched, each, free, chained = append(batched, bt), append(each, et), append(free, f), append(chained, fc)
			ratios = append(ratios, bt/(f*float64(res.Dispatches)))
		}
	}
	res.BatchedUS, res.SubmitEachUS = median(batched), median(each)
	res.FloorUS, res.FloorChainedUS, res.Ratio = median(free), median(chained), median(ratios)
	return res, nil
}

// FirstCall is the latency of a case's first run on a freshly opened
// device, in milliseconds of wall time: building its pipelines (and
// choosing its kernel variant, where an op has several), recording,
// submitting and waiting.
type FirstCall struct {
	Case string `json:"case"`
	// ColdMS starts from an empty cache directory; WarmMS from the same
	// directory after the cold device's Close saved its pipeline cache
	// and variant choices.
	ColdMS float64 `json:"cold_ms"`
	WarmMS float64 `json:"warm_ms"`
	// CacheBytes is what the cold device saved.
	CacheBytes int64 `json:"cache_bytes"`
}

// FirstCalls measures each case's first run on a device opened with opts
// and a fresh temporary cache directory of its own, so that no case
// profits from another's pipelines or choices, then again on a second
// device opened on that directory after the first was closed. Caches
// outside vkops's directory, such as the driver's own shader cache, are
// not touched: their state shows in both figures.
func FirstCalls(opts device.Options, cases []*Case) ([]FirstCall, error) {
	res := make([]FirstCall, len(cases))
	for i, c := range cases {
		f, err := firstCall(opts, c)
		if err != nil {
			return nil, err
		}
		res[i] = f
	}
	return res, nil
}

func firstCall(opts device.Options, c *Case) (FirstCall, error) {
	res := FirstCall{Case: c.Name()}
	dir, err := os.MkdirTemp("", "vkops-bench-cache-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	opts.CacheDir = dir
	if res.ColdMS, err = firstRun(opts, c); err != nil {
		return res, err
	}
	err = filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		info, err := e.Info()
		if err == nil {
			res.CacheBytes += info.Size()
		}
		return err
	})
	if err != nil {
		return res, err
	}
	res.WarmMS, err = firstRun(opts, c)
	return res, err
}

// firstRun opens a device, times the case's first run and closes the
// device, which saves its caches.
func firstRun(opts device.Options, c *Case) (ms float64, err error) {
	d, err := device.Open(opts)
	if err != nil {
		return 0, err
	}
	defer func() {
		if cerr := d.Close(); err == nil {
			err = cerr
		}
	}()
	run, cleanup, err := c.Setup(d)
	if err != nil {
		return 0, fmt.Errorf("bench %s: %w", c.Name(), err)
	}
	defer cleanup()
	// The operands are uploaded and idle: only the op is timed.
	if err := d.Sync(); err != nil {
		return 0, err
	}
	start := time.Now()
	err = run()
	if err == nil {
		err = d.Sync()
	}
	ms = float64(time.Since(start).Nanoseconds()) / 1e6
	if err != nil {
		return 0, fmt.Errorf("bench %s: first call: %w", c.Name(), err)
	}
	return ms, nil
}

// FirstCallCases returns the cases whose first calls `vkops bench`
// reports, one or two per op family on MinSize elements: select, where
// with a scalar (the select kernel with other constants), ReduceLogicalOr
// over the inner and the outer axis (two kernels), ReduceLogicalAnd, and
// the mask kernel as a comparison, a classifier and a logical op.
func FirstCallCases() []*Case {
	var cs []*Case
	all := append(Select(MinSize, tensor.F32), Reduce(MinSize)...)
	for _, c := range append(all, Mask(MinSize)...) {
		switch c.Op + "/" + c.Pattern + "/" + c.DType.String() {
		case "select/same/f32", "where/scalar-else/f32", "reduce-or/axis1/bool", "reduce-or/axis0/bool",
			"greater/same/f32", "is-nan/same/f32", "logical-and/same/bool":
			cs = append(cs, c)
		}
	}
	return append(cs, reduceAndCase(MinSize))
}

// reduceAndCase is ReduceLogicalAnd over the inner axis of n bools, all
// true, [n/32, 32].
func reduceAndCase(n int) *Case {
	shape := tensor.Shape{n / 32, 32}
	return &Case{
		Op: "reduce-and", Pattern: "axis1", DType: tensor.Bool, Shape: shape, Bytes: uint64(n + n/32),
		Setup: func(d *device.Device) (func() error, func(), error) {
			data := make([]bool, n)
			for i := range data {
				data[i] = true
			}
			x, err := device.FromSlice(d, data, shape...)
			if err != nil {
				return nil, nil, err
			}
			var y *device.Tensor
			run := func() error {
				y.Free()
				var err error
				y, err = ops.ReduceLogicalAnd(x, []int{1})
				return err
			}
			return run, func() { y.Free(); x.Free() }, nil
		},
	}
}
