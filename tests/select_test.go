package tests

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/ops"
	"github.com/vkops/vkops/tensor"
)

// The rules under test are docs/specs.md#select and #where, which decide
// what the upstream texts leave open: OpenVINO's Select-1 (its current
// and older texts), oneDNN Graph's Select-1 and PyPTO's where. cpuref is
// their oracle: every device result must equal its bytes, every
// rejection its message.

// selPageSize is the smallest page a device allows: tensors of a few
// KiB span many pages, so that every op is split into many dispatches.
const selPageSize = 4096

var selModes = []ops.Broadcast{ops.BroadcastNumpy, ops.BroadcastNone, ops.BroadcastPDPD}

// selHost builds a host tensor from Go values; a nil shape is 0-D.
func selHost[T tensor.Element](shape []int, data ...T) *tensor.Host {
	if shape == nil {
		shape = []int{}
	}
	h, err := tensor.FromSlice(data, shape...)
	if err != nil {
		panic(err)
	}
	return h
}

// selBools turns "TF.." into a bool tensor, which keeps masks readable.
func selBools(shape []int, s string) *tensor.Host {
	b := make([]bool, len(s))
	for i, c := range s {
		b[i] = c == 'T'
	}
	return selHost(shape, b...)
}

// selRandom returns a tensor of random bits. Bools are 0 about half the
// time and otherwise any nonzero byte, as docs/specs.md#element-types
// allows; floats get NaNs with payloads (signalling ones too), infinities
// and negative zeros besides the random patterns, whose NaNs are as
// common as the format makes them.
func selRandom(rng *rand.Rand, dt tensor.DType, shape tensor.Shape) *tensor.Host {
	h, err := tensor.New(dt, shape)
	if err != nil {
		panic(err)
	}
	for i := 0; i < len(h.Data); i += 8 {
		v := rng.Uint64()
		for k := i; k < min(i+8, len(h.Data)); k++ {
			h.Data[k] = byte(v)
			v >>= 8
		}
	}
	if dt == tensor.Bool {
		for i := range h.Data {
			if h.Data[i]&1 == 0 {
				h.Data[i] = 0
			}
		}
		return h
	}
	specials := map[tensor.DType][]uint64{
		tensor.F16:  {0x7c01, 0xfe00, 0x7c00, 0x8000},
		tensor.BF16: {0x7f81, 0xffc1, 0x7f80, 0x8000},
		tensor.F32:  {0x7f800001, 0xffc00123, 0x7f800000, 0x80000000},
		tensor.F64:  {0x7ff0000000000001, 0xfff8000000000abc, 0x7ff0000000000000, 0x8000000000000000},
	}[dt]
	size := dt.Size()
	for i := 0; i < h.Len() && len(specials) > 0; i += 1 + rng.IntN(7) {
		v := specials[rng.IntN(len(specials))]
		for k := range size {
			h.Data[i*size+k] = byte(v >> (8 * k))
		}
	}
	return h
}

// selOpen opens a device for t, by default with pages as the device
// allows them, or as small as they go.
func selOpen(t testing.TB, small bool) *device.Device {
	t.Helper()
	var opts device.Options
	if small {
		opts.PageSize = selPageSize
	}
	return devtest.Open(t, opts)
}

// selUpload uploads hosts (nil stays nil) and returns them with a
// function that frees them.
func selUpload(t testing.TB, d *device.Device, hs ...*tensor.Host) ([]*device.Tensor, func()) {
	t.Helper()
	ts := make([]*device.Tensor, len(hs))
	free := func() {
		for _, x := range ts {
			x.Free()
		}
	}
	for i, h := range hs {
		if h == nil {
			continue
		}
		x, err := bridge.Device(d).Upload(h)
		if err != nil {
			free()
			t.Fatalf("upload %v%v: %v", h.DType, h.Shape, err)
		}
		ts[i] = bridge.UserTensor(x)
	}
	return ts, free
}

// selDiff describes how got differs from want, or returns "".
func selDiff(got, want *tensor.Host) string {
	switch {
	case got.DType != want.DType || !got.Shape.Equal(want.Shape):
		return fmt.Sprintf("got %v%v, want %v%v", got.DType, got.Shape, want.DType, want.Shape)
	case !bytes.Equal(got.Data, want.Data):
		size := want.DType.Size()
		for i := 0; i < len(want.Data); i += size {
			if !bytes.Equal(got.Data[i:i+size], want.Data[i:i+size]) {
				return fmt.Sprintf("element %d of %d is % x, want % x", i/size, want.Len(), got.Data[i:i+size], want.Data[i:i+size])
			}
		}
	}
	return ""
}

// selCompare fails t unless the device gave what the oracle gave: the
// same bytes, or the same error, which must then match ops.ErrInvalid.
// It also checks that the op left its inputs as they were.
func selCompare(t testing.TB, name string, got *device.Tensor, err error, want *tensor.Host, werr error, ins []*device.Tensor, hosts []*tensor.Host) {
	t.Helper()
	if got != nil {
		defer got.Free()
	}
	switch {
	case werr != nil || err != nil:
		if werr == nil || err == nil || err.Error() != werr.Error() {
			t.Fatalf("%s: error %v, want %v", name, err, werr)
		}
		if !errors.Is(err, ops.ErrInvalid) || got != nil {
			t.Fatalf("%s: got %v and %v, want no tensor and an error matching ops.ErrInvalid", name, got, err)
		}
	default:
		h, err := bridge.Tensor(got).Download()
		if err != nil {
			t.Fatalf("%s: download: %v", name, err)
		}
		if d := selDiff(h, want); d != "" {
			t.Fatalf("%s: %s", name, d)
		}
	}
	for i, x := range ins {
		if x == nil {
			continue
		}
		h, err := bridge.Tensor(x).Download()
		if err != nil {
			t.Fatalf("%s: download input %d: %v", name, i, err)
		}
		if !bytes.Equal(h.Data, hosts[i].Data) {
			t.Fatalf("%s: input %d changed", name, i)
		}
	}
}

// selCheck runs Select on the device and in cpuref and compares them.
func selCheck(t testing.TB, d *device.Device, name string, mode ops.Broadcast, cond, then, els *tensor.Host) {
	t.Helper()
	want, werr := cpuref.Select(cond, then, els, mode.String())
	ts, free := selUpload(t, d, cond, then, els)
	defer free()
	got, err := ops.Select(ts[0], ts[1], ts[2], ops.WithBroadcast(mode))
	name = fmt.Sprintf("%s: select %v cond %v then %v%v else %v%v", name, mode, cond.Shape, then.DType, then.Shape, els.DType, els.Shape)
	selCompare(t, name, got, err, want, werr, ts, []*tensor.Host{cond, then, els})
}

// OpenVINO Select-1's older text, "Example": the worked 3x2 case, under
// every broadcast mode, as integers and as the float types T2 of oneDNN
// Graph's Select-1.
func TestSelectSpecLegacyExample(t *testing.T) {
	d := selOpen(t, false)
	cond := selBools([]int{3, 2}, "FFTFTT")
	then := []float32{-1, 0, 1, 2, 3, 4}
	els := []float32{11, 10, 9, 8, 7, 6}
	want := []float32{11, 10, 1, 8, 3, 4}
	for _, mode := range selModes {
		for _, dt := range []tensor.DType{tensor.I32, tensor.F32, tensor.F16, tensor.BF16} {
			conv := func(v []float32) *tensor.Host {
				h, err := tensor.New(dt, tensor.Shape{3, 2})
				if err != nil {
					t.Fatal(err)
				}
				for i, x := range v {
					s, err := tensor.NewScalar(x, dt)
					if err != nil {
						t.Fatal(err)
					}
					copy(h.Data[i*dt.Size():], s.Bytes())
				}
				return h
			}
			ts, free := selUpload(t, d, cond, conv(then), conv(els))
			got, err := ops.Select(ts[0], ts[1], ts[2], ops.WithBroadcast(mode))
			selCompare(t, fmt.Sprintf("%v %v", mode, dt), got, err, conv(want), nil, ts, []*tensor.Host{cond, conv(then), conv(els)})
			free()
		}
	}
}

// oneDNN Graph's Select-1, "Broadcasting rules": cond {4,5} and {3,1,5}
// fit {2,3,4,5}; cond {3,5} does not, and docs/specs.md#select spells the
// error.
func TestSelectSpecOneDNN(t *testing.T) {
	d := selOpen(t, false)
	rng := rand.New(rand.NewPCG(1, 1))
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16} {
		then, els := selRandom(rng, dt, tensor.Shape{2, 3, 4, 5}), selRandom(rng, dt, tensor.Shape{2, 3, 4, 5})
		for _, shape := range []tensor.Shape{{4, 5}, {3, 1, 5}} {
			selCheck(t, d, "valid", ops.BroadcastNumpy, selRandom(rng, tensor.Bool, shape), then, els)
		}
		ts, free := selUpload(t, d, selRandom(rng, tensor.Bool, tensor.Shape{3, 5}), then, els)
		_, err := ops.Select(ts[0], ts[1], ts[2])
		free()
		const want = "select: cond shape [3 5] cannot be broadcast one way to [2 3 4 5] (axis -2: 3 vs 4)"
		if err == nil || err.Error() != want {
			t.Errorf("cond {3,5}: error %v, want %q", err, want)
		}
	}
}

// docs/specs.md#select: a 0-D cond selects one side entirely; zero-size
// dimensions give an empty output; cond never widens the output under
// numpy, and pdpd takes then's shape.
func TestSelectSpecRules(t *testing.T) {
	d := selOpen(t, false)
	rng := rand.New(rand.NewPCG(1, 2))
	r := func(dt tensor.DType, s ...int) *tensor.Host { return selRandom(rng, dt, s) }
	for _, c := range []struct {
		mode            ops.Broadcast
		cond, then, els *tensor.Host
	}{
		{ops.BroadcastNumpy, selBools(nil, "T"), r(tensor.I16, 3, 4), r(tensor.I16, 3, 4)},
		{ops.BroadcastNumpy, selBools(nil, "F"), r(tensor.I16, 3, 4), r(tensor.I16, 4)},
		{ops.BroadcastNumpy, selBools(nil, "T"), r(tensor.F64), r(tensor.F64)},
		{ops.BroadcastNone, selBools(nil, "F"), r(tensor.U8), r(tensor.U8)},
		{ops.BroadcastNumpy, r(tensor.Bool, 0, 3), r(tensor.F32, 2, 0, 3), r(tensor.F32, 3)},
		{ops.BroadcastNone, r(tensor.Bool, 0), r(tensor.F32, 0), r(tensor.F32, 0)},
		{ops.BroadcastNumpy, r(tensor.Bool, 2, 3), r(tensor.F32, 3), r(tensor.F32, 3)}, // cond would widen
		{ops.BroadcastPDPD, r(tensor.Bool, 3), r(tensor.U64, 2, 3), r(tensor.U64, 1)},
		{ops.BroadcastPDPD, r(tensor.Bool, 3), r(tensor.U64, 3), r(tensor.U64, 2, 3)}, // else would widen
		{ops.BroadcastNumpy, r(tensor.Bool, 5, 1), r(tensor.I8, 1, 7), r(tensor.I8, 5, 1)},
	} {
		selCheck(t, d, "rule", c.mode, c.cond, c.then, c.els)
	}
}

// selShapes returns cond, then and else shapes for mode over an output
// of the given rank: pattern 0 is same-shape, 1 cond broadcast along
// rows ([..., 1]), 2 cond along columns ([1, ..., C]), 3 a 0-D then, 4 a
// 0-D cond, and others random broadcasts with dropped leading dims.
// Dimensions are small, but their product reaches up to maxN.
func selShapes(rng *rand.Rand, mode ops.Broadcast, rank, pattern, maxN int) (c, a, b tensor.Shape) {
	pool := []int{1, 2, 3, 4, 5, 7, 8, 13, 16, 17, 31, 33, 64, 100, 127, 129, 257, 1000}
	out := make(tensor.Shape, rank)
	n := 1
	for i := range out {
		out[i] = 1
	}
	for _, i := range rng.Perm(rank) {
		d := pool[rng.IntN(len(pool))]
		for d > 1 && n*d > maxN {
			d /= 2
		}
		out[i] = d
		n *= d
	}
	if rank > 0 && rng.IntN(20) == 0 {
		out[rng.IntN(rank)] = 0
	}
	sub := func(s tensor.Shape, drop bool) tensor.Shape {
		if drop {
			s = s[rng.IntN(len(s)+1):]
		}
		s = s.Clone()
		for i := range s {
			if rng.IntN(3) == 0 {
				s[i] = 1
			}
		}
		return s
	}
	switch {
	case mode == ops.BroadcastNone || pattern == 0:
		return out, out, out
	case pattern == 1 && rank > 0:
		c = out.Clone()
		c[rank-1] = 1
		return c, out, out
	case pattern == 2 && rank > 0:
		c = out.Clone()
		for i := range rank - 1 {
			c[i] = 1
		}
		return c, out, out
	case pattern == 3:
		return out, tensor.Shape{}, out
	case pattern == 4:
		return tensor.Shape{}, out, out
	}
	a = sub(out, mode == ops.BroadcastNumpy)
	if mode == ops.BroadcastPDPD {
		a = out
	}
	b = sub(out, true)
	res := a
	if mode == ops.BroadcastNumpy {
		res, _ = tensor.Broadcast(a, b)
	}
	return sub(res, true), a, b
}

// TestSelectMatrix runs every element type under every broadcast mode,
// over ranks 0 to 6 and several broadcast patterns each, on a device with
// the usual pages and on one with 4 KiB pages (tensors spanning many
// pages, so texel views start at many offsets), against cpuref, the
// kernel variants taking the cases in turn. On lavapipe every variant
// must be eligible. With -short, each mode, rank and pattern runs once,
// the element types taking turns: every plan the patterns make, at each
// element width, without the full cross.
func TestSelectMatrix(t *testing.T) {
	for _, small := range []bool{false, true} {
		t.Run(fmt.Sprintf("small-pages=%v", small), func(t *testing.T) {
			d := selOpen(t, small)
			vt := kernelTurns(t, d, "select")
			t.Logf("%d cases (%v)", selMatrix(t, d, vt), vt)
		})
	}
}

// selMatrix runs TestSelectMatrix's cases on d, the variants of vt in
// turn, and returns how many.
func selMatrix(t *testing.T, d *device.Device, vt *variantTurns) int {
	rng := rand.New(rand.NewPCG(2, 3))
	cases := 0
	for i, dt := range tensor.DTypes {
		for m, mode := range selModes {
			for rank := range 7 {
				for pattern := range 10 {
					if testing.Short() && (m*70+rank*10+pattern)%len(tensor.DTypes) != i {
						continue
					}
					maxN := 1 << (4 + rng.IntN(14))
					c, a, b := selShapes(rng, mode, rank, pattern, maxN)
					vt.use(cases)
					selCheck(t, d, fmt.Sprintf("pattern %d", pattern), mode,
						selRandom(rng, tensor.Bool, c), selRandom(rng, dt, a), selRandom(rng, dt, b))
					cases++
				}
			}
		}
	}
	return cases
}

// TestSelectSizes runs one-dimensional and row/column patterns from zero
// elements past a full workgroup and past several 4 KiB pages, for each
// element width, the kernel variants taking the cases in turn. With
// -short, sizes either side of 16 elements and of a 4 KiB page only.
func TestSelectSizes(t *testing.T) {
	for _, small := range []bool{false, true} {
		t.Run(fmt.Sprintf("small-pages=%v", small), func(t *testing.T) {
			d := selOpen(t, small)
			vt := kernelTurns(t, d, "select")
			t.Logf("%d cases (%v)", selSizes(t, d, vt), vt)
		})
	}
}

// selSizes runs TestSelectSizes's cases on d, the variants of vt in
// turn, and returns how many.
func selSizes(t *testing.T, d *device.Device, vt *variantTurns) int {
	sizes := []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 4095, 4096, 4097, 16383, 16384, 16385, 65536*3 + 5, 1<<20 + 3}
	rng := rand.New(rand.NewPCG(3, 4))
	cases := 0
	check := func(name string, mode ops.Broadcast, cond, then, els *tensor.Host) {
		vt.use(cases)
		selCheck(t, d, name, mode, cond, then, els)
		cases++
	}
	if testing.Short() {
		sizes = []int{0, 1, 15, 16, 17, 33, 4095, 4096, 4097, 16385}
	}
	for _, dt := range []tensor.DType{tensor.Bool, tensor.I16, tensor.F32, tensor.F64} {
		for _, n := range sizes {
			cond := selRandom(rng, tensor.Bool, tensor.Shape{n})
			then, els := selRandom(rng, dt, tensor.Shape{n}), selRandom(rng, dt, tensor.Shape{n})
			check("same", ops.BroadcastNumpy, cond, then, els)
			check("0-D else", ops.BroadcastNumpy, cond, then, selRandom(rng, dt, nil))
			rows := max(1, n/37)
			shape := tensor.Shape{rows, n / rows}
			check("rows", ops.BroadcastNumpy, selRandom(rng, tensor.Bool, tensor.Shape{rows, 1}),
				selRandom(rng, dt, shape), selRandom(rng, dt, shape))
			check("columns", ops.BroadcastPDPD, selRandom(rng, tensor.Bool, tensor.Shape{n / rows}),
				selRandom(rng, dt, shape), selRandom(rng, dt, tensor.Shape{rows, 1}))
		}
	}
	return cases
}

// TestSelectErrors draws small shapes and types, valid and not, and
// requires the device to reject exactly what cpuref rejects, with its
// words (the README's "Errors name the op, both shapes and the dimension
// that clashes").
func TestSelectErrors(t *testing.T) {
	d := selOpen(t, false)
	rng := rand.New(rand.NewPCG(4, 5))
	shape := func() tensor.Shape {
		s := make(tensor.Shape, rng.IntN(5))
		for i := range s {
			s[i] = rng.IntN(4)
		}
		return s
	}
	dtype := func(p tensor.DType) tensor.DType {
		if rng.IntN(8) == 0 {
			return tensor.DTypes[rng.IntN(len(tensor.DTypes))]
		}
		return p
	}
	rejected := 0
	const n = 1500
	for i := range n {
		mode := ops.Broadcast(rng.IntN(4))
		dt := tensor.DTypes[rng.IntN(len(tensor.DTypes))]
		c, a, b := shape(), shape(), shape()
		if rng.IntN(2) == 0 { // a near miss rather than a random triple
			c, a, b = selShapes(rng, mode%3, rng.IntN(5), 5, 64)
			if s := []*tensor.Shape{&c, &a, &b}[rng.IntN(3)]; len(*s) > 0 {
				(*s)[rng.IntN(len(*s))] = rng.IntN(4)
			}
		}
		cond, then, els := selRandom(rng, dtype(tensor.Bool), c), selRandom(rng, dt, a), selRandom(rng, dtype(dt), b)
		if _, err := cpuref.Select(cond, then, els, mode.String()); err != nil {
			rejected++
		}
		selCheck(t, d, fmt.Sprint(i), mode, cond, then, els)
	}
	t.Logf("%d cases, %d rejected", n, rejected)
}

// TestSelectBadTensors covers what cpuref cannot be given: nil, freed
// and foreign tensors, and an output too large to address.
func TestSelectBadTensors(t *testing.T) {
	d := selOpen(t, false)
	d2 := selOpen(t, false)
	rng := rand.New(rand.NewPCG(5, 6))
	ts, free := selUpload(t, d, selRandom(rng, tensor.Bool, tensor.Shape{4}), selRandom(rng, tensor.F32, tensor.Shape{4}), selRandom(rng, tensor.F32, tensor.Shape{4}))
	defer free()
	other, freeOther := selUpload(t, d2, selRandom(rng, tensor.F32, tensor.Shape{4}))
	defer freeOther()
	gone, _ := selUpload(t, d, selRandom(rng, tensor.F32, tensor.Shape{4}))
	gone[0].Free()
	c, a, b := ts[0], ts[1], ts[2]
	for _, x := range []struct {
		c, a, b *device.Tensor
		opts    []ops.SelectOption
		want    string
	}{
		{nil, a, b, nil, "select: cond is nil"},
		{gone[0], a, b, nil, "select: cond f32[4] was freed"},
		{c, nil, b, nil, "select: then is nil"},
		{c, a, nil, nil, "select: else is nil"},
		{c, gone[0], b, nil, "select: then f32[4] was freed"},
		{c, a, other[0], nil, "select: else is on another device than cond"},
		{c, a, b, []ops.SelectOption{ops.WithBroadcast(7)}, `select: unknown broadcast "broadcast(7)" (want none, numpy or pdpd)`},
	} {
		y, err := ops.Select(x.c, x.a, x.b, x.opts...)
		if err == nil || err.Error() != x.want || !errors.Is(err, ops.ErrInvalid) || y != nil {
			t.Errorf("got %v, %v; want error %q", y, err, x.want)
		}
	}
	// cpuref's words for an unknown mode, the one check it shares here.
	if _, err := cpuref.Select(nil, nil, nil, "broadcast(7)"); err == nil || !strings.HasPrefix(err.Error(), "select: unknown broadcast") {
		t.Errorf("cpuref: %v", err)
	}
	// Shapes whose broadcast has too many elements, with zero-size or real
	// tensors: rejected before any allocation, in cpuref's words.
	hs := []*tensor.Host{selRandom(rng, tensor.Bool, tensor.Shape{0, 1 << 40, 1}), selRandom(rng, tensor.U8, tensor.Shape{0, 1 << 40, 1}), selRandom(rng, tensor.U8, tensor.Shape{0, 1, 1 << 40})}
	selCheck(t, d, "overflow", ops.BroadcastNumpy, hs[0], hs[1], hs[2])
	if testing.Short() {
		return
	}
	big := []*tensor.Host{selRandom(rng, tensor.Bool, nil), selRandom(rng, tensor.U8, tensor.Shape{1 << 24, 1}), selRandom(rng, tensor.U8, tensor.Shape{1<<24 + 1})}
	selCheck(t, d, "too many to address", ops.BroadcastNumpy, big[0], big[1], big[2])
}

// TestSelectConcurrent runs selects from several goroutines on one
// device.
func TestSelectConcurrent(t *testing.T) {
	d := selOpen(t, true)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(7, uint64(g)))
			for i := range 10 {
				c, a, b := selShapes(rng, ops.BroadcastNumpy, 3, i%8, 5000)
				selCheck(t, d, fmt.Sprintf("goroutine %d", g), ops.BroadcastNumpy,
					selRandom(rng, tensor.Bool, c), selRandom(rng, tensor.I32, a), selRandom(rng, tensor.I32, b))
			}
		}()
	}
	wg.Wait()
}

// whereArg is one of Where's input and other as the test builds it: a
// tensor, a typed scalar (value and type), or a plain Go number.
type whereArg struct {
	h     *tensor.Host
	typed bool
	dt    tensor.DType
	v     any
}

func (w whereArg) String() string {
	switch {
	case w.h != nil:
		return fmt.Sprintf("%v%v", w.h.DType, w.h.Shape)
	case w.typed:
		return fmt.Sprintf("%v(%v)", w.dt, w.v)
	}
	return fmt.Sprintf("%T(%v)", w.v, w.v)
}

// whereGoValue returns the exact value of a typed scalar as a Go value
// that tensor.NewScalar converts without loss: a bool, an int64 or uint64,
// or a float64, which holds every f16, bf16 and f32 value exactly. It
// decodes the bits by kind and width rather than type by type as ops
// does, so that the test and ops do not share a mistake.
func whereGoValue(s tensor.Scalar) any {
	shift := 64 - 8*s.DType.Size()
	switch dt := s.DType; {
	case dt == tensor.Bool:
		return s.Bits != 0
	case dt.IsSigned():
		return int64(s.Bits<<shift) >> shift
	case dt.IsUnsigned():
		return s.Bits
	case dt == tensor.F16:
		return float64(tensor.Float16(s.Bits).Float32())
	case dt == tensor.BF16:
		return float64(tensor.BFloat16(s.Bits).Float32())
	case dt == tensor.F32:
		return float64(math.Float32frombits(uint32(s.Bits)))
	}
	return math.Float64frombits(s.Bits)
}

// whereRef is the README's conversion, done independently of ops: the
// operand as cpuref takes it when the output's type is dt. A typed scalar
// is converted only beside a tensor, so that two typed scalars of
// different types reach cpuref as they are. ok is false when the scalar
// cannot be represented.
func whereRef(w whereArg, dt tensor.DType, besideTensor bool) (cpuref.Operand, bool) {
	if w.h != nil {
		return cpuref.Operand{T: w.h}, true
	}
	v := w.v
	if w.typed {
		s, err := tensor.NewScalar(w.v, w.dt)
		if err != nil {
			return cpuref.Operand{}, false
		}
		if w.dt == dt || !besideTensor {
			return cpuref.Operand{S: &s}, true
		}
		v = whereGoValue(s)
	}
	s, err := tensor.NewScalar(v, dt)
	if err != nil {
		return cpuref.Operand{}, false
	}
	return cpuref.Operand{S: &s}, true
}

// whereCheck runs Where on the device and in cpuref, with scalars
// converted as the README says, and compares them. Inputs with a scalar
// that cannot be represented must be rejected by the device alone.
func whereCheck(t testing.TB, d *device.Device, cond *tensor.Host, a, b whereArg) {
	t.Helper()
	name := fmt.Sprintf("where cond %v input %v other %v", cond.Shape, a, b)
	dt := tensor.F32
	switch {
	case a.h != nil:
		dt = a.h.DType
	case b.h != nil:
		dt = b.h.DType
	case a.typed:
		dt = a.dt
	case b.typed:
		dt = b.dt
	}
	tensors := a.h != nil || b.h != nil
	ra, oka := whereRef(a, dt, tensors)
	rb, okb := whereRef(b, dt, tensors)
	ts, free := selUpload(t, d, cond, a.h, b.h)
	defer free()
	arg := func(w whereArg, x *device.Tensor) any {
		switch {
		case w.h != nil:
			return x
		case w.typed:
			return ops.Scalar(w.v, w.dt)
		}
		return w.v
	}
	got, err := ops.Where(ts[0], arg(a, ts[1]), arg(b, ts[2]))
	if !oka || !okb {
		if err == nil || !errors.Is(err, ops.ErrInvalid) || !strings.Contains(err.Error(), "cannot be represented") {
			t.Fatalf("%s: got %v, %v; want a scalar that cannot be represented", name, got, err)
		}
		return
	}
	want, werr := cpuref.Where(cond, ra, rb)
	selCompare(t, name, got, err, want, werr, ts, []*tensor.Host{cond, a.h, b.h})
}

// PyPTO where, "调用示例" (examples): out1, out2 and out3 with the
// values the text prints.
func TestWhereSpecExamples(t *testing.T) {
	d := selOpen(t, false)
	cond1 := selBools([]int{4}, "TFTF")
	a1 := selHost([]int{4}, float32(1), 2, 3, 4)
	b1 := selHost([]int{4}, float32(10), 20, 30, 40)
	cond2 := selBools([]int{2, 2}, "TFFT")
	a2 := selHost([]int{2}, float32(1), 2)
	for _, c := range []struct {
		name       string
		cond       *tensor.Host
		input, oth any
		want       *tensor.Host
	}{
		{"out1", cond1, a1, b1, selHost([]int{4}, float32(1), 20, 3, 40)},
		{"out2", cond1, 1, 0, selHost([]int{4}, float32(1), 0, 1, 0)},
		{"out3", cond2, a2, 0.0, selHost([]int{2, 2}, float32(1), 0, 0, 2)},
	} {
		ts, free := selUpload(t, d, c.cond)
		in := []any{c.input, c.oth}
		for i, v := range in {
			if h, ok := v.(*tensor.Host); ok {
				x, f := selUpload(t, d, h)
				defer f()
				in[i] = x[0]
			}
		}
		got, err := ops.Where(ts[0], in[0], in[1])
		selCompare(t, c.name, got, err, c.want, nil, nil, nil)
		free()
	}
}

// PyPTO where, "功能说明" (description): input [1,20,20], other
// [20,1,20] and condition [20,20,1] give [20,20,20], with either one a
// scalar instead, and with both scalars the condition's shape.
func TestWhereSpecShapes(t *testing.T) {
	d := selOpen(t, false)
	rng := rand.New(rand.NewPCG(8, 9))
	cond := selRandom(rng, tensor.Bool, tensor.Shape{20, 20, 1})
	in := whereArg{h: selRandom(rng, tensor.F32, tensor.Shape{1, 20, 20})}
	oth := whereArg{h: selRandom(rng, tensor.F32, tensor.Shape{20, 1, 20})}
	s := whereArg{v: 2.5}
	for _, c := range []struct {
		a, b whereArg
		want tensor.Shape
	}{
		{in, oth, tensor.Shape{20, 20, 20}},
		{in, s, tensor.Shape{20, 20, 20}},
		{s, oth, tensor.Shape{20, 20, 20}},
		{s, s, tensor.Shape{20, 20, 1}},
	} {
		whereCheck(t, d, cond, c.a, c.b)
		ts, free := selUpload(t, d, cond, c.a.h, c.b.h)
		arg := func(w whereArg, x *device.Tensor) any {
			if x != nil {
				return x
			}
			return w.v
		}
		y, err := ops.Where(ts[0], arg(c.a, ts[1]), arg(c.b, ts[2]))
		if err != nil || !y.Shape().Equal(c.want) {
			t.Errorf("input %v other %v: got %v, %v; want shape %v", c.a, c.b, y, err, c.want)
		}
		y.Free()
		free()
	}
}

// TestWhereMatrix crosses tensors, typed scalars and plain numbers of
// every type with the README's conversion rules (exact, round to nearest
// even into f16/bf16/f32, an error where the value does not fit), against
// cpuref given the converted scalars, with usual and with 4 KiB pages
// (with -short, 4 KiB pages only), the kernel variants taking the cases
// in turn.
func TestWhereMatrix(t *testing.T) {
	for _, small := range []bool{false, true} {
		if testing.Short() && !small {
			continue
		}
		t.Run(fmt.Sprintf("small-pages=%v", small), func(t *testing.T) {
			d := selOpen(t, small)
			vt := kernelTurns(t, d, "select")
			t.Logf("%d cases (%v)", whereMatrix(t, d, vt), vt)
		})
	}
}

// whereMatrix runs TestWhereMatrix's cases on d, the variants of vt in
// turn, and returns how many.
func whereMatrix(t *testing.T, d *device.Device, vt *variantTurns) int {
	rng := rand.New(rand.NewPCG(9, 10))
	values := []any{0, 1, -1, 300, 65504, 65520, 1 << 24, 1<<24 + 1, 0.1, math.Copysign(0, -1), 1e300, math.NaN(), math.Inf(-1),
		float32(3.4e38), uint64(math.MaxUint64), int64(math.MinInt64), true, int8(-5), uint16(7), 1.5}
	cases := 0
	for _, dt := range tensor.DTypes {
		for i := range 48 {
			c, a, b := selShapes(rng, ops.BroadcastNumpy, rng.IntN(5), rng.IntN(8), 1<<rng.IntN(16))
			// Where broadcasts all three ways: swap cond with an operand.
			if i%2 == 1 {
				c, a = a, c
			}
			arg := func(s tensor.Shape) whereArg {
				switch rng.IntN(4) {
				case 0:
					return whereArg{typed: true, dt: tensor.DTypes[rng.IntN(len(tensor.DTypes))], v: values[rng.IntN(len(values))]}
				case 1:
					return whereArg{v: values[rng.IntN(len(values))]}
				}
				return whereArg{h: selRandom(rng, dt, s)}
			}
			cond, x, y := selRandom(rng, tensor.Bool, c), arg(a), arg(b)
			vt.use(cases)
			whereCheck(t, d, cond, x, y)
			cases++
		}
	}
	return cases
}

// TestWhereErrors checks Where's rejections: cpuref's words where it can
// be given the same input, and the scalar rules it cannot.
func TestWhereErrors(t *testing.T) {
	d := selOpen(t, false)
	rng := rand.New(rand.NewPCG(10, 11))
	ts, free := selUpload(t, d, selRandom(rng, tensor.Bool, tensor.Shape{2, 3}), selRandom(rng, tensor.U8, tensor.Shape{3}),
		selRandom(rng, tensor.F32, tensor.Shape{4}), selRandom(rng, tensor.I8, tensor.Shape{2, 3}), selRandom(rng, tensor.I8, tensor.Shape{3}))
	defer free()
	c, u8, f4, i8, gone := ts[0], ts[1], ts[2], ts[3], ts[4]
	gone.Free()
	other, freeOther := selUpload(t, selOpen(t, false), selRandom(rng, tensor.U8, tensor.Shape{3}))
	defer freeOther()
	for _, x := range []struct {
		c    *device.Tensor
		a, b any
		want string
	}{
		{nil, u8, u8, "where: cond is nil"},
		{u8, u8, u8, "where: cond must be bool, got u8"},
		{gone, 1, 0, "where: cond i8[3] was freed"},
		{c, nil, 1, "where: input is nil"},
		{c, gone, 1, "where: input i8[3] was freed"},
		{c, u8, other[0], "where: other is on another device than cond"},
		{c, (*device.Tensor)(nil), 1, "where: input is nil"},
		{c, 1, "x", "where: other scalar of Go type string is not a number"},
		{c, u8, i8, "where: input is u8 but other is i8"},
		{c, ops.Scalar(1, tensor.F16), ops.Scalar(1, tensor.F32), "where: input scalar is f16 but other scalar is f32"},
		{c, ops.Scalar(1, tensor.Invalid), 1, "where: input scalar has invalid element type invalid"},
		{c, tensor.Scalar{DType: tensor.U8, Bits: 256}, 1, "where: input scalar bits 0x100 do not fit u8"},
		{c, ops.Scalar(300, tensor.I8), i8, "where: input scalar 300 cannot be represented as i8"},
		{c, u8, -1, "where: other scalar -1 cannot be represented as u8"},
		{c, i8, math.NaN(), "where: other scalar NaN cannot be represented as i8"},
		{c, f4, 1e300, "where: other scalar 1e+300 cannot be represented as f32"},
		{c, f4, u8, "where: input is f32 but other is u8"},
		{c, f4, f4, "where: cond shape [2 3], input shape [4] and other shape [4] do not broadcast (axis -1: 3 vs 4)"},
		{c, 1, f4, "where: cond shape [2 3] and other shape [4] do not broadcast (axis -1: 3 vs 4)"},
	} {
		y, err := ops.Where(x.c, x.a, x.b)
		if err == nil || err.Error() != x.want || !errors.Is(err, ops.ErrInvalid) || y != nil {
			t.Errorf("where(%v, %v): got %v, %v; want error %q", x.a, x.b, y, err, x.want)
		}
	}
}

// FuzzSelect draws shapes, types and broadcast patterns from its input
// and requires the device to agree with cpuref: the same bytes or the
// same error. Run it with go test -fuzz=FuzzSelect ./tests/.
func FuzzSelect(f *testing.F) {
	var msgs struct {
		sync.Mutex
		n    int
		last string
	}
	open := func(page uint64) *device.Device {
		d, err := device.Open(device.Options{Validation: true, CacheDir: "-", PageSize: page,
			OnValidation: func(sev, msg string) {
				msgs.Lock()
				msgs.n++
				msgs.last = sev + ": " + msg
				msgs.Unlock()
			}})
		devtest.SkipIfMissing(f, err)
		if err != nil {
			f.Fatal(err)
		}
		f.Cleanup(func() { d.Close() })
		return d
	}
	devices := []*device.Device{open(0), open(selPageSize)}
	f.Add([]byte{0, 12, 4, 3, 5, 7, 9, 0, 0, 0, 0})
	f.Add([]byte{2, 1, 2, 200, 255, 1, 2, 3})
	f.Add([]byte{1, 13, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return int(b)
		}
		mode := ops.Broadcast(next() % 4)
		dt := tensor.DTypes[next()%len(tensor.DTypes)]
		rank := next() % 7
		dims := []int{0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 33, 64, 100, 255, 1000}
		out := make(tensor.Shape, rank)
		n := 1
		for i := range out {
			out[i] = dims[next()%len(dims)]
			if out[i] > 0 && n*out[i] > 1<<17 {
				out[i] = 1
			}
			n *= max(out[i], 1)
		}
		// One byte per operand: leading dims to drop, then a bit per
		// dimension that makes it 1 (a broadcast).
		sub := func() tensor.Shape {
			drop, bits := next(), next()<<8|next()
			s := out[min(drop%8, rank):].Clone()
			for i := range s {
				if bits>>i&1 == 1 {
					s[i] = 1
				}
			}
			return s
		}
		c, a, b := sub(), sub(), sub()
		condType := tensor.Bool
		if next() == 1 {
			condType = dt
		}
		d := devices[next()%2]
		rng := rand.New(rand.NewPCG(uint64(next()), uint64(len(data))))
		msgs.Lock()
		before := msgs.n
		msgs.Unlock()
		selCheck(t, d, "fuzz", mode, selRandom(rng, condType, c), selRandom(rng, dt, a), selRandom(rng, dt, b))
		if err := d.Sync(); err != nil {
			t.Fatal(err)
		}
		msgs.Lock()
		defer msgs.Unlock()
		if msgs.n != before {
			t.Fatalf("validation: %s", msgs.last)
		}
	})
}

// BenchmarkSelect measures the kernel paths at 16M and 64M elements:
// same-shape f32, cond broadcast along rows ([N/1024, 1] against
// [N/1024, 1024]) and along columns ([1, 1024]), and a scalar operand
// (Where with a number), each with every variant the device can run
// (VKOPS_VARIANT) and with the one it chooses. SetBytes counts the bytes
// read and written; the gpu-GB/s metric is the same bytes over the
// device's own time, which other work on the machine disturbs least.
//
//	go test -run '^$' -bench 'Select/64M/same' -count 5 ./tests/
func BenchmarkSelect(b *testing.B) {
	d := selOpen(b, false)
	names, eligible := kernelVariants(b, d, "select")
	variants := []string{"chosen"}
	for _, name := range names {
		if eligible[name] {
			variants = append(variants, name)
		}
	}
	for _, size := range []struct {
		name string
		n    int64
	}{{"16M", 1 << 24}, {"64M", 1 << 26}} {
		b.Run(size.name, func(b *testing.B) {
			n := size.n
			rng := rand.New(rand.NewPCG(11, 12))
			up := func(dt tensor.DType, s ...int) *device.Tensor {
				ts, _ := selUpload(b, d, selRandom(rng, dt, s))
				b.Cleanup(ts[0].Free)
				return ts[0]
			}
			rows := int(n / 1024)
			x, y := up(tensor.F32, rows, 1024), up(tensor.F32, rows, 1024)
			same, condRows, condCols := up(tensor.Bool, rows, 1024), up(tensor.Bool, rows, 1), up(tensor.Bool, 1, 1024)
			for _, c := range []struct {
				name  string
				bytes int64
				op    func() (*device.Tensor, error)
			}{
				{"same-f32", n * 13, func() (*device.Tensor, error) { return ops.Select(same, x, y) }},
				{"cond-rows-f32", n*12 + n/1024, func() (*device.Tensor, error) { return ops.Select(condRows, x, y) }},
				{"cond-cols-f32", n*12 + 1024, func() (*device.Tensor, error) { return ops.Select(condCols, x, y) }},
				{"scalar-f32", n * 9, func() (*device.Tensor, error) { return ops.Where(same, x, 0) }},
			} {
				for _, v := range variants {
					b.Run(c.name+"/"+v, func(b *testing.B) {
						if v != "chosen" {
							b.Setenv("VKOPS_VARIANT", v)
						}
						// One untimed run builds the pipeline and, for the
						// chosen variant, measures the family first.
						res, err := c.op()
						if err != nil {
							b.Fatal(err)
						}
						res.Free()
						if v == "chosen" {
							b.Logf("choices: %s", selChoices(d))
						}
						b.SetBytes(c.bytes)
						var gpu float64
						for b.Loop() {
							ns, err := bridge.Device(d).GPUTime(func() error {
								var err error
								res, err = c.op()
								return err
							})
							if err != nil {
								b.Fatal(err)
							}
							gpu += ns
							res.Free()
						}
						b.ReportMetric(float64(c.bytes)*float64(b.N)/gpu, "gpu-GB/s")
					})
				}
			}
		})
	}
}

// selChoices lists the variants d has chosen for f32 selects.
func selChoices(d *device.Device) string {
	var out []string
	for _, vi := range ops.Variants(d) {
		if strings.HasPrefix(vi.Family, "select/w4/") {
			out = append(out, vi.Family+"="+vi.Chosen)
		}
	}
	return strings.Join(out, " ")
}
