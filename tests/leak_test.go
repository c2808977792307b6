package tests

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/ops"
	"github.com/vkops/vkops/tensor"
)

// Leaks (issue #6): long runs of the ops' whole life cycle, and of
// opening and closing devices, must leave the process's resident memory,
// its goroutines and the device's live Vulkan objects where they were
// once warmed up. Each test logs the figures before and after.

// leakRSSSlack is how much resident memory may grow over a run: the Go
// heap's and the driver's allocators keep some memory after a GC, but a
// leak of even a few hundred bytes per cycle exceeds this over the run.
const leakRSSSlack = 16 << 20

// leakStats is what the leak tests watch.
type leakStats struct {
	rss        int64
	goroutines int
}

// leakMeasure settles the Go heap and measures.
func leakMeasure(t *testing.T) leakStats {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skipf("SKIP: no /proc/self/statm: %v", err)
	}
	f := strings.Fields(string(b))
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		t.Fatalf("statm %q: %v", b, err)
	}
	// Goroutines that are finishing (timers, the finalizer) settle.
	n := runtime.NumGoroutine()
	for range 50 {
		if n = runtime.NumGoroutine(); n <= 2 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	return leakStats{rss: pages * int64(os.Getpagesize()), goroutines: n}
}

// leakCompare logs and checks the figures of a run.
func leakCompare(t *testing.T, what string, before, after leakStats, live0, live1 int64) {
	t.Helper()
	t.Logf("%s: RSS %d -> %d KiB (%+d KiB), goroutines %d -> %d, live Vulkan objects %d -> %d",
		what, before.rss>>10, after.rss>>10, (after.rss-before.rss)>>10, before.goroutines, after.goroutines, live0, live1)
	if after.rss-before.rss > leakRSSSlack {
		t.Errorf("%s: RSS grew by %d KiB", what, (after.rss-before.rss)>>10)
	}
	if after.goroutines > before.goroutines {
		t.Errorf("%s: goroutines grew from %d to %d", what, before.goroutines, after.goroutines)
	}
	if live1 != live0 {
		t.Errorf("%s: live Vulkan objects went from %d to %d", what, live0, live1)
	}
}

// leakCase is one shape and type configuration of the op cycle. The
// cycle goes round a fixed list, so that warming up builds every
// pipeline and slab the run will use, and only the data is random.
type leakCase struct {
	kind string // select, where, or, and
	dt   tensor.DType
	a, b tensor.Shape // select and where: cond and then (else is b too); reductions: data is a
	axes []int
}

var leakCases = []leakCase{
	{"select", tensor.F32, tensor.Shape{8, 1}, tensor.Shape{8, 33}, nil},
	{"select", tensor.U8, tensor.Shape{100}, tensor.Shape{100}, nil},
	{"select", tensor.I64, tensor.Shape{3, 1, 5}, tensor.Shape{3, 4, 5}, nil},
	{"select", tensor.BF16, tensor.Shape{}, tensor.Shape{2000}, nil},
	{"where", tensor.I16, tensor.Shape{6, 7}, tensor.Shape{7}, nil},
	{"where", tensor.F64, tensor.Shape{50}, tensor.Shape{50}, nil},
	{"where", tensor.U32, tensor.Shape{1, 64}, tensor.Shape{3, 1}, nil},
	{"or", tensor.Bool, tensor.Shape{40, 50}, nil, []int{1}},
	{"or", tensor.Bool, tensor.Shape{40, 50}, nil, []int{0}},
	{"and", tensor.Bool, tensor.Shape{4, 5, 6, 7}, nil, []int{1, 3}},
	{"and", tensor.Bool, tensor.Shape{3000}, nil, []int{0}},
	{"or", tensor.Bool, tensor.Shape{5, 0, 3}, nil, []int{1}},
}

// leakCycle uploads the inputs of case c, runs the op, downloads and
// checks the result against cpuref, and frees everything.
func leakCycle(d *device.Device, rng *rand.Rand, c leakCase) error {
	var hs []*tensor.Host
	var want *tensor.Host
	var werr error
	switch c.kind {
	case "select":
		hs = []*tensor.Host{misRandom(rng, tensor.Bool, c.a), misRandom(rng, c.dt, c.b), misRandom(rng, c.dt, c.b)}
		want, werr = cpuref.Select(hs[0], hs[1], hs[2], "numpy")
	case "where":
		hs = []*tensor.Host{misRandom(rng, tensor.Bool, c.a), misRandom(rng, c.dt, c.b)}
		s, err := tensor.NewScalar(7, c.dt)
		if err != nil {
			return err
		}
		want, werr = cpuref.Where(hs[0], cpuref.Operand{T: hs[1]}, cpuref.Operand{S: &s})
	default:
		hs = []*tensor.Host{misRandom(rng, tensor.Bool, c.a)}
		ref := cpuref.ReduceLogicalOr
		if c.kind == "and" {
			ref = cpuref.ReduceLogicalAnd
		}
		want, werr = ref(hs[0], c.axes, false)
	}
	if werr != nil {
		return werr
	}
	ts := make([]*device.Tensor, len(hs))
	defer func() {
		for _, x := range ts {
			x.Free()
		}
	}()
	for i, h := range hs {
		x, err := bridge.Device(d).Upload(h)
		if err != nil {
			return err
		}
		ts[i] = bridge.UserTensor(x)
	}
	var y *device.Tensor
	var err error
	switch c.kind {
	case "select":
		y, err = ops.Select(ts[0], ts[1], ts[2])
	case "where":
		y, err = ops.Where(ts[0], ts[1], 7)
	case "or":
		y, err = ops.ReduceLogicalOr(ts[0], c.axes)
	case "and":
		y, err = ops.ReduceLogicalAnd(ts[0], c.axes)
	}
	if err != nil {
		return err
	}
	s, err := downloadDiff(y, want)
	if err != nil {
		return err
	}
	if s != "" {
		return fmt.Errorf("%s %v %v %v: %s", c.kind, c.dt, c.a, c.b, s)
	}
	return nil
}

// TestLeakOpCycles runs 10,000 cycles (1,000 with -short) of upload, op,
// download and free over selects, wheres and reductions.
func TestLeakOpCycles(t *testing.T) {
	cycles := 10000
	if testing.Short() {
		cycles = 1000
	}
	d := devtest.Open(t, device.Options{})
	rng := rand.New(rand.NewPCG(10, 10))
	run := func(n int) {
		for i := range n {
			c := leakCases[i%len(leakCases)]
			if err := leakCycle(d, rng, c); err != nil {
				t.Fatalf("cycle %d: %v", i, err)
			}
		}
		if err := d.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	run(20 * len(leakCases)) // warm up: pipelines, variant choices, slabs, batches
	before, live0 := leakMeasure(t), bridge.Device(d).LiveObjects()
	start := time.Now()
	run(cycles)
	elapsed := time.Since(start)
	after, live1 := leakMeasure(t), bridge.Device(d).LiveObjects()
	leakCompare(t, fmt.Sprintf("%d op cycles in %v", cycles, elapsed.Round(time.Millisecond)), before, after, live0, live1)
}

// leakOpen opens a device as devtest.Open does, with the validation
// layer on and its messages failing t, but leaves closing it to the
// caller and keeps no reference to it: a test's Cleanup would keep every
// device reachable to the end of the test.
func leakOpen(t *testing.T, opts device.Options) *device.Device {
	t.Helper()
	opts.Validation = true
	opts.OnValidation = func(sev, msg string) { t.Errorf("validation %s: %s", sev, msg) }
	d, err := device.Open(opts)
	devtest.SkipIfMissing(t, err)
	if err != nil {
		t.Fatalf("device.Open: %v", err)
	}
	return d
}

// TestLeakOpenClose opens and closes a device 100 times (10 with -short),
// running a select, a where and a reduction on each, with the validation
// layer on. Every Vulkan object is released at each Close, and the
// process keeps no memory or goroutine per device. The devices share a
// cache directory, as runs of the command do, so that kernel variants
// are measured once.
//
// Resident memory is noisy here: the driver and the validation layer
// allocate from C on whichever threads call them, and glibc keeps freed
// memory in per-thread arenas, which grow for a while before they settle.
// The bound, leakOpenCloseSlack over the run, is far below what keeping
// even one closed device's Go memory per cycle costs (see
// TestLeakClosedDevice).
func TestLeakOpenClose(t *testing.T) {
	cycles := 100
	if testing.Short() {
		cycles = 10
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(11, 11))
	var opened []int64
	cycle := func() {
		d := leakOpen(t, device.Options{CacheDir: dir})
		defer d.Close()
		opened = append(opened, bridge.Device(d).LiveObjects())
		for _, c := range []leakCase{leakCases[0], leakCases[4], leakCases[9]} {
			if err := leakCycle(d, rng, c); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		if live := bridge.Device(d).LiveObjects(); live != 0 {
			t.Fatalf("%d Vulkan objects live after Close", live)
		}
	}
	warm := 30
	if testing.Short() {
		warm = 5
	}
	for range warm { // warm up: the caches on disk, the loader, the driver, the arenas
		cycle()
	}
	before := leakMeasure(t)
	start := time.Now()
	for i := range cycles {
		cycle()
		if (i+1)%max(cycles/5, 1) == 0 {
			m := leakMeasure(t)
			t.Logf("after %d cycles: RSS %d KiB, goroutines %d", i+1, m.rss>>10, m.goroutines)
		}
	}
	elapsed := time.Since(start)
	after := leakMeasure(t)
	what := fmt.Sprintf("%d Open/Close cycles in %v", cycles, elapsed.Round(time.Millisecond))
	t.Logf("%s: RSS %d -> %d KiB (%+d KiB), goroutines %d -> %d, live Vulkan objects 0 after each Close",
		what, before.rss>>10, after.rss>>10, (after.rss-before.rss)>>10, before.goroutines, after.goroutines)
	if after.rss-before.rss > leakOpenCloseSlack {
		t.Errorf("%s: RSS grew by %d KiB", what, (after.rss-before.rss)>>10)
	}
	if after.goroutines > before.goroutines {
		t.Errorf("%s: goroutines grew from %d to %d", what, before.goroutines, after.goroutines)
	}
	for i, n := range opened {
		if n != opened[0] {
			t.Errorf("device %d holds %d Vulkan objects when opened, device 0 %d", i, n, opened[0])
			break
		}
	}
	t.Logf("each device: %d Vulkan objects when opened, 0 after Close", opened[0])
}

// leakOpenCloseSlack bounds the growth of resident memory over the
// Open/Close cycles: about 0.5 MiB a cycle.
const leakOpenCloseSlack = 48 << 20

// TestLeakClosedDevice measures the Go heap that closed devices keep
// while something still refers to them, as a test's Cleanup or a
// long-lived struct does: it should be a few KiB each.
func TestLeakClosedDevice(t *testing.T) {
	const n = 10
	rng := rand.New(rand.NewPCG(12, 12))
	var kept []*device.Device
	var ms runtime.MemStats
	measure := func() uint64 {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	dir := t.TempDir() // kernel variants are measured once, by the first device
	d := leakOpen(t, device.Options{CacheDir: dir})
	for _, c := range []leakCase{leakCases[0], leakCases[4], leakCases[9]} {
		if err := leakCycle(d, rng, c); err != nil {
			t.Fatal(err)
		}
	}
	d.Close()
	before := measure()
	for range n {
		d := leakOpen(t, device.Options{CacheDir: dir})
		for _, c := range []leakCase{leakCases[0], leakCases[4], leakCases[9]} {
			if err := leakCycle(d, rng, c); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, d)
	}
	per := (int64(measure()) - int64(before)) / n
	runtime.KeepAlive(kept)
	t.Logf("a closed device that stays reachable keeps %d KiB of Go heap", per>>10)
	if per > 256<<10 {
		t.Errorf("a closed device keeps %d KiB of Go heap, want at most 256 KiB", per>>10)
	}
}
