package bench

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/tensor"
)

// tiny is the size the device tests run at: every pattern keeps its
// shape class, and the suite takes well under a second.
const tiny = 4096

// cacheDir is shared by the tests' devices, so that the kernel variants
// chosen by measurement on the first device's ops are stored (at its
// Close) and the later devices do not measure them again.
var cacheDir string

// TestMain gives the tests their cache directory, and skips the examples
// where no Vulkan device exists, outside CI (devtest.SkipExamples).
func TestMain(m *testing.M) {
	devtest.SkipExamples()
	dir, err := os.MkdirTemp("", "vkops-bench-test-")
	if err != nil {
		panic(err)
	}
	cacheDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Every case of the suite runs at a tiny size, beside its copy baseline,
// and every op case agrees with cpuref bit for bit.
func TestSuiteRunsAndAgrees(t *testing.T) {
	d := devtest.Open(t, device.Options{CacheDir: cacheDir})
	r := NewRunner(d, Options{Warmup: 1, Runs: 1, Compare: true})
	cases := Suite(tiny, DefaultDTypes)
	ops := map[string]int{}
	for _, c := range cases {
		res, err := r.Run(c)
		if errors.Is(err, ErrSkip) {
			t.Logf("%s: %v", c.Name(), err)
			ops[c.Op]++
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.Name(), err)
		}
		ops[c.Op]++
		if c.HostCopy > 0 && (res.HostCopyMS <= 0 || res.OfHostCopy <= 0) {
			t.Errorf("%s: no copy() beside it: %+v", c.Name(), res)
		}
		if res.Bytes == 0 || res.MedianMS <= 0 || res.WallMS <= 0 || res.GBps <= 0 || res.CopyGBps <= 0 || res.FractionOfCopy <= 0 {
			t.Errorf("%s: incomplete result %+v", c.Name(), res)
		}
		if res.Device != d.String() || res.Op != c.Op || res.DType != c.DType.String() || !c.Shape.Equal(res.Shape) {
			t.Errorf("%s: result names %s/%s/%s%v on %q", c.Name(), res.Op, res.Pattern, res.DType, res.Shape, res.Device)
		}
		switch {
		case !c.HasRef():
			if res.Agree != nil {
				t.Errorf("%s: compared without a cpuref form", c.Name())
			}
		case res.Agree == nil || !*res.Agree:
			t.Errorf("%s: disagrees with cpuref: %s", c.Name(), res.Mismatch)
		case res.CPURefMS <= 0 || res.Speedup <= 0:
			t.Errorf("%s: cpuref %v ms, speedup %v", c.Name(), res.CPURefMS, res.Speedup)
		}
	}
	want := map[string]int{"select": 4 * len(DefaultDTypes), "where": 2 * len(DefaultDTypes), "reduce-or": 7, "reduce-and": 7,
		"greater": 2, "is-nan": 2, "logical-and": 1, "upload": 5, "download": 4, "copy": 1, "offload": 6}
	for op, n := range want {
		if ops[op] != n {
			t.Errorf("%d %s cases, want %d", ops[op], op, n)
		}
	}
	if got := len(r.Copies()); got != len(cases) {
		t.Errorf("%d copy baselines for %d cases", got, len(cases))
	}
}

// The default size gives the shapes the issue names, and bytes count
// every operand once plus the output.
func TestDefaultShapes(t *testing.T) {
	want := map[string]uint64{
		"select/same/f32[16777216]":               13 << 24,
		"select/cond-col/f32[16384 1024]":         12<<24 + 1<<14,
		"select/cond-row/f32[16384 1024]":         12<<24 + 1<<10,
		"select/general-4d/f32[16 1024 64 16]":    8<<24 + 1<<10 + 4<<14,
		"where/scalar-else/f32[16777216]":         9 << 24,
		"where/scalars/f32[16777216]":             5 << 24,
		"select/same/bool[16777216]":              4 << 24,
		"reduce-or/axis1/bool[4096 16384]":        1<<26 + 4096,
		"reduce-or/axis0/bool[4096 16384]":        1<<26 + 16384,
		"reduce-or/all/bool[4096 16384]":          1<<26 + 1,
		"reduce-or/axes13-keep/bool[64 64 64 64]": 1<<24 + 64*64,
		"reduce-and/axis1/bool[4096 16384]":       1<<26 + 4096,
		"reduce-and/axis1-3d/bool[256 256 256]":   1<<24 + 1<<16,
		"reduce-or/axes02-3d/bool[256 256 256]":   1<<24 + 256,
		"reduce-or/axis1-sparse/bool[4096 16384]": 1<<26 + 4096,
		"upload/-/u8[67108864]":                   1 << 26,
		"copy/-/u8[67108864]":                     2 << 26,
		"select/general-4d/i8[16 1024 64 16]":     2<<24 + 1<<10 + 1<<14,
		"where/scalar-else/bf16[16777216]":        5 << 24,
		"select/cond-row/f16[16384 1024]":         6<<24 + 1<<10,
		"select/same/i8[16777216]":                4 << 24,
		"where/scalars/bool[16777216]":            2 << 24,
		"greater/same/f32[16777216]":              9 << 24,
		"greater/bcast-row/f32[16384 1024]":       5<<24 + 4<<10,
		"is-nan/same/f16[16777216]":               3 << 24,
		"logical-and/same/bool[16777216]":         3 << 24,
	}
	got := map[string]uint64{}
	for _, c := range Suite(DefaultSize, DefaultDTypes) {
		got[c.Name()] = c.Bytes
	}
	for name, b := range want {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("no case %s", name)
		case g != b:
			t.Errorf("%s: %d bytes, want %d", name, g, b)
		}
	}
}

// Small sizes keep four real dimensions; odd powers of two still divide.
func TestShapesAtEverySize(t *testing.T) {
	for n := MinSize; n <= MaxSize; n *= 2 {
		for _, c := range append(Select(n, tensor.F32), Reduce(n)...) {
			want := n
			if strings.HasPrefix(c.Op, "reduce-") && len(c.Shape) == 2 {
				want = 4 * n
			}
			if got := c.Shape.NumElements(); got != want {
				t.Errorf("size %d: %s has %d elements, want %d", n, c.Name(), got, want)
			}
			if c.Pattern == "general-4d" {
				for _, dim := range c.Shape {
					if dim < 2 {
						t.Errorf("size %d: %s has a dimension of 1", n, c.Name())
					}
				}
			}
		}
	}
}

func TestCheckSize(t *testing.T) {
	for _, n := range []int{MinSize, 1 << 20, MaxSize} {
		if err := CheckSize(n); err != nil {
			t.Errorf("CheckSize(%d): %v", n, err)
		}
	}
	for _, n := range []int{0, -4096, 512, 3000, MaxSize * 2} {
		if CheckSize(n) == nil {
			t.Errorf("CheckSize(%d) accepted it", n)
		}
	}
}

// Compare reports a difference, where it is, and a shape that differs.
func TestCompareFindsMismatch(t *testing.T) {
	d := devtest.Open(t, device.Options{CacheDir: cacheDir})
	host := func(shape tensor.Shape, data ...byte) *tensor.Host {
		return &tensor.Host{DType: tensor.I16, Shape: shape, Data: data}
	}
	for _, tc := range []struct {
		got, want *tensor.Host
		msg       string
	}{
		{host(tensor.Shape{2}, 1, 2, 3, 4), host(tensor.Shape{2}, 1, 2, 3, 5), "element 1 differs: device 03 04, cpuref 03 05"},
		{host(tensor.Shape{2}, 1, 2, 3, 4), host(tensor.Shape{2, 1}, 1, 2, 3, 4), "device gave i16[2], cpuref i16[2 1]"},
	} {
		c := &Case{Op: "fake", check: func(*device.Device) (*tensor.Host, *tensor.Host, float64, error) {
			return tc.got, tc.want, 1, nil
		}}
		res, err := Compare(d, c)
		if err != nil {
			t.Fatal(err)
		}
		if res.Agree || res.Mismatch != tc.msg {
			t.Errorf("Compare: agree %v, %q; want a mismatch %q", res.Agree, res.Mismatch, tc.msg)
		}
	}
	if _, err := Compare(d, Copy(16)); err == nil {
		t.Error("Compare of a case without cpuref form succeeded")
	}
}

func TestPerOpAndFirstCalls(t *testing.T) {
	d := devtest.Open(t, device.Options{CacheDir: cacheDir})
	per, err := MeasurePerOp(d, 20)
	if err != nil {
		t.Fatal(err)
	}
	if per.Ops != 20 || per.BatchedUS <= 0 || per.SubmitEachUS <= 0 || per.Dispatches != 1 ||
		per.FloorUS <= 0 || per.FloorChainedUS <= 0 || per.Ratio <= 0 {
		t.Errorf("MeasurePerOp: %+v", per)
	}
	cases := FirstCallCases(MinSize)
	picked := []*Case{cases[0], cases[len(cases)-1]}
	// In this process, each run on a device of its own with the runner's
	// cache directory: Mesa reads its variables as it loads, so they are
	// left to the fresh processes of vkops bench.
	var envs [][]string
	run := func(c *Case, n int, env []string) (FirstRun, error) {
		envs = append(envs, env)
		opts := device.Options{
			CacheDir:     strings.TrimPrefix(env[0], "VKOPS_CACHE_DIR="),
			Validation:   true,
			OnValidation: func(sev, msg string) { t.Errorf("validation %s: %s", sev, msg) },
		}
		return MeasureFirst(opts, c, 1)
	}
	first, err := FirstCalls(run, MinSize, picked)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != len(picked) || len(envs) != 3*len(picked) {
		t.Fatalf("FirstCalls: %+v, %d runs", first, len(envs))
	}
	for i, f := range first {
		if f.Case != picked[i].Name() || f.ColdMS <= 0 || f.WarmMS <= 0 || f.SteadyMS <= 0 || f.CacheBytes <= 0 {
			t.Errorf("FirstCalls: %+v", f)
		}
	}
	if got := strings.Join(envs[0][1:], " "); !strings.HasSuffix(got, "MESA_SHADER_CACHE_DISABLE=true") {
		t.Errorf("the cold run's environment: %q", envs[0])
	}
	names := map[string]bool{}
	for _, c := range cases {
		names[c.Op+"/"+c.Pattern] = true
	}
	if len(names) != 9+len(chainPatterns) || !names["select/same"] || !names["reduce-or/axis0"] || !names["reduce-and/axis1"] ||
		!names["greater/same"] || !names["chain/relu"] || !names["chain/nan-check"] {
		t.Errorf("FirstCallCases: %v", names)
	}
}

func TestPlot(t *testing.T) {
	var results, copies []Result
	for _, n := range []uint64{1 << 12, 1 << 14, 1 << 16} {
		results = append(results,
			Result{Op: "select", Pattern: "same", DType: "f32", Bytes: 13 * n, GBps: float64(n) / 1e4},
			Result{Op: "select", Pattern: "same", DType: "i8", Bytes: 4 * n, GBps: float64(n) / 2e4},
			Result{Op: "upload", DType: "u8", Bytes: 4 * n, GBps: 3},
			// Peers draw on the panel's first element type only.
			Result{Peer: "numpy", Op: "select", Pattern: "same", DType: "f32", Bytes: 13 * n, GBps: 2},
			Result{Peer: "torch", Op: "select", Pattern: "same", DType: "i8", Bytes: 4 * n, GBps: 2},
			Result{Peer: "torch", Op: "reduce-or", Pattern: "axis0", DType: "bool", Bytes: n, GBps: 2})
		copies = append(copies, Result{Op: "copy", Bytes: 13 * n, GBps: float64(n) / 5e3})
	}
	dir := t.TempDir()
	for ext, magic := range map[string]string{".png": "\x89PNG", ".svg": "<?xml"} {
		file := filepath.Join(dir, "bench"+ext)
		if err := Plot(file, "test", results, copies); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte(magic)) {
			t.Errorf("%s starts %q", file, b[:min(len(b), 8)])
		}
		if ext == ".svg" && (!strings.Contains(string(b), "select/same") || !strings.Contains(string(b), "transfers")) {
			t.Errorf("%s lacks its panel titles", file)
		}
		if ext == ".svg" && (!strings.Contains(string(b), "numpy f32") || strings.Contains(string(b), "torch i8") ||
			strings.Contains(string(b), "reduce-or")) {
			t.Errorf("%s: want a line numpy f32, and no line of a second type or panel of the peers alone", file)
		}
	}
	if err := Plot(filepath.Join(dir, "bench.jpg"), "test", results, copies); err == nil {
		t.Error("Plot wrote a .jpg")
	}
	if err := Plot(filepath.Join(dir, "empty.png"), "test", nil, nil); err == nil {
		t.Error("Plot drew no results without an error")
	}
}

// Reductions run on data that makes every byte count unless the pattern
// names early exit, and each case says which data it has.
func TestReduceData(t *testing.T) {
	for _, c := range Reduce(DefaultSize) {
		want := map[string]string{"reduce-or": "all-false", "reduce-and": "all-true"}[c.Op]
		if strings.HasSuffix(c.Pattern, "-sparse") {
			want = map[string]string{"reduce-or": "sparse-true (early exit)", "reduce-and": "sparse-false (early exit)"}[c.Op]
		}
		if want == "" || c.Data != want {
			t.Errorf("%s: data %q, want %q", c.Name(), c.Data, want)
		}
	}
	for _, c := range Select(MinSize, tensor.Bool) {
		if c.Data != "" {
			t.Errorf("%s: data %q, want random", c.Name(), c.Data)
		}
	}
}

// A case whose result is wrong fails, though it was timed.
func TestWrongResultFails(t *testing.T) {
	d := devtest.Open(t, device.Options{CacheDir: cacheDir})
	c := &Case{Op: "fake", DType: tensor.U8, HostOnly: true}
	c.Setup = func(*device.Device) (func() error, func(), error) {
		c.verify = func() error { return errors.New("element 3 is 4, want 5") }
		return func() error { return nil }, func() {}, nil
	}
	_, err := Run(d, c, Options{Warmup: 1, Runs: 1})
	if err == nil || !strings.Contains(err.Error(), "wrong result: element 3") {
		t.Errorf("Run of a case with a wrong result: %v", err)
	}
}

// The offload's data is the one bench/peers.py makes: the first conds
// of splitmix64, then i and else -(i+1); the first offload of a process
// and the ones after it are checked and timed.
func TestOffloadDataAndCold(t *testing.T) {
	o := newOffloadData(MinSize)
	want := []bool{true, false, false, true, false, false, false, true, false, true, false, true, true, true, true, true}
	if !slices.Equal(o.cond[:16], want) || o.then[5] != 5 || o.els[5] != -6 {
		t.Errorf("offload data: cond %v, then[5] %v, else[5] %v", o.cond[:16], o.then[5], o.els[5])
	}
	devtest.Open(t, device.Options{}) // skips where there is no device
	for _, path := range []string{"whole", "wrap"} {
		res, err := MeasureCold(device.Options{CacheDir: cacheDir, Validation: true,
			OnValidation: func(sev, msg string) { t.Errorf("validation %s: %s", sev, msg) }}, MinSize, 2, path)
		if errors.Is(err, ErrSkip) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if res.ColdMS <= 0 || res.WarmMS <= 0 || res.Ratio <= 0 || res.Path != path || res.Shape[0] != MinSize {
			t.Errorf("MeasureCold: %+v", res)
		}
	}
	if _, err := MeasureCold(device.Options{}, MinSize, 1, "nosuchpath"); err == nil {
		t.Error("MeasureCold by no path succeeded")
	}
}

// BenchmarkChainRandomShapes runs the chains without a mask, fused and
// unfused, on f32 data of seeded random shapes beyond the suite's: ranks
// 1 to 4, lengths odd where they can be, 4M to 16M elements. Each
// iteration runs both, in turn, as vkops bench does (checked after
// timing); the metric is the median of the iterations' unfused over
// fused wall times.
//
//	go test ./bench -run X -bench ChainRandomShapes -benchtime 3x
func BenchmarkChainRandomShapes(b *testing.B) {
	d := devtest.Open(b, device.Options{CacheDir: cacheDir})
	rng := rand.New(rand.NewPCG(34, 35))
	for range 4 {
		xs := randomChainShape(rng)
		for _, p := range chainPatterns {
			if p.masked {
				continue
			}
			b.Run(fmt.Sprintf("%s/%v", p.name, xs), func(b *testing.B) {
				fused, unfused := p.caseOn(xs, nil, tensor.F32, true), p.caseOn(xs, nil, tensor.F32, false)
				var ratios []float64
				for b.Loop() {
					wall := wallsInTurn(b, d, fused, unfused)
					ratios = append(ratios, wall[1]/wall[0])
				}
				b.ReportMetric(median(ratios), "unfused/fused")
			})
		}
	}
}

// BenchmarkChainSegments runs issue 39's chain of 8 ops and 3 scalars
// (clampNaNInf) on f32 [4096 4096], fused in two kernels and unfused, in
// turn in each iteration as BenchmarkChainRandomShapes does; the metric
// is the median of the iterations' unfused over fused wall times.
//
//	go test ./bench -run X -bench ChainSegments -benchtime 5x
func BenchmarkChainSegments(b *testing.B) { benchFusedAgainstOps(b, clampNaNInf) }

// BenchmarkChainColumnFold runs issue 38's per-column NaN check
// (nanColumns) on f32 [4096 4096] as BenchmarkChainSegments runs its
// chain: fused, one kernel that folds down the columns; unfused, IsNaN's
// mask written and reduced.
//
//	go test ./bench -run X -bench ChainColumnFold -benchtime 5x
func BenchmarkChainColumnFold(b *testing.B) { benchFusedAgainstOps(b, nanColumns) }

// benchFusedAgainstOps runs pattern p on f32 [4096 4096], fused and
// unfused, in turn in each iteration, and reports the median of the
// iterations' unfused over fused wall times and each median.
func benchFusedAgainstOps(b *testing.B, p chainPattern) {
	d := devtest.Open(b, device.Options{CacheDir: cacheDir})
	xs := tensor.Shape{4096, 4096}
	fused, unfused := p.caseOn(xs, nil, tensor.F32, true), p.caseOn(xs, nil, tensor.F32, false)
	var ratios []float64
	var walls [2][]float64
	for b.Loop() {
		wall := wallsInTurn(b, d, fused, unfused)
		for i := range wall {
			walls[i] = append(walls[i], wall[i])
		}
		ratios = append(ratios, wall[1]/wall[0])
	}
	b.ReportMetric(median(ratios), "unfused/fused")
	b.ReportMetric(median(walls[0]), "fused-ms")
	b.ReportMetric(median(walls[1]), "unfused-ms")
}

// wallsInTurn runs fused, then unfused, five runs each, and returns
// their wall times.
func wallsInTurn(b *testing.B, d *device.Device, fused, unfused *Case) [2]float64 {
	var wall [2]float64
	for i, c := range []*Case{fused, unfused} {
		res, err := Run(d, c, Options{Runs: 5})
		if err != nil {
			b.Fatal(err)
		}
		wall[i] = res.WallMS
	}
	return wall
}

// randomChainShape returns a shape of rank 1 to 4 and 4M to 16M
// elements, its outer lengths 2 to 64 and the innermost odd.
func randomChainShape(rng *rand.Rand) tensor.Shape {
	n := 4<<20 + rng.IntN(12<<20)
	shape := make(tensor.Shape, 1+rng.IntN(4))
	for i := range len(shape) - 1 {
		shape[i] = 2 + rng.IntN(63)
		n /= shape[i]
	}
	shape[len(shape)-1] = n | 1
	return shape
}
