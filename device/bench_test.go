package device_test

import (
	"testing"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/tensor"
)

// BenchmarkTinyDispatch is the per-op overhead: many dispatches of a tiny
// kernel recorded into batches, versus one dispatch per submit.
func BenchmarkTinyDispatch(b *testing.B) {
	d, err := device.Open(device.Options{CacheDir: "-"})
	if err != nil {
		b.Skip(err)
	}
	defer d.Close()
	x, _ := device.FromSlice(d, []uint32{1, 2, 3, 4})
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

// BenchmarkCopyKernels compares storage-buffer and texel-buffer loads in
// the simplest kernel, with vkCmdCopyBuffer beside them (bytes read and
// written per op).
func BenchmarkCopyKernels(b *testing.B) {
	d, err := device.Open(device.Options{CacheDir: "-"})
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
