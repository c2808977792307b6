package ops

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/tensor"
)

// reduceCase is one reduction to check: its data's shape and axes.
type reduceCase struct {
	shape tensor.Shape
	axes  []int
}

// reducePathCases between them take every reading path of both reduction
// kernels on both profiles' tunings, every pass structure and the
// planner's shortcuts.
var reducePathCases = []reduceCase{
	{tensor.Shape{300, 5}, []int{1}},           // tiny rows, sixteen to an output vector
	{tensor.Shape{999, 17}, []int{1}},          // short rows, a word at a time
	{tensor.Shape{64, 48}, []int{1}},           // rows of whole vectors, straight-line code
	{tensor.Shape{8, 5000}, []int{1}},          // long rows, their ends masked
	{tensor.Shape{3, 65536}, []int{-1}},        // few long rows of vectors: split in chunks
	{tensor.Shape{2, 100003}, []int{1}},        // few long masked rows: split
	{tensor.Shape{700, 48}, []int{0}},          // columns of vectors
	{tensor.Shape{700, 7}, []int{0}},           // rows shorter than a vector, several read at once
	{tensor.Shape{5, 600, 3}, []int{1}},        // the same across batches that start anywhere
	{tensor.Shape{3, 700, 21}, []int{1}},       // unaligned columns of several batches, in windows
	{tensor.Shape{1024, 1025}, []int{0}},       // unaligned columns regrouped into two passes
	{tensor.Shape{1030, 1025}, []int{0}},       // the same with a tail of 6 rows
	{tensor.Shape{5, 64, 33}, []int{0, 2}},     // an inner and an outer pass
	{tensor.Shape{2, 3, 4, 5, 6}, []int{1, 3}}, // mixed axes, rank 5
	{tensor.Shape{6, 7, 8}, []int{0, 1, 2}},    // every axis
	{tensor.Shape{7, 1, 9}, []int{1}},          // size-1 axes only: the bytes made 0/1
	{tensor.Shape{0, 5}, []int{1}},             // no data, no output
	{tensor.Shape{0, 5}, []int{0}},             // no data, an output of identities
	{tensor.Shape{}, nil},                      // a scalar
}

// randomReduceCases returns n seeded random shapes of rank 1 to 5 and
// up to 2^17 elements, each with a random set of its axes.
func randomReduceCases(rng *rand.Rand, n int) []reduceCase {
	var cs []reduceCase
	for len(cs) < n {
		shape := make(tensor.Shape, 1+rng.IntN(5))
		elems := 1
		for i := range shape {
			shape[i] = 1 + rng.IntN(rng.IntN(300)+1)
			elems *= shape[i]
		}
		if elems > 1<<17 {
			continue
		}
		var axes []int
		for a := range shape {
			if rng.IntN(2) == 0 {
				axes = append(axes, a-len(shape)*rng.IntN(2)) // negative half the time
			}
		}
		cs = append(cs, reduceCase{shape, axes})
	}
	return cs
}

// TestReducePlansAgainstGeneral runs every planned reduction path against
// the general path (reduce_general.go) and cpuref, as
// TestPlansAgainstGeneral does for the elementwise ops: the shapes of
// reducePathCases and seeded random shapes and axis sets, every
// reduction (reduceOps) against its plain-Go twin, with and without
// keep_dims, on data of every density, with the CPU
// profile's plans, the GPU profile's, the general one's and the CPU
// profile's quick ones (reduceQuickTuning: every pass on one page on
// reduce_small.glsl), each on every call, on the usual pages and, where
// the data spans more than one, on 4 KiB pages. All must give cpuref's
// bytes. -short runs fewer random cases.
func TestReducePlansAgainstGeneral(t *testing.T) {
	profiles := []profile{cpuProfile, gpuProfile, cpuProfile, cpuProfile}
	profiles[0].quick = nil
	profiles[2].name, profiles[2].general = "general", true
	profiles[3].name, profiles[3].reduce, profiles[3].quick = "quick", &reduceQuickTuning, nil
	t.Cleanup(func() { forcedProfile.Store(nil) })
	random := 24
	if testing.Short() {
		random = 8
	}
	cases := append(append([]reduceCase(nil), reducePathCases...), randomReduceCases(rand.New(rand.NewPCG(38, 1)), random)...)
	for _, page := range []uint64{0, 4096} {
		d := devtest.Open(t, device.Options{PageSize: page})
		rng := rand.New(rand.NewPCG(38, page))
		n := 0
		for ci, c := range cases {
			if page != 0 && c.shape.NumElements() <= int(page) {
				continue
			}
			h := randomBools(rng, c.shape, []int{1, 2, 1000, 1 << 30}[ci%4])
			for _, op := range reduceOps {
				keep := rng.IntN(2) == 0
				want, err := op.ref(h, c.axes, keep)
				if err != nil {
					t.Fatal(err)
				}
				for i := range profiles {
					forcedProfile.Store(&profiles[i])
					got, err := deviceReduce(d, op, h, c.axes, keep)
					forcedProfile.Store(nil)
					if err != nil {
						t.Fatalf("%s profile, page %d: %s %v axes %v: %v", profiles[i].name, page, op.name, c.shape, c.axes, err)
					}
					if !got.Shape.Equal(want.Shape) || string(got.Data) != string(want.Data) {
						t.Fatalf("%s profile, page %d: %s %v axes %v keep_dims %v: got %v, cpuref %v",
							profiles[i].name, page, op.name, c.shape, c.axes, keep, got.Shape, want.Shape)
					}
				}
				n++
			}
		}
		t.Logf("page %d: %d reductions, each on %d profiles", page, n, len(profiles))
	}
}

// deviceReduce runs op on d over h and returns the result on the host.
func deviceReduce(d *device.Device, op *reduceOp, h *tensor.Host, axes []int, keep bool) (*tensor.Host, error) {
	x, err := bridge.Device(d).Upload(h)
	if err != nil {
		return nil, err
	}
	defer x.Free()
	y, err := reduceLogical(op, bridge.UserTensor(x), axes, []ReduceOption{KeepDims(keep)})
	if err != nil {
		return nil, err
	}
	defer y.Free()
	got, err := bridge.Tensor(y).Download()
	if err != nil {
		return nil, fmt.Errorf("download: %w", err)
	}
	return got, nil
}
