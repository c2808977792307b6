package tests

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
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

// TestSelectVariants runs every variant of the select kernel, not only the
// one a device would choose, over the cases of TestSelectMatrix,
// TestSelectSizes and TestWhereMatrix, with the usual pages and with
// 4 KiB pages (tensors spanning many pages, so texel views start at many
// offsets), against cpuref. On lavapipe every variant must be eligible,
// so that none is skipped there unnoticed.
func TestSelectVariants(t *testing.T) {
	forEachKernelVariant(t, "select", func(t *testing.T, name string) {
		for _, small := range []bool{false, true} {
			t.Run(fmt.Sprintf("small-pages=%v", small), func(t *testing.T) {
				d := selOpen(t, small)
				m, s, w := selMatrix(t, d), selSizes(t, d), whereMatrix(t, d)
				t.Logf("variant %s: %d matrix, %d sizes, %d where cases", name, m, s, w)
			})
		}
	})
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
// boundaries in the middle of a select: TestSelectLarge's row
// broadcast, and a same-shape select whose length is no whole block.
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
