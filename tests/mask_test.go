package tests

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/ops"
	"github.com/vkops/vkops/tensor"
)

// The rules under test are docs/specs.md#mask-ops; cpuref is their
// oracle, as for Select: every device result must equal its bytes, every
// rejection its message, and inputs must come back unchanged.

// maskOp is one mask op as the tests drive it, on the device and in
// cpuref; unary ops ignore b and the mode.
type maskOp struct {
	name  string
	unary bool
	types []tensor.DType
	dev   func(a, b any, mode ops.Broadcast) (*device.Tensor, error)
	ref   func(a, b *tensor.Host, mode string) (*tensor.Host, error)
}

var maskFloats = []tensor.DType{tensor.F16, tensor.BF16, tensor.F32, tensor.F64}

func maskBinary(name string, types []tensor.DType, dev func(a, b any, opts ...ops.SelectOption) (*device.Tensor, error),
	ref func(a, b *tensor.Host, mode string) (*tensor.Host, error)) maskOp {
	return maskOp{name: name, types: types, ref: ref,
		dev: func(a, b any, mode ops.Broadcast) (*device.Tensor, error) { return dev(a, b, ops.WithBroadcast(mode)) }}
}

func maskUnary(name string, types []tensor.DType, dev func(a *device.Tensor) (*device.Tensor, error),
	ref func(a *tensor.Host) (*tensor.Host, error)) maskOp {
	return maskOp{name: name, unary: true, types: types,
		dev: func(a, _ any, _ ops.Broadcast) (*device.Tensor, error) {
			t, _ := a.(*device.Tensor)
			return dev(t)
		},
		ref: func(a, _ *tensor.Host, _ string) (*tensor.Host, error) { return ref(a) }}
}

// maskOps is every op, IsInf under each pair of its attributes.
var maskOps = func() []maskOp {
	all, b := tensor.DTypes, []tensor.DType{tensor.Bool}
	list := []maskOp{
		maskBinary("equal", all, ops.Equal, cpuref.Equal),
		maskBinary("not-equal", all, ops.NotEqual, cpuref.NotEqual),
		maskBinary("less", all, ops.Less, cpuref.Less),
		maskBinary("less-equal", all, ops.LessEqual, cpuref.LessEqual),
		maskBinary("greater", all, ops.Greater, cpuref.Greater),
		maskBinary("greater-equal", all, ops.GreaterEqual, cpuref.GreaterEqual),
		maskBinary("logical-and", b, ops.LogicalAnd, cpuref.LogicalAnd),
		maskBinary("logical-or", b, ops.LogicalOr, cpuref.LogicalOr),
		maskBinary("logical-xor", b, ops.LogicalXor, cpuref.LogicalXor),
		maskUnary("logical-not", b, ops.LogicalNot, cpuref.LogicalNot),
		maskUnary("is-nan", maskFloats, ops.IsNaN, cpuref.IsNaN),
		maskUnary("is-finite", maskFloats, ops.IsFinite, cpuref.IsFinite),
	}
	for _, neg := range []bool{true, false} {
		for _, pos := range []bool{true, false} {
			list = append(list, maskUnary(fmt.Sprintf("is-inf(neg=%v,pos=%v)", neg, pos), maskFloats,
				func(a *device.Tensor) (*device.Tensor, error) { return ops.IsInf(a, neg, pos) },
				func(a *tensor.Host) (*tensor.Host, error) { return cpuref.IsInf(a, neg, pos) }))
		}
	}
	return list
}()

// maskSpecials are bit patterns worth comparing, by element type: zeros
// of both signs, extremes, subnormals, infinities and NaNs of several
// kinds; for 64-bit integers values that a float would merge.
var maskSpecials = map[tensor.DType][]uint64{
	tensor.Bool: {0, 1, 2, 0x80, 0xff},
	tensor.I8:   {0, 1, 0xff, 0x7f, 0x80, 0x81, 0x7e},
	tensor.U8:   {0, 1, 0xff, 0x7f, 0x80},
	tensor.I16:  {0, 1, 0xffff, 0x7fff, 0x8000, 0x8001},
	tensor.U16:  {0, 1, 0xffff, 0x7fff, 0x8000},
	tensor.I32:  {0, 1, 0xffffffff, 0x7fffffff, 0x80000000, 0x80000001, 1 << 24, 1<<24 + 1},
	tensor.U32:  {0, 1, 0xffffffff, 0x7fffffff, 0x80000000, 1 << 24, 1<<24 + 1},
	tensor.I64: {0, 1, math.MaxUint64, math.MaxInt64, 1 << 63, 1<<63 + 1, 1 << 53, 1<<53 + 1,
		1 << 32, 0xffffffff, 0xffffffff00000000, 0xfffffffeffffffff},
	tensor.U64: {0, 1, math.MaxUint64, math.MaxUint64 - 1, math.MaxInt64, 1 << 63, 1 << 53, 1<<53 + 1,
		1 << 32, 0xffffffff, 0x1ffffffff},
	tensor.F16: {0, 0x8000, 0x3c00, 0xbc00, 0x0001, 0x8001, 0x03ff, 0x7bff, 0xfbff, 0x7c00, 0xfc00,
		0x7e00, 0x7c01, 0xfe00, 0xfc01, 0x7fff},
	tensor.BF16: {0, 0x8000, 0x3f80, 0xbf80, 0x0001, 0x8001, 0x007f, 0x7f7f, 0xff7f, 0x7f80, 0xff80,
		0x7fc0, 0x7f81, 0xffc0, 0xff81, 0x7fff},
	tensor.F32: {0, 0x80000000, 0x3f800000, 0xbf800000, 1, 0x80000001, 0x007fffff, 0x7f7fffff, 0xff7fffff,
		0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffc00000, 0xff800001, 0x7fffffff, 0x3f800001},
	tensor.F64: {0, 1 << 63, 0x3ff0000000000000, 0xbff0000000000000, 1, 1<<63 | 1, 0x7fefffffffffffff,
		0xffefffffffffffff, 0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000000000, 0x7ff0000000000001,
		0xfff8000000000000, 0x7ff0000100000000, 0x3ff0000000000001, 0x3ff0000100000000, 0xbff0000000000001},
}

// maskRandom returns a tensor whose elements are drawn, a third each,
// from pool (values shared by the case's operands, so that they meet
// equal values), from the type's specials and from random bits. Bools
// are any byte, 0 a third of the time.
func maskRandom(rng *rand.Rand, dt tensor.DType, shape tensor.Shape, pool []uint64) *tensor.Host {
	h := selRandom(rng, dt, shape)
	size := dt.Size()
	for i := range h.Len() {
		var v uint64
		switch rng.IntN(3) {
		case 0:
			v = pool[rng.IntN(len(pool))]
		case 1:
			sp := maskSpecials[dt]
			v = sp[rng.IntN(len(sp))]
		default:
			continue
		}
		for k := range size {
			h.Data[i*size+k] = byte(v >> (8 * k))
		}
	}
	return h
}

func maskPool(rng *rand.Rand) []uint64 {
	p := make([]uint64, 4)
	for i := range p {
		p[i] = rng.Uint64()
	}
	return p
}

// maskCheck runs op on the device and in cpuref and compares them.
func maskCheck(t testing.TB, d *device.Device, op maskOp, mode ops.Broadcast, a, b *tensor.Host) {
	t.Helper()
	if op.unary {
		b = nil
	}
	want, werr := op.ref(a, b, mode.String())
	ts, free := selUpload(t, d, a, b)
	defer free()
	var bArg any
	if b != nil {
		bArg = ts[1]
	}
	got, err := op.dev(ts[0], bArg, mode)
	name := fmt.Sprintf("%s %v a %v%v", op.name, mode, a.DType, a.Shape)
	if b != nil {
		name += fmt.Sprintf(" b %v%v", b.DType, b.Shape)
	}
	hosts := []*tensor.Host{a, b}
	if b == nil {
		ts, hosts = ts[:1], hosts[:1]
	}
	selCompare(t, name, got, err, want, werr, ts, hosts)
}

// TestMaskMatrix runs every op on every type it takes under every
// broadcast mode, over ranks 0 to 6 and several broadcast patterns, with
// usual and with 4 KiB pages, against cpuref, the kernel variants taking
// the cases in turn. On lavapipe every variant must be eligible.
func TestMaskMatrix(t *testing.T) {
	pages := []bool{false, true}
	if testing.Short() {
		pages = pages[:1] // each page size builds its own pipelines
	}
	for _, small := range pages {
		t.Run(fmt.Sprintf("small-pages=%v", small), func(t *testing.T) {
			d := selOpen(t, small)
			vt := kernelTurns(t, d, "mask")
			t.Logf("%d cases (%v)", maskMatrix(t, d, vt, !testing.Short()), vt)
		})
	}
}

// maskMatrix runs TestMaskMatrix's cases on d, the variants of vt in
// turn, and returns how many: with every rank, or taking one rank in
// turn per type and mode (pipelines are built per rank, type and op, and
// building them is most of the time).
func maskMatrix(t *testing.T, d *device.Device, vt *variantTurns, allRanks bool) int {
	rng := rand.New(rand.NewPCG(13, 1))
	ranks := []int{0, 1, 2, 3, 4, 5, 6}
	// Ops that take the same types take turns, case by case.
	groups := map[string][]maskOp{}
	var order []string
	for _, op := range maskOps {
		key := fmt.Sprint(op.unary, op.types)
		if groups[key] == nil {
			order = append(order, key)
		}
		groups[key] = append(groups[key], op)
	}
	cases := 0
	for _, key := range order {
		group := groups[key]
		for _, dt := range group[0].types {
			modes := selModes
			if group[0].unary {
				modes = modes[:1]
			}
			for _, mode := range modes {
				turn := (cases + len(modes)) % len(ranks)
				for i, rank := range ranks {
					if !allRanks && i != turn {
						continue
					}
					op := group[cases%len(group)]
					pattern := rng.IntN(10)
					_, a, b := selShapes(rng, mode, rank, pattern, 1<<(4+rng.IntN(12)))
					if op.unary {
						a = a.Clone()
						if r, _ := tensor.Broadcast(a, b); len(r) == rank {
							a = r
						}
					}
					pool := maskPool(rng)
					vt.use(cases)
					maskCheck(t, d, op, mode, maskRandom(rng, dt, a, pool), maskRandom(rng, dt, b, pool))
					cases++
				}
			}
		}
	}
	return cases
}

// TestMaskSizes runs same-shape, row and column broadcasts, and a 0-D b,
// from zero elements past a workgroup and past several 4 KiB pages, for
// each element width, with usual and with 4 KiB pages, the kernel
// variants taking the cases in turn.
func TestMaskSizes(t *testing.T) {
	for _, small := range []bool{false, true} {
		t.Run(fmt.Sprintf("small-pages=%v", small), func(t *testing.T) {
			d := selOpen(t, small)
			vt := kernelTurns(t, d, "mask")
			t.Logf("%d cases (%v)", maskSizes(t, d, vt), vt)
		})
	}
}

// maskSizes runs TestMaskSizes's cases on d, the variants of vt in turn,
// and returns how many.
func maskSizes(t *testing.T, d *device.Device, vt *variantTurns) int {
	sizes := []int{0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 63, 64, 65, 4095, 4096, 4097, 16385, 65536*3 + 5, 1<<20 + 3}
	kinds := []struct {
		op string
		dt tensor.DType
	}{
		{"greater", tensor.F32}, {"less-equal", tensor.I64}, {"equal", tensor.F16}, {"not-equal", tensor.U8},
		{"logical-and", tensor.Bool}, {"logical-not", tensor.Bool}, {"is-nan", tensor.F32}, {"is-nan", tensor.F16},
		{"is-finite", tensor.F64}, {"greater-equal", tensor.BF16},
	}
	if testing.Short() {
		sizes = []int{0, 33, 16385}
		kinds = []struct {
			op string
			dt tensor.DType
		}{kinds[0], kinds[1], kinds[4], kinds[7]}
	}
	rng := rand.New(rand.NewPCG(13, 2))
	byName := map[string]maskOp{}
	for _, op := range maskOps {
		byName[op.name] = op
	}
	cases := 0
	check := func(mode ops.Broadcast, op maskOp, a, b *tensor.Host) {
		vt.use(cases)
		maskCheck(t, d, op, mode, a, b)
		cases++
	}
	for _, c := range kinds {
		op := byName[c.op]
		for _, n := range sizes {
			pool := maskPool(rng)
			r := func(s ...int) *tensor.Host { return maskRandom(rng, c.dt, s, pool) }
			check(ops.BroadcastNumpy, op, r(n), r(n))
			if op.unary {
				continue
			}
			rows := max(1, n/37)
			check(ops.BroadcastNumpy, op, r(n), r())
			check(ops.BroadcastNumpy, op, r(rows, n/rows), r(rows, 1))
			check(ops.BroadcastPDPD, op, r(rows, n/rows), r(n/rows))
		}
	}
	return cases
}

// TestMaskLarge runs comparisons whose operands span the device's own
// pages (128 MiB on lavapipe), so that the input's and the output's page
// boundaries fall at different elements: f64 inputs of 136 MiB beside a
// bool output of 17 MiB, same shape and with b broadcast along rows.
func TestMaskLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("operands of 136 MiB")
	}
	d := selOpen(t, false)
	rng := rand.New(rand.NewPCG(13, 5))
	const n = 17<<20 + 3
	pool := maskPool(rng)
	a := maskRandom(rng, tensor.F64, tensor.Shape{n}, pool)
	maskCheck(t, d, maskOps[4], ops.BroadcastNumpy, a, maskRandom(rng, tensor.F64, tensor.Shape{n}, pool))
	rows := tensor.Shape{n / 1024, 1024}
	maskCheck(t, d, maskOps[1], ops.BroadcastNumpy, &tensor.Host{DType: a.DType, Shape: rows, Data: a.Data[:rows.NumElements()*8]},
		maskRandom(rng, tensor.F64, tensor.Shape{1, 1024}, pool))
}

// BenchmarkMask measures the mask kernels at 16M elements, as
// BenchmarkSelect does Select's: Greater on f32 same-shape and with b a
// row ([1, 1024]), IsNaN on f32 and f16, LogicalAnd on bool, each with
// every variant the device can run and with the one it chooses, and a
// vkCmdCopyBuffer of the same bytes beside them. SetBytes counts the
// inputs and the bool output; of-copy is the copy's device time over the
// op's, both in this run, which the machine's other work disturbs less
// than either figure alone.
//
//	go test -run '^$' -bench 'Mask/greater-same/texel64' -count 5 ./tests/
func BenchmarkMask(b *testing.B) {
	d := selOpen(b, false)
	variants := []string{"chosen"}
	for _, vi := range ops.Variants(d) {
		if vi.Family == "mask/w4/same" {
			variants = append(variants, vi.Eligible...)
		}
	}
	const n = 1 << 24
	rng := rand.New(rand.NewPCG(13, 14))
	up := func(dt tensor.DType, s ...int) *device.Tensor {
		ts, _ := selUpload(b, d, selRandom(rng, dt, s))
		b.Cleanup(ts[0].Free)
		return ts[0]
	}
	x, y, row := up(tensor.F32, n/1024, 1024), up(tensor.F32, n/1024, 1024), up(tensor.F32, 1, 1024)
	h, p, q := up(tensor.F16, n), up(tensor.Bool, n), up(tensor.Bool, n)
	gpuTime := func(b *testing.B, f func() error) float64 {
		ns, err := bridge.Device(d).GPUTime(f)
		if err != nil {
			b.Fatal(err)
		}
		return ns
	}
	for _, c := range []struct {
		name  string
		bytes int64
		op    func() (*device.Tensor, error)
	}{
		{"greater-same-f32", 9 * n, func() (*device.Tensor, error) { return ops.Greater(x, y) }},
		{"greater-row-f32", 5*n + 4096, func() (*device.Tensor, error) { return ops.Greater(x, row) }},
		{"is-nan-f32", 5 * n, func() (*device.Tensor, error) { return ops.IsNaN(x) }},
		{"is-nan-f16", 3 * n, func() (*device.Tensor, error) { return ops.IsNaN(h) }},
		{"logical-and-bool", 3 * n, func() (*device.Tensor, error) { return ops.LogicalAnd(p, q) }},
	} {
		src, err := bridge.Device(d).Empty(tensor.U8, tensor.Shape{int(c.bytes) / 2})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(src.Free)
		dst, err := bridge.Device(d).Empty(tensor.U8, tensor.Shape{int(c.bytes) / 2})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(dst.Free)
		for _, v := range variants {
			b.Run(c.name+"/"+v, func(b *testing.B) {
				if v != "chosen" {
					b.Setenv("VKOPS_VARIANT", v)
				}
				res, err := c.op() // builds the pipeline untimed
				if err != nil {
					b.Fatal(err)
				}
				res.Free()
				b.SetBytes(c.bytes)
				var gpu, cp float64
				for b.Loop() {
					gpu += gpuTime(b, func() error {
						res, err = c.op()
						return err
					})
					res.Free()
					cp += gpuTime(b, func() error { return bridge.Device(d).Copy(dst, src) })
				}
				b.ReportMetric(float64(c.bytes)*float64(b.N)/gpu, "gpu-GB/s")
				b.ReportMetric(cp/gpu, "of-copy")
			})
		}
	}
}
