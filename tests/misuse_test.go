package tests

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/ops"
	"github.com/vkops/vkops/tensor"
)

// API misuse (issue #6): every way a caller can hand the ops and the
// device something wrong is an error matching the sentinel that names
// it, never a panic, and leaves every input tensor as it was.
//
//	ops.ErrInvalid       rule violations: types, shapes, axes, scalars,
//	                     nil, freed and foreign tensors
//	device.ErrFreed      a device method on a freed tensor
//	device.ErrClosed     anything on a closed device, ops included
//	device.ErrOutOfMemory a tensor or an op's output past the heap

// newMisRand returns the random source of the misuse tests.
func newMisRand() *rand.Rand { return rand.New(rand.NewPCG(6, 1)) }

// misRandom returns a tensor of random bytes: bools are 0 about half the
// time and any nonzero byte otherwise, as bool tensors may hold. It stands
// apart from select_test.go's selRandom, so that the data of the misuse,
// concurrency and leak tests does not move when selRandom's does.
func misRandom(rng *rand.Rand, dt tensor.DType, shape tensor.Shape) *tensor.Host {
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

// downloadDiff downloads y, frees it and describes how it differs from
// want, as selDiff does ("" when they are the same).
func downloadDiff(y *device.Tensor, want *tensor.Host) (string, error) {
	defer y.Free()
	got, err := bridge.Tensor(y).Download()
	if err != nil {
		return "", err
	}
	return selDiff(got, want), nil
}

// misInputs is a set of device tensors and the bytes each must keep.
type misInputs struct {
	ts    []*device.Tensor
	hosts []*tensor.Host
}

func (m *misInputs) add(t testing.TB, d *device.Device, h *tensor.Host) *device.Tensor {
	t.Helper()
	x, err := bridge.Device(d).Upload(h)
	if err != nil {
		t.Fatalf("upload %v%v: %v", h.DType, h.Shape, err)
	}
	m.ts, m.hosts = append(m.ts, bridge.UserTensor(x)), append(m.hosts, h)
	return bridge.UserTensor(x)
}

// intact fails t unless every input still downloads to its bytes.
func (m *misInputs) intact(t testing.TB, after string) {
	t.Helper()
	for i, x := range m.ts {
		h, err := bridge.Tensor(x).Download()
		if err != nil {
			t.Errorf("after %s: download of input %v: %v", after, x, err)
			continue
		}
		if !bytes.Equal(h.Data, m.hosts[i].Data) {
			t.Errorf("after %s: input %v changed", after, x)
		}
	}
}

// misExpect fails t unless the op returned no tensor and an error
// matching want.
func misExpect(t testing.TB, name string, y *device.Tensor, err error, want error) {
	t.Helper()
	if y != nil {
		t.Errorf("%s: returned a tensor %v with error %v", name, y, err)
		y.Free()
	}
	if !errors.Is(err, want) {
		t.Errorf("%s: error %v, want one matching %q", name, err, want)
	}
}

// TestMisuseOps feeds every op arguments its rules reject and requires
// ops.ErrInvalid and untouched inputs, on a device that keeps working.
func TestMisuseOps(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	other := devtest.Open(t, device.Options{})
	var in misInputs
	rng := newMisRand()
	cond := in.add(t, d, misRandom(rng, tensor.Bool, tensor.Shape{2, 3}))
	i32 := in.add(t, d, misRandom(rng, tensor.I32, tensor.Shape{2, 3}))
	f32 := in.add(t, d, misRandom(rng, tensor.F32, tensor.Shape{2, 3}))
	u8 := in.add(t, d, misRandom(rng, tensor.U8, tensor.Shape{2, 3}))
	row2 := in.add(t, d, misRandom(rng, tensor.I32, tensor.Shape{2}))
	row3 := in.add(t, d, misRandom(rng, tensor.I32, tensor.Shape{3}))
	i8c := in.add(t, d, misRandom(rng, tensor.I8, tensor.Shape{2, 3}))
	data := in.add(t, d, misRandom(rng, tensor.Bool, tensor.Shape{2, 3, 4}))
	scalarBool := in.add(t, d, misRandom(rng, tensor.Bool, tensor.Shape{}))
	foreign := in.add(t, other, misRandom(rng, tensor.I32, tensor.Shape{2, 3}))
	foreignCond := in.add(t, other, misRandom(rng, tensor.Bool, tensor.Shape{2, 3}))
	freed, err := device.FromSlice(d, []int32{1, 2, 3, 4, 5, 6}, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	freed.Free()
	freedCond, err := device.FromSlice(d, []bool{true}, 1)
	if err != nil {
		t.Fatal(err)
	}
	freedCond.Free()
	zero := &device.Tensor{} // never made by a device
	var nilT *device.Tensor

	type call struct {
		name string
		run  func() (*device.Tensor, error)
	}
	sel := func(name string, c, a, b *device.Tensor, opts ...ops.SelectOption) call {
		return call{"select: " + name, func() (*device.Tensor, error) { return ops.Select(c, a, b, opts...) }}
	}
	where := func(name string, c *device.Tensor, a, b any) call {
		return call{"where: " + name, func() (*device.Tensor, error) { return ops.Where(c, a, b) }}
	}
	red := func(name string, x *device.Tensor, axes []int, opts ...ops.ReduceOption) []call {
		return []call{
			{"reduce_logical_or: " + name, func() (*device.Tensor, error) { return ops.ReduceLogicalOr(x, axes, opts...) }},
			{"reduce_logical_and: " + name, func() (*device.Tensor, error) { return ops.ReduceLogicalAnd(x, axes, opts...) }},
		}
	}
	calls := []call{
		// Element types.
		sel("then i32, else f32", cond, i32, f32),
		sel("then u8, else i32", cond, u8, i32),
		sel("cond i8", i8c, i32, i32),
		sel("cond i32", i32, i32, i32),
		where("input i32, other f32", cond, i32, f32),
		where("cond u8", u8, 1, 0),
		where("typed scalars of two types", cond, ops.Scalar(1, tensor.I8), ops.Scalar(1, tensor.U8)),
		// Shapes, under every mode.
		sel("numpy: then [2 3], else [2]", cond, i32, row2),
		sel("numpy: cond wider than the result", cond, row3, row3),
		sel("none: unequal shapes", cond, i32, row3, ops.WithBroadcast(ops.BroadcastNone)),
		sel("pdpd: else wider than then", cond, row3, i32, ops.WithBroadcast(ops.BroadcastPDPD)),
		sel("pdpd: cond wider than then", cond, row2, row2, ops.WithBroadcast(ops.BroadcastPDPD)),
		sel("unknown broadcast mode", cond, i32, i32, ops.WithBroadcast(ops.Broadcast(9))),
		where("cond [2 3], input [2]", cond, row2, 0),
		where("cond [2 3], input [3], other [2]", cond, row3, row2),
		// Scalars that the type cannot hold, and things that are not scalars.
		where("-1 beside u8", cond, u8, -1),
		where("256 beside u8", cond, 256, u8),
		where("1.5 beside i32", cond, i32, 1.5),
		where("NaN beside i32", cond, math.NaN(), i32),
		where("+Inf beside u8", cond, u8, math.Inf(1)),
		where("uint64 max beside i32", cond, i32, uint64(math.MaxUint64)),
		where("i8 scalar 300", cond, ops.Scalar(300, tensor.I8), ops.Scalar(0, tensor.I8)),
		where("u8 scalar -1", cond, ops.Scalar(-1, tensor.U8), 0),
		where("f16 scalar 1e6", cond, ops.Scalar(1e6, tensor.F16), 0),
		where("f32 scalar 1e39", cond, 0, ops.Scalar(1e39, tensor.F32)),
		where("bool scalar 2", cond, ops.Scalar(2, tensor.Bool), ops.Scalar(true, tensor.Bool)),
		where("typed i32 scalar 2^40 beside i32", cond, i32, ops.Scalar(int64(1)<<40, tensor.I64)),
		where("tensor.Scalar with bits past its size", cond, tensor.Scalar{DType: tensor.U8, Bits: 0x100}, u8),
		where("tensor.Scalar of an invalid type", cond, tensor.Scalar{DType: 99}, 0),
		where("ops.Scalar of tensor.Invalid", cond, ops.Scalar(1, tensor.Invalid), 0),
		where("a string", cond, "1", 0),
		where("a slice", cond, []int{1}, 0),
		where("a struct", cond, struct{}{}, 0),
		where("a host tensor", cond, selHost([]int{2, 3}, int32(1), 2, 3, 4, 5, 6), 0),
		// nil, never made, freed and foreign tensors.
		sel("nil cond", nil, i32, i32),
		sel("nil then", cond, nil, i32),
		sel("nil else", cond, i32, nil),
		sel("zero-value cond", zero, i32, i32),
		sel("zero-value else", cond, i32, zero),
		sel("freed cond", freedCond, i32, i32),
		sel("freed then", cond, freed, i32),
		sel("foreign then", cond, foreign, i32),
		sel("foreign cond", foreignCond, i32, i32),
		where("nil cond", nil, 1, 0),
		where("nil input", cond, nil, 0),
		where("typed nil input", cond, nilT, 0),
		where("zero-value other", cond, 1, zero),
		where("freed cond", freedCond, 1, 0),
		where("freed input", cond, freed, 0),
		where("foreign other", cond, 0, foreign),
		where("foreign cond", foreignCond, i32, 0),
	}
	calls = append(calls, red("axis 3 of rank 3", data, []int{3})...)
	calls = append(calls, red("axis -4 of rank 3", data, []int{-4})...)
	calls = append(calls, red("axis 1 twice", data, []int{1, 1})...)
	calls = append(calls, red("axes 2 and -1", data, []int{2, -1}, ops.KeepDims(true))...)
	calls = append(calls, red("axis MinInt", data, []int{math.MinInt})...)
	calls = append(calls, red("axis 0 of a 0-D tensor", scalarBool, []int{0})...)
	calls = append(calls, red("i32 data", i32, []int{0})...)
	calls = append(calls, red("u8 data", u8, nil)...)
	calls = append(calls, red("nil data", nil, []int{0})...)
	calls = append(calls, red("zero-value data", zero, []int{0})...)
	calls = append(calls, red("freed data", freedCond, []int{0})...)

	live := bridge.Device(d).LiveObjects()
	for _, c := range calls {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic: %v", c.name, r)
				}
			}()
			y, err := c.run()
			misExpect(t, c.name, y, err, ops.ErrInvalid)
		}()
	}
	if got := bridge.Device(d).LiveObjects(); got != live {
		t.Errorf("rejected ops changed the live Vulkan objects from %d to %d", live, got)
	}
	in.intact(t, "the rejected ops")
	// The device still works: a valid op after them all.
	y, err := ops.Select(cond, i32, row3)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := cpuref.Select(in.hosts[0], in.hosts[1], in.hosts[5], "numpy")
	s, err := downloadDiff(y, want)
	if err != nil {
		t.Fatal(err)
	}
	if s != "" {
		t.Errorf("select after the rejected ops: %s", s)
	}
	t.Logf("%d misuses of the ops, each ops.ErrInvalid, inputs intact", len(calls))
}

// TestMisuseFreed uses tensors after Free, twice freed, and nil ones:
// device methods report device.ErrFreed, ops ops.ErrInvalid, and Free
// itself never fails or panics.
func TestMisuseFreed(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	var in misInputs
	rng := newMisRand()
	keep := in.add(t, d, misRandom(rng, tensor.U32, tensor.Shape{100}))
	x, err := device.FromSlice(d, []float32{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	x.Free()
	x.Free() // twice
	n := 0
	check := func(name string, err error) {
		t.Helper()
		n++
		if !errors.Is(err, device.ErrFreed) {
			t.Errorf("%s after Free: %v, want ErrFreed", name, err)
		}
	}
	_, err = bridge.Tensor(x).Download()
	check("Download", err)
	check("Read", bridge.Tensor(x).Read(make([]byte, 16)))
	check("Write", bridge.Tensor(x).Write(make([]byte, 16)))
	_, _, err = bridge.Tensor(x).Mapped()
	check("Mapped", err)
	check("Err", x.Err())
	_, err = device.ToSlice[float32](x)
	check("ToSlice", err)
	_, err = device.ToSlice[int32](x)
	check("ToSlice of another type", err)
	_, err = device.Value[float32](x)
	check("Value of 4 elements", err)
	y, err := bridge.Device(d).Empty(tensor.F32, tensor.Shape{4})
	if err != nil {
		t.Fatal(err)
	}
	check("Copy from", bridge.Device(d).Copy(y, bridge.Tensor(x)))
	check("Copy into", bridge.Device(d).Copy(bridge.Tensor(x), y))
	y.Free()

	// The output of an op, freed before and after its work completes.
	c := in.add(t, d, selHost([]int{4}, true, false, true, false))
	a := in.add(t, d, selHost([]int{4}, int16(1), 2, 3, 4))
	for _, wait := range []bool{false, true} {
		z, err := ops.Where(c, a, int16(-1))
		if err != nil {
			t.Fatal(err)
		}
		if wait {
			if err := d.Sync(); err != nil {
				t.Fatal(err)
			}
		}
		z.Free()
		z.Free()
		_, err = bridge.Tensor(z).Download()
		check(fmt.Sprintf("Download of an op's output (synced %v)", wait), err)
		_, err = ops.ReduceLogicalOr(z, nil)
		n++
		if !errors.Is(err, ops.ErrInvalid) {
			t.Errorf("reduce of a freed output: %v, want ops.ErrInvalid", err)
		}
	}

	// Free of nil and never-made tensors does nothing; using them is an
	// error, not a panic.
	var nilT *device.Tensor
	nilT.Free()
	(&device.Tensor{}).Free()
	for _, tt := range []*device.Tensor{nilT, {}} {
		if _, err := bridge.Tensor(tt).Download(); err == nil {
			t.Error("Download of a nil tensor succeeded")
		}
		if err := tt.Err(); err == nil {
			t.Error("Err of a nil tensor is nil")
		}
		if err := bridge.Device(d).Copy(bridge.Tensor(keep), bridge.Tensor(tt)); err == nil {
			t.Error("Copy from a nil tensor succeeded")
		}
		n += 3
	}
	in.intact(t, "use after Free")
	t.Logf("%d uses of freed or nil tensors", n)
}

// TestMisuseClosed uses a device after Close: every method and every op
// reports device.ErrClosed, with work still pending at Close too, and
// Close, Free and the read-only accessors stay safe.
func TestMisuseClosed(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	rng := newMisRand()
	var in misInputs
	c := in.add(t, d, misRandom(rng, tensor.Bool, tensor.Shape{3, 4}))
	a := in.add(t, d, misRandom(rng, tensor.F32, tensor.Shape{3, 4}))
	b := in.add(t, d, misRandom(rng, tensor.F32, tensor.Shape{4}))
	in.intact(t, "upload")
	pending, err := ops.Select(c, a, b) // recorded, not yet waited for
	if err != nil {
		t.Fatal(err)
	}
	gone := in.add(t, d, misRandom(rng, tensor.F32, tensor.Shape{3, 4}))
	// Freed before Close, its uses report ErrClosed after Close too.
	gone.Free()
	var planned ops.Expr // planned and run before Close
	relu := planned.Maximum(planned.Input(a), 0)
	into, err := planned.Eval(relu)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("Close with work pending: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if live := bridge.Device(d).LiveObjects(); live != 0 {
		t.Errorf("%d Vulkan objects live after Close", live)
	}
	n := 0
	check := func(name string, err error) {
		t.Helper()
		n++
		if !errors.Is(err, device.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
	_, err = bridge.Device(d).Empty(tensor.F32, tensor.Shape{2})
	check("Empty", err)
	_, err = bridge.Device(d).Upload(selHost([]int{1}, 1.5))
	check("Upload", err)
	_, err = device.FromSlice(d, []int8{1})
	check("FromSlice", err)
	check("Sync", d.Sync())
	check("Flush", bridge.Device(d).Flush())
	_, err = bridge.Device(d).GPUTime(func() error { return nil })
	check("GPUTime", err)
	check("Copy", bridge.Device(d).Copy(bridge.Tensor(a), bridge.Tensor(a)))
	check("Tile", bridge.Device(d).Tile(bridge.Tensor(a), bridge.Tensor(a)))
	check("Fill", bridge.Device(d).Fill(bridge.Tensor(a), 0))
	check("Err", d.Err())
	_, err = ops.Tune(d)
	check("Tune", err)
	_, err = device.Wrap(d, make([]float32, 4096))
	check("Wrap", err)
	_, err = device.View[float32](a)
	check("View", err)
	// A mistake of type or length reports the closed device first.
	_, err = device.Value[float32](a)
	check("Value of 12 elements", err)
	check("ToSliceInto a short slice", device.ToSliceInto(a, make([]float32, 2)))
	_, err = device.ToSlice[int32](a)
	check("ToSlice of another type", err)
	_, err = device.View[int32](a)
	check("View of another type", err)
	var e ops.Expr
	_, err = e.Eval(e.Greater(a, 0))
	check("Expr.Eval", err)
	_, err = planned.Eval(relu)
	check("Expr.Eval of a planned node", err)
	check("Expr.EvalInto", planned.EvalInto(relu, into))
	for _, x := range []*device.Tensor{c, a, pending} {
		_, err = bridge.Tensor(x).Download()
		check("Download of "+x.String(), err)
		check("Read of "+x.String(), bridge.Tensor(x).Read(make([]byte, x.Bytes())))
		check("Write of "+x.String(), bridge.Tensor(x).Write(make([]byte, x.Bytes())))
		_, _, err = bridge.Tensor(x).Mapped()
		check("Mapped of "+x.String(), err)
		check("Err of "+x.String(), x.Err())
	}
	for name, op := range map[string]func() (*device.Tensor, error){
		"Select":           func() (*device.Tensor, error) { return ops.Select(c, a, b) },
		"Where":            func() (*device.Tensor, error) { return ops.Where(c, a, 0) },
		"Where of scalars": func() (*device.Tensor, error) { return ops.Where(c, 1, 0) },
		"ReduceLogicalOr":  func() (*device.Tensor, error) { return ops.ReduceLogicalOr(c, []int{0}) },
		"ReduceLogicalAnd": func() (*device.Tensor, error) { return ops.ReduceLogicalAnd(c, nil) },
	} {
		y, err := op()
		n++
		misExpect(t, name+" after Close", y, err, device.ErrClosed)
	}
	// Accessors that read what Open found still answer; Free is a no-op.
	if d.Info() == nil || d.String() == "" || bridge.Device(d).PageSize() == 0 || a.Len() != 12 || a.DType() != tensor.F32 {
		t.Error("accessors fail after Close")
	}
	for _, x := range []*device.Tensor{c, a, b, pending} {
		x.Free()
		x.Free()
	}
	// Free after Close did nothing: the tensors are a closed device's,
	// not freed ones.
	for _, x := range []*device.Tensor{a, gone} {
		check("Err after Free of "+x.String(), x.Err())
		_, err = ops.Maximum(x, 0)
		check("Maximum after Free of "+x.String(), err)
	}
	t.Logf("%d uses of a closed device", n)
}

// TestMisuseForeign mixes tensors of two devices: ops report
// ops.ErrInvalid, Copy an error, and both devices keep their data.
func TestMisuseForeign(t *testing.T) {
	d1 := devtest.Open(t, device.Options{})
	d2 := devtest.Open(t, device.Options{})
	rng := newMisRand()
	var in misInputs
	c1 := in.add(t, d1, misRandom(rng, tensor.Bool, tensor.Shape{8}))
	a1 := in.add(t, d1, misRandom(rng, tensor.U16, tensor.Shape{8}))
	c2 := in.add(t, d2, misRandom(rng, tensor.Bool, tensor.Shape{8}))
	a2 := in.add(t, d2, misRandom(rng, tensor.U16, tensor.Shape{8}))
	for _, x := range []struct {
		name string
		run  func() (*device.Tensor, error)
	}{
		{"select cond of d1, then and else of d2", func() (*device.Tensor, error) { return ops.Select(c1, a2, a2) }},
		{"select else of d2", func() (*device.Tensor, error) { return ops.Select(c1, a1, a2) }},
		{"select then of d1", func() (*device.Tensor, error) { return ops.Select(c2, a1, a2) }},
		{"where input of d2", func() (*device.Tensor, error) { return ops.Where(c1, a2, 0) }},
		{"where other of d1", func() (*device.Tensor, error) { return ops.Where(c2, 7, a1) }},
	} {
		y, err := x.run()
		misExpect(t, x.name, y, err, ops.ErrInvalid)
		if !errors.Is(err, device.ErrMisuse) {
			t.Errorf("%s: error %v does not match device.ErrMisuse", x.name, err)
		}
	}
	var e ops.Expr
	if err := e.Set(e.Input(a1), a2); !errors.Is(err, device.ErrMisuse) || !errors.Is(err, ops.ErrInvalid) {
		t.Errorf("Expr.Set to a tensor of another device: %v, want ErrMisuse and ErrInvalid", err)
	}
	if err := bridge.Device(d1).Copy(bridge.Tensor(a1), bridge.Tensor(a2)); err == nil {
		t.Error("Copy from another device's tensor succeeded")
	}
	if err := bridge.Device(d1).Copy(bridge.Tensor(a2), bridge.Tensor(a1)); err == nil {
		t.Error("Copy into another device's tensor succeeded")
	}
	in.intact(t, "mixing devices")
	t.Logf("7 mixes of two devices' tensors, inputs intact")
}

// TestExhaustion allocates past the device heap in the ways a caller
// can: one tensor too large, many tensors, an op whose output does not
// fit, and a reduction whose temporary does not fit. Each is
// device.ErrOutOfMemory, leaves the inputs intact and the Vulkan objects
// as they were, and the same work succeeds once memory is freed. (On
// lavapipe the heap is 2 GiB of memory that is never touched, so filling
// it takes well under a second.)
func TestExhaustion(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	var heap uint64
	for _, h := range d.Info().Heaps {
		if h.DeviceLocal {
			heap = max(heap, h.Size)
		}
	}
	if heap == 0 || heap > 64<<30 {
		t.Skipf("SKIP: a device-local heap of %d bytes is too large to fill here", heap)
	}
	rng := newMisRand()
	var in misInputs
	// The reduction's data and output live in slabs made now: data
	// [256 2 256] over axes 0 and 2 reduces the last axis first, into a
	// temporary of 512 bytes, a slab class that nothing else uses.
	data := in.add(t, d, misRandom(rng, tensor.Bool, tensor.Shape{256, 2, 256}))
	// A smaller reduction of the same two passes measures the kernel
	// variants now, with room to, and leaves its temporary in a slab
	// class of its own.
	small, err := bridge.Device(d).Upload(misRandom(rng, tensor.Bool, tensor.Shape{64, 2, 64}))
	if err != nil {
		t.Fatal(err)
	}
	if y, err := ops.ReduceLogicalOr(bridge.UserTensor(small), []int{0, 2}); err != nil {
		t.Fatal(err)
	} else if _, err := bridge.Tensor(y).Download(); err != nil {
		t.Fatal(err)
	} else {
		y.Free()
	}
	small.Free()
	warm, err := bridge.Device(d).Empty(tensor.Bool, tensor.Shape{2}) // the output's slab, kept
	if err != nil {
		t.Fatal(err)
	}
	// Select of these makes a 4 MiB output.
	cond := in.add(t, d, misRandom(rng, tensor.Bool, tensor.Shape{1 << 10, 1}))
	then := in.add(t, d, misRandom(rng, tensor.U8, tensor.Shape{1 << 10, 1}))
	els := in.add(t, d, misRandom(rng, tensor.U8, tensor.Shape{1, 1 << 12}))
	live := bridge.Device(d).LiveObjects()
	selectWorks := func(when string) {
		t.Helper()
		y, err := ops.Select(cond, then, els)
		if err != nil {
			t.Fatalf("select %s: %v", when, err)
		}
		want, _ := cpuref.Select(in.hosts[1], in.hosts[2], in.hosts[3], "numpy")
		s, err := downloadDiff(y, want)
		if err != nil {
			t.Fatal(err)
		}
		if s != "" {
			t.Fatalf("select %s: %s", when, s)
		}
	}

	// One tensor larger than the heap.
	_, err = bridge.Device(d).Empty(tensor.U8, tensor.Shape{int(heap) + 1})
	misExpect(t, "a tensor of heap+1 bytes", nil, err, device.ErrOutOfMemory)
	// Ops whose output is larger than the heap: [2^k 1] broadcast
	// against [1 2^k] makes 2^2k bytes.
	k := 1
	for uint64(1)<<(2*k) <= heap {
		k++
	}
	bigCond := in.add(t, d, misRandom(rng, tensor.Bool, tensor.Shape{1 << k, 1}))
	bigCol := in.add(t, d, misRandom(rng, tensor.U8, tensor.Shape{1 << k, 1}))
	bigRow := in.add(t, d, misRandom(rng, tensor.U8, tensor.Shape{1, 1 << k}))
	y, err := ops.Select(bigCond, bigCol, bigRow)
	misExpect(t, "select into more than the heap", y, err, device.ErrOutOfMemory)
	y, err = ops.Where(bigCond, bigRow, 0)
	misExpect(t, "where into more than the heap", y, err, device.ErrOutOfMemory)
	// A reduction whose output is larger than the heap, from no data.
	empty := in.add(t, d, misRandom(rng, tensor.Bool, tensor.Shape{0, int(heap) + 1}))
	y, err = ops.ReduceLogicalAnd(empty, []int{0})
	misExpect(t, "reduce into more than the heap", y, err, device.ErrOutOfMemory)
	in.intact(t, "outputs larger than the heap")
	selectWorks("after outputs larger than the heap")

	// Fill the heap with 16 MiB tensors until it refuses one, then with
	// 2 MiB ones: less than 2 MiB is left.
	var filler []*device.Tensor
	for _, chunk := range []int{16 << 20, 2 << 20} {
		n := 0
		for {
			x, err := bridge.Device(d).Empty(tensor.U8, tensor.Shape{chunk})
			if err != nil {
				if !errors.Is(err, device.ErrOutOfMemory) {
					t.Fatalf("filling the heap: %v, want ErrOutOfMemory", err)
				}
				break
			}
			filler = append(filler, bridge.UserTensor(x))
			if n++; n > int(heap)/chunk+2 {
				t.Fatalf("%d tensors of %d bytes fit in a heap of %d bytes", n, chunk, heap)
			}
		}
		t.Logf("heap of %d MiB: %d more tensors of %d MiB, then ErrOutOfMemory", heap>>20, n, chunk>>20)
	}
	// A full heap: a select whose 4 MiB output does not fit, and a
	// reduction whose output fits in a slab slot while its temporary
	// needs a new slab.
	liveFull := bridge.Device(d).LiveObjects()
	y, err = ops.Select(cond, then, els)
	misExpect(t, "select on a full heap", y, err, device.ErrOutOfMemory)
	y, err = ops.ReduceLogicalOr(data, []int{0, 2})
	misExpect(t, "reduce whose temporary does not fit", y, err, device.ErrOutOfMemory)
	t.Logf("reduce on a full heap: %v", err)
	if got := bridge.Device(d).LiveObjects(); got != liveFull {
		t.Errorf("failed ops on a full heap changed the live Vulkan objects from %d to %d", liveFull, got)
	}
	in.intact(t, "running out of memory")

	// Free the filler: the same ops now succeed and agree with cpuref.
	for _, x := range filler {
		x.Free()
	}
	warm.Free()
	y, err = ops.ReduceLogicalOr(data, []int{0, 2})
	if err != nil {
		t.Fatalf("reduce after freeing: %v", err)
	}
	want, _ := cpuref.ReduceLogicalOr(in.hosts[0], []int{0, 2}, false)
	s, err := downloadDiff(y, want)
	if err != nil {
		t.Fatal(err)
	}
	if s != "" {
		t.Errorf("reduce after freeing: %s", s)
	}
	selectWorks("after freeing")
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	in.intact(t, "recovering")
	t.Logf("live Vulkan objects: %d before filling, %d full, %d after freeing", live, liveFull, bridge.Device(d).LiveObjects())
}

// TestMisuseNil calls the API with a nil device and nil tensors, and with
// slices that do not fill their shapes: the accessors answer for no
// device and no elements, every other call returns an error that
// matches the sentinel the package docs give, and nothing panics.
func TestMisuseNil(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	var nd *device.Device
	var nt *device.Tensor
	if nd.String() != "<nil>" || nd.Info() != nil || nd.Profile() != device.ProfileAuto {
		t.Errorf("nil device: String %q, Info %v, Profile %v", nd.String(), nd.Info(), nd.Profile())
	}
	if nt.String() != "<nil>" || nt.Shape() != nil || nt.Len() != 0 || nt.Device() != nil || nt.DType() != tensor.Invalid ||
		nt.Bytes() != 0 || nt.Wrapped() {
		t.Errorf("nil tensor: %v %v len %d on %v, %v, %d bytes, wrapped %v", nt, nt.Shape(), nt.Len(), nt.Device(), nt.DType(), nt.Bytes(), nt.Wrapped())
	}
	x, err := device.FromSlice(d, []float32{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	for _, c := range []struct {
		name string
		err  func() error
		want error
	}{
		{"Close of a nil device", nd.Close, device.ErrMisuse},
		{"Sync of a nil device", nd.Sync, device.ErrMisuse},
		{"Err of a nil device", nd.Err, device.ErrMisuse},
		{"FromSlice on a nil device", func() error { _, err := device.FromSlice(nd, []float32{1}); return err }, device.ErrMisuse},
		{"Wrap on a nil device", func() error { _, err := device.Wrap(nd, device.MakeSlice[float32](1024)); return err }, device.ErrMisuse},
		{"Wait of a nil tensor", nt.Wait, device.ErrMisuse},
		{"Err of a nil tensor", nt.Err, device.ErrMisuse},
		{"ToSlice of a nil tensor", func() error { _, err := device.ToSlice[float32](nt); return err }, device.ErrMisuse},
		{"Select of a nil cond", func() error { _, err := ops.Select(nil, x, x); return err }, device.ErrMisuse},
		{"Maximum of a nil b", func() error { _, err := ops.Maximum(x, nt); return err }, device.ErrMisuse},
		{"FromSlice, 2 elements for shape [3]", func() error { _, err := device.FromSlice(d, []float32{1, 2}, 3); return err }, device.ErrSize},
		{"Wrap, 2 elements for shape [3]", func() error { _, err := device.Wrap(d, []float32{1, 2}, 3); return err }, device.ErrSize},
		{"FromSlice, 3 elements for shape [1 2]", func() error { _, err := device.FromSlice(d, []int8{1, 2, 3}, 1, 2); return err }, device.ErrSize},
	} {
		if err := c.err(); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want an error matching %q", c.name, err, c.want)
		}
	}
	if _, err := device.FromSlice(d, []float32{1, 2}, -1, -2); !errors.Is(err, device.ErrMisuse) || errors.Is(err, device.ErrSize) {
		t.Errorf("FromSlice of shape [-1 -2]: %v, want ErrMisuse, not ErrSize", err)
	}
	if _, err := ops.Tune(nd); !errors.Is(err, device.ErrMisuse) || !errors.Is(err, ops.ErrInvalid) {
		t.Errorf("Tune of a nil device: %v, want ErrMisuse and ErrInvalid", err)
	}
	// A Device that Open did not make is as good as none.
	zd := new(device.Device)
	if zd.String() != "<nil>" {
		t.Errorf("a zero Device: String %q", zd.String())
	}
	for name, err := range map[string]error{"Close": zd.Close(), "Err": zd.Err(), "Sync": zd.Sync(),
		"FromSlice": func() error { _, err := device.FromSlice(zd, []int8{1}); return err }()} {
		if !errors.Is(err, device.ErrMisuse) {
			t.Errorf("%s of a zero Device: %v, want ErrMisuse", name, err)
		}
	}
	nd.Close() // and again: still no panic
	if got, err := device.ToSlice[float32](x); err != nil || got[1] != 2 {
		t.Errorf("the device after the misuse: %v, %v", got, err)
	}
}
