package ops

import (
	"math/rand/v2"
	"testing"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/tensor"
)

// TestRows runs selects and mask ops over rows of 2, 3, 6 and 13
// elements, which run in blocks of whole rows (modeRows), and of 17,
// which do not, with each operand read in each of the ways such a block
// reads one: by vectors where it runs on through the block, once a row
// where it is broadcast along the rows, and row by row otherwise
// ([1, 1, l]; [1, m, l] when m*l is no whole number of blocks). Three
// batches of m = 16 rows put every block in one batch, m = 5 make blocks
// cross batches, and [37, l] leaves the last block to the element path.
// rowsMin is lowered so that these small tensors take the mode; every
// variant runs with the usual pages, the device's choice with 4 KiB
// pages, where pieces start inside blocks.
func TestRows(t *testing.T) {
	for _, tu := range []*elementwiseTuning{&selectTuning, &maskTuning} {
		saved := tu.rowsMin
		t.Cleanup(func() { tu.rowsMin = saved })
		tu.rowsMin = 0
	}
	widths := []tensor.DType{tensor.U8, tensor.F16, tensor.F32, tensor.F64}
	run := func(t *testing.T, d *device.Device, masks bool) {
		rng := rand.New(rand.NewPCG(21, 22))
		for li, l := range []int{2, 3, 6, 13, 17} {
			for _, s := range []tensor.Shape{{3, 16, l}, {3, 5, l}, {37, l}} {
				b, m := 1, s[0]
				if len(s) == 3 {
					b, m = s[0], s[1]
				}
				shapes := []tensor.Shape{s, {1, m, l}, {b, m, 1}, {1, 1, l}}
				for i, a := range shapes {
					dt := widths[(i+li)%len(widths)]
					x, y := shapes[(i+1)%len(shapes)], shapes[(i+2)%len(shapes)]
					if masks {
						checkMasks(t, d, randomHost(rng, dt, a), randomHost(rng, dt, x))
					} else {
						checkSelect(t, d, randomHost(rng, tensor.Bool, a), randomHost(rng, dt, x), randomHost(rng, dt, y))
					}
				}
			}
		}
	}
	d := devtest.Open(t, device.Options{})
	eachVariant(t, d, selectVariants, func(t *testing.T) { run(t, d, false) })
	eachMaskVariant(t, d, func(t *testing.T) { run(t, d, true) })
	small := devtest.Open(t, device.Options{PageSize: 4096})
	run(t, small, false)
	run(t, small, true)
}
