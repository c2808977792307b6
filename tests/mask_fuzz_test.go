package tests

import (
	"testing"

	"github.com/vkops/vkops/tensor"
)

// FuzzMask runs a drawn mask op on drawn shapes (rank 0 to 4, small
// dimensions, zero now and then) and bytes, with 4 KiB pages, and
// requires cpuref's bytes or cpuref's error. Types are drawn from every
// type, so that rejections are fuzzed too.
func FuzzMask(f *testing.F) {
	f.Add(uint8(4), uint8(11), uint8(0), []byte{2, 3, 5, 1, 5}, []byte{0x7f, 0x80, 0, 1, 0xff, 0xc0})
	f.Add(uint8(0), uint8(7), uint8(2), []byte{3, 2, 1, 9, 0}, []byte{1, 2, 3})
	f.Add(uint8(10), uint8(9), uint8(0), []byte{1, 17}, []byte{0, 0x7c, 1, 0x7c})
	f.Add(uint8(6), uint8(0), uint8(1), []byte{1, 33, 1, 33}, []byte{0, 1, 2})
	d := selOpen(f, true)
	f.Fuzz(func(t *testing.T, opIdx, dtIdx, modeIdx uint8, shapes, data []byte) {
		op := maskOps[int(opIdx)%len(maskOps)]
		dt := tensor.DTypes[int(dtIdx)%len(tensor.DTypes)]
		mode := selModes[int(modeIdx)%len(selModes)]
		b := fzBytes(shapes)
		shape := func() tensor.Shape {
			s := make(tensor.Shape, b.next()%5)
			for i := range s {
				s[i] = []int{1, 1, 2, 3, 5, 16, 17, 33, 0}[b.next()%9]
			}
			return s
		}
		as, bs := shape(), shape()
		if as.NumElements()*bs.NumElements() > 1<<16 {
			return
		}
		fill := func(s tensor.Shape) *tensor.Host {
			h, err := tensor.New(dt, s)
			if err != nil {
				t.Fatal(err)
			}
			for i := range h.Data {
				if len(data) > 0 {
					h.Data[i] = data[i%len(data)] + byte(i/len(data))
				}
			}
			return h
		}
		maskCheck(t, d, op, mode, fill(as), fill(bs))
	})
}

// fzBytes hands out a fuzz input a byte at a time, zeros once it ends.
type fzBytes []byte

func (b *fzBytes) next() int {
	if len(*b) == 0 {
		return 0
	}
	v := (*b)[0]
	*b = (*b)[1:]
	return int(v)
}
