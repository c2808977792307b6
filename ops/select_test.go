package ops

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/tensor"
)

// randomHost returns a tensor of random bytes; bools are 0 or any other
// byte, as ../shared/specs/README.md allows.
func randomHost(rng *rand.Rand, dt tensor.DType, shape tensor.Shape) *tensor.Host {
	h, err := tensor.New(dt, shape)
	if err != nil {
		panic(err)
	}
	for i := range h.Data {
		h.Data[i] = byte(rng.Uint32())
		if dt == tensor.Bool && h.Data[i]&1 == 0 {
			h.Data[i] = 0
		}
	}
	return h
}

// checkSelect runs Select on d and in cpuref and fails t unless they
// agree bit for bit.
func checkSelect(t *testing.T, d *device.Device, cond, then, els *tensor.Host) {
	t.Helper()
	name := fmt.Sprintf("cond %v then %v%v else %v", cond.Shape, then.DType, then.Shape, els.Shape)
	want, err := cpuref.Select(cond, then, els, "numpy")
	if err != nil {
		t.Fatalf("%s: cpuref: %v", name, err)
	}
	var ts []*device.Tensor
	defer func() {
		for _, x := range ts {
			x.Free()
		}
	}()
	for _, h := range []*tensor.Host{cond, then, els} {
		x, err := d.Upload(h)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, x)
	}
	y, err := Select(ts[0], ts[1], ts[2])
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer y.Free()
	got, err := y.Download()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Data, want.Data) {
		t.Fatalf("%s: output differs from cpuref", name)
	}
}

// TestSelectGrid shrinks workgroups to one invocation of one chunk, so
// that a dispatch needs more than 65535 workgroups and the kernel's
// linear group index spans the Y dimension of the grid.
func TestSelectGrid(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	saved := selectTuning
	defer func() { selectTuning = saved }()
	selectTuning.group = 1
	selectTuning.chunks = [9]int{1: 1, 2: 1, 4: 1, 8: 1}
	rng := rand.New(rand.NewPCG(1, 2))
	n := 16*65535*2 + 100
	g, err := d.Grid(uint64(n+15) / 16)
	if err != nil || g[1] < 2 {
		t.Fatalf("grid %v, %v: want more than one row of workgroups", g, err)
	}
	checkSelect(t, d, randomHost(rng, tensor.Bool, tensor.Shape{n}), randomHost(rng, tensor.U8, tensor.Shape{n}), randomHost(rng, tensor.U8, tensor.Shape{n}))
	checkSelect(t, d, randomHost(rng, tensor.Bool, tensor.Shape{n / 100, 1}), randomHost(rng, tensor.I16, tensor.Shape{n / 100, 100}), randomHost(rng, tensor.I16, tensor.Shape{100}))
}

// TestSelectTuning runs each element width with every chunk count and
// odd workgroup sizes over pages of 4 KiB, so that blocks meet piece
// edges at every alignment.
func TestSelectTuning(t *testing.T) {
	d := devtest.Open(t, device.Options{PageSize: 4096})
	saved := selectTuning
	defer func() { selectTuning = saved }()
	rng := rand.New(rand.NewPCG(2, 3))
	for _, group := range []int{1, 7, 64} {
		for _, chunks := range []int{1, 2, 4} {
			selectTuning.group = group
			for i := range selectTuning.chunks {
				selectTuning.chunks[i] = chunks
			}
			for _, dt := range []tensor.DType{tensor.U8, tensor.F16, tensor.I32, tensor.F64} {
				for _, s := range [][3]tensor.Shape{
					{{5000}, {5000}, {5000}},
					{{37, 1}, {37, 130}, {37, 130}},
					{{1, 130}, {37, 130}, {1}},
					{{9, 1, 7}, {9, 11, 7}, {11, 1}},
					{{}, {3001}, {3001}},
				} {
					checkSelect(t, d, randomHost(rng, tensor.Bool, s[0]), randomHost(rng, dt, s[1]), randomHost(rng, dt, s[2]))
				}
			}
		}
	}
}

// TestSelectRank checks the kernels' limit: broadcasts that stay eight
// dimensions after merging run, nine are refused, saying why.
func TestSelectRank(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	rng := rand.New(rand.NewPCG(3, 4))
	// Alternating broadcasts merge nothing.
	alt := func(rank, phase int) tensor.Shape {
		s := make(tensor.Shape, rank)
		for i := range s {
			s[i] = 1 + (i+phase)%2
		}
		return s
	}
	checkSelect(t, d, randomHost(rng, tensor.Bool, alt(8, 0)), randomHost(rng, tensor.F32, alt(8, 1)), randomHost(rng, tensor.F32, alt(8, 0)))
	var ts []*device.Tensor
	for _, h := range []*tensor.Host{randomHost(rng, tensor.Bool, alt(9, 0)), randomHost(rng, tensor.F32, alt(9, 1)), randomHost(rng, tensor.F32, alt(9, 0))} {
		x, err := d.Upload(h)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Free()
		ts = append(ts, x)
	}
	const want = "select: the broadcast needs 9 dimensions after merging adjacent ones, more than the 8 the kernels support"
	if y, err := Select(ts[0], ts[1], ts[2]); err == nil || err.Error() != want {
		t.Errorf("rank 9: got %v, %v; want %q", y, err, want)
	}
}
