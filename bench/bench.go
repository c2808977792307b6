// Package bench measures vkops on a device: each Case is timed after a
// warm-up, by GPU timestamps where the work runs on the device and by the
// wall clock always, and reported as the median and spread of its runs
// with the bandwidth it reached, beside the device's own copy bandwidth
// on the same bytes and, on request, beside cpuref on the same data.
package bench

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/tensor"
)

// ErrSkip is what a case's Setup reports, wrapped with the reason, where
// the device cannot run the case, such as a zero-copy case on a device
// that cannot import host memory.
var ErrSkip = errors.New("skipped")

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
	// Data describes the data of a case whose speed depends on it, such
	// as "all-false" or "sparse-true (early exit)"; "" for random data.
	Data string
	// HostOnly marks cases whose work is host copies (uploads and
	// downloads on unified memory): they have no GPU time.
	HostOnly bool
	// MinWarmup, when above Options.Warmup, is the untimed runs the case
	// needs to reach its steady state.
	MinWarmup int
	// Fused, for a chain of ops, says whether it ran as one pass (an
	// ops.Expr) or op by op.
	Fused *bool
	// Slices, for a chain, says that it ran from a Go slice to a Go
	// slice (Wrap, the Expr, ToSliceInto) rather than on tensors
	// resident on the device: the job a Go loop over the slice does.
	Slices bool
	// Peer, when set, names what ran the case instead of vkops: "go" for
	// a plain Go loop over the slices, "go-parallel" for that loop split
	// over GOMAXPROCS goroutines (goloop.go). Its Version says which Go.
	Peer, Version string
	// HostCopy, when nonzero, is the bytes of a Go copy() that a Runner
	// times beside the case as its denominator: the host's own speed
	// at moving the bytes the case moves.
	HostCopy uint64

	// verify, set by Setup where the case checks its result, runs after
	// the timed runs: an error fails the case.
	verify func() error

	// check, for the op cases, runs the op once on d and once with
	// cpuref on the same data, returning both results and cpuref's time.
	check func(d *device.Device) (got, want *tensor.Host, refMS float64, err error)
}

// Name identifies the case: "select/same/f32[16777216]"; for a chain
// whether it ran fused, "chain/relu/f32[4096 4096]/fused", and from Go
// slices, ".../fused/slices"; for a peer's, its name,
// "chain/relu/f32[4096 4096]/go".
func (c *Case) Name() string {
	p := c.Pattern
	if p == "" {
		p = "-"
	}
	name := fmt.Sprintf("%s/%s/%v%v", c.Op, p, c.DType, c.Shape)
	if c.Fused != nil {
		name += map[bool]string{true: "/fused", false: "/unfused"}[*c.Fused]
	}
	if c.Slices {
		name += "/slices"
	}
	if c.Peer != "" {
		name += "/" + c.Peer
	}
	return name
}

// HasRef reports whether Compare can check the case against cpuref.
func (c *Case) HasRef() bool { return c.check != nil }

// Options configure Run.
type Options struct {
	// Warmup is the runs before timing; default 2. Warm-up also lasts
	// WarmupTime(d) at least.
	Warmup int
	Runs   int // timed runs; default 7
	// Compare also checks each case that has a cpuref form (HasRef)
	// against cpuref on the same data, and times cpuref.
	Compare bool
}

// Result is what Run measured. Times are in milliseconds per run.
//
// bench/report renders results from their JSON, fields it does not know
// included: an op that times the parts of a run adds a number field for
// each, named PART_ms, and one whose cases come in kinds (fused or not)
// adds a string or bool field naming the kind. Either needs no change
// to the renderer.
type Result struct {
	// Peer names the library that ran the case, for results that
	// bench/peers.py measured on numpy or torch, or a Go loop of
	// goloop.go (Case.Peer); empty for vkops.
	Peer string `json:"peer,omitempty"`
	// Version is the peer library's version, such as "1.24.2".
	Version string `json:"version,omitempty"`
	Op      string `json:"op"`
	Pattern string `json:"pattern"`
	DType   string `json:"dtype"`
	Shape   []int  `json:"shape"`
	Bytes   uint64 `json:"bytes"`
	Data    string `json:"data,omitempty"`   // Case.Data
	Fused   *bool  `json:"fused,omitempty"`  // Case.Fused
	Slices  bool   `json:"slices,omitempty"` // Case.Slices
	Device  string `json:"device"`

	MedianMS float64 `json:"median_ms"` // GPU time where there is one, else wall time
	SpreadMS float64 `json:"spread_ms"` // max - min of the timed runs
	// MinMS is the fastest timed run: on a shared machine, whose other
	// tenants slow some runs by 2x, the steadier figure for comparing
	// two builds of a kernel run one after the other.
	MinMS        float64 `json:"min_ms"`
	WallMS       float64 `json:"wall_median_ms"`
	WallSpreadMS float64 `json:"wall_spread_ms"`
	GBps         float64 `json:"gbps"` // Bytes / MedianMS
	// CopyGBps is the device's own copy bandwidth on the same bytes and
	// FractionOfCopy is GBps over it, when the caller measured one (a
	// Runner does); both are 0 otherwise.
	CopyGBps       float64 `json:"copy_gbps"`
	FractionOfCopy float64 `json:"fraction_of_copy"`

	// HostCopyMS is the median time of a Go copy() of Case.HostCopy
	// bytes, measured by a Runner just before the case, and OfHostCopy
	// is HostCopyMS over WallMS: 1 moves the bytes as fast as copy().
	HostCopyMS float64 `json:"host_copy_ms,omitempty"`
	OfHostCopy float64 `json:"of_host_copy,omitempty"`

	// With Options.Compare, for a case that has a cpuref form: cpuref's
	// time on the host, its ratio to this case's wall time, and whether
	// the results agreed bit for bit (Mismatch says where they first
	// differ when they do not).
	CPURefMS float64 `json:"cpuref_ms,omitempty"`
	Speedup  float64 `json:"speedup,omitempty"`
	Agree    *bool   `json:"agree,omitempty"`
	Mismatch string  `json:"mismatch,omitempty"`
}

// GPUWarmup is the shortest warm-up on a GPU. Its clocks drop while the
// host prepares a case, and a few runs of 0.1 ms do not raise them: on an
// H100, a 16M-element Greater timed 0.125 ms late in the suite, after two
// warm-up runs, and 0.057 ms run alone; the copy beside it varied 3.5x.
const GPUWarmup = 200 * time.Millisecond

// WarmupTime is the shortest warm-up on d: GPUWarmup on a GPU, none on a
// CPU device.
func WarmupTime(d *device.Device) time.Duration {
	if bridge.Device(d).IsCPU() {
		return 0
	}
	return GPUWarmup
}

// Run measures c on d.
func Run(d *device.Device, c *Case, opts Options) (Result, error) {
	if opts.Warmup <= 0 {
		opts.Warmup = 2
	}
	if opts.Runs <= 0 {
		opts.Runs = 7
	}
	res := Result{Peer: c.Peer, Version: c.Version, Op: c.Op, Pattern: c.Pattern, DType: c.DType.String(), Shape: c.Shape, Bytes: c.Bytes,
		Data: c.Data, Fused: c.Fused, Slices: c.Slices, Device: d.String()}
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
	warm := time.Now().Add(WarmupTime(d))
	for i := 0; i < max(opts.Warmup, c.MinWarmup) || time.Now().Before(warm); i++ {
		if err := once(); err != nil {
			return res, fmt.Errorf("bench %s: %w", c.Name(), err)
		}
	}
	var gpu, wall []float64
	for range opts.Runs {
		start := time.Now()
		ns, err := bridge.Device(d).GPUTime(once)
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
	res.MedianMS, res.SpreadMS, res.MinMS = median(times), spread(times), slices.Min(times)
	res.WallMS, res.WallSpreadMS = median(wall), spread(wall)
	if c.verify != nil {
		if err := c.verify(); err != nil {
			return res, fmt.Errorf("bench %s: wrong result: %w", c.Name(), err)
		}
	}
	if res.MedianMS > 0 {
		res.GBps = float64(c.Bytes) / res.MedianMS / 1e6
	}
	if opts.Compare && c.HasRef() {
		ref, err := Compare(d, c)
		if err != nil {
			return res, err
		}
		res.CPURefMS, res.Agree, res.Mismatch = ref.CPURefMS, &ref.Agree, ref.Mismatch
		if res.WallMS > 0 {
			res.Speedup = ref.CPURefMS / res.WallMS
		}
	}
	return res, nil
}

// Comparison is a case's result on the device checked against cpuref's.
type Comparison struct {
	CPURefMS float64 // cpuref's time on the host
	Agree    bool    // the results are equal bit for bit, shapes included
	Mismatch string  // where they first differ, when they do
}

// Compare runs c once on d and once with cpuref on the same data, and
// compares the results bit for bit. cpuref's time is the median of three
// runs, or one run when that takes over 100 ms: it is slow enough then
// that one run is stable, and the suite stays short.
func Compare(d *device.Device, c *Case) (Comparison, error) {
	if c.check == nil {
		return Comparison{}, fmt.Errorf("bench %s: no cpuref form to compare with", c.Name())
	}
	got, want, ms, err := c.check(d)
	if err != nil {
		return Comparison{}, fmt.Errorf("bench %s: compare: %w", c.Name(), err)
	}
	res := Comparison{CPURefMS: ms, Agree: true}
	switch {
	case got.DType != want.DType || !got.Shape.Equal(want.Shape):
		res.Agree = false
		res.Mismatch = fmt.Sprintf("device gave %v%v, cpuref %v%v", got.DType, got.Shape, want.DType, want.Shape)
	case !bytes.Equal(got.Data, want.Data):
		res.Agree = false
		i := 0
		for got.Data[i] == want.Data[i] {
			i++
		}
		size := got.DType.Size()
		e := i / size
		res.Mismatch = fmt.Sprintf("element %d differs: device % x, cpuref % x",
			e, got.Data[e*size:(e+1)*size], want.Data[e*size:(e+1)*size])
	}
	return res, nil
}

// timeRef times f as Compare describes, in milliseconds.
func timeRef(f func() error) (float64, error) {
	var times []float64
	for len(times) < 3 {
		start := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		ms := float64(time.Since(start).Nanoseconds()) / 1e6
		if len(times) == 0 && ms > 100 {
			return ms, nil
		}
		times = append(times, ms)
	}
	return median(times), nil
}

// Runner measures cases on one device, each beside the device's own copy
// bandwidth (vkCmdCopyBuffer) moving the same bytes: half read, half
// written. The copy is measured just before each case rather than once
// per size, so that both see the same load on a shared machine.
type Runner struct {
	d      *device.Device
	opts   Options
	copies []Result
}

// NewRunner returns a Runner that measures on d with opts.
func NewRunner(d *device.Device, opts Options) *Runner {
	return &Runner{d: d, opts: opts}
}

// Run measures c after its copy baseline; a peer's case (Case.Peer),
// which never runs on the device, has none.
func (r *Runner) Run(c *Case) (Result, error) {
	if c.Peer != "" {
		return Run(r.d, c, r.opts)
	}
	base, err := r.Copy(c.Bytes)
	if err != nil {
		return Result{}, err
	}
	res, err := Run(r.d, c, r.opts)
	if err != nil {
		return res, err
	}
	res.CopyGBps = base.GBps
	if base.GBps > 0 {
		res.FractionOfCopy = res.GBps / base.GBps
	}
	if c.HostCopy > 0 {
		res.HostCopyMS = r.hostCopy(c.HostCopy)
		res.OfHostCopy = res.HostCopyMS / res.WallMS
	}
	return res, nil
}

// hostCopy times a Go copy() of n bytes between two slices written
// before, Options.Runs times, and returns the median in milliseconds.
func (r *Runner) hostCopy(n uint64) float64 {
	src, dst := make([]byte, n), make([]byte, n)
	for i := range src {
		src[i] = byte(i)
	}
	copy(dst, src)
	runs := r.opts.Runs
	if runs <= 0 {
		runs = 7
	}
	times := make([]float64, runs)
	for i := range times {
		start := time.Now()
		copy(dst, src)
		times[i] = float64(time.Since(start).Nanoseconds()) / 1e6
	}
	return median(times)
}

// Copy measures the copy baseline for a case that moves the given bytes:
// vkCmdCopyBuffer between two buffers of half as many bytes each, so that
// it too reads plus writes that many.
func (r *Runner) Copy(moved uint64) (Result, error) {
	opts := r.opts
	opts.Compare = false // vkCmdCopyBuffer has no cpuref form
	res, err := Run(r.d, Copy(int(max((moved+1)/2, 1))), opts)
	if err != nil {
		return res, err
	}
	res.CopyGBps, res.FractionOfCopy = res.GBps, 1
	r.copies = append(r.copies, res)
	return res, nil
}

// Copies returns every copy baseline measured so far, smallest first.
func (r *Runner) Copies() []Result {
	out := slices.Clone(r.copies)
	slices.SortStableFunc(out, func(a, b Result) int { return cmp.Compare(a.Bytes, b.Bytes) })
	return out
}

func median(x []float64) float64 {
	s := slices.Sorted(slices.Values(x))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func spread(x []float64) float64 { return slices.Max(x) - slices.Min(x) }
