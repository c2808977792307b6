package ops

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/core"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/tensor"
)

// TestRowsOf checks which broadcasts repeat each element along the
// innermost axes, and how many times.
func TestRowsOf(t *testing.T) {
	for _, c := range []struct {
		src, out tensor.Shape
		r        int
		ok       bool
	}{
		{tensor.Shape{111091, 1, 1}, tensor.Shape{111091, 11, 11}, 121, true},
		{tensor.Shape{5, 1}, tensor.Shape{2, 5, 3}, 0, false}, // and along an outer axis
		{tensor.Shape{1, 5, 1}, tensor.Shape{1, 5, 3}, 3, true},
		{tensor.Shape{5, 3}, tensor.Shape{5, 3}, 1, true},
		{tensor.Shape{1}, tensor.Shape{7}, 7, true},
		{tensor.Shape{}, tensor.Shape{2, 3}, 6, true},
		{tensor.Shape{5, 1, 3}, tensor.Shape{5, 2, 3}, 0, false}, // a middle axis
		{tensor.Shape{2, 5, 1}, tensor.Shape{5, 1}, 0, false},
	} {
		r, ok := rowsOf(c.src, c.out)
		if r != c.r || ok != c.ok {
			t.Errorf("rowsOf(%v, %v) = %d, %v; want %d, %v", c.src, c.out, r, ok, c.r, c.ok)
		}
	}
}

// TestExpand runs each expand kernel on rows of every width, from one
// vector long to several, across output pages of 4 KiB and against
// cpuref; and checks that a source over more than a page, which expand
// declines, still selects right by the select kernel.
func TestExpand(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, page := range []uint64{0, 4096} {
		d := devtest.Open(t, device.Options{PageSize: page})
		kernels := []*core.Kernel{expandPortable}
		if expandKernel(d) != expandPortable {
			kernels = append(kernels, expandKernel(d))
		}
		for _, dt := range []tensor.DType{tensor.U8, tensor.F16, tensor.F32, tensor.F64} {
			w := dt.Size()
			for _, r := range []int{16 / w, 16/w + 1, 17, expandBlockBytes / w, expandBlockBytes/w + 1, 121, 509} {
				for _, n := range []int{1, 3, 37, 250} {
					src := randomHost(rng, dt, tensor.Shape{n, 1})
					want, err := cpuref.Select(&tensor.Host{DType: tensor.Bool, Shape: tensor.Shape{}, Data: []byte{0}},
						randomHost(rng, dt, tensor.Shape{r}), src, "numpy")
					if err != nil {
						t.Fatal(err)
					}
					x, err := bridge.Device(d).Upload(src)
					if err != nil {
						t.Fatal(err)
					}
					for _, k := range kernels {
						name := fmt.Sprintf("page %d, %s, %v [%d,1] to [%d,%d]", page, k.Name, dt, n, n, r)
						y, err := bridge.Device(d).Empty(dt, tensor.Shape{n, r})
						if err != nil {
							t.Fatal(err)
						}
						if err := expand(d, k, bridge.UserTensor(y), bridge.UserTensor(x), r); err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						checkAgainst(t, name, bridge.UserTensor(y), want)
					}
					x.Free()
				}
			}
		}
		// A source over two pages is declined, and select's kernel runs.
		if page != 0 {
			cond, err := bridge.Device(d).Upload(&tensor.Host{DType: tensor.Bool, Shape: tensor.Shape{}, Data: []byte{1}})
			if err != nil {
				t.Fatal(err)
			}
			big := randomHost(rng, tensor.U8, tensor.Shape{int(page) + 100, 1})
			x, err := bridge.Device(d).Upload(big)
			if err != nil {
				t.Fatal(err)
			}
			row, err := bridge.Device(d).Upload(randomHost(rng, tensor.U8, tensor.Shape{20}))
			if err != nil {
				t.Fatal(err)
			}
			want, err := cpuref.Select(&tensor.Host{DType: tensor.Bool, Shape: tensor.Shape{}, Data: []byte{1}}, big,
				&tensor.Host{DType: tensor.U8, Shape: tensor.Shape{20}, Data: make([]byte, 20)}, "numpy")
			if err != nil {
				t.Fatal(err)
			}
			var y *device.Tensor
			if path := pathOf(d, func() error {
				var err error
				y, err = Select(bridge.UserTensor(cond), bridge.UserTensor(x), bridge.UserTensor(row))
				return err
			}); path != "kernel" {
				t.Errorf("a source over two pages: went by %s, want kernel", path)
			}
			checkAgainst(t, "a source over two pages", y, want)
			cond.Free()
			x.Free()
			row.Free()
		}
	}
}
