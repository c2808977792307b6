package ops

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/tensor"
)

// checkMasks runs greater-equal and (for floats) is-nan on a and b
// on the device and in cpuref, and fails t where they differ.
func checkMasks(t *testing.T, d *device.Device, a, b *tensor.Host) {
	t.Helper()
	ta, err := d.Upload(a)
	if err != nil {
		t.Fatal(err)
	}
	defer ta.Free()
	tb, err := d.Upload(b)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Free()
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
		runs = append(runs, run{"is-nan", func() (*device.Tensor, error) { return IsNaN(ta) }, func() (*tensor.Host, error) { return cpuref.IsNaN(a) }})
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
		got, err := y.Download()
		y.Free()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Data, want.Data) {
			t.Fatalf("%s %v%v %v: output differs from cpuref", r.name, a.DType, a.Shape, b.Shape)
		}
	}
}

// eachMaskVariant runs f as a subtest per mask variant, as eachVariant
// does.
func eachMaskVariant(t *testing.T, d *device.Device, f func(t *testing.T)) {
	eachVariant(t, d, maskElem.variants[4], f) // every width has the same variants
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
// pages of 4 KiB with every variant: odd chunk counts make texel64 store
// blocks unpaired.
func TestMaskTuning(t *testing.T) {
	d := devtest.Open(t, device.Options{PageSize: 4096})
	eachMaskVariant(t, d, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(2, 3))
		for _, group := range []int{7} {
			for _, chunks := range []int{1, 3} {
				setTuning(t, group, chunks)
				for _, dt := range []tensor.DType{tensor.U8, tensor.F64} {
					for _, s := range [][2]tensor.Shape{{{5000}, {5000}}, {{37, 130}, {37, 1}}, {{9, 11, 7}, {11, 1}}, {{3001}, {}}} {
						checkMasks(t, d, randomHost(rng, dt, s[0]), randomHost(rng, dt, s[1]))
					}
				}
			}
		}
	})
}
