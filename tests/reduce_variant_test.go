package tests

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/npy"
	"github.com/vkops/vkops/ops"
	"github.com/vkops/vkops/tensor"
)

// reduceVariants returns the variant names of the reduce families named
// (keys such as "reduce/rows"; with none, of every reduce family), each
// once, in the order the families list them, and the ones d can run.
func reduceVariants(d *device.Device, families ...string) (all, eligible []string) {
	for _, vi := range ops.Variants(d) {
		if !strings.HasPrefix(vi.Family, "reduce/") || len(families) > 0 && !slices.Contains(families, vi.Family) {
			continue
		}
		for _, v := range vi.Variants {
			if !slices.Contains(all, v) {
				all = append(all, v)
			}
		}
		for _, v := range vi.Eligible {
			if !slices.Contains(eligible, v) {
				eligible = append(eligible, v)
			}
		}
	}
	return all, eligible
}

// forEachReduceVariant runs f as subtest variant=NAME for every variant
// of the reduce families named (with none, of every one), with
// $VKOPS_VARIANT forcing it: each must match cpuref, not only the one
// measured fastest on this device. A variant the device cannot run is
// skipped, and says so. A family without the variant forced runs its
// portable one, so a test that reaches some classes only names their
// families: forcing texel-subgroup, which only reduce/split has, where
// no dispatch is split would rerun portable.
func forEachReduceVariant(t *testing.T, families []string, f func(t *testing.T)) {
	all, eligible := reduceVariants(devtest.Open(t, device.Options{}), families...)
	for _, v := range all {
		t.Run("variant="+v, func(t *testing.T) {
			if !slices.Contains(eligible, v) {
				t.Skipf("SKIP: the device lacks what variant %s needs", v)
			}
			t.Setenv("VKOPS_VARIANT", v)
			f(t)
		})
	}
}

// reduceTurns returns turns over the variants of the reduce families
// named, as forEachReduceVariant runs them.
func reduceTurns(t *testing.T, d *device.Device, families ...string) *variantTurns {
	t.Helper()
	all, eligible := reduceVariants(d, families...)
	if len(all) == 0 {
		t.Fatalf("no reduce family of %v is registered", families)
	}
	ok := map[string]bool{}
	for _, v := range eligible {
		ok[v] = true
	}
	return newVariantTurns(t, d, all, ok)
}

// The bytes between a tensor's end and its page's end are undefined:
// here they are left true (Or) or false (And) by a tensor that used the
// same memory before, and no variant may count them. Lengths run over
// every residue modulo 16 so that the last texel is cut at every byte,
// with rows, columns and whole tensors ending there, on 4 KiB pages
// and the device's.
func TestReduceGarbagePadding(t *testing.T) {
	forEachReduceVariant(t, reduceMatrixFamilies, func(t *testing.T) {
		cases := 0
		for _, page := range []uint64{0, 4096} {
			d := devtest.Open(t, device.Options{PageSize: page})
			var shapes []tensor.Shape
			for n := range 33 {
				shapes = append(shapes, tensor.Shape{n + 1}, tensor.Shape{3, n + 1}, tensor.Shape{n + 1, 3}, tensor.Shape{2, n + 1, 5})
			}
			shapes = append(shapes, tensor.Shape{4101}, tensor.Shape{5, 4099}, tensor.Shape{4099, 5}, tensor.Shape{2, 4095, 16}, tensor.Shape{70001})
			for _, shape := range shapes {
				for _, f := range reduceFns {
					fill := byte(0)
					if f.name == "and" {
						fill = 1
					}
					h, _ := tensor.New(tensor.Bool, shape)
					for i := range h.Data {
						h.Data[i] = fill
					}
					for mask := range 1 << shape.Rank() {
						var axes []int
						for a := range shape.Rank() {
							if mask>>a&1 == 1 {
								axes = append(axes, a)
							}
						}
						x := reduceDirtyUpload(t, d, h, 1-fill)
						y, err := f.dev(x, axes)
						if err != nil {
							t.Fatal(err)
						}
						got, err := bridge.Tensor(y).Download()
						if err != nil {
							t.Fatal(err)
						}
						for i, b := range got.Data {
							if b != fill {
								t.Fatalf("page %d %s %v axes %v: output %d is %d, want %d: padding counted", page, f.name, shape, axes, i, b, fill)
							}
						}
						x.Free()
						y.Free()
						cases++
					}
				}
			}
		}
		t.Logf("%d cases", cases)
	})
}

// reduceDirtyUpload uploads h into memory that freed tensors left full
// of the byte dirt: tensors as large as each of h's pages, padding
// included, take the same size classes of the device's pool, whose
// slots are reused last freed first.
func reduceDirtyUpload(t *testing.T, d *device.Device, h *tensor.Host, dirt byte) *device.Tensor {
	t.Helper()
	var junk []*device.Tensor
	for lo, n := uint64(0), uint64(len(h.Data)); lo < n; lo += bridge.Device(d).PageSize() {
		x, err := bridge.Device(d).Empty(tensor.U8, tensor.Shape{int(min(bridge.Device(d).PageSize(), n-lo)+15) &^ 15})
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, x.Bytes())
		for i := range b {
			b[i] = dirt
		}
		if err := x.Write(b); err != nil {
			t.Fatal(err)
		}
		junk = append(junk, bridge.UserTensor(x))
	}
	for i := len(junk) - 1; i >= 0; i-- {
		junk[i].Free()
	}
	x, err := bridge.Device(d).Upload(h)
	if err != nil {
		t.Fatal(err)
	}
	return bridge.UserTensor(x)
}

// reduceBenchCases are the shapes of bench/ops.go's Reduce cases and
// bench/peers.py's.
var reduceBenchCases = []struct {
	shape tensor.Shape
	axes  []int
	keep  bool
}{
	{tensor.Shape{4096, 16384}, []int{1}, false},
	{tensor.Shape{4096, 16384}, []int{0}, false},
	{tensor.Shape{4096, 16384}, []int{0, 1}, false},
	{tensor.Shape{256, 256, 256}, []int{1}, false},
	{tensor.Shape{256, 256, 256}, []int{0, 2}, false},
	{tensor.Shape{64, 64, 64, 64}, []int{1, 3}, true},
}

// BenchmarkReduce measures ReduceLogicalOr and ReduceLogicalAnd in GB/s
// of data read, by the device's timestamps (GB/s over all runs, best-GB/s
// of the fastest) and by the wall clock (MB/s, waiting for each result):
// with each variant the device can run forced, with the variants measured
// fastest ("chosen", which the log names), and beside numpy's any() or
// all() on the same bytes, read from a file into memory of its own (where
// /usr/bin/python3 has numpy). Data is "worst", the identity of the fold
// everywhere (all false for Or, all true for And), so that every byte
// must be read, and "sparse", one element in a thousand of the other
// value, where both stop early. A family without the forced variant runs
// its portable one. Another process on the machine slows a run down,
// never speeds it up: compare the best of several runs (-count).
func BenchmarkReduce(b *testing.B) {
	d := devtest.Open(b, device.Options{})
	_, variants := reduceVariants(d)
	variants = append(variants, "chosen")
	dir := b.TempDir()
	rng := rand.New(rand.NewPCG(5, 5))
	for _, f := range reduceFns {
		for _, c := range reduceBenchCases {
			for _, data := range []string{"worst", "sparse"} {
				and := f.name == "and"
				h := reduceData(rng, c.shape, 1000, and)
				if data == "worst" {
					for i := range h.Data {
						h.Data[i] = boolByte(and)
					}
				}
				x, err := bridge.Device(d).Upload(h)
				if err != nil {
					b.Fatal(err)
				}
				path := filepath.Join(dir, "data.npy")
				if err := npy.WriteFile(path, h); err != nil {
					b.Fatal(err)
				}
				name := strings.ReplaceAll(fmt.Sprintf("%s/%v/axes=%v/keep=%v/data=%s", f.name, c.shape, c.axes, c.keep, data), " ", ",")
				b.Run(name, func(b *testing.B) {
					for _, v := range variants {
						b.Run(v, func(b *testing.B) {
							if v == "chosen" {
								b.Setenv("VKOPS_VARIANT", "")
							} else {
								b.Setenv("VKOPS_VARIANT", v)
							}
							benchReduceDevice(b, d, f, bridge.UserTensor(x), c.axes, c.keep)
							if v == "chosen" {
								b.Logf("chosen: %v", reduceChoices(d))
							}
						})
					}
					b.Run("numpy", func(b *testing.B) { benchReduceNumpy(b, f, path, c.axes, c.keep) })
				})
				x.Free()
			}
		}
	}
}

// reduceChoices returns the variants chosen for the reduce families.
func reduceChoices(d *device.Device) []string {
	var out []string
	for _, vi := range ops.Variants(d) {
		if strings.HasPrefix(vi.Family, "reduce/") {
			out = append(out, vi.Family+"="+vi.Chosen)
		}
	}
	return out
}

// benchReduceDevice reports ns/op as a caller sees it, from the call to
// the result being ready (Sync), the median run as benchReduceNumpy
// reports numpy's, and GB/s and best-GB/s from the device time of as many
// runs again.
func benchReduceDevice(b *testing.B, d *device.Device, f reduceFn, x *device.Tensor, axes []int, keep bool) {
	// A first run builds the pipelines and, for "chosen", measures the
	// variants, which must not happen inside the timed runs.
	run := func() error {
		y, err := f.dev(x, axes, ops.KeepDims(keep))
		if err != nil {
			return err
		}
		y.Free()
		return nil
	}
	if err := run(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(x.Bytes()))
	var walls []time.Duration
	for b.Loop() {
		t := time.Now()
		if err := run(); err != nil {
			b.Fatal(err)
		}
		if err := d.Sync(); err != nil {
			b.Fatal(err)
		}
		walls = append(walls, time.Since(t))
	}
	slices.Sort(walls)
	b.ReportMetric(float64(walls[len(walls)/2].Nanoseconds()), "ns/op")
	ns, best := 0.0, math.Inf(1)
	for range b.N {
		t, err := bridge.Device(d).GPUTime(run)
		if err != nil {
			b.Fatal(err)
		}
		ns += t
		best = min(best, t)
	}
	b.ReportMetric(float64(x.Bytes())*float64(b.N)/ns, "GB/s")
	b.ReportMetric(float64(x.Bytes())/best, "best-GB/s")
}

// reduceNumpy times numpy.any (argv[5] "or") or numpy.all ("and") on
// the .npy file argv[1] over axes argv[2] (comma-separated) with keepdims
// argv[3], argv[4] times after two warm-up runs, and prints each run's
// seconds.
const reduceNumpy = `
import sys, time
import numpy as np
x = np.load(sys.argv[1])
axes = tuple(int(a) for a in sys.argv[2].split(","))
keep = sys.argv[3] == "true"
fn = np.all if sys.argv[5] == "and" else np.any
for _ in range(2):
    fn(x, axis=axes, keepdims=keep)
for _ in range(int(sys.argv[4])):
    t = time.perf_counter()
    fn(x, axis=axes, keepdims=keep)
    print(time.perf_counter() - t)
`

// benchReduceNumpy reports numpy's GB/s (median run) and best-GB/s
// (fastest run) as metrics, and ns/op as numpy's median; its wall time
// includes starting Python.
func benchReduceNumpy(b *testing.B, f reduceFn, path string, axes []int, keep bool) {
	h, err := npy.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var ax []string
	for _, a := range axes {
		ax = append(ax, strconv.Itoa(a))
	}
	runs := max(b.N, 7)
	out, err := exec.Command("/usr/bin/python3", "-c", reduceNumpy, path, strings.Join(ax, ","), strconv.FormatBool(keep), strconv.Itoa(runs), f.name).Output()
	if err != nil {
		b.Skipf("SKIP: /usr/bin/python3 with numpy: %v", err)
	}
	var secs []float64
	for _, f := range strings.Fields(string(out)) {
		s, err := strconv.ParseFloat(f, 64)
		if err != nil {
			b.Fatalf("numpy printed %q", f)
		}
		secs = append(secs, s)
	}
	slices.Sort(secs)
	bytes := float64(len(h.Data))
	b.ReportMetric(secs[len(secs)/2]*1e9, "ns/op")
	b.ReportMetric(bytes/secs[len(secs)/2]/1e9, "GB/s")
	b.ReportMetric(bytes/secs[0]/1e9, "best-GB/s")
}

// BenchmarkReduceRandom measures the chosen variants on seeded random
// patterns of 16M bools, the worst case for each (the fold's identity
// everywhere): shapes of rank 1 to 4, some dimensions not powers of two,
// and random axis sets, Or and And. The suite's named cases miss slow
// patterns that these find; -benchtime 5x keeps it to a minute or two.
func BenchmarkReduceRandom(b *testing.B) {
	d := devtest.Open(b, device.Options{})
	rng := rand.New(rand.NewPCG(11, 12))
	for range 30 {
		rank := 1 + rng.IntN(4)
		shape := make(tensor.Shape, rank)
		left := 24
		for i := range shape {
			e := left
			if i < rank-1 {
				e = rng.IntN(left + 1)
			}
			shape[i] = 1 << e
			left -= e
		}
		if rng.IntN(2) == 0 {
			i := rng.IntN(rank)
			shape[i] = shape[i]*3/4 + 1
		}
		var axes []int
		for a := range rank {
			if rng.IntN(2) == 0 {
				axes = append(axes, a)
			}
		}
		if len(axes) == 0 {
			axes = []int{rng.IntN(rank)}
		}
		benchReduceWorst(b, d, reduceFns[rng.IntN(2)], shape, axes)
	}
}

// benchReduceWorst runs sub-benchmarks F/SHAPE/axes=AXES/vkops and
// .../numpy on the same worst-case data: the fold's identity everywhere.
func benchReduceWorst(b *testing.B, d *device.Device, f reduceFn, shape tensor.Shape, axes []int) {
	h, err := tensor.New(tensor.Bool, shape)
	if err != nil {
		b.Fatal(err)
	}
	for i := range h.Data {
		h.Data[i] = boolByte(f.name == "and")
	}
	x, err := bridge.Device(d).Upload(h)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Free()
	name := strings.ReplaceAll(fmt.Sprintf("%s/%v/axes=%v", f.name, shape, axes), " ", ",")
	path := filepath.Join(b.TempDir(), "data.npy")
	if err := npy.WriteFile(path, h); err != nil {
		b.Fatal(err)
	}
	b.Run(name, func(b *testing.B) {
		b.Run("vkops", func(b *testing.B) { benchReduceDevice(b, d, f, bridge.UserTensor(x), axes, false) })
		b.Run("numpy", func(b *testing.B) { benchReduceNumpy(b, f, path, axes, false) })
	})
}

// BenchmarkReduceShortRows measures the patterns BenchmarkReduceRandom
// found slowest, beside numpy on the same worst-case data: 16M bools in
// rows of 2 to 16 bytes and of a few lengths up to 1 KiB reduced over the
// last axis, and reduced over size-1 axes only, which normalises bytes
// to 0/1.
func BenchmarkReduceShortRows(b *testing.B) {
	d := devtest.Open(b, device.Options{})
	type pattern struct {
		shape tensor.Shape
		axes  []int
	}
	var ps []pattern
	for n := 2; n <= 16; n++ {
		ps = append(ps, pattern{tensor.Shape{16 << 20 / n, n}, []int{1}})
	}
	// Rows of whole vectors that the length classes read partly again.
	for _, n := range []int{80, 208, 400, 784} {
		ps = append(ps, pattern{tensor.Shape{16 << 20 / n, n}, []int{1}})
	}
	ps = append(ps, pattern{tensor.Shape{1, 16 << 20}, []int{0}}, pattern{tensor.Shape{12582913, 1}, []int{1}})
	for _, p := range ps {
		for _, f := range reduceFns {
			benchReduceWorst(b, d, f, p.shape, p.axes)
		}
	}
}
