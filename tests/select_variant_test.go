package tests

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/ops"
	"github.com/vkops/vkops/tensor"
)

// kernelVariants returns the variant names of op's kernel families
// (those whose keys start with op and a slash), the portable one first,
// and those the device can run. Every family of an op has the same
// variants, so forcing one by name forces it in all of them.
func kernelVariants(t testing.TB, d *device.Device, op string) (names []string, eligible map[string]bool) {
	t.Helper()
	eligible = map[string]bool{}
	for _, vi := range ops.Variants(d) {
		if !strings.HasPrefix(vi.Family, op+"/") {
			continue
		}
		if names == nil {
			names = vi.Variants
		} else if !slices.Equal(names, vi.Variants) {
			t.Fatalf("family %s has variants %v, others %v", vi.Family, vi.Variants, names)
		}
		for _, n := range vi.Eligible {
			eligible[n] = true
		}
	}
	if len(names) == 0 {
		t.Fatalf("no %s family is registered", op)
	}
	return names, eligible
}

// forEachKernelVariant runs f for every variant of op's kernels, as
// runVariants does.
func forEachKernelVariant(t *testing.T, op string, f func(t *testing.T, name string)) {
	names, eligible := kernelVariants(t, selOpen(t, false), op)
	runVariants(t, names, eligible, f)
}

// runVariants runs f as a subtest named for each variant of names, with
// $VKOPS_VARIANT forcing it. A variant not eligible on the device is
// skipped, and says so; on lavapipe every variant must be eligible, so
// that none is skipped there unnoticed.
func runVariants(t *testing.T, names []string, eligible map[string]bool, f func(t *testing.T, name string)) {
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			if !eligible[name] {
				if strings.Contains(selOpen(t, false).Info().Name, "llvmpipe") {
					t.Fatalf("lavapipe cannot run variant %s", name)
				}
				t.Skipf("SKIP: the device cannot run variant %s", name)
			}
			t.Setenv("VKOPS_VARIANT", name)
			f(t, name)
		})
	}
}

// variantTurns forces kernel variants in turn through $VKOPS_VARIANT,
// one case at a time, so that a matrix runs once with each variant on
// its share of the cases: running it whole once per variant checked the
// same plans three times. Tests of what one variant does on its own (a
// texel view's offsets and padding, special values) still run each in
// full.
type variantTurns struct {
	names []string
	count []int
}

// newVariantTurns returns turns over the eligible ones of names, in that
// order. On lavapipe every variant must be eligible, so that none is
// left out there unnoticed; elsewhere the log names those left out.
// $VKOPS_VARIANT set for the run makes every case run that variant: a
// whole matrix with one variant. It is restored when t ends.
func newVariantTurns(t *testing.T, d *device.Device, names []string, eligible map[string]bool) *variantTurns {
	t.Helper()
	t.Setenv("VKOPS_VARIANT", "")
	vt := &variantTurns{}
	if v := forcedVariant(); v != "" {
		names = nil
		vt.names = []string{v}
	}
	for _, name := range names {
		switch {
		case eligible[name]:
			vt.names = append(vt.names, name)
		case strings.Contains(d.Info().Name, "llvmpipe"):
			t.Fatalf("lavapipe cannot run variant %s", name)
		default:
			t.Logf("SKIP: the device cannot run variant %s", name)
		}
	}
	if len(vt.names) == 0 {
		t.Fatalf("the device can run none of the variants %v", names)
	}
	vt.count = make([]int, len(vt.names))
	return vt
}

// forcedVariant is $VKOPS_VARIANT as the run began, before any test
// forced a variant.
var forcedVariant = sync.OnceValue(func() string { return strings.TrimSpace(os.Getenv("VKOPS_VARIANT")) })

// kernelTurns returns turns over the variants of op's kernels.
func kernelTurns(t *testing.T, d *device.Device, op string) *variantTurns {
	t.Helper()
	names, eligible := kernelVariants(t, d, op)
	return newVariantTurns(t, d, names, eligible)
}

// use forces variant i (modulo their number) on what runs next. Nil
// turns force nothing: the device's choice runs.
func (vt *variantTurns) use(i int) {
	if vt == nil {
		return
	}
	k := i % len(vt.names)
	if err := os.Setenv("VKOPS_VARIANT", vt.names[k]); err != nil {
		panic(err)
	}
	vt.count[k]++
}

// String says how many cases each variant ran, as "portable 3, texel 3".
func (vt *variantTurns) String() string {
	if vt == nil {
		return "the device's choice of variant"
	}
	var parts []string
	for k, name := range vt.names {
		parts = append(parts, fmt.Sprintf("%s %d", name, vt.count[k]))
	}
	return strings.Join(parts, ", ")
}

// TestSelectVariantOffsets runs each variant on rows that start at every
// offset within a 16-byte texel, on rows about a block long, and on
// tensors that end at every offset within one, where a texel view
// reaches past the tensor's last byte.
// Pages of 4 KiB put page edges inside rows.
func TestSelectVariantOffsets(t *testing.T) {
	forEachKernelVariant(t, "select", func(t *testing.T, _ string) {
		d := selOpen(t, true)
		rng := rand.New(rand.NewPCG(13, 14))
		cases := 0
		for _, dt := range []tensor.DType{tensor.U8, tensor.F16, tensor.F32, tensor.F64} {
			for n := 1000; n < 1017; n++ {
				// A row broadcast whose rows start at every offset, and a
				// same-shape select whose length ends at every offset.
				selCheck(t, d, "rows", ops.BroadcastNumpy, selRandom(rng, tensor.Bool, tensor.Shape{n, 1}),
					selRandom(rng, dt, tensor.Shape{n, n - 999}), selRandom(rng, dt, tensor.Shape{1, n - 999}))
				selCheck(t, d, "same", ops.BroadcastNumpy, selRandom(rng, tensor.Bool, tensor.Shape{3 * n}),
					selRandom(rng, dt, tensor.Shape{3 * n}), selRandom(rng, dt, tensor.Shape{3 * n}))
				// Rows of 60 to 76 elements, about a block (16 to 64
				// elements by type): those of a block and more run their
				// whole blocks and the blocks where rows begin in separate
				// dispatches.
				selCheck(t, d, "long rows", ops.BroadcastNumpy, selRandom(rng, tensor.Bool, tensor.Shape{5, n - 940}),
					selRandom(rng, dt, tensor.Shape{5, n - 940}), selRandom(rng, dt, tensor.Shape{1, n - 940}))
				cases += 3
			}
		}
		t.Logf("%d cases", cases)
	})
}

// TestSelectVariantsLarge runs each variant where operands span the
// device's own pages (128 MiB on lavapipe), so that views start at page
// boundaries in the middle of a select: a row broadcast whose then and
// output are 328 MiB, and a same-shape select whose length is no whole
// block. The variant a device chooses is one of them.
func TestSelectVariantsLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("operands of 130 MiB and more")
	}
	d := selOpen(t, false)
	names, eligible := kernelVariants(t, d, "select")
	runVariants(t, names, eligible, func(t *testing.T, _ string) {
		rng := rand.New(rand.NewPCG(6, 7))
		const rows = 82000 // then and the output: 82000 x 1024 f32, 328 MiB
		selCheck(t, d, "rows", ops.BroadcastNumpy, selRandom(rng, tensor.Bool, tensor.Shape{rows, 1}),
			selRandom(rng, tensor.F32, tensor.Shape{rows, 1024}), selRandom(rng, tensor.F32, tensor.Shape{1, 1024}))
		const n = 33<<20 + 5 // 132 MiB of f32
		selCheck(t, d, "same", ops.BroadcastNumpy, selRandom(rng, tensor.Bool, tensor.Shape{n}),
			selRandom(rng, tensor.F32, tensor.Shape{n}), selRandom(rng, tensor.F32, tensor.Shape{n}))
	})
}
