package ops

import (
	"math/rand/v2"
	"testing"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/tensor"
)

// TestSeams runs selects and mask ops over rows of a block or more that
// end inside blocks, whose blocks a row begins inside run in modeSeams:
// each of the ways a seam block reads an operand, from two rows by
// vectors ([1, m, l], [b, 1, l] and [1, 1, l]: a row repeated), as one
// run (the output's shape), as a value per row ([b, m, 1], [1, m, 1])
// and pushed (Where's scalars, through select), at every element width,
// where rows of 33 take blocks of one chunk and rows of 127 and 509 of
// up to four. The 36 select-and-where and 36 mask cases run once each on
// the usual pages, the variants in turn, and with the device's choice on
// 4 KiB pages those that span more than a page there (43), where pieces
// start and end inside blocks (modeEnds): see everyVariant.
func TestSeams(t *testing.T) {
	everyVariant(t, 23, rowTrioCases([]int{33, 127, 509}, [][2]int{{3, 5}, {2, 21}}))
	d := devtest.Open(t, device.Options{})

	// One piece whose rows end inside blocks: the whole blocks, the
	// seams and the piece's end, three dispatches, the last the end's.
	rng := rand.New(rand.NewPCG(25, 26))
	c, x := upload(t, d, randomHost(rng, tensor.Bool, tensor.Shape{100, 1})), upload(t, d, randomHost(rng, tensor.F32, tensor.Shape{100, 17}))
	if n := selectDispatches(t, d, c, x, x); n != 3 {
		t.Errorf("select of rows of 17: %d dispatches, want 3 (whole blocks, seams, ends)", n)
	}
}

// selectDispatches returns how many dispatches Select(cond, a, b)
// records on d, and frees its result. A first select runs before it is
// counted: a first use may time its family's variants.
func selectDispatches(t *testing.T, d *device.Device, cond, a, b *device.Tensor) int {
	t.Helper()
	y, err := Select(cond, a, b)
	if err != nil {
		t.Fatal(err)
	}
	y.Free()
	r, err := bridge.Device(d).Capture(func() error {
		var err error
		y, err = Select(cond, a, b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	y.Free()
	return r.Dispatches
}

// rowTrioCases returns the row tests' cases of selects, wheres with a
// pushed scalar and the mask ops over [b, m, l] for each row length l of
// lens and each [b, m] of batches, with each operand read in each of
// the ways a block reads one: as the output's shape, as a row repeated
// ([1, m, l], [b, 1, l], [1, 1, l]) and as a value per row ([b, m, 1],
// [1, m, 1]), at every element width.
func rowTrioCases(lens []int, batches [][2]int) []trioCase {
	widths := []tensor.DType{tensor.U8, tensor.F16, tensor.F32, tensor.F64}
	var cases []trioCase
	for _, masks := range []bool{false, true} {
		for li, l := range lens {
			for bi, bm := range batches {
				b, m := bm[0], bm[1]
				s := tensor.Shape{b, m, l}
				row, col, one, rows := tensor.Shape{1, m, l}, tensor.Shape{b, m, 1}, tensor.Shape{1, 1, l}, tensor.Shape{b, 1, l}
				// cond, then and else; a mask op's two inputs are the first two.
				trios := [][3]tensor.Shape{{s, row, col}, {row, col, one}, {col, one, s}, {one, s, row}, {col, rows, {1, m, 1}}, {rows, s, s}}
				for i, tr := range trios {
					cases = append(cases, trioCase{masks: masks, where: !masks, dt: widths[(i+li)%len(widths)], tr: tr, turn: li + bi + i})
				}
			}
		}
	}
	return cases
}

// upload puts h on d until t ends.
func upload(t *testing.T, d *device.Device, h *tensor.Host) *device.Tensor {
	t.Helper()
	x, err := bridge.Device(d).Upload(h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Free)
	return bridge.UserTensor(x)
}

// checkWhere checks Where(cond, x, s) against cpuref, s a scalar of x's
// type, pushed to the kernel.
func checkWhere(t *testing.T, d *device.Device, cond, x *tensor.Host) {
	t.Helper()
	s := tensor.Scalar{DType: x.DType, Bits: 0x5aa55aa5c33c3cc3}
	if x.DType.Size() < 8 {
		s.Bits &= 1<<(8*x.DType.Size()) - 1
	}
	want, err := cpuref.Where(cond, cpuref.Operand{T: x}, cpuref.Operand{S: &s})
	if err != nil {
		t.Fatal(err)
	}
	y, err := Where(upload(t, d, cond), upload(t, d, x), s)
	if err != nil {
		t.Fatalf("where cond %v x %v%v: %v", cond.Shape, x.DType, x.Shape, err)
	}
	checkAgainst(t, "where", y, want)
}
