package ops

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/tensor"
)

// withTuning runs the test with reduceTuning set to tu.
func withTuning(t *testing.T, tu reduceTune) {
	old := reduceTuning
	reduceTuning = tu
	t.Cleanup(func() { reduceTuning = old })
}

// reduceAgainstCPU reduces h over every subset of its axes on d, Or and
// And, with and without keep_dims, and fails t where the device and
// cpuref differ. It returns the number of cases.
func reduceAgainstCPU(t *testing.T, d *device.Device, h *tensor.Host) int {
	t.Helper()
	x, err := d.Upload(h)
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
				y, err := dev(x, axes, KeepDims(keep))
				if err != nil {
					t.Fatalf("%v axes %v and %v: %v", h.Shape, axes, and, err)
				}
				got, err := y.Download()
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
// into filled words everywhere; the results must not change.
func TestReduceForcedSplits(t *testing.T) {
	withTuning(t, reduceTune{groupSize: 4, target: 1 << 20, minWork: 16, minChunk: 16})
	d := devtest.Open(t, device.Options{PageSize: 4096})
	rng := rand.New(rand.NewPCG(2, 8))
	cases := 0
	for _, shape := range []tensor.Shape{
		{5000}, {3, 1700}, {1700, 3}, {64, 80}, {80, 64}, {7, 33, 48}, {48, 33, 7}, {3, 4, 5, 6}, {9, 16, 3, 32},
	} {
		for _, every := range []int{2, 100, 1 << 20} {
			cases += reduceAgainstCPU(t, d, randomBools(rng, shape, every))
		}
	}
	t.Logf("%d cases", cases)
}

// Workgroups of one invocation make dispatches of more than 65535
// workgroups with small tensors: the 3-D grid must cover each exactly.
func TestReduceManyWorkgroups(t *testing.T) {
	withTuning(t, reduceTune{groupSize: 1, target: 4096, minWork: 1, minChunk: 16 << 10})
	d := devtest.Open(t, device.Options{})
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
			x, err := d.Upload(h)
			if err != nil {
				t.Fatal(err)
			}
			y, err := dev(x, c.axes)
			if err != nil {
				t.Fatal(err)
			}
			got, err := y.Download()
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

// The planner picks the streaming kernels for the benchmark shapes: one
// pass per reduced dimension, the vector path across aligned rows, long
// rows whole and short ones several to an invocation.
func TestReducePlanChoices(t *testing.T) {
	for _, c := range []struct {
		shape   tensor.Shape
		reduced []bool
		want    string
	}{
		{tensor.Shape{4096, 16384}, []bool{false, true}, "inner [4096 16384 1] perInv 1 chunks 1"},
		{tensor.Shape{4096, 16384}, []bool{true, false}, "outer [1 4096 16384] vec true perInv 4 blocks 16"},
		{tensor.Shape{4096, 16384}, []bool{true, true}, "inner [1 67108864 1] perInv 1 chunks 4096"},
		{tensor.Shape{64, 64, 64, 64}, []bool{false, true, false, true},
			"inner [262144 64 1] perInv 16 chunks 1; outer [64 64 64] vec true perInv 4 blocks 1"},
		{tensor.Shape{1000, 3}, []bool{true, false}, "outer [1 1000 3] vec false perInv 2 blocks 1"},
	} {
		var plan []string
		for _, p := range reducePasses(reduceCollapse(c.shape, c.reduced)) {
			pc := p.pieces(1 << 27)[0]
			word := func(push words, i int) uint32 { return binary.LittleEndian.Uint32(push[4*i:]) }
			if p.inner() {
				push, _, _ := reduceTuning.innerPush(p, pc, 0, 0)
				plan = append(plan, fmt.Sprintf("inner %v perInv %d chunks %d", []uint64{p.b, p.r, p.c}, word(push, 4), word(push, 5)))
				continue
			}
			vec := p.vecOK(pc, 0, 0)
			push, _, _ := reduceTuning.outerPush(p, pc, 0, 0, vec)
			plan = append(plan, fmt.Sprintf("outer %v vec %v perInv %d blocks %d", []uint64{p.b, p.r, p.c}, vec, word(push, 4), word(push, 5)))
		}
		if got := strings.Join(plan, "; "); got != c.want {
			t.Errorf("%v reduced %v: %s, want %s", c.shape, c.reduced, got, c.want)
		}
	}
}
