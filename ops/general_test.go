package ops

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/tensor"
)

// TestPlansAgainstGeneral runs every elementwise op's fast paths against
// its general path, as Go's image/draw tests its fast paths against a
// golden: a table of shapes that between them take every mode of the
// planner (whole blocks, blocks of several rows, seams and ends, blocks
// of whole rows read by vectors, row by row and as two runs, element by
// element) and, for select, every way of filling the output without its
// kernel (fill, tile, expand), at every element width, on the usual
// pages, and on 4 KiB pages where an operand or the output spans more
// than one (11 of the 44 trios and widths): smaller ones plan there as
// on the usual pages. Each case runs with the CPU profile's plans, the
// GPU profile's and the general one's (every piece element by element,
// nothing filled without the kernel), modeRows and the op's own chunks
// allowed at any size; all
// must give cpuref's bytes. -short runs each trio at one width, the
// widths in turn.
func TestPlansAgainstGeneral(t *testing.T) {
	profiles := []profile{cpuProfile, gpuProfile, cpuProfile}
	for i := range profiles {
		profiles[i].rowsMin, profiles[i].minChunks, profiles[i].quick = 0, 0, nil
	}
	profiles[2].name, profiles[2].general = "general", true
	t.Cleanup(func() { forcedProfile.Store(nil) })
	// cond (or a), then (or b), else: between them every mode.
	trios := [][3]tensor.Shape{
		{{4099}, {4099}, {4099}},                            // one run: whole blocks and ends
		{{3, 8, 1}, {3, 8, 16}, {1, 1, 16}},                 // rows of a chunk: blocks of several rows
		{{100, 1}, {100, 17}, {100, 17}},                    // rows end inside blocks: whole, seams, ends
		{{37, 1}, {37, 130}, {130}},                         // long rows, a row repeated
		{{7, 5, 1}, {7, 5, 13}, {1, 1, 13}},                 // short rows: blocks of whole rows
		{{1, 5, 1}, {7, 1, 6}, {7, 5, 6}},                   // short rows read as two runs and row by row
		{{37, 3}, {37, 3}, {1, 3}},                          // short rows, the last block element by element
		{{9, 1, 7}, {9, 11, 7}, {11, 1}},                    // rank 3, no merging
		{{}, {3, 129}, {3, 129}},                            // one-element cond: a copy
		{{1}, {3, 1}, {129}},                                // one-element cond: expand or tile
		{{2, 1, 2, 1, 2}, {1, 2, 1, 2, 1}, {2, 2, 2, 2, 2}}, // alternating broadcasts
	}
	widths := []tensor.DType{tensor.U8, tensor.F16, tensor.F32, tensor.F64}
	for _, page := range []uint64{0, 4096} {
		d := devtest.Open(t, device.Options{PageSize: page})
		rng := rand.New(rand.NewPCG(40, uint64(page)))
		n := 0
		for ti, tr := range trios {
			for di, dt := range widths {
				if page != 0 && !spansPage(dt, tr, page) || testing.Short() && di != ti%len(widths) {
					continue
				}
				n++
				for _, c := range generalCases(rng, dt, tr) {
					name := fmt.Sprintf("page %d, trio %d, %v: %s", page, ti, dt, c.name)
					want, err := c.ref()
					if err != nil {
						t.Fatalf("%s: cpuref: %v", name, err)
					}
					for i := range profiles {
						forcedProfile.Store(&profiles[i])
						checkOnDevice(t, d, name+", "+profiles[i].name, c.hosts, c.run, want)
					}
					forcedProfile.Store(nil)
				}
			}
		}
		t.Logf("page %d: %d trios and widths", page, n)
	}
}

// spansPage reports whether a tensor of a shape of tr or of their
// broadcast, of elements of dt, is larger than page: generalCases make
// each of them of dt but cond, and the unary op's input has cond's
// shape.
func spansPage(dt tensor.DType, tr [3]tensor.Shape, page uint64) bool {
	out, clash := tensor.Broadcast(tr[:]...)
	if clash != nil {
		panic(fmt.Sprintf("trio %v: %v", tr, clash))
	}
	for _, s := range append(tr[:], out) {
		if uint64(s.NumElements()*dt.Size()) > page {
			return true
		}
	}
	return false
}

// generalCase is one op on host tensors: run runs it on their device
// copies, ref in cpuref.
type generalCase struct {
	name  string
	hosts []*tensor.Host
	run   func(ts []*device.Tensor) (*device.Tensor, error)
	ref   func() (*tensor.Host, error)
}

// generalCases returns the ops TestPlansAgainstGeneral runs on shapes
// tr with data of type dt: select, where with a pushed scalar, a
// comparison with a tensor and with a scalar, a unary mask op, Maximum
// of tensors, Minimum with a scalar first (its kernel's operands
// swapped) and Clamp.
func generalCases(rng *rand.Rand, dt tensor.DType, tr [3]tensor.Shape) []generalCase {
	cond, a, b := randomHost(rng, tensor.Bool, tr[0]), randomHost(rng, dt, tr[1]), randomHost(rng, dt, tr[2])
	x := randomHost(rng, dt, tr[0])
	s, err := tensor.NewScalar(1, dt)
	if err != nil {
		panic(err)
	}
	zero, err := tensor.NewScalar(0, dt)
	if err != nil {
		panic(err)
	}
	sHost := &tensor.Host{DType: dt, Shape: tensor.Shape{}, Data: scalarBytes(s)}
	unary, unaryRef, unaryName := IsNaN, cpuref.IsNaN, "is-nan"
	if !dt.IsFloat() {
		x = randomHost(rng, tensor.Bool, tr[0])
		unary, unaryRef, unaryName = LogicalNot, cpuref.LogicalNot, "logical-not"
	}
	return []generalCase{
		{"select", []*tensor.Host{cond, a, b},
			func(ts []*device.Tensor) (*device.Tensor, error) { return Select(ts[0], ts[1], ts[2]) },
			func() (*tensor.Host, error) { return cpuref.Select(cond, a, b, "numpy") }},
		{"where", []*tensor.Host{cond, a},
			func(ts []*device.Tensor) (*device.Tensor, error) { return Where(ts[0], s, ts[1]) },
			func() (*tensor.Host, error) { return cpuref.Where(cond, cpuref.Operand{S: &s}, cpuref.Operand{T: a}) }},
		{"less", []*tensor.Host{a, b},
			func(ts []*device.Tensor) (*device.Tensor, error) { return Less(ts[0], ts[1]) },
			func() (*tensor.Host, error) { return cpuref.Less(a, b, "numpy") }},
		{"greater-equal scalar", []*tensor.Host{a},
			func(ts []*device.Tensor) (*device.Tensor, error) { return GreaterEqual(ts[0], s) },
			func() (*tensor.Host, error) { return cpuref.GreaterEqual(a, sHost, "numpy") }},
		{unaryName, []*tensor.Host{x},
			func(ts []*device.Tensor) (*device.Tensor, error) { return unary(ts[0]) },
			func() (*tensor.Host, error) { return unaryRef(x) }},
		{"maximum", []*tensor.Host{a, b},
			func(ts []*device.Tensor) (*device.Tensor, error) { return Maximum(ts[0], ts[1]) },
			func() (*tensor.Host, error) { return cpuref.Maximum(a, b, "numpy") }},
		{"minimum scalar", []*tensor.Host{a},
			func(ts []*device.Tensor) (*device.Tensor, error) { return Minimum(s, ts[0]) },
			func() (*tensor.Host, error) { return cpuref.Minimum(sHost, a, "numpy") }},
		{"clamp", []*tensor.Host{a},
			func(ts []*device.Tensor) (*device.Tensor, error) { return Clamp(ts[0], zero, s) },
			func() (*tensor.Host, error) { return cpuref.Clamp(a, zero, s) }},
	}
}

// scalarBytes returns s's element as a host tensor's bytes.
func scalarBytes(s tensor.Scalar) []byte {
	b := make([]byte, s.DType.Size())
	for i := range b {
		b[i] = byte(s.Bits >> (8 * i))
	}
	return b
}

// checkOnDevice uploads hosts to d, runs run on them and fails t unless
// the result holds want's shape and bytes.
func checkOnDevice(t *testing.T, d *device.Device, name string, hosts []*tensor.Host,
	run func(ts []*device.Tensor) (*device.Tensor, error), want *tensor.Host) {
	t.Helper()
	ts := make([]*device.Tensor, len(hosts))
	for i, h := range hosts {
		x, err := bridge.Device(d).Upload(h)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Free()
		ts[i] = bridge.UserTensor(x)
	}
	y, err := run(ts)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	checkAgainst(t, name, y, want)
}
