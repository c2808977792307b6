package device_test

import (
	"testing"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/ops"
)

// TestMakeSliceWraps: Wrap imports what MakeSlice makes, small or large,
// and ops read and write the slice itself (issue 40).
func TestMakeSliceWraps(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	if ok, _ := bridge.Device(d).CanWrap(); !ok {
		t.Skip("the device imports no host memory: Wrap copies")
	}
	for _, n := range []int{4, 1000, 4096, 12_345 * 4, 1 << 20} {
		xs := device.MakeSlice[float32](n)
		if len(xs) != n {
			t.Fatalf("MakeSlice(%d): len %d", n, len(xs))
		}
		for i := range xs {
			xs[i] = float32(i%5) - 2
		}
		x, err := device.Wrap(d, xs)
		if err != nil {
			t.Fatal(err)
		}
		if !x.Wrapped() {
			t.Errorf("MakeSlice(%d): Wrap copied it", n)
		}
		pos, err := ops.Greater(x, float32(0))
		if err != nil {
			t.Fatal(err)
		}
		got, err := device.ToSlice[bool](pos)
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range got {
			if g != (xs[i] > 0) {
				t.Fatalf("MakeSlice(%d): element %d: %v", n, i, g)
			}
		}
		x.Free()
		pos.Free()
	}
}
