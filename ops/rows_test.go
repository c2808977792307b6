package ops

import (
	"fmt"
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
// ([1, 1, l] and [b, 1, l]; [1, m, l] when m*l is no whole number of
// blocks), as two runs where a block's rows are at most m ([b, m, 1] and
// [1, m, 1] too, the first whatever m). Three batches
// of m = 16 rows put every block in one batch; m = 5 make blocks cross
// batches, too many times for two runs; m = 21 make some blocks cross
// one, and [37, l] leaves the last block to the element path. Blocks
// are of 16 rows for u8 and f16 on lavapipe (rowGroup), else of
// 16 / gcd(l, 16) rows: 8 for l = 2 and 6, 16 for the odd ones.
// rowsMin is lowered so that these small tensors take the mode. The 140
// select and 140 mask cases run once each on the usual pages, the
// variants in turn, and with the device's choice on 4 KiB pages the 14
// that span more than a page there, where pieces start inside blocks:
// see everyVariant.
func TestRows(t *testing.T) {
	for _, p := range []*profile{&cpuProfile, &gpuProfile} {
		saved := p.rowsMin
		t.Cleanup(func() { p.rowsMin = saved })
		p.rowsMin = 0
	}
	widths := []tensor.DType{tensor.U8, tensor.F16, tensor.F32, tensor.F64}
	var cases []trioCase
	for _, masks := range []bool{false, true} {
		for li, l := range []int{2, 3, 6, 13, 17} {
			for si, s := range []tensor.Shape{{3, 16, l}, {7, 5, l}, {2, 21, l}, {37, l}} {
				b, m := 1, s[0]
				if len(s) == 3 {
					b, m = s[0], s[1]
				}
				row, col, one, rows := tensor.Shape{1, m, l}, tensor.Shape{b, m, 1}, tensor.Shape{1, 1, l}, tensor.Shape{b, 1, l}
				// cond, then and else; a mask op's two inputs are the first two.
				trios := [][3]tensor.Shape{{s, row, col}, {row, col, one}, {col, one, s}, {one, s, row}, {one, rows, row}, {rows, col, row},
					{{1, m, 1}, rows, row}}
				for i, tr := range trios {
					cases = append(cases, trioCase{masks: masks, dt: widths[(i+li)%len(widths)], tr: tr, turn: li + si + i})
				}
			}
		}
	}
	everyVariant(t, 21, cases)
}

// A trioCase is one check of the row tests: a select of a cond, then
// and else of shapes tr, then and else of type dt, and with where a
// Where of the first two with a pushed scalar; with masks, the mask ops
// on two inputs of type dt of the first two shapes. turn picks the
// variant it runs with (everyVariant).
type trioCase struct {
	masks, where bool
	dt           tensor.DType
	tr           [3]tensor.Shape
	turn         int
}

// check runs c on d against cpuref.
func (c trioCase) check(t *testing.T, d *device.Device, rng *rand.Rand) {
	t.Helper()
	checkTrio(t, d, rng, c.masks, c.dt, c.tr)
	if c.where && !c.masks {
		checkWhere(t, d, randomHost(rng, tensor.Bool, c.tr[0]), randomHost(rng, c.dt, c.tr[1]))
	}
}

// bytes returns the size of c's largest operand or output.
func (c trioCase) bytes() int {
	shapes, sizes := c.tr[:], []int{1, c.dt.Size(), c.dt.Size()}
	if c.masks {
		shapes, sizes = c.tr[:2], []int{c.dt.Size(), c.dt.Size()}
	}
	out, clash := tensor.Broadcast(shapes...)
	if clash != nil {
		panic(fmt.Sprintf("trio %v: %v", c.tr, clash))
	}
	n := out.NumElements() * c.dt.Size()
	if c.masks {
		n = out.NumElements() // bools
	}
	for i, s := range shapes {
		n = max(n, s.NumElements()*sizes[i])
	}
	return n
}

// checkTrio checks a select of a cond, then and else of shapes tr, then
// and else of type dt, against cpuref; with masks, the mask ops on two
// inputs of type dt of the first two shapes.
func checkTrio(t *testing.T, d *device.Device, rng *rand.Rand, masks bool, dt tensor.DType, tr [3]tensor.Shape) {
	t.Helper()
	if masks {
		checkMasks(t, d, randomHost(rng, dt, tr[0]), randomHost(rng, dt, tr[1]))
		return
	}
	checkSelect(t, d, randomHost(rng, tensor.Bool, tr[0]), randomHost(rng, dt, tr[1]), randomHost(rng, dt, tr[2]))
}

// everyVariant runs cases, seeded by seed, once each on the usual pages,
// the variants the device can run in turn (variantsInTurn), then, with
// the device's choice on 4 KiB pages, those whose operands or output
// span more than a page there, where pieces start inside blocks: the
// others would plan there as on the usual pages. With -short, only the
// cases of the last variant's turn.
func everyVariant(t *testing.T, seed uint64, cases []trioCase) {
	d := devtest.Open(t, device.Options{})
	vs := selectElem.variants[4] // the mask ops' are the same
	variantsInTurn(t, d, vs, func(t *testing.T, mine func(turn int) bool) {
		rng, n := rand.New(rand.NewPCG(seed, 0)), 0
		for _, c := range cases {
			if mine(c.turn) {
				c.check(t, d, rng)
				n++
			}
		}
		t.Logf("%d of %d cases", n, len(cases))
	})
	t.Run("4KiB", func(t *testing.T) {
		small := devtest.Open(t, device.Options{PageSize: 4096})
		rng, n := rand.New(rand.NewPCG(seed, 4096)), 0
		for _, c := range cases {
			if c.bytes() > 4096 && (!testing.Short() || lastInTurn(d, vs, c.turn)) {
				c.check(t, small, rng)
				n++
			}
		}
		t.Logf("%d cases span more than a page", n)
	})
}

// TestRowGroup checks which blocks of whole rows rowGroup plans: the
// fewest rows that fill whole 16-element vectors, and on lavapipe 16
// rows of 1- and 2-byte elements that fit a 16-byte vector, where the
// piece starts on such a block.
func TestRowGroup(t *testing.T) {
	for _, c := range []struct {
		width int
		rows  uint32 // row length
		base  uint32 // the output's first element in its binding
		cpu   bool
		want  uint32
	}{
		{1, 4, 0, true, 64},
		{1, 4, 16, true, 16}, // not on a block of 16 rows: lcm(4, 16)
		{1, 4, 8, true, 0},   // not on a vector either
		{1, 4, 0, false, 16}, // a GPU
		{1, 15, 0, true, 240},
		{1, 3, 0, true, 48},
		{2, 8, 0, true, 128},
		{2, 6, 0, true, 96},
		{2, 10, 0, true, 80}, // rows of 20 bytes: lcm(10, 16)
		{4, 4, 0, true, 16},  // f32 ran slower
		{8, 2, 0, true, 16},
		{1, 16, 0, true, 0}, // whole vectors: not modeRows
		{1, 1, 0, true, 0},
	} {
		r := selectElem.newRun(c.width)
		b := box{rank: 2, dims: [maxRank]uint32{c.rows, 100}}
		b.base[3] = c.base
		if got := r.rowGroup(&b, c.cpu); got != c.want {
			t.Errorf("width %d, rows of %d, base %d, cpu %v: rowGroup = %d, want %d", c.width, c.rows, c.base, c.cpu, got, c.want)
		}
	}
}
