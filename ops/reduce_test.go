package ops

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/shaders/spec"
	"github.com/vkops/vkops/tensor"
)

// withTuning runs the test with tu as the tuning of every device.
func withTuning(t testing.TB, tu reduceTune) {
	old, oldGPU := reduceTuning, reduceTuningGPU
	reduceTuning, reduceTuningGPU = tu, tu
	t.Cleanup(func() { reduceTuning, reduceTuningGPU = old, oldGPU })
}

// reduceAgainstCPU reduces h over every subset of its axes on d, Or and
// And, with and without keep_dims, and fails t where the device and
// cpuref differ. It returns the number of cases.
func reduceAgainstCPU(t *testing.T, d *device.Device, h *tensor.Host) int {
	t.Helper()
	x, err := bridge.Device(d).Upload(h)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	r, cases := h.Shape.Rank(), 0
	for mask := range 1 << r {
		var axes []int
		for a := range r {
			if mask>>a&1 == 1 {
				axes = append(axes, a)
			}
		}
		for _, and := range []bool{false, true} {
			for _, keep := range []bool{false, true} {
				dev, host := ReduceLogicalOr, cpuref.ReduceLogicalOr
				if and {
					dev, host = ReduceLogicalAnd, cpuref.ReduceLogicalAnd
				}
				want, err := host(h, axes, keep)
				if err != nil {
					t.Fatal(err)
				}
				y, err := dev(bridge.UserTensor(x), axes, KeepDims(keep))
				if err != nil {
					t.Fatalf("%v axes %v and %v: %v", h.Shape, axes, and, err)
				}
				got, err := bridge.Tensor(y).Download()
				y.Free()
				if err != nil {
					t.Fatal(err)
				}
				if !got.Shape.Equal(want.Shape) || string(got.Data) != string(want.Data) {
					t.Fatalf("%v axes %v and %v keep_dims %v: device and cpuref differ", h.Shape, axes, and, keep)
				}
				cases++
			}
		}
	}
	return cases
}

func randomBools(rng *rand.Rand, shape tensor.Shape, every int) *tensor.Host {
	h, err := tensor.New(tensor.Bool, shape)
	if err != nil {
		panic(err)
	}
	for i := range h.Data {
		if rng.IntN(every) == 0 {
			h.Data[i] = byte(1 + rng.IntN(255))
		}
	}
	return h
}

// With splitting forced (rows in chunks of 16 bytes, columns in blocks of
// a few rows, short rows and columns several to an invocation,
// workgroups of 4) and 4 KiB pages, outputs are combined with atomics
// into filled words everywhere, by subgroups where the variant can; the
// results must not change. The variants take the shapes in turn
// (reduceVariantsInTurn), each at every density.
func TestReduceForcedSplits(t *testing.T) {
	withTuning(t, reduceTune{groupSize: 4, target: 1 << 20, minWork: 16, minChunk: 16, vecs: 3})
	d := devtest.Open(t, device.Options{PageSize: 4096})
	reduceVariantsInTurn(t, d, func(t *testing.T, mine func(int) bool) {
		rng := rand.New(rand.NewPCG(2, 8))
		cases := 0
		for si, shape := range []tensor.Shape{
			{5000}, {3, 1700}, {1700, 3}, {64, 80}, {80, 64}, {7, 33, 48}, {48, 33, 7}, {3, 4, 5, 6}, {9, 16, 3, 32},
		} {
			for _, every := range []int{2, 100, 1 << 20} {
				if mine(si) {
					cases += reduceAgainstCPU(t, d, randomBools(rng, shape, every))
				}
			}
		}
		t.Logf("%d cases", cases)
	})
}

// The GPU tuning, which splits rows and columns many ways, agrees with
// cpuref on any device, lavapipe included: a test of the tuning's plans,
// not a measurement. The variants take the shapes in turn
// (reduceVariantsInTurn), each at both densities.
func TestReduceGPUTuning(t *testing.T) {
	withTuning(t, reduceTuningGPU)
	d := devtest.Open(t, device.Options{})
	reduceVariantsInTurn(t, d, func(t *testing.T, mine func(int) bool) {
		rng := rand.New(rand.NewPCG(3, 9))
		cases := 0
		for si, shape := range []tensor.Shape{
			{200000}, {64, 5000}, {5000, 64}, {3, 70000}, {70000, 3}, {16, 16, 4000}, {40, 300, 40}, {1537, 96},
		} {
			for _, every := range []int{3, 1 << 20} {
				if mine(si) {
					cases += reduceAgainstCPU(t, d, randomBools(rng, shape, every))
				}
			}
		}
		t.Logf("%d cases", cases)
	})
}

// Rows of every whole number of vectors up to past reduceMaxRowVecs,
// which the straight-line path reads one invocation a row, agree with
// cpuref: the data sparse, so that a single odd byte decides a row, and
// dense. Each length builds its own pipelines, slowly (a portable one
// took lavapipe about a second): a few lengths, which the variants take
// in turn (reduceVariantsInTurn).
func TestReduceRowVecs(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	reduceVariantsInTurn(t, d, func(t *testing.T, mine func(int) bool) {
		rng := rand.New(rand.NewPCG(3, 11))
		cases := 0
		ks := []int{1, 2, 15, 16, 17, 32, reduceMaxRowVecs - 1, reduceMaxRowVecs, reduceMaxRowVecs + 1}
		for ki, k := range ks {
			for _, every := range []int{3, 500} {
				if mine(ki) {
					cases += reduceAgainstCPU(t, d, randomBools(rng, tensor.Shape{9, 16 * k}, every))
				}
			}
		}
		t.Logf("%d cases", cases)
	})
}

// Outer passes over rows that are not whole vectors are regrouped into
// two passes, the first over aligned rows (with a tail of rows where the
// groups do not divide them), and still agree with cpuref,
// the variants taking the shapes in turn; with minRegroup 0 small
// tensors are regrouped too.
func TestReduceRegroup(t *testing.T) {
	p := func(b, r, c uint64) reducePass { return reducePass{b: b, r: r, c: c} }
	tu := reduceTuning
	tu.minRegroup = 0
	for _, c := range []struct {
		in   reducePass
		want []reducePass
	}{
		{p(1, 8192, 1537), []reducePass{p(1, 512, 16*1537), p(1, 16, 1537)}},
		{p(3, 96, 6), []reducePass{p(3, 12, 48), p(3, 8, 6)}},
		{p(1, 60, 6), []reducePass{{b: 1, r: 7, c: 48, tail: 24}, p(1, 12, 6)}}, // 8 does not divide 60: a tail of 4 rows
		{p(2, 60, 6), []reducePass{p(2, 60, 6)}},                                // nor does it with several batches
		{p(1, 24, 6), []reducePass{p(1, 24, 6)}},                                // fewer than four groups of 8
		{p(2, 64, 32), []reducePass{p(2, 64, 32)}},                              // aligned already
		{p(64, 64, 1), []reducePass{p(64, 64, 1)}},                              // inner
	} {
		if got := tu.regroup(nil, []reducePass{c.in}); !slices.Equal(got, c.want) {
			t.Errorf("regroup(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if got := reduceTuning.regroup(nil, []reducePass{p(1, 64, 3)}); !slices.Equal(got, []reducePass{p(1, 64, 3)}) {
		t.Errorf("regroup of 192 bytes with the default tuning: %v", got)
	}
	withTuning(t, tu)
	d := devtest.Open(t, device.Options{})
	reduceVariantsInTurn(t, d, func(t *testing.T, mine func(int) bool) {
		rng := rand.New(rand.NewPCG(4, 12))
		cases := 0
		for si, shape := range []tensor.Shape{{64, 3}, {2, 96, 6}, {128, 5, 7}, {5, 64, 2, 9}, {256, 12}, {100, 3}, {3, 70, 6}} {
			for _, every := range []int{2, 300} {
				if mine(si) {
					cases += reduceAgainstCPU(t, d, randomBools(rng, shape, every))
				}
			}
		}
		t.Logf("%d cases", cases)
	})
}

// reduceVariantsInTurn runs f as variantsInTurn does over the reduce
// families' variants by name (reduceVariants).
func reduceVariantsInTurn(t *testing.T, d *device.Device, f func(t *testing.T, mine func(turn int) bool)) {
	variantsInTurn(t, d, reduceVariants(), f)
}

// reduceVariants returns a variant for each name among the reduce
// families' variants, which a device can run where each family's variant
// of that name can. Forcing the name forces it in each family that has
// it, the portable variant in the others.
func reduceVariants() []*variant {
	var vs []*variant
	for _, fam := range reduceFamilies {
		for _, v := range fam.variants {
			if slices.ContainsFunc(vs, func(w *variant) bool { return w.name == v.name }) {
				continue
			}
			name := v.name
			vs = append(vs, &variant{name: name, needs: func(d *device.Device) bool {
				for _, fam := range reduceFamilies {
					for _, v := range fam.variants {
						if v.name == name && !v.eligible(d) {
							return false
						}
					}
				}
				return true
			}})
		}
	}
	return vs
}

// forEachReduceVariant runs f as subtest variant=NAME for every variant
// of the reduce families that d can run, with $VKOPS_VARIANT forcing it.
func forEachReduceVariant(t *testing.T, d *device.Device, f func(t *testing.T)) {
	var names []string
	for _, fam := range reduceFamilies {
		for _, v := range fam.variants {
			if !slices.Contains(names, v.name) {
				names = append(names, v.name)
			}
		}
	}
	for _, name := range names {
		t.Run("variant="+name, func(t *testing.T) {
			for _, fam := range reduceFamilies {
				for _, v := range fam.variants {
					if v.name == name && !v.eligible(d) {
						t.Skipf("SKIP: %s lacks what %s needs", d, fam.key+"/"+name)
					}
				}
			}
			t.Setenv("VKOPS_VARIANT", name)
			f(t)
		})
	}
}

// Workgroups of one invocation make dispatches of more than 65535
// workgroups with small tensors: the 3-D grid must cover each exactly,
// with any variant.
func TestReduceManyWorkgroups(t *testing.T) {
	withTuning(t, reduceTune{groupSize: 1, target: 4096, minWork: 1, minChunk: 16 << 10, vecs: 8})
	d := devtest.Open(t, device.Options{})
	forEachReduceVariant(t, d, func(t *testing.T) { testReduceManyWorkgroups(t, d) })
}

func testReduceManyWorkgroups(t *testing.T, d *device.Device) {
	rng := rand.New(rand.NewPCG(6, 1))
	cases := 0
	for _, c := range []struct {
		shape tensor.Shape
		axes  []int
	}{
		{tensor.Shape{4*70000 + 3, 3}, []int{1}}, // inner: a word of output per invocation
		{tensor.Shape{4*70000 + 1}, nil},         // identity: a word per invocation
		{tensor.Shape{2, 16 * 70000}, []int{0}},  // outer, vectors: 16 bytes per invocation
		{tensor.Shape{2, 4 * 70001}, []int{0}},   // outer, words
	} {
		h := randomBools(rng, c.shape, 3)
		for _, and := range []bool{false, true} {
			dev, host := ReduceLogicalOr, cpuref.ReduceLogicalOr
			if and {
				dev, host = ReduceLogicalAnd, cpuref.ReduceLogicalAnd
			}
			want, err := host(h, c.axes, false)
			if err != nil {
				t.Fatal(err)
			}
			x, err := bridge.Device(d).Upload(h)
			if err != nil {
				t.Fatal(err)
			}
			y, err := dev(bridge.UserTensor(x), c.axes)
			if err != nil {
				t.Fatal(err)
			}
			got, err := bridge.Tensor(y).Download()
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Data) != string(want.Data) {
				t.Errorf("%v axes %v and %v: device and cpuref differ", c.shape, c.axes, and)
			}
			x.Free()
			y.Free()
			cases++
		}
	}
	t.Logf("%d cases", cases)
}

// reducePlanString plans a reduction of shape over reduced with tuning
// tu, as reducer.run does on pages of page bytes, and prints each pass's
// first kernel launch: "[B R C] class n=... ...; ...", a pass with a
// tail as "[B R C]+tail".
func reducePlanString(tu reduceTune, page uint64, shape tensor.Shape, reduced []bool) string {
	t := target{page: page, align: 16, grid: [3]uint32{65535, 65535, 65535}}
	var plan []string
	for _, p := range tu.regroup(nil, reducePasses(nil, reduceCollapse(nil, shape, reduced))) {
		for _, ln := range tu.planPass(nil, p, &t, reduceOrOp) {
			if ln.kind == launchKernel {
				tail := ""
				if p.tail > 0 {
					tail = fmt.Sprintf("+%d", p.tail)
				}
				plan = append(plan, fmt.Sprintf("%v%s %s", []uint64{p.b, p.r, p.c}, tail, reduceLaunchString(&ln)))
				break
			}
		}
	}
	return strings.Join(plan, "; ")
}

// reduceLaunchString describes a reduction's kernel launch: its class,
// invocations and the constants that choose how it reads.
func reduceLaunchString(ln *launch) string {
	if ln.class == reduceSmallClass {
		return fmt.Sprintf("%v n=%d %s", ln.class, ln.invocations, spec.ReducePathName(ln.spec[spec.RPath]))
	}
	if ln.class == reduceCols {
		o := (*spec.ReduceOuterPush)(unsafe.Pointer(&ln.push))
		s := fmt.Sprintf("%v n=%d perInv=%d blocks=%d vec=%d vecs=%d", ln.class, ln.invocations, o.PerInv, o.Blocks,
			ln.spec[spec.RVec], ln.spec[spec.RVecs])
		if ln.spec[spec.RShort] != 0 {
			s += " short"
		}
		return s
	}
	in := (*spec.ReduceInnerPush)(unsafe.Pointer(&ln.push))
	return fmt.Sprintf("%v n=%d perInv=%d chunks=%d %s", ln.class, ln.invocations, in.PerInv, in.Chunks, spec.ReducePathName(ln.spec[spec.RPath]))
}

// lavapipeLoopMax is the most loop iterations lavapipe runs in an
// invocation, of all its loops together: past it every loop exits,
// silently (gallivm's LP_MAX_TGSI_LOOP_ITERATIONS, Mesa 22.3).
const lavapipeLoopMax = 65535

// ownsRight reports whether a reduction launch sets reduce_outer.glsl's
// OWNED exactly where its invocations store their output vectors: a
// launch of the vector path whose rows are all its own and not split
// into blocks. Set elsewhere, shared outputs would be overwritten; unset
// there, its pipeline would compile atomics it never runs.
func ownsRight(ln *launch) bool {
	if ln.class != reduceCols {
		return ln.spec[spec.ROwned] == 0
	}
	o := (*spec.ReduceOuterPush)(unsafe.Pointer(&ln.push))
	owns := ln.spec[spec.RVec] == 1 && o.Blocks == 1 && o.Whole == 1
	return (ln.spec[spec.ROwned] == 1) == owns
}

// reduceLoopBound returns an upper bound on the loop iterations one
// invocation of reduction launch ln runs, from its kernel's loops:
// reduce_small.glsl's, reduce_inner.glsl's (with STEP 4, the storage
// buffer variant's, the more iterations) and reduce_outer.glsl's.
func reduceLoopBound(ln *launch) uint64 {
	switch ln.class {
	case reduceSmallClass:
		p := (*spec.ReduceSmallPush)(unsafe.Pointer(&ln.push))
		switch ln.spec[spec.RPath] {
		case spec.ReducePathSmallVecs:
			return 4 + 4*(uint64(p.Rows)/16+2) // four rows, a vector at a time
		case spec.ReducePathSmallRows:
			return 4 + 4*(uint64(p.Rows)/4+2) // four rows, a word at a time
		}
		return 4 + 4*(uint64(p.Rows)+2) // four columns, PATH_SMALL_BYTES's row a byte at a time
	case reduceCols:
		p := (*spec.ReduceOuterPush)(unsafe.Pointer(&ln.push))
		rows := uint64(p.BlockRows) + 1
		if ln.spec[spec.RVec] != 0 {
			return uint64(p.PerInv) * (1 + rows) // at least one unit a vectors() call
		}
		cspan := uint64(p.CSpan)
		runs := min(uint64(p.Batches), 16/cspan+2) // the runs of one batch's bytes in a window of 16
		if ln.spec[spec.RShort] != 0 {
			rows = uint64(p.BlockRows)/(16/cspan) + 2 + 16 // steps of whole rows, then the lanes' fold
		}
		return uint64(p.PerInv)/4*(16+runs*rows) + uint64(p.PerInv)
	case reduceGeneralClass:
		return spec.GeneralRank
	}
	p := (*spec.ReduceInnerPush)(unsafe.Pointer(&ln.push))
	row := uint64(min(p.RowLen, p.ChunkBytes))
	perRow := row/16 + 2 // PATH_VECTORS and PATH_MASKED, a vector at a time
	if ln.spec[spec.RLong] != 0 {
		perRow = row/16/4 + 4 + 2 // STEP vectors at a time, then the rest
	}
	if ln.spec[spec.RPath] == spec.ReducePathShort {
		perRow = row/4 + 2 // the four rows' words, each once: a quarter of them each
	}
	return uint64(p.PerInv) * (1 + 4*perRow)
}

// Each profile plans the benchmark shapes as its tuning intends: on the
// CPU profile one pass per reduced dimension, the vector path across
// aligned rows, long rows whole and short ones several to an
// invocation; on the GPU profile many more invocations, each reading
// little. Both profiles' plans run on lavapipe in the other tests.
func TestReducePlanChoices(t *testing.T) {
	for _, c := range []struct {
		shape    tensor.Shape
		reduced  []bool
		cpu, gpu string
	}{
		{tensor.Shape{4096, 16384}, []bool{false, true},
			"[4096 16384 1] rows n=1024 perInv=1 chunks=1 PATH_VECTORS",
			"[4096 16384 1] split n=262144 perInv=1 chunks=256 PATH_VECTORS"},
		{tensor.Shape{4096, 16384}, []bool{true, false},
			"[1 4096 16384] cols n=1024 perInv=8 blocks=8 vec=1 vecs=8",
			"[1 4096 16384] cols n=262144 perInv=1 blocks=256 vec=1 vecs=1"},
		{tensor.Shape{4096, 16384}, []bool{true, true},
			"[1 67108864 1] split n=1024 perInv=1 chunks=1024 PATH_VECTORS",
			"[1 67108864 1] split n=1048576 perInv=1 chunks=1048576 PATH_VECTORS"},
		{tensor.Shape{64, 64, 64, 64}, []bool{false, true, false, true},
			"[262144 64 1] rows n=1024 perInv=64 chunks=1 PATH_ROWVECS; [64 64 64] cols n=256 perInv=1 blocks=1 vec=1 vecs=1",
			"[262144 64 1] rows n=65536 perInv=1 chunks=1 PATH_ROWVECS; [64 64 64] cols n=1024 perInv=1 blocks=4 vec=1 vecs=1"},
		// Units of little work go several to an invocation, but a small
		// pass still takes up to target invocations; rows shorter than a
		// vector are read several at once.
		{tensor.Shape{1000, 3}, []bool{true, false},
			"[1 1000 3] cols n=1 perInv=4 blocks=1 vec=0 vecs=1 short",
			"[1 1000 3] cols n=1 perInv=4 blocks=1 vec=0 vecs=1 short"},
		{tensor.Shape{16, 1537}, []bool{true, false},
			"[1 16 1537] cols n=97 perInv=4 blocks=1 vec=0 vecs=1",
			"[1 16 1537] cols n=97 perInv=4 blocks=1 vec=0 vecs=1"},
		// Rows of a few bytes go sixteen to an output vector; size-1 axes
		// alone are rows of one byte.
		{tensor.Shape{4096, 5}, []bool{false, true},
			"[4096 5 1] rows n=2 perInv=204 chunks=1 PATH_TINY",
			"[4096 5 1] rows n=86 perInv=3 chunks=1 PATH_TINY"},
		{tensor.Shape{1, 4096}, []bool{true, false},
			"[4096 1 1] rows n=1 perInv=1024 chunks=1 PATH_TINY",
			"[4096 1 1] rows n=16 perInv=16 chunks=1 PATH_TINY"},
		// A small pass reads one vector of a row at a time, not vecs side
		// by side nor a row's vectors at once: compiling those unrolled
		// reads took longer than they save under a MiB.
		{tensor.Shape{32, 128}, []bool{true, false},
			"[1 32 128] cols n=8 perInv=1 blocks=1 vec=1 vecs=1",
			"[1 32 128] cols n=8 perInv=1 blocks=1 vec=1 vecs=1"},
		{tensor.Shape{32, 128}, []bool{false, true},
			"[32 128 1] rows n=8 perInv=1 chunks=1 PATH_VECTORS",
			"[32 128 1] rows n=8 perInv=1 chunks=1 PATH_ROWVECS"},
		// A small last pass is not split, nor many units: that would cost
		// a fill and a barrier.
		{tensor.Shape{256, 256, 256}, []bool{true, false, true},
			"[65536 256 1] rows n=1024 perInv=16 chunks=1 PATH_ROWVECS; [1 256 256] cols n=16 perInv=1 blocks=1 vec=1 vecs=1",
			"[65536 256 1] split n=65536 perInv=1 chunks=4 PATH_VECTORS; [1 256 256] cols n=256 perInv=1 blocks=16 vec=1 vecs=1"},
		{tensor.Shape{256, 256, 256}, []bool{false, true, false},
			"[256 256 256] cols n=512 perInv=8 blocks=1 vec=1 vecs=8",
			"[256 256 256] cols n=65536 perInv=1 blocks=16 vec=1 vecs=1"},
	} {
		for _, p := range []struct {
			name, want string
			prof       profile
		}{{"cpu", c.cpu, cpuProfile}, {"gpu", c.gpu, gpuProfile}} {
			if got := reducePlanString(*p.prof.reduce, 1<<27, c.shape, c.reduced); got != p.want {
				t.Errorf("%s profile: %v reduced %v:\n got %s\nwant %s", p.name, c.shape, c.reduced, got, p.want)
			}
		}
	}
}

// Each reduce family's first variant is portable; the reduction that
// measures a family plans to a single pass of that family's class only;
// and every variant the device can run measures without error, so the
// one tune stores can run here.
func TestReduceFamilies(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	for c, f := range reduceFamilies {
		if f.variants[0].needs != nil {
			t.Errorf("%s: variants[0] %s needs a device feature", f.key, f.variants[0].name)
		}
		m := reduceMeasured[c]
		ps := reducePasses(nil, reduceCollapse(nil, m.shape, m.reduced))
		tg := targetOf(d)
		for _, p := range ps {
			for _, ln := range reduceTuning.planPass(nil, p, &tg, reduceOrOp) {
				if ln.kind != launchFill && (len(ps) != 1 || ln.class != reduceClass(c)) {
					t.Errorf("%s: measuring %v reduced %v plans %d passes, a piece of class %v", f.key, m.shape, m.reduced, len(ps), ln.class)
				}
			}
		}
		for _, v := range f.variants {
			if !v.eligible(d) {
				t.Logf("%s/%s: not eligible on %s", f.key, v.name, d)
				continue
			}
			ns, err := f.measure(d, v)
			if err != nil || ns <= 0 {
				t.Errorf("%s/%s: measured %g ns, %v", f.key, v.name, ns, err)
			}
			t.Logf("%s/%s: %.2f GB/s", f.key, v.name, float64(m.shape.NumElements())/ns)
		}
		best, _, err := f.tune(d)
		if err != nil || !best.eligible(d) {
			t.Errorf("%s: tune chose %v, %v", f.key, best, err)
		}
		if name, ok := bridge.Device(d).Choice(f.key); !ok || name != best.name {
			t.Errorf("%s: stored choice %q, %v; want %s", f.key, name, ok, best.name)
		}
	}
}

// TestAxesMeaning: axes mean the same to the ops and to Expr (issue 40):
// nil and empty reduce none, AllAxes every axis, as the axes listed.
func TestAxesMeaning(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	data := []bool{false, false, true, false, false, false}
	x, err := device.FromSlice(d, data, 1, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	cases := []struct {
		name  string
		axes  []int
		keep  bool
		shape tensor.Shape
		want  []bool
	}{
		{"nil", nil, false, tensor.Shape{1, 2, 3}, data},
		{"empty", []int{}, false, tensor.Shape{1, 2, 3}, data},
		{"all", AllAxes, false, tensor.Shape{}, []bool{true}},
		{"all kept", AllAxes, true, tensor.Shape{1, 1, 1}, []bool{true}},
		{"listed", []int{0, 1, 2}, false, tensor.Shape{}, []bool{true}},
	}
	for _, c := range cases {
		var e Expr
		y, err := ReduceLogicalOr(x, c.axes, KeepDims(c.keep))
		if err != nil {
			t.Fatalf("%s: op: %v", c.name, err)
		}
		z, err := e.Eval(e.ReduceOr(e.Input(x), c.axes, KeepDims(c.keep)))
		if err != nil {
			t.Fatalf("%s: expr: %v", c.name, err)
		}
		for _, r := range []*device.Tensor{y, z} {
			got, err := device.ToSlice[bool](r)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Shape().Equal(c.shape) || !slices.Equal(got, c.want) {
				t.Errorf("%s: %v %v, want %v %v", c.name, r.Shape(), got, c.shape, c.want)
			}
			r.Free()
		}
	}
	if _, err := device.Value[bool](x); err == nil {
		t.Error("Value of six elements: no error")
	}
}

// TestAllAxesIdentity: the value AllAxes holds, given as an axis, is out
// of range, as from a command line; only AllAxes itself means every axis.
func TestAllAxesIdentity(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	x, err := device.FromSlice(d, []bool{true, false}, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	if _, err := ReduceLogicalOr(x, []int{AllAxes[0]}); !errors.Is(err, ErrInvalid) {
		t.Errorf("axis %d: %v, want ErrInvalid", AllAxes[0], err)
	}
}

// On the CPU profile a pass of at most smallMax bytes that lies in one
// page runs whole on reduce_small.glsl, an invocation an output word;
// larger passes, passes over several pages or of more than
// reduceSmallRows rows, the identity's rows of one byte and every pass
// on the GPU profile take the reading paths.
func TestReduceSmall(t *testing.T) {
	cpu, quick := shippedReduceTuning, reduceQuickTuning
	most := cpuReduceSmallMax
	for _, c := range []struct {
		tu      reduceTune
		page    uint64
		shape   tensor.Shape
		reduced []bool
		want    string
	}{
		{cpu, 1 << 27, tensor.Shape{32, 128}, []bool{false, true}, "[32 128 1] small n=8 PATH_SMALL_VECS"},
		{cpu, 1 << 27, tensor.Shape{32, 100}, []bool{false, true}, "[32 100 1] small n=8 PATH_SMALL_ROWS"},
		{cpu, 1 << 27, tensor.Shape{32, 128}, []bool{true, false}, "[1 32 128] small n=32 PATH_SMALL_WORDS"},
		{cpu, 1 << 27, tensor.Shape{30, 6}, []bool{true, false}, "[1 30 6] small n=2 PATH_SMALL_BYTES"},
		{cpu, 1 << 27, tensor.Shape{most}, []bool{true}, fmt.Sprintf("[1 %d 1] small n=1 PATH_SMALL_VECS", most)},
		{cpu, 1 << 27, tensor.Shape{4, 8, 16}, []bool{true, false, true}, "[32 16 1] small n=8 PATH_SMALL_VECS; [1 4 8] small n=2 PATH_SMALL_WORDS"},
		{cpu, 1 << 27, tensor.Shape{most + 1}, []bool{true}, fmt.Sprintf("[1 %d 1] rows n=1 perInv=1 chunks=1 PATH_MASKED", most+1)},
		// lavapipe ends an invocation's loops after 65535 iterations.
		{quick, 1 << 27, tensor.Shape{2, reduceSmallRows - 1}, []bool{false, true}, fmt.Sprintf("[2 %d 1] small n=1 PATH_SMALL_ROWS", reduceSmallRows-1)},
		{quick, 1 << 27, tensor.Shape{2, reduceSmallRows + 1}, []bool{false, true}, fmt.Sprintf("[2 %d 1] rows n=1 perInv=1 chunks=1 PATH_MASKED", reduceSmallRows+1)},
		{quick, 1 << 27, tensor.Shape{2, reduceSmallVecRows}, []bool{false, true}, fmt.Sprintf("[2 %d 1] small n=1 PATH_SMALL_VECS", reduceSmallVecRows)},
		{quick, 1 << 27, tensor.Shape{2, reduceSmallVecRows + 16}, []bool{false, true}, fmt.Sprintf("[2 %d 1] rows n=1 perInv=1 chunks=1 PATH_VECTORS", reduceSmallVecRows+16)},
		{quick, 1 << 27, tensor.Shape{reduceSmallRows, 64}, []bool{true, false}, fmt.Sprintf("[1 %d 64] small n=16 PATH_SMALL_WORDS", reduceSmallRows)},
		{quick, 1 << 27, tensor.Shape{reduceSmallRows + 1, 64}, []bool{true, false}, fmt.Sprintf("[1 %d 64] cols n=36 perInv=1 blocks=9 vec=1 vecs=1", reduceSmallRows+1)},
		{cpu, 1024, tensor.Shape{32, 64}, []bool{true, false}, "[1 32 64] cols n=4 perInv=1 blocks=1 vec=1 vecs=1"},
		{cpu, 1 << 27, tensor.Shape{7, 1, 9}, []bool{false, true, false}, "[63 1 1] rows n=1 perInv=1024 chunks=1 PATH_TINY"},
		{reduceTuningGPU, 1 << 27, tensor.Shape{32, 128}, []bool{false, true}, "[32 128 1] rows n=8 perInv=1 chunks=1 PATH_ROWVECS"},
	} {
		if got := reducePlanString(c.tu, c.page, c.shape, c.reduced); got != c.want {
			t.Errorf("%v reduced %v, smallMax %d, pages of %d:\n got %s\nwant %s", c.shape, c.reduced, c.tu.smallMax, c.page, got, c.want)
		}
	}
}

// No invocation of a planned reduction runs more loop iterations than
// lavapipe allows (lavapipeLoopMax), on the passes that push each
// kernel's loops furthest: long rows whole and split, tall columns of
// vectors and of words, several batches to a window, short rows read
// several at once, small passes. FuzzReducePlan checks the same on the
// passes it draws.
func TestReduceLoopBound(t *testing.T) {
	for _, p := range []reducePass{
		{b: 1, r: 1 << 27, c: 1}, {b: 1024, r: 1 << 17, c: 1}, {b: 2048, r: 1 << 16, c: 1},
		{b: 1 << 22, r: 31, c: 1}, {b: 1 << 23, r: 17, c: 1}, {b: 1 << 20, r: 128, c: 1},
		{b: 1, r: 1 << 23, c: 16}, {b: 1, r: 1 << 26, c: 2}, {b: 1, r: 8947848, c: 15},
		{b: 1, r: 7895160, c: 17}, {b: 1, r: 15000, c: 17}, {b: 1, r: 32760, c: 4097},
		{b: 2, r: 16380, c: 4097}, {b: 3, r: 5000, c: 7}, {b: 1, r: 3000, c: 32896},
		{b: 1, r: 4096, c: 1}, {b: 4, r: 1024, c: 1}, {b: 1, r: 1000, c: 3},
	} {
		checkReduceLaunches(t, p, 1<<27)
	}
}

// A variant forced with $VKOPS_VARIANT runs every pass that has a
// family, small ones too, so that tests of a variant reach every plan
// (and VKOPS_VARIANT=portable binds no texel buffer); unforced, the
// profile's small passes run on reduce_small.glsl.
func TestReduceSmallForced(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	p := cpuProfile
	p.reduce = &reduceQuickTuning
	forcedProfile.Store(&p)
	t.Cleanup(func() { forcedProfile.Store(nil) })
	for _, c := range []struct {
		variant string
		want    uint64
	}{{"", reduceQuickTuning.smallMax}, {"portable", 0}, {"texel", 0}} {
		t.Setenv("VKOPS_VARIANT", c.variant)
		if got := newReducer(d, reduceOrOp).tune.smallMax; got != c.want {
			t.Errorf("VKOPS_VARIANT=%q: smallMax %d, want %d", c.variant, got, c.want)
		}
	}
}

// A reduction whose plans would dispatch a pipeline new to the device
// runs the quick tuning's plans once, and its own from the next call on;
// a device whose cache directory an earlier one filled runs its own at
// once. Every call gives cpuref's bytes.
func TestReduceTiers(t *testing.T) {
	p := cpuProfile
	forcedProfile.Store(&p)
	t.Cleanup(func() { forcedProfile.Store(nil) })
	dir := t.TempDir()
	h := randomBools(rand.New(rand.NewPCG(39, 1)), tensor.Shape{64, 1024}, 1<<30)
	want, err := cpuref.ReduceLogicalOr(h, []int{0}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir   string
		tiers string
	}{{dir, "quick own own"}, {dir, "own own"}, {"-", "quick own"}} {
		d := devtest.Open(t, device.Options{CacheDir: c.dir})
		x, err := bridge.Device(d).Upload(h)
		if err != nil {
			t.Fatal(err)
		}
		r := newReducer(d, reduceOrOp)
		r.families = &reduceFamilies
		ps := r.passes(nil, h.Shape, []bool{true, false})
		var tiers []string
		for range strings.Fields(c.tiers) {
			tu := r.tuning(ps)
			tiers = append(tiers, map[bool]string{true: "quick", false: "own"}[tu == r.quick])
			y, err := bridge.Empty(d, tensor.Bool, want.Shape)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.runPasses(tu, ps, bridge.UserTensor(x), y); err != nil {
				t.Fatal(err)
			}
			got, err := bridge.Tensor(y).Download()
			y.Free()
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Data) != string(want.Data) {
				t.Fatalf("cache dir %q, call %d: device and cpuref differ", c.dir, len(tiers))
			}
		}
		x.Free()
		if got := strings.Join(tiers, " "); got != c.tiers {
			t.Errorf("cache dir %q: tunings %q, want %q", c.dir, got, c.tiers)
		}
	}
}

// The quick tuning's small passes read rows and columns as long as
// lavapipe's loops reach (reduceSmallVecRows, reduceSmallRows): a row or
// column whose only true (false, for And) is its last byte is found.
func TestReduceQuickLongRows(t *testing.T) {
	p := cpuProfile
	p.reduce, p.quick = &reduceQuickTuning, nil
	forcedProfile.Store(&p)
	t.Cleanup(func() { forcedProfile.Store(nil) })
	d := devtest.Open(t, device.Options{})
	for _, c := range []struct {
		shape tensor.Shape
		axis  int
	}{{tensor.Shape{4, reduceSmallVecRows}, 1}, {tensor.Shape{4, reduceSmallRows - 1}, 1}, {tensor.Shape{reduceSmallRows, 64}, 0}} {
		for _, op := range []*reduceOp{reduceOrOp, reduceAndOp} {
			h, err := tensor.New(tensor.Bool, c.shape)
			if err != nil {
				t.Fatal(err)
			}
			for i := range h.Data {
				h.Data[i] = uint8(b2u(op.identity))
			}
			outs := len(h.Data) / c.shape[c.axis]
			for o := 0; o < outs; o += 2 {
				i := o*c.shape[1] + c.shape[1] - 1 // the row's last byte
				if c.axis == 0 {
					i = (c.shape[0]-1)*c.shape[1] + o // the column's
				}
				h.Data[i] = uint8(b2u(!op.identity))
			}
			got, err := deviceReduce(d, op, h, []int{c.axis}, false)
			if err != nil {
				t.Fatal(err)
			}
			for o, b := range got.Data {
				if want := uint8(b2u(op.identity != (o%2 == 0))); b != want {
					t.Fatalf("%s %v over axis %d: output %d is %d, want %d", op.name, c.shape, c.axis, o, b, want)
				}
			}
		}
	}
}

// ReduceLogicalAnd tests a long row's steps by the and of their vectors
// (STEPAND in reduce_fold.glsl) and reads a step whose and has a zero
// byte again vector by vector: true bytes whose and is zero (1 and 2)
// leave a row true, and a false in such a step or after it is found.
func TestReduceAndSteps(t *testing.T) {
	forcedProfile.Store(noQuick(&cpuProfile))
	t.Cleanup(func() { forcedProfile.Store(nil) })
	d := devtest.Open(t, device.Options{})
	const rows, cols = 6, 4096
	h, err := tensor.New(tensor.Bool, tensor.Shape{rows, cols})
	if err != nil {
		t.Fatal(err)
	}
	for i := range h.Data {
		h.Data[i] = 1
	}
	row := func(r int) []byte { return h.Data[r*cols : (r+1)*cols] }
	for r := 1; r < rows; r++ {
		for j := 16; j < cols; j += 32 {
			row(r)[j] = 2 // every other vector's first byte: each step's and has a zero byte
		}
	}
	row(2)[cols-1] = 0   // a false in the last step
	row(3)[100] = 0      // in the first steps
	row(4)[cols/2+1] = 0 // in the middle, beside a 2
	row(5)[0] = 0x80     // a true that is not 1, and the row true
	want := []byte{1, 1, 0, 0, 0, 1}
	forEachReduceVariant(t, d, func(t *testing.T) {
		got, err := deviceReduce(d, reduceAndOp, h, []int{1}, false)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Data, want) {
			t.Errorf("ReduceLogicalAnd over rows: %v, want %v", got.Data, want)
		}
	})
}
