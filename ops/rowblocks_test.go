package ops

import (
	"math/rand/v2"
	"testing"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/tensor"
)

// TestRowBlocks runs selects and mask ops over rows of 16 and 32
// elements, whole chunks shorter than a block of 1- and 2-byte elements
// (and, for the masks, of every width), which run in blocks of several
// rows that the kernel steps through by the odometer (modeWhole with
// rowChunks): batches of m = 8 rows make every piece whole blocks; m = 5
// and 21 make blocks cross batches, so that the odometer carries
// mid-block, and leave rows after the last whole block to a dispatch of
// their own. Each operand is read as the output's shape, as a row
// repeated ([1, m, l], [b, 1, l], [1, 1, l]), as a value per row
// ([b, m, 1], [1, m, 1]) and pushed (Where's scalars). The 36
// select-and-where and 36 mask cases run once each on the usual pages,
// the variants in turn, and with the device's choice on 4 KiB pages
// those that span more than a page there (7), where pieces start inside
// blocks and take one block a row: see everyVariant.
func TestRowBlocks(t *testing.T) {
	// The CPU profile takes blocks of several chunks from a MiB
	// (minChunks): these rows plan as if they were that large.
	d := devtest.Open(t, device.Options{})
	gpu := profileOf(d) == &gpuProfile
	if !gpu {
		forcedProfile.Store(&cpuChunks)
		t.Cleanup(func() { forcedProfile.Store(nil) })
	}
	everyVariant(t, 27, rowTrioCases([]int{16, 32}, [][2]int{{3, 8}, {3, 5}, {2, 21}}))

	// On the CPU profile, blocks of four rows of 16 bytes: one dispatch
	// where the piece is whole blocks, a second for the rows after the
	// last one. A GPU's blocks are of one chunk: every row is whole
	// blocks, in one dispatch.
	rng := rand.New(rand.NewPCG(29, 30))
	for _, c := range []struct {
		shape      tensor.Shape
		dispatches int
	}{
		{tensor.Shape{3, 8, 16}, 1},
		{tensor.Shape{3, 5, 16}, map[bool]int{false: 2, true: 1}[gpu]},
	} {
		b, m := c.shape[0], c.shape[1]
		cond := upload(t, d, randomHost(rng, tensor.Bool, tensor.Shape{b, m, 1}))
		x := upload(t, d, randomHost(rng, tensor.U8, c.shape))
		y := upload(t, d, randomHost(rng, tensor.U8, tensor.Shape{1, 1, 16}))
		if n := selectDispatches(t, d, cond, x, y); n != c.dispatches {
			t.Errorf("select of u8 rows of 16, %v: %d dispatches, want %d", c.shape, n, c.dispatches)
		}
	}
}
