// Package bench measures vkops on a device: each Case is timed after a
// warm-up, by GPU timestamps where the work runs on the device and by the
// wall clock always, and reported as the median and spread of its runs
// with the bandwidth it reached.
package bench

import (
	"fmt"
	"slices"
	"time"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/tensor"
)

// Case is one benchmark: an op on operands of a type and shape.
type Case struct {
	Op      string       // "upload", "download", "copy", "select", ...
	Pattern string       // the broadcast or reduction pattern, "" for none
	DType   tensor.DType // element type of the data operands
	Shape   tensor.Shape // shape of the largest operand
	// Bytes counts the bytes one run reads plus the bytes it writes.
	Bytes uint64
	// Setup allocates the operands and returns one run of the op, which
	// must leave its work recorded or done, and a cleanup.
	Setup func(d *device.Device) (run func() error, cleanup func(), err error)
	// HostOnly marks cases whose work is host copies (uploads and
	// downloads on unified memory): they have no GPU time.
	HostOnly bool
}

// Name identifies the case: "select/same/f32[16777216]".
func (c *Case) Name() string {
	p := c.Pattern
	if p == "" {
		p = "-"
	}
	return fmt.Sprintf("%s/%s/%v%v", c.Op, p, c.DType, c.Shape)
}

// Options configure Run.
type Options struct {
	Warmup int // runs before timing; default 2
	Runs   int // timed runs; default 7
}

// Result is what Run measured. Times are in milliseconds per run.
type Result struct {
	Op      string `json:"op"`
	Pattern string `json:"pattern"`
	DType   string `json:"dtype"`
	Shape   []int  `json:"shape"`
	Bytes   uint64 `json:"bytes"`
	Device  string `json:"device"`

	MedianMS float64 `json:"median_ms"` // GPU time where there is one, else wall time
	SpreadMS float64 `json:"spread_ms"` // max - min of the timed runs
	WallMS   float64 `json:"wall_median_ms"`
	GBps     float64 `json:"gbps"` // Bytes / MedianMS
	// FractionOfCopy is GBps over the device's own copy bandwidth, when
	// the caller measured one.
	FractionOfCopy float64 `json:"fraction_of_copy,omitempty"`
}

// Run measures c on d.
func Run(d *device.Device, c *Case, opts Options) (Result, error) {
	if opts.Warmup <= 0 {
		opts.Warmup = 2
	}
	if opts.Runs <= 0 {
		opts.Runs = 7
	}
	res := Result{Op: c.Op, Pattern: c.Pattern, DType: c.DType.String(), Shape: c.Shape, Bytes: c.Bytes, Device: d.String()}
	run, cleanup, err := c.Setup(d)
	if err != nil {
		return res, fmt.Errorf("bench %s: %w", c.Name(), err)
	}
	defer cleanup()
	once := func() error {
		if err := run(); err != nil {
			return err
		}
		return d.Sync()
	}
	for range opts.Warmup {
		if err := once(); err != nil {
			return res, fmt.Errorf("bench %s: %w", c.Name(), err)
		}
	}
	var gpu, wall []float64
	for range opts.Runs {
		start := time.Now()
		ns, err := d.GPUTime(once)
		if err != nil {
			return res, fmt.Errorf("bench %s: %w", c.Name(), err)
		}
		wall = append(wall, float64(time.Since(start).Nanoseconds())/1e6)
		gpu = append(gpu, ns/1e6)
	}
	times := gpu
	if c.HostOnly {
		times = wall
	}
	res.MedianMS, res.SpreadMS = median(times), slices.Max(times)-slices.Min(times)
	res.WallMS = median(wall)
	if res.MedianMS > 0 {
		res.GBps = float64(c.Bytes) / res.MedianMS / 1e6
	}
	return res, nil
}

func median(x []float64) float64 {
	s := slices.Sorted(slices.Values(x))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
