package tests

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/ops"
	"github.com/vkops/vkops/tensor"
)

// maskBitsHost makes a 1-D tensor of dt from bit patterns.
func maskBitsHost(dt tensor.DType, bits []uint64) *tensor.Host {
	h, err := tensor.New(dt, tensor.Shape{len(bits)})
	if err != nil {
		panic(err)
	}
	size := dt.Size()
	var b [8]byte
	for i, v := range bits {
		binary.LittleEndian.PutUint64(b[:], v)
		copy(h.Data[i*size:], b[:size])
	}
	return h
}

// maskCompareTable is docs/specs.md#comparisons at their edges, each
// row a pair and what equal, not-equal, less, less-equal, greater and
// greater-equal give (T or F, in that order). TESTING.md sums it up.
var maskCompareTable = []struct {
	dt   tensor.DType
	a, b uint64
	want string
	note string
}{
	{tensor.F32, 0x7fc00000, 0x7fc00000, "FTFFFF", "NaN vs the same NaN"},
	{tensor.F32, 0x7fc00000, 0x3f800000, "FTFFFF", "NaN vs 1"},
	{tensor.F32, 0x7f800001, 0x7f800000, "FTFFFF", "signalling NaN vs +inf"},
	{tensor.F32, 0xffc00000, 0xff800000, "FTFFFF", "-NaN vs -inf"},
	{tensor.F32, 0x80000000, 0x00000000, "TFFTFT", "-0 vs +0"},
	{tensor.F32, 0xff800000, 0xff7fffff, "FTTTFF", "-inf vs -max"},
	{tensor.F32, 0x7f800000, 0x7f800000, "TFFTFT", "+inf vs +inf"},
	{tensor.F32, 0x00000001, 0x00000000, "FTFFTT", "smallest subnormal vs +0 (no flush to zero)"},
	{tensor.F32, 0x80000001, 0x00000001, "FTTTFF", "-subnormal vs +subnormal"},
	{tensor.F32, 0x3f800000, 0x3f800001, "FTTTFF", "1 vs 1+ulp"},
	{tensor.F16, 0x7c01, 0x7c01, "FTFFFF", "f16 signalling NaN vs itself"},
	{tensor.F16, 0x8000, 0x0000, "TFFTFT", "f16 -0 vs +0"},
	{tensor.F16, 0x0001, 0x0000, "FTFFTT", "f16 smallest subnormal vs 0"},
	{tensor.F16, 0xfc00, 0xfbff, "FTTTFF", "f16 -inf vs -65504"},
	{tensor.F16, 0x3c00, 0x3c01, "FTTTFF", "f16 1 vs 1+ulp"},
	{tensor.BF16, 0x3f80, 0x3f81, "FTTTFF", "bf16 1 vs 1+ulp"},
	{tensor.BF16, 0xffc1, 0xff80, "FTFFFF", "bf16 -NaN vs -inf"},
	{tensor.BF16, 0x8000, 0x0000, "TFFTFT", "bf16 -0 vs +0"},
	{tensor.BF16, 0xbf80, 0x3f80, "FTTTFF", "bf16 -1 vs 1"},
	{tensor.F64, 0x3ff0000000000000, 0x3ff0000000000001, "FTTTFF", "f64 1 vs 1+ulp (low word)"},
	{tensor.F64, 0x3ff0000100000000, 0x3ff0000000000001, "FTFFTT", "f64 high word decides"},
	{tensor.F64, 0xbff0000000000001, 0xbff0000000000000, "FTTTFF", "f64 -(1+ulp) vs -1"},
	{tensor.F64, 0x7ff0000000000001, 0x7ff0000000000001, "FTFFFF", "f64 NaN, payload in the low word only"},
	{tensor.F64, 0x8000000000000000, 0x0000000000000000, "TFFTFT", "f64 -0 vs +0"},
	{tensor.F64, 0xfff0000000000000, 0xffefffffffffffff, "FTTTFF", "f64 -inf vs -max"},
	{tensor.I64, 1<<53 + 1, 1 << 53, "FTFFTT", "i64 2^53+1 vs 2^53 (equal through f64)"},
	{tensor.I64, 0xffffffffffffffff, 0, "FTTTFF", "i64 -1 vs 0"},
	{tensor.I64, 1 << 63, 1<<63 - 1, "FTTTFF", "i64 min vs max"},
	{tensor.I64, 0xffffffff, 1 << 32, "FTTTFF", "i64 2^32-1 vs 2^32"},
	{tensor.I64, 0xffffffff00000000, 0xfffffffeffffffff, "FTFFTT", "i64 -2^32 vs -2^32-1"},
	{tensor.U64, 1<<64 - 1, 1<<64 - 2, "FTFFTT", "u64 max vs max-1 (equal through f64)"},
	{tensor.U64, 1 << 63, 1<<63 - 1, "FTFFTT", "u64 2^63 vs 2^63-1"},
	{tensor.U64, 1<<64 - 1, 1<<64 - 1, "TFFTFT", "u64 max vs max"},
	{tensor.I32, 1<<24 + 1, 1 << 24, "FTFFTT", "i32 2^24+1 vs 2^24 (equal through f32)"},
	{tensor.I32, 0x80000000, 0x7fffffff, "FTTTFF", "i32 min vs max"},
	{tensor.U32, 0xffffffff, 0, "FTFFTT", "u32 max vs 0"},
	{tensor.I16, 0xffff, 1, "FTTTFF", "i16 -1 vs 1"},
	{tensor.U16, 0xffff, 0x7fff, "FTFFTT", "u16 65535 vs 32767"},
	{tensor.I8, 0x80, 0x7f, "FTTTFF", "i8 -128 vs 127"},
	{tensor.U8, 0xff, 0, "FTFFTT", "u8 255 vs 0"},
	{tensor.Bool, 2, 1, "TFFTFT", "bool 2 vs 1: both true"},
	{tensor.Bool, 0, 0xff, "FTTTFF", "bool false vs true"},
}

// maskClassifyTable is the classifiers at the edges: is-nan, is-inf
// (both attributes), is-inf with only detect_negative, with only
// detect_positive, with neither, and is-finite.
var maskClassifyTable = []struct {
	dt   tensor.DType
	a    uint64
	want string
	note string
}{
	{tensor.F32, 0x00000000, "FFFFFT", "+0"},
	{tensor.F32, 0x80000000, "FFFFFT", "-0"},
	{tensor.F32, 0x00000001, "FFFFFT", "subnormal"},
	{tensor.F32, 0x7f7fffff, "FFFFFT", "max"},
	{tensor.F32, 0x7f800000, "FTFTFF", "+inf"},
	{tensor.F32, 0xff800000, "FTTFFF", "-inf"},
	{tensor.F32, 0x7fc00000, "TFFFFF", "quiet NaN"},
	{tensor.F32, 0x7f800001, "TFFFFF", "signalling NaN"},
	{tensor.F32, 0xffc00123, "TFFFFF", "-NaN with payload"},
	{tensor.F16, 0x7c00, "FTFTFF", "f16 +inf"},
	{tensor.F16, 0xfc00, "FTTFFF", "f16 -inf"},
	{tensor.F16, 0x7c01, "TFFFFF", "f16 signalling NaN"},
	{tensor.F16, 0x7bff, "FFFFFT", "f16 65504"},
	{tensor.BF16, 0x7f80, "FTFTFF", "bf16 +inf"},
	{tensor.BF16, 0xff81, "TFFFFF", "bf16 -signalling NaN"},
	{tensor.BF16, 0x7f7f, "FFFFFT", "bf16 max"},
	{tensor.F64, 0x7ff0000000000000, "FTFTFF", "f64 +inf"},
	{tensor.F64, 0xfff0000000000000, "FTTFFF", "f64 -inf"},
	{tensor.F64, 0x7ff0000000000001, "TFFFFF", "f64 NaN, payload in the low word only"},
	{tensor.F64, 0xfff8000000000000, "TFFFFF", "f64 -quiet NaN"},
	{tensor.F64, 0x7fefffffffffffff, "FFFFFT", "f64 max"},
}

// maskRun runs f on the device and in cpuref over hosts and returns the
// device's bools as T/F, failing t where they differ.
func maskRun(t *testing.T, d *device.Device, name string, hosts []*tensor.Host,
	dev func(ts []*device.Tensor) (*device.Tensor, error), ref func() (*tensor.Host, error)) string {
	t.Helper()
	want, werr := ref()
	if werr != nil {
		t.Fatalf("%s: cpuref: %v", name, werr)
	}
	ts, free := selUpload(t, d, hosts...)
	defer free()
	got, err := dev(ts)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer got.Free()
	h, err := bridge.Tensor(got).Download()
	if err != nil {
		t.Fatal(err)
	}
	if diff := selDiff(h, want); diff != "" {
		t.Fatalf("%s: device and cpuref differ: %s", name, diff)
	}
	s := make([]byte, len(h.Data))
	for i, b := range h.Data {
		s[i] = "FT"[b]
	}
	return string(s)
}

// TestMaskSpecialValues checks the tables above on the device and in
// cpuref, one tensor per element type and op, every variant in turn.
func TestMaskSpecialValues(t *testing.T) {
	d0 := selOpen(t, false)
	names, eligible := kernelVariants(t, d0, "mask")
	if testing.Short() {
		names = []string{names[len(names)-1]} // the variant with most features
	}
	runVariants(t, names, eligible, func(t *testing.T, _ string) {
		d := selOpen(t, false)
		maskSpecialCompare(t, d)
		maskSpecialClassify(t, d)
		maskSpecialLogical(t, d)
	})
}

func maskSpecialCompare(t *testing.T, d *device.Device) {
	byType := map[tensor.DType][]int{}
	for i, r := range maskCompareTable {
		byType[r.dt] = append(byType[r.dt], i)
	}
	for dt, rows := range byType {
		var as, bs []uint64
		for _, i := range rows {
			as, bs = append(as, maskCompareTable[i].a), append(bs, maskCompareTable[i].b)
		}
		a, b := maskBitsHost(dt, as), maskBitsHost(dt, bs)
		got := make([]string, len(rows))
		for _, op := range maskOps[:6] {
			s := maskRun(t, d, op.name+" "+dt.String(), []*tensor.Host{a, b},
				func(ts []*device.Tensor) (*device.Tensor, error) { return op.dev(ts[0], ts[1], ops.BroadcastNumpy) },
				func() (*tensor.Host, error) { return op.ref(a, b, "numpy") })
			for k := range rows {
				got[k] += s[k : k+1]
			}
		}
		for k, i := range rows {
			if r := maskCompareTable[i]; got[k] != r.want {
				t.Errorf("%v %#x vs %#x (%s): eq ne lt le gt ge = %s, want %s", dt, r.a, r.b, r.note, got[k], r.want)
			}
		}
	}
}

func maskSpecialClassify(t *testing.T, d *device.Device) {
	type classifier struct {
		dev func(*device.Tensor) (*device.Tensor, error)
		ref func(*tensor.Host) (*tensor.Host, error)
	}
	inf := func(neg, pos bool) classifier {
		return classifier{func(x *device.Tensor) (*device.Tensor, error) { return ops.IsInf(x, neg, pos) },
			func(x *tensor.Host) (*tensor.Host, error) { return cpuref.IsInf(x, neg, pos) }}
	}
	cs := []classifier{{ops.IsNaN, cpuref.IsNaN}, inf(true, true), inf(true, false), inf(false, true), inf(false, false),
		{ops.IsFinite, cpuref.IsFinite}}
	byType := map[tensor.DType][]int{}
	for i, r := range maskClassifyTable {
		byType[r.dt] = append(byType[r.dt], i)
	}
	for dt, rows := range byType {
		var as []uint64
		for _, i := range rows {
			as = append(as, maskClassifyTable[i].a)
		}
		a := maskBitsHost(dt, as)
		got := make([]string, len(rows))
		for j, c := range cs {
			s := maskRun(t, d, fmt.Sprintf("classifier %d %v", j, dt), []*tensor.Host{a},
				func(ts []*device.Tensor) (*device.Tensor, error) { return c.dev(ts[0]) },
				func() (*tensor.Host, error) { return c.ref(a) })
			for k := range rows {
				got[k] += s[k : k+1]
			}
		}
		for k, i := range rows {
			if r := maskClassifyTable[i]; got[k] != r.want {
				t.Errorf("%v %#x (%s): nan inf inf-neg inf-pos inf-none finite = %s, want %s", dt, r.a, r.note, got[k], r.want)
			}
		}
	}
}

// maskSpecialLogical: bytes other than 0 and 1 are true, outputs are 0
// or 1.
func maskSpecialLogical(t *testing.T, d *device.Device) {
	a := maskBitsHost(tensor.Bool, []uint64{0, 0, 1, 1, 2, 0xff, 0x80, 0})
	b := maskBitsHost(tensor.Bool, []uint64{0, 1, 0, 1, 0xff, 0x10, 0, 0x80})
	for _, c := range []struct {
		op   maskOp
		want string
	}{
		{maskOps[6], "FFFTTTFF"}, {maskOps[7], "FTTTTTTT"}, {maskOps[8], "FTTFFFTT"}, {maskOps[9], "TTFFFFFT"},
	} {
		s := maskRun(t, d, c.op.name, []*tensor.Host{a, b},
			func(ts []*device.Tensor) (*device.Tensor, error) { return c.op.dev(ts[0], ts[1], ops.BroadcastNumpy) },
			func() (*tensor.Host, error) { return c.op.ref(a, b, "numpy") })
		if s != c.want {
			t.Errorf("%s: %s, want %s", c.op.name, s, c.want)
		}
	}
}

// TestMaskErrors checks that every rejection matches cpuref's message
// and ErrInvalid, and leaves the device usable.
func TestMaskErrors(t *testing.T) {
	d := selOpen(t, false)
	rng := rand.New(rand.NewPCG(13, 3))
	r := func(dt tensor.DType, s ...int) *tensor.Host { return selRandom(rng, dt, s) }
	for _, c := range []struct {
		op   int // index in maskOps
		mode ops.Broadcast
		a, b *tensor.Host
	}{
		{0, ops.BroadcastNumpy, r(tensor.F32, 3), r(tensor.I32, 3)},         // mixed types
		{2, ops.BroadcastNumpy, r(tensor.F16, 3), r(tensor.BF16, 3)},        // f16 vs bf16
		{4, ops.BroadcastNumpy, r(tensor.F32, 2, 3), r(tensor.F32, 4)},      // no broadcast
		{1, ops.BroadcastNone, r(tensor.U8, 2, 3), r(tensor.U8, 3)},         // none needs equal
		{3, ops.BroadcastPDPD, r(tensor.I64, 3), r(tensor.I64, 2, 3)},       // b widens a
		{5, ops.BroadcastPDPD, r(tensor.I64, 2, 3), r(tensor.I64, 2, 1)},    // fits one way: valid
		{6, ops.BroadcastNumpy, r(tensor.U8, 3), r(tensor.U8, 3)},           // logical on u8
		{7, ops.BroadcastNumpy, r(tensor.Bool, 3), r(tensor.F32, 3)},        // mixed
		{9, ops.BroadcastNumpy, r(tensor.I8, 3), nil},                       // not on i8
		{10, ops.BroadcastNumpy, r(tensor.I32, 3), nil},                     // is-nan on i32
		{11, ops.BroadcastNumpy, r(tensor.Bool, 3), nil},                    // is-finite on bool
		{12, ops.BroadcastNumpy, r(tensor.U64, 3), nil},                     // is-inf on u64
		{0, ops.Broadcast(7), r(tensor.F32, 3), r(tensor.I32, 2)},           // unknown mode first
		{8, ops.BroadcastNumpy, r(tensor.Bool, 2, 0, 3), r(tensor.Bool, 3)}, // empty: valid
	} {
		maskCheck(t, d, maskOps[c.op], c.mode, c.a, c.b)
	}
	// Device-side rules cpuref cannot express: nil, freed, two scalars.
	x, err := device.FromSlice(d, []float32{1, 2, 3}, 3)
	if err != nil {
		t.Fatal(err)
	}
	y, err := device.FromSlice(d, []float32{1, 2, 3}, 3)
	if err != nil {
		t.Fatal(err)
	}
	y.Free()
	defer x.Free()
	for _, c := range []struct {
		got  error
		want string
	}{
		{errOf(ops.Greater(x, nil)), "greater: b is nil"},
		{errOf(ops.Greater(nil, x)), "greater: a is nil"},
		{errOf(ops.Equal(x, y)), "equal: b f32[3] was freed"},
		{errOf(ops.Less(1, 2)), "less: a and b are both scalars; one must be a tensor"},
		{errOf(ops.Less(x, "1")), "less: b " + errOf(tensor.NewScalar("1", tensor.F64)).Error()},
		{errOf(ops.IsNaN(nil)), "is-nan: a is nil"},
		{errOf(ops.LogicalNot(y)), "logical-not: a f32[3] was freed"},
		{errOf(ops.Greater(x, 1e39)), "greater: b " + errOf(tensor.NewScalar(1e39, tensor.F32)).Error()},
		{errOf(ops.Greater(x, -1, ops.WithBroadcast(ops.BroadcastNone))), "greater: broadcast none needs equal shapes: a [3] b []"},
	} {
		if c.got == nil || c.got.Error() != c.want {
			t.Errorf("error %v, want %q", c.got, c.want)
		}
	}
}

func errOf[T any](_ T, err error) error { return err }

// TestMaskScalars checks that a scalar operand is converted exactly to
// the tensor's type and acts as a 0-D tensor of it, on either side.
func TestMaskScalars(t *testing.T) {
	d := selOpen(t, false)
	rng := rand.New(rand.NewPCG(13, 4))
	type scalarCase struct {
		dt tensor.DType
		v  any
	}
	cases := []scalarCase{
		{tensor.F32, 0}, {tensor.F32, 0.1}, {tensor.F16, -2.5}, {tensor.BF16, 1e30}, {tensor.I64, int64(1<<53 + 1)},
		{tensor.U64, uint64(1<<64 - 1)}, {tensor.U8, 200}, {tensor.F64, 0.1}, {tensor.Bool, true},
	}
	if testing.Short() {
		cases = []scalarCase{cases[1], cases[4], cases[5]}
	}
	for _, c := range cases {
		s, err := tensor.NewScalar(c.v, c.dt)
		if err != nil {
			t.Fatal(err)
		}
		sh := &tensor.Host{DType: c.dt, Shape: tensor.Shape{}, Data: s.Bytes()}
		x := maskRandom(rng, c.dt, tensor.Shape{5, 37}, []uint64{s.Bits})
		ts, free := selUpload(t, d, x)
		compares := []maskOp{maskOps[0], maskOps[2], maskOps[5]} // equal, less, greater-equal
		if testing.Short() {
			compares = []maskOp{maskOps[c.dt.Size()%6]}
		}
		for _, op := range compares {
			for _, swap := range []bool{false, true} {
				want, werr := op.ref(x, sh, "numpy")
				got, err := op.dev(ts[0], c.v, ops.BroadcastNumpy)
				if swap {
					want, werr = op.ref(sh, x, "numpy")
					got, err = op.dev(c.v, ts[0], ops.BroadcastNumpy)
				}
				selCompare(t, fmt.Sprintf("%s %v scalar %v swap %v", op.name, c.dt, c.v, swap), got, err, want, werr, ts, []*tensor.Host{x})
			}
		}
		free()
	}
}
