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

// FirstCall is the latency of a case's first run in a fresh process,
// in milliseconds of wall time: building its pipelines (and choosing
// its kernel variant, where an op has several), recording, submitting
// and waiting, beside the runs after it.
type FirstCall struct {
	Case string `json:"case"`
	// ColdMS starts from an empty vkops cache directory with Mesa's
	// shader cache off (MESA_SHADER_CACHE_DISABLE=true); WarmMS from the
	// same directory once a process with Mesa's cache on, kept in that
	// directory, has run the case and saved both.
	ColdMS float64 `json:"cold_ms"`
	WarmMS float64 `json:"warm_ms"`
	// SteadyMS is the median of the warm process's runs after its first.
	SteadyMS float64 `json:"steady_ms"`
	// CacheBytes is what the cold and the warming processes saved.
	CacheBytes int64 `json:"cache_bytes"`
}

// A FirstRun is what one process measured of a case: its first run and
// the median of the runs after it.
type FirstRun struct {
	FirstMS  float64 `json:"first_ms"`
	SteadyMS float64 `json:"steady_ms"`
}

// A FirstRunner runs case c of FirstCallCases(n) in a fresh process
// whose environment has env added, as MeasureFirst does, and returns
// what it measured.
type FirstRunner func(c *Case, n int, env []string) (FirstRun, error)

// FirstCalls measures the first run of each of cases, of
// FirstCallCases(n), by run: with a fresh
// temporary cache directory of its own, so that no case profits from
// another's pipelines or choices, then twice more on that directory with
// Mesa's shader cache kept there, the first to fill it and the second to
// time. Mesa's cache is named in every environment, so that neither the
// user's setting nor a cache that other programs share shows.
func FirstCalls(run FirstRunner, n int, cases []*Case) ([]FirstCall, error) {
	res := make([]FirstCall, len(cases))
	for i, c := range cases {
		f, err := firstCall(func(c *Case, env []string) (FirstRun, error) { return run(c, n, env) }, c)
		if err != nil {
			return nil, err
		}
		res[i] = f
	}
	return res, nil
}

func firstCall(run func(c *Case, env []string) (FirstRun, error), c *Case) (FirstCall, error) {
	res := FirstCall{Case: c.Name()}
	dir, err := os.MkdirTemp("", "vkops-bench-cache-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	env := func(mesaOff bool) []string {
		return []string{"VKOPS_CACHE_DIR=" + dir, "MESA_SHADER_CACHE_DIR=" + filepath.Join(dir, "mesa"),
			fmt.Sprintf("MESA_SHADER_CACHE_DISABLE=%t", mesaOff)}
	}
	cold, err := run(c, env(true))
	if err != nil {
		return res, err
	}
	if _, err := run(c, env(false)); err != nil {
		return res, err
	}
	if res.CacheBytes, err = dirBytes(dir); err != nil {
		return res, err
	}
	warm, err := run(c, env(false))
	res.ColdMS, res.WarmMS, res.SteadyMS = cold.FirstMS, warm.FirstMS, warm.SteadyMS
	return res, err
}

// dirBytes returns the bytes of the files under dir.
func dirBytes(dir string) (n int64, err error) {
	err = filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		info, err := e.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	return n, err
}

// MeasureFirst opens a device, times the case's first run, then runs
// more, and closes the device, which saves its caches. It is what a
// FirstRunner's process does: `vkops bench --first`.
func MeasureFirst(opts device.Options, c *Case, runs int) (res FirstRun, err error) {
	d, err := device.Open(opts)
	if err != nil {
		return res, err
	}
	defer func() {
		if cerr := d.Close(); err == nil {
			err = cerr
		}
	}()
	run, cleanup, err := c.Setup(d)
	if err != nil {
		return res, fmt.Errorf("bench %s: %w", c.Name(), err)
	}
	defer cleanup()
	// The operands are uploaded and idle: only the op is timed.
	if err := d.Sync(); err != nil {
		return res, err
	}
	times := make([]float64, runs+1)
	for i := range times {
		start := time.Now()
		err = run()
		if err == nil {
			err = d.Sync()
		}
		times[i] = float64(time.Since(start).Nanoseconds()) / 1e6
		if err != nil {
			return res, fmt.Errorf("bench %s: run %d: %w", c.Name(), i, err)
		}
	}
	res.FirstMS = times[0]
	if runs > 0 {
		res.SteadyMS = median(times[1:])
	}
	return res, nil
}

// FirstCallCases returns the cases whose first calls `vkops bench`
// reports, on n elements: one or two per op family (select, where with
// a scalar (the select kernel with other constants), ReduceLogicalOr
// over the inner and the outer axis (two kernels) and over the middle
// axis of a cube (the outer kernel where each invocation owns its
// outputs: no atomics to compile), ReduceLogicalAnd,
// and the mask kernel as a comparison, a classifier and a logical op),
// each chain pattern fused on f32, and the NaN check from a Go slice,
// the job of a Go loop over it.
func FirstCallCases(n int) []*Case {
	var cs []*Case
	all := append(Select(n, tensor.F32), Reduce(n)...)
	for _, c := range append(all, Mask(n)...) {
		switch c.Op + "/" + c.Pattern + "/" + c.DType.String() {
		case "select/same/f32", "where/scalar-else/f32", "reduce-or/axis1/bool", "reduce-or/axis0/bool",
			"reduce-or/axis1-3d/bool", "greater/same/f32", "is-nan/same/f32", "logical-and/same/bool":
			cs = append(cs, c)
		}
	}
	cs = append(cs, reduceAndCase(n))
	for _, p := range chainPatterns {
		cs = append(cs, p.chainCase(n, tensor.F32, true))
		if p.name == "nan-check" {
			xs, ms := p.shapes(n)
			cs = append(cs, p.sliceCase(xs, ms))
		}
	}
	return cs
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
