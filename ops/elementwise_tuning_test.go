package ops

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/tensor"
)

// BenchmarkElementwiseTuning measures Select and the masks on 16M-element
// outputs with every variant, workgroup size and chunk count, and logs,
// for each case, the device time of the tuning in use and of the three
// fastest. It is how the elementwise tunings and the driver defaults of
// variant.go are checked on a device:
//
//	go test ./ops -run '^$' -bench ElementwiseTuning -benchtime 1x -v
func BenchmarkElementwiseTuning(b *testing.B) {
	d := devtest.Open(b, device.Options{})
	rng := rand.New(rand.NewPCG(4, 4))
	upload := func(dt tensor.DType, shape ...int) *device.Tensor { return benchUpload(b, d, rng, dt, shape...) }
	const n, rows, cols = 1 << 24, 1 << 14, 1 << 10
	cond, f32a, f32b, i8a, i8b := upload(tensor.Bool, n), upload(tensor.F32, n), upload(tensor.F32, n), upload(tensor.I8, n), upload(tensor.I8, n)
	condRow, f32Row, f32Mat := upload(tensor.Bool, cols), upload(tensor.F32, cols), upload(tensor.F32, rows, cols)
	cases := []struct {
		name string
		run  func() (*device.Tensor, error)
	}{
		{"select/same/f32", func() (*device.Tensor, error) { return Select(cond, f32a, f32b) }},
		{"select/same/i8", func() (*device.Tensor, error) { return Select(cond, i8a, i8b) }},
		{"select/cond-row/f32", func() (*device.Tensor, error) { return Select(condRow, f32Mat, f32Mat) }},
		{"greater/same/f32", func() (*device.Tensor, error) { return Greater(f32a, f32b) }},
		{"greater/bcast-row/f32", func() (*device.Tensor, error) { return Greater(f32Mat, f32Row) }},
		{"is-nan/f32", func() (*device.Tensor, error) { return IsNaN(f32a) }},
		{"logical-and/bool", func() (*device.Tensor, error) { return LogicalAnd(cond, cond) }},
	}
	type result struct {
		variant       string
		group, chunks int
		ns            float64
	}
	prof := profileOf(d)
	saved := *prof
	defer func() { *prof = saved }()
	// measure runs c with variant v, workgroups of group invocations and
	// chunks chunks each (0: the profile's own).
	measure := func(run func() (*device.Tensor, error), v string, group, chunks int) float64 {
		b.Setenv("VKOPS_VARIANT", v)
		*prof = saved
		if group != 0 {
			prof.group, prof.chunks = group, chunks
		}
		return fastestGPUTime(b, d, run)
	}
	for range b.N {
		for _, c := range cases {
			var all []result
			var current []string
			for _, v := range []string{"portable", "texel", "texel64"} {
				current = append(current, fmt.Sprintf("%s %.1f us", v, measure(c.run, v, 0, 0)/1e3))
				for _, group := range []int{64, 256, 1024} {
					for _, chunks := range []int{1, 2, 4, 8} {
						all = append(all, result{v, group, chunks, measure(c.run, v, group, chunks)})
					}
				}
			}
			slices.SortFunc(all, func(x, y result) int {
				if x.ns < y.ns {
					return -1
				}
				if x.ns > y.ns {
					return 1
				}
				return 0
			})
			b.Logf("%-22s in use: %v", c.name, current)
			for _, r := range all[:3] {
				b.Logf("%-22s %-8s group %4d chunks %d: %.1f us", "", r.variant, r.group, r.chunks, r.ns/1e3)
			}
		}
	}
}

// BenchmarkShortRows measures select on rows of 3 to 15 f32 elements in
// blocks of whole rows (modeRows) and element by element, in two
// patterns: then read once a row and else's rows repeating (zoo-23's),
// and cond and else read once a row (zoo-20's). It logs both device
// times, the fastest of three, for each row length; it is how the GPU profile's rowsMax was
// chosen:
//
//	go test ./ops -run '^$' -bench ShortRows -benchtime 1x -v
func BenchmarkShortRows(b *testing.B) {
	d := devtest.Open(b, device.Options{})
	rng := rand.New(rand.NewPCG(5, 5))
	upload := func(dt tensor.DType, shape ...int) *device.Tensor { return benchUpload(b, d, rng, dt, shape...) }
	prof := profileOf(d)
	saved := *prof
	defer func() { *prof = saved }()
	// measure runs select with modeRows everywhere or nowhere.
	measure := func(cond, then, els *device.Tensor, rows bool) float64 {
		*prof = saved
		prof.rowsMin, prof.rowsMax = 0, 240
		if !rows {
			prof.rowsMin = 1 << 31
		}
		return fastestGPUTime(b, d, func() (*device.Tensor, error) { return Select(cond, then, els) })
	}
	const n = 8 << 20
	for range b.N {
		for k := 3; k < 16; k++ {
			r := n / (31 * 29 * k)
			c1, t1, e1 := upload(tensor.Bool), upload(tensor.F32, r, 31, 29, 1), upload(tensor.F32, 1, 31, 1, k)
			r = n / (100 * k)
			c2, t2, e2 := upload(tensor.Bool, r, 100, 1), upload(tensor.F32, r, 100, k), upload(tensor.F32, r, 100, 1)
			b.Logf("rows of %2d (blocks of %3d): like zoo-23, by elements %.1f us, modeRows %.1f us; like zoo-20, %.1f us and %.1f us",
				k, 16*k/int(gcd(uint64(k), 16)), measure(c1, t1, e1, false)/1e3, measure(c1, t1, e1, true)/1e3,
				measure(c2, t2, e2, false)/1e3, measure(c2, t2, e2, true)/1e3)
		}
	}
}

// benchUpload returns a tensor of random dt values on d, freed when b ends.
func benchUpload(b *testing.B, d *device.Device, rng *rand.Rand, dt tensor.DType, shape ...int) *device.Tensor {
	x, err := bridge.Device(d).Upload(randomHost(rng, dt, tensor.Shape(shape)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { x.Free() })
	return bridge.UserTensor(x)
}

// fastestGPUTime returns the least device time of run in three runs,
// after one that builds its pipelines.
func fastestGPUTime(b *testing.B, d *device.Device, run func() (*device.Tensor, error)) float64 {
	best := 0.0
	for i := range 4 {
		ns, err := bridge.Device(d).GPUTime(func() error {
			y, err := run()
			if err == nil {
				y.Free()
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		if i > 0 && (best == 0 || ns < best) {
			best = ns
		}
	}
	return best
}
