package npy

import (
	"bytes"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/vkops/vkops/tensor"
)

// FuzzRead checks that Read never panics, allocates in proportion to its
// input whatever the header claims, reads sized and unsized inputs alike,
// and that whatever it accepts survives Write and Read unchanged.
func FuzzRead(f *testing.F) {
	// The writer's own output for every type, beside the committed corpus.
	for _, dt := range npyDTypes {
		var buf bytes.Buffer
		if err := Write(&buf, pattern(f, dt, tensor.Shape{2, 3})); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		h, err := Read(bytes.NewReader(data))
		runtime.ReadMemStats(&after)
		// Reading the data may double its buffer once more than needed,
		// and a Fortran-order array is copied; the rest is header-sized.
		if n, limit := after.TotalAlloc-before.TotalAlloc, uint64(16*len(data)+16<<10); n > limit {
			t.Fatalf("allocated %d bytes for a %d-byte input", n, len(data))
		}

		// The unsized path grows its buffers as bytes arrive instead of
		// sizing them up front; it must reach the same verdict.
		runtime.ReadMemStats(&before)
		h2, err2 := Read(struct{ io.Reader }{bytes.NewReader(data)})
		runtime.ReadMemStats(&after)
		if n, limit := after.TotalAlloc-before.TotalAlloc, uint64(16*len(data)+16<<10); n > limit {
			t.Fatalf("unsized: allocated %d bytes for a %d-byte input", n, len(data))
		}
		if (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Fatalf("sized: %v; unsized: %v", err, err2)
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "npy: ") {
				t.Fatalf("error %q lacks the npy: prefix", err)
			}
			return
		}
		sameHost(t, h2, h)
		if err := h.Check(); err != nil {
			t.Fatalf("accepted an inconsistent tensor: %v", err)
		}

		var buf bytes.Buffer
		if err := Write(&buf, h); err != nil {
			t.Fatalf("Write of an accepted file: %v", err)
		}
		back, err := Read(&buf)
		if err != nil {
			t.Fatalf("Read of our own output: %v", err)
		}
		sameHost(t, back, h)
	})
}
