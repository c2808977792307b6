package core_test

import (
	"testing"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/core"
	"github.com/vkops/vkops/ops"
	"github.com/vkops/vkops/tensor"
)

// BenchmarkTinyDispatch is the per-op overhead: many dispatches of a tiny
// kernel recorded into batches, versus one dispatch per submit.
func BenchmarkTinyDispatch(b *testing.B) {
	d, err := core.Open(core.Options{CacheDir: "-"})
	if err != nil {
		b.Skip(err)
	}
	defer d.Close()
	x, _ := core.FromSlice(d, []uint32{1, 2, 3, 4})
	y, _ := d.Empty(tensor.U32, tensor.Shape{4})
	z, _ := d.Empty(tensor.U32, tensor.Shape{4})
	b.Run("batched", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			dst := y
			if i%2 == 1 {
				dst = z
			}
			if err := dispatchCopy(d, dst, x); err != nil {
				b.Fatal(err)
			}
		}
		if err := d.Sync(); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("submit-each", func(b *testing.B) {
		for b.Loop() {
			if err := dispatchCopy(d, y, x); err != nil {
				b.Fatal(err)
			}
			if err := d.Sync(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRecord is vkops's host-side cost of an op apart from the
// driver's execution: dispatches recorded into batches that are dropped
// instead of submitted, with one binding read and another written (the
// next dispatch independent of it, as a batch of unrelated ops is), as
// storage buffers or with a texel view; with bindings pushed where the
// device has VK_KHR_push_descriptor ("push") and with a descriptor set
// written per dispatch as on devices without it ("sets"). It reports
// ns/op and allocs/op; in steady state recording allocates nothing.
func BenchmarkRecord(b *testing.B) {
	for _, mode := range []string{"push", "sets"} {
		b.Run(mode, func(b *testing.B) {
			d, err := core.Open(core.Options{CacheDir: "-", Descriptors: mode})
			if err != nil {
				b.Skip(err)
			}
			defer d.Close()
			if mode == "push" && !d.PushDescriptors() {
				b.Skip("the device lacks VK_KHR_push_descriptor")
			}
			benchmarkRecord(b, d)
		})
	}
}

func benchmarkRecord(b *testing.B, d *core.Device) {
	d.DiscardBatches(true)
	x, _ := core.FromSlice(d, []uint32{1, 2, 3, 4})
	ys := make([]*core.Tensor, 256)
	for i := range ys {
		ys[i], _ = d.Empty(tensor.U32, tensor.Shape{4})
	}
	for _, k := range []*core.Kernel{copyWords, copyTexels} {
		b.Run(k.Name, func(b *testing.B) {
			src, _, err := x.Window(0, 16)
			if err != nil {
				b.Fatal(err)
			}
			var args [2]core.Arg
			args[0] = src
			push := []byte{1, 0, 0, 0, 1, 0, 0, 0}
			spec := []uint32{64}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				dst, _, err := ys[i%len(ys)].Window(0, 16)
				if err != nil {
					b.Fatal(err)
				}
				dst.Write = true
				args[1] = dst
				if err := d.Dispatch(k, spec, args[:], push, [3]uint32{1, 1, 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRecordOps is BenchmarkRecord for whole ops on four
// elements, with their checks, planning, output tensor and Free,
// recorded and dropped: ops.Select, ops.Where with a scalar, ops.Greater
// with a scalar, ops.IsNaN, ops.ReduceLogicalOr over its one axis, and
// ops.Expr's Eval of a ReLU and of a NaN check, planned.
func BenchmarkRecordOps(b *testing.B) {
	d, err := core.Open(core.Options{CacheDir: "-"})
	if err != nil {
		b.Skip(err)
	}
	defer d.Close()
	ud := bridge.UserDevice(d)
	cond, _ := device.FromSlice(ud, []bool{true, false, true, false})
	x, _ := device.FromSlice(ud, []float32{1, 2, 3, 4})
	y, _ := device.FromSlice(ud, []float32{5, 6, 7, 8})
	// Eval replays the plan its first call made: a fused ReLU, and a NaN
	// check folded into one bool.
	var e ops.Expr
	xn := e.Input(x)
	relu := e.Where(e.Greater(xn, float32(0)), xn, float32(0))
	nan := e.ReduceOr(e.IsNaN(xn), ops.AllAxes)
	for _, c := range []struct {
		name string
		op   func() (*device.Tensor, error)
	}{
		{"select", func() (*device.Tensor, error) { return ops.Select(cond, x, y) }},
		{"where-scalar", func() (*device.Tensor, error) { return ops.Where(cond, x, ops.Scalar(0, tensor.F32)) }},
		{"greater-scalar", func() (*device.Tensor, error) { return ops.Greater(x, float32(2)) }},
		{"is-nan", func() (*device.Tensor, error) { return ops.IsNaN(x) }},
		{"reduce-or", func() (*device.Tensor, error) { return ops.ReduceLogicalOr(cond, []int{0}) }},
		{"expr-relu", func() (*device.Tensor, error) { return e.Eval(relu) }},
		{"expr-nan-check", func() (*device.Tensor, error) { return e.Eval(nan) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			d.DiscardBatches(false)
			if _, err := c.op(); err != nil { // chooses the variant
				b.Fatal(err)
			}
			if err := d.Sync(); err != nil {
				b.Fatal(err)
			}
			d.DiscardBatches(true)
			b.ReportAllocs()
			for b.Loop() {
				z, err := c.op()
				if err != nil {
					b.Fatal(err)
				}
				z.Free()
			}
		})
	}
}

// BenchmarkCopyKernels compares storage-buffer and texel-buffer loads in
// the simplest kernel, with vkCmdCopyBuffer beside them (bytes read and
// written per op).
func BenchmarkCopyKernels(b *testing.B) {
	d, err := core.Open(core.Options{CacheDir: "-"})
	if err != nil {
		b.Skip(err)
	}
	defer d.Close()
	n := 16 << 20
	x, _ := d.Empty(tensor.U32, tensor.Shape{n})
	y, _ := d.Empty(tensor.U32, tensor.Shape{n})
	if err := x.Write(make([]byte, 4*n)); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"cmd-copy", func() error { return d.Copy(y, x) }},
		{"ssbo", func() error { return dispatchCopyWith(d, copyWords, y, x) }},
		{"texel", func() error { return dispatchCopyWith(d, copyTexels, y, x) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(8 * n))
			for b.Loop() {
				if err := c.run(); err != nil {
					b.Fatal(err)
				}
				if err := d.Sync(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
