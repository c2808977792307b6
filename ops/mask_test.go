package ops

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/core"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/tensor"
)

// uploadPair uploads a and b to d, to be freed when t ends.
func uploadPair(t *testing.T, d *device.Device, a, b *tensor.Host) (ta, tb *core.Tensor) {
	t.Helper()
	var err error
	if ta, err = bridge.Device(d).Upload(a); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ta.Free)
	if tb, err = bridge.Device(d).Upload(b); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Free)
	return ta, tb
}

// checkMasks runs greater-equal and (for floats) is-nan on a and b
// on the device and in cpuref, and fails t where they differ.
func checkMasks(t *testing.T, d *device.Device, a, b *tensor.Host) {
	t.Helper()
	ta, tb := uploadPair(t, d, a, b)
	type run struct {
		name string
		dev  func() (*device.Tensor, error)
		ref  func() (*tensor.Host, error)
	}
	runs := []run{
		{"greater-equal", func() (*device.Tensor, error) { return GreaterEqual(ta, tb) },
			func() (*tensor.Host, error) { return cpuref.GreaterEqual(a, b, "numpy") }},
	}
	if a.DType.IsFloat() {
		runs = append(runs, run{"is-nan", func() (*device.Tensor, error) { return IsNaN(bridge.UserTensor(ta)) }, func() (*tensor.Host, error) { return cpuref.IsNaN(a) }})
	}
	for _, r := range runs {
		want, err := r.ref()
		if err != nil {
			t.Fatal(err)
		}
		y, err := r.dev()
		if err != nil {
			t.Fatalf("%s %v %v: %v", r.name, a, b.Shape, err)
		}
		got, err := bridge.Tensor(y).Download()
		y.Free()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Data, want.Data) {
			t.Fatalf("%s %v%v %v: output differs from cpuref", r.name, a.DType, a.Shape, b.Shape)
		}
	}
}

// TestMaskGrid shrinks workgroups to one invocation of one chunk, so
// that a dispatch needs more than 65535 workgroups, with the variant the
// device chooses (a grid of single invocations is slow on lavapipe).
func TestMaskGrid(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	setTuning(t, 1, 1)
	n := 16*65535 + 100
	rng := rand.New(rand.NewPCG(1, 2))
	checkMasks(t, d, randomHost(rng, tensor.I16, tensor.Shape{n / 100, 100}), randomHost(rng, tensor.I16, tensor.Shape{n / 100, 1}))
}

// TestMaskTuning runs other chunk counts and an odd workgroup size over
// pages of 4 KiB: odd chunk counts make texel64 store blocks unpaired.
// The variants take the 16 cases in turn (variantsInTurn), each meeting
// both chunk counts at both widths.
func TestMaskTuning(t *testing.T) {
	d := devtest.Open(t, device.Options{PageSize: 4096})
	variantsInTurn(t, d, maskElem.variants[4], func(t *testing.T, mine func(int) bool) {
		rng, n := rand.New(rand.NewPCG(2, 3)), 0
		for _, group := range []int{7} {
			for ci, chunks := range []int{1, 3} {
				setTuning(t, group, chunks)
				for di, dt := range []tensor.DType{tensor.U8, tensor.F64} {
					for si, s := range [][2]tensor.Shape{{{5000}, {5000}}, {{37, 130}, {37, 1}}, {{9, 11, 7}, {11, 1}}, {{3001}, {}}} {
						if mine(ci + di + si) {
							checkMasks(t, d, randomHost(rng, dt, s[0]), randomHost(rng, dt, s[1]))
							n++
						}
					}
				}
			}
		}
		t.Logf("%d cases", n)
	})
}

// A mask whose plans would build a pipeline new to the device runs once
// on the quick profile's (one chunk an invocation), then on its own
// (bools: four chunks, a quarter of the workgroups); both give cpuref's
// bytes.
func TestMaskTiers(t *testing.T) {
	p := cpuProfile
	forcedProfile.Store(&p)
	t.Cleanup(func() { forcedProfile.Store(nil) })
	d := devtest.Open(t, device.Options{})
	rng := rand.New(rand.NewPCG(39, 2))
	a, b := randomHost(rng, tensor.Bool, tensor.Shape{1024, 1024}), randomHost(rng, tensor.Bool, tensor.Shape{1024, 1024})
	want, err := cpuref.LogicalAnd(a, b, "numpy")
	if err != nil {
		t.Fatal(err)
	}
	ta, tb := uploadPair(t, d, a, b)
	var groups []uint64
	for range 3 {
		var y *device.Tensor
		r, err := bridge.Device(d).Capture(func() (err error) {
			y, err = LogicalAnd(bridge.UserTensor(ta), bridge.UserTensor(tb))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		groups = append(groups, r.Workgroups())
		checkAgainst(t, "LogicalAnd", y, want)
	}
	if own := uint64(maskElem.chunks[1]); groups[0] != own*groups[1] || groups[1] != groups[2] {
		t.Errorf("workgroups of three calls %v, want the first %d times the others", groups, own)
	}
}
