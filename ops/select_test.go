package ops

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/tensor"
)

// randomHost returns a tensor of random bytes; bools are 0 or any other
// byte, as docs/specs.md#element-types allows.
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
		x, err := bridge.Device(d).Upload(h)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, bridge.UserTensor(x))
	}
	y, err := Select(ts[0], ts[1], ts[2])
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer y.Free()
	got, err := bridge.Tensor(y).Download()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Data, want.Data) {
		t.Fatalf("%s: output differs from cpuref", name)
	}
}

// setTuning sets every profile to workgroups of group invocations, each
// doing chunks chunks at every element width, folds too, until t ends.
func setTuning(t testing.TB, group, chunks int) {
	for _, p := range []*profile{&cpuProfile, &gpuProfile} {
		saved := *p
		t.Cleanup(func() { *p = saved })
		p.group, p.chunks, p.foldChunks = group, chunks, 0
	}
}

// TestSelectGrid shrinks workgroups to one invocation of one chunk, so
// that a dispatch needs more than 65535 workgroups and the kernel's
// linear group index spans the Y dimension of the grid.
func TestSelectGrid(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	setTuning(t, 1, 1)
	n := 16*65535*2 + 100
	g, err := bridge.Device(d).Grid(uint64(n+15) / 16)
	if err != nil || g[1] < 2 {
		t.Fatalf("grid %v, %v: want more than one row of workgroups", g, err)
	}
	eachVariant(t, d, selectElem.variants[4], func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		checkSelect(t, d, randomHost(rng, tensor.Bool, tensor.Shape{n}), randomHost(rng, tensor.U8, tensor.Shape{n}), randomHost(rng, tensor.U8, tensor.Shape{n}))
		checkSelect(t, d, randomHost(rng, tensor.Bool, tensor.Shape{n / 100, 1}), randomHost(rng, tensor.I16, tensor.Shape{n / 100, 100}), randomHost(rng, tensor.I16, tensor.Shape{100}))
	})
}

// TestSelectTuning runs each element width with every chunk count over
// pages of 4 KiB, so that blocks meet piece edges at every alignment
// (one chunk of bytes makes blocks of a single vector, which texel64
// stores unpaired), in workgroups of 1, 7 and 64 invocations. It sets
// tunings and times nothing. Where blocks meet piece edges follows from
// the chunks, the width and the shape, not from the workgroup, so the 60
// cases take the workgroup sizes in turn, and the variants too
// (variantsInTurn): each variant and each workgroup size meets every
// chunk count at every width, and each variant every workgroup size.
func TestSelectTuning(t *testing.T) {
	d := devtest.Open(t, device.Options{PageSize: 4096})
	groups := []int{1, 7, 64}
	variantsInTurn(t, d, selectElem.variants[4], func(t *testing.T, mine func(int) bool) {
		rng, n := rand.New(rand.NewPCG(2, 3)), 0
		for ci, chunks := range []int{1, 2, 4} {
			for di, dt := range []tensor.DType{tensor.U8, tensor.F16, tensor.I32, tensor.F64} {
				for si, s := range [][3]tensor.Shape{
					{{5000}, {5000}, {5000}},
					{{37, 1}, {37, 130}, {37, 130}},
					{{1, 130}, {37, 130}, {1}},
					{{9, 1, 7}, {9, 11, 7}, {11, 1}},
					{{}, {3001}, {3001}},
				} {
					if !mine(ci + si) {
						continue
					}
					setTuning(t, groups[(ci+di+si)%len(groups)], chunks)
					checkSelect(t, d, randomHost(rng, tensor.Bool, s[0]), randomHost(rng, dt, s[1]), randomHost(rng, dt, s[2]))
					n++
				}
			}
		}
		t.Logf("%d cases", n)
	})
}

// TestMeasureSelect times every select family's variants as a first use
// on a device without driver defaults would, over pages of 64 KiB, both
// its runs included: the one with then and else pushed binds no tensor
// for them.
func TestMeasureSelect(t *testing.T) {
	d := devtest.Open(t, device.Options{PageSize: 64 << 10})
	for _, w := range []int{1, 2, 4, 8} {
		for c := range classes {
			for _, v := range selectElem.variants[w] {
				if !v.eligible(d) {
					continue
				}
				ns, err := selectElem.measure(d, v, w, c)
				if err != nil || !(ns > 0) || math.IsInf(ns, 0) {
					t.Errorf("w%d/%v/%s: %v ns, %v", w, c, v.name, ns, err)
				}
			}
		}
	}
}

// TestSelectTexelSpan stands in a limit of 4 KiB for the device's
// maxTexelBufferElements: the texel variants' pieces then split at every
// 4 KiB of their operands although pages are far larger, and results
// still match cpuref; the portable variant's pieces do not split, so it
// plans as everywhere else and does not run here. The texel variants
// take the types and shapes in turn (variantsInTurn).
func TestSelectTexelSpan(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	saved := texelBytes
	defer func() { texelBytes = saved }()
	texelBytes = 4096 + 100 // not a power of two: the span rounds down
	var texels []*variant
	for _, v := range selectElem.variants[4] {
		want := int(bridge.Device(d).PageSize())
		if v.kernel.Kinds != nil {
			want = 4096
			texels = append(texels, v)
		}
		if got := spanOf(d, v); got != want {
			t.Errorf("variant %s: span %d, want %d", v.name, got, want)
		}
	}
	variantsInTurn(t, d, texels, func(t *testing.T, mine func(int) bool) {
		rng, n := rand.New(rand.NewPCG(5, 6)), 0
		for di, dt := range []tensor.DType{tensor.U8, tensor.F16, tensor.F32, tensor.F64} {
			for si, s := range [][3]tensor.Shape{{{20000}, {20000}, {20000}}, {{300, 1}, {300, 70}, {70}}, {{1, 9000}, {3, 9000}, {3, 1}}} {
				if mine(di + si) {
					checkSelect(t, d, randomHost(rng, tensor.Bool, s[0]), randomHost(rng, dt, s[1]), randomHost(rng, dt, s[2]))
					n++
				}
			}
		}
		t.Logf("%d cases", n)
	})
}

// TestSelectFamilies checks the families: one per element width and
// class, the portable variant first; plans fall in the class they
// should; tuning measures every variant the device can run and stores
// the fastest, which Select then runs without measuring again.
func TestSelectFamilies(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	for w := range selectElem.families {
		for c, f := range selectElem.families[w] {
			if (w == 1 || w == 2 || w == 4 || w == 8) != (f != nil) {
				t.Fatalf("width %d class %d: family %v", w, c, f)
			}
			if f != nil && (f.key != fmt.Sprintf("select/w%d/%v", w, class(c)) || f.variants[0].needs != nil) {
				t.Errorf("family %s: want key select/w%d/%v and a portable first variant", f.key, w, class(c))
			}
		}
	}
	x := operand{t: &device.Tensor{}}
	for _, c := range []struct {
		shapes []tensor.Shape // out, cond, then, else
		a, b   operand
		want   class
	}{
		{[]tensor.Shape{{4, 5}, {4, 5}, {4, 5}, {4, 5}}, x, x, classSame},
		{[]tensor.Shape{{4, 5}, {4, 5}, {4, 5}, nil}, x, operand{}, classSame},
		{[]tensor.Shape{{4, 5}, {4, 1}, {4, 5}, {4, 5}}, x, x, classBroadcast},
		{[]tensor.Shape{{4, 5}, {4, 5}, {4, 5}, {}}, x, x, classBroadcast},
		{[]tensor.Shape{{4, 5}, {}, {4, 5}, {4, 5}}, x, x, classBroadcast},
	} {
		l := newLayout(c.shapes[0], c.shapes[1:]...)
		ts := [maxOperands]*device.Tensor{x.t, c.a.t, c.b.t, x.t}
		if got := classOf(&l, &ts); got != c.want {
			t.Errorf("shapes %v: class %v, want %v", c.shapes, got, c.want)
		}
	}
	f := selectElem.families[4][classSame]
	best, times, err := f.tune(d)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range f.variants {
		if v.eligible(d) != (times[i] > 0) {
			t.Errorf("%s: variant %s eligible %v but measured %v ns", f.key, v.name, v.eligible(d), times[i])
		}
		if times[i] > 0 && times[i] < times[slices.Index(f.variants, best)] {
			t.Errorf("%s: chose %s, but %s measured faster (%v ns)", f.key, best.name, v.name, times)
		}
	}
	t.Logf("%s: %v ns by variant, chose %s", f.key, times, best.name)
	if name, ok := bridge.Device(d).Choice(f.key); !ok || name != best.name {
		t.Errorf("%s: stored choice %q, want %q", f.key, name, best.name)
	}
	// An untuned family takes the driver's default, where it has one
	// (TestDriverDefaults), or is measured on first use and its choice
	// stored.
	rng := rand.New(rand.NewPCG(4, 5))
	checkSelect(t, d, randomHost(rng, tensor.Bool, tensor.Shape{300, 1}), randomHost(rng, tensor.F16, tensor.Shape{300, 40}), randomHost(rng, tensor.F16, tensor.Shape{40}))
	bcast := selectElem.families[2][classBroadcast]
	if name, ok := bridge.Device(d).Choice(bcast.key); bcast.byDefault(d) == nil && (!ok || bcast.stored(d) == nil) {
		t.Errorf("select/w2/bcast: no eligible choice stored after a select (%q)", name)
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
		x, err := bridge.Device(d).Upload(h)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Free()
		ts = append(ts, bridge.UserTensor(x))
	}
	const want = "select: the broadcast needs 9 dimensions after merging adjacent ones, more than the 8 the kernels support"
	if y, err := Select(ts[0], ts[1], ts[2]); err == nil || err.Error() != want {
		t.Errorf("rank 9: got %v, %v; want %q", y, err, want)
	}
}

// TestSelectDirect runs selects and wheres whose cond holds one element,
// which copy, fill or expand the picked operand where the host can read
// cond (pickByCond, run.planPick), against cpuref, and checks which way each went: a
// kernel's dispatch can be captured, and which kernel it was, a copy or
// fill cannot.
func TestSelectDirect(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	// Where the host cannot read a tensor's memory, as on a discrete
	// GPU, it never knows cond: the kernel runs.
	pathFor := func(path string) string {
		if !bridge.Device(d).Unified() {
			return "kernel"
		}
		return path
	}
	rng := rand.New(rand.NewPCG(5, 6))
	out := tensor.Shape{37, 129}
	upload := func(h *tensor.Host) *device.Tensor {
		x, err := bridge.Device(d).Upload(h)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(x.Free)
		return bridge.UserTensor(x)
	}
	// An 8-byte element whose halves differ cannot be a fill's word.
	one := func(dt tensor.DType, same bool) *tensor.Host {
		h := randomHost(rng, dt, tensor.Shape{1})
		if dt.Size() == 8 {
			copy(h.Data[4:], h.Data[:4])
			if !same {
				h.Data[4] = ^h.Data[0]
			}
		}
		return h
	}
	type directCase struct {
		name      string
		then, els *tensor.Host
		path      string // "copy" (or fill, or tile), "expand" or "kernel"
	}
	for _, dt := range []tensor.DType{tensor.Bool, tensor.F16, tensor.F32, tensor.F64} {
		for _, c := range []byte{0, 1, 0x80} {
			cond := &tensor.Host{DType: tensor.Bool, Shape: tensor.Shape{}, Data: []byte{c}}
			full := randomHost(rng, dt, out)
			// A column picked is expanded where expand beats the
			// kernel: rows of 129 elements up to 4 bytes.
			column := "kernel"
			if dt.Size() <= 4 {
				column = "expand"
			}
			pick := func(then, els string) string {
				if c != 0 {
					return then
				}
				return els
			}
			cases := []directCase{
				{"full, full", full, randomHost(rng, dt, out), "copy"},
				{"full, one", full, one(dt, true), "copy"},
				{"one, full", one(dt, true), full, "copy"},
				{"row, full", randomHost(rng, dt, tensor.Shape{1, 129}), full, "copy"},
				{"full, column", full, randomHost(rng, dt, tensor.Shape{37, 1}), pick("copy", column)},
				{"column, row", randomHost(rng, dt, tensor.Shape{37, 1}), randomHost(rng, dt, tensor.Shape{129}), pick(column, "copy")},
				// Rows of 16 are whole chunks: the kernel has no row ends
				// to go element by element, but for 1-byte elements.
				{"columns of 16", randomHost(rng, dt, tensor.Shape{3, 7, 1, 1}), randomHost(rng, dt, tensor.Shape{4, 4}),
					pick(map[bool]string{true: "expand", false: "kernel"}[dt.Size() == 1], "copy")},
			}
			if dt.Size() == 8 {
				cases = append(cases, directCase{"halves differ, full", one(dt, false), full, "copy"})
			}
			for _, k := range cases {
				name := fmt.Sprintf("%v, cond %#x, then and else %s", dt, c, k.name)
				want, err := cpuref.Select(cond, k.then, k.els, "numpy")
				if err != nil {
					t.Fatal(err)
				}
				ct, tt, et := upload(cond), upload(k.then), upload(k.els)
				var y *device.Tensor
				if path := pathOf(d, func() error {
					var err error
					y, err = Select(ct, tt, et)
					return err
				}); path != pathFor(k.path) {
					t.Errorf("%s: went by %s, want %s", name, path, pathFor(k.path))
				}
				if y == nil {
					t.Fatalf("%s: no result", name)
				}
				checkAgainst(t, name, y, want)
			}
			// Where's pushed scalars are filled as one-element tensors
			// are, but for 8-byte ones whose halves differ.
			for _, same := range []bool{true, false} {
				var bits [8]byte
				copy(bits[:], one(dt, same).Data)
				s := tensor.Scalar{DType: dt, Bits: binary.LittleEndian.Uint64(bits[:])}
				want, err := cpuref.Where(cond, cpuref.Operand{T: full}, cpuref.Operand{S: &s})
				if err != nil {
					t.Fatal(err)
				}
				ct, ft := upload(cond), upload(full)
				var y *device.Tensor
				path := pathOf(d, func() error {
					var err error
					y, err = Where(ct, ft, s)
					return err
				})
				name := fmt.Sprintf("where %v, cond %#x, scalar bits %#x", dt, c, s.Bits)
				if y == nil {
					t.Fatalf("%s: no result", name)
				}
				if want := pathFor(map[bool]string{true: "copy", false: "kernel"}[c != 0 || same || dt.Size() < 8]); path != want {
					t.Errorf("%s: went by %s, want %s", name, path, want)
				}
				checkAgainst(t, name, y, want)
			}
		}
	}
	// A cond written by work still pending is not read: the kernel runs.
	c := upload(&tensor.Host{DType: tensor.Bool, Shape: tensor.Shape{1}, Data: []byte{0}})
	x := upload(randomHost(rng, tensor.F32, out))
	notC, err := LogicalNot(c)
	if err != nil {
		t.Fatal(err)
	}
	defer notC.Free()
	var y *device.Tensor
	if path := pathOf(d, func() error {
		var err error
		y, err = Select(notC, x, x)
		return err
	}); y == nil || path != "kernel" {
		t.Fatalf("select on a cond still being written: got %v by %s, want a result by the kernel", y, path)
	}
	want, err := bridge.Tensor(x).Download()
	if err != nil {
		t.Fatal(err)
	}
	checkAgainst(t, "cond still being written", y, want)
	// A one-element pick still being written is tiled, not filled.
	yes := &tensor.Host{DType: tensor.Bool, Shape: tensor.Shape{}, Data: []byte{1}}
	bools := randomHost(rng, tensor.Bool, out)
	notC, err = LogicalNot(c)
	if err != nil {
		t.Fatal(err)
	}
	defer notC.Free()
	yt, bt := upload(yes), upload(bools)
	if path := pathOf(d, func() error {
		var err error
		y, err = Select(yt, notC, bt)
		return err
	}); y == nil || path != pathFor("copy") {
		t.Fatalf("select of a pick still being written: got %v by %s, want a result by %s", y, path, pathFor("copy"))
	}
	want, err = cpuref.Select(yes, &tensor.Host{DType: tensor.Bool, Shape: tensor.Shape{1}, Data: []byte{1}}, bools, "numpy")
	if err != nil {
		t.Fatal(err)
	}
	checkAgainst(t, "pick still being written", y, want)
}

// pathOf runs f, an op, and returns how it went: "copy" where it
// dispatched no kernel (a copy, fill or tile), "expand" or "kernel".
func pathOf(d *device.Device, f func() error) string {
	r, err := bridge.Device(d).Capture(f)
	switch {
	case err != nil:
		return "copy"
	case strings.HasPrefix(r.Kernel().Name, "expand"):
		return "expand"
	}
	return "kernel"
}

// checkAgainst fails t unless y holds want's bytes, and frees y.
func checkAgainst(t *testing.T, name string, y *device.Tensor, want *tensor.Host) {
	t.Helper()
	defer y.Free()
	got, err := bridge.Tensor(y).Download()
	if err != nil {
		t.Fatal(err)
	}
	if !got.Shape.Equal(want.Shape) || !bytes.Equal(got.Data, want.Data) {
		t.Errorf("%s: got %v, differs from cpuref's %v", name, got.Shape, want.Shape)
	}
}
