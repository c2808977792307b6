// Package devtest opens devices for tests: with the validation layer on,
// failing the test on any message it prints, and skipping with a clear
// line where no Vulkan device exists (never when $CI is set).
package devtest

import (
	"errors"
	"os"
	"testing"

	"github.com/vkops/vkops/device"
)

// Open opens a device for t with validation and guard bytes on, and closes
// it at cleanup. Every validation message fails t, and so does a kernel
// that wrote past a tensor's pages.
func Open(t testing.TB, opts device.Options) *device.Device {
	t.Helper()
	opts.Validation = true
	opts.Guard = true
	opts.OnValidation = func(sev, msg string) { t.Errorf("validation %s: %s", sev, msg) }
	if opts.CacheDir == "" {
		opts.CacheDir = "-"
	}
	d, err := device.Open(opts)
	if errors.Is(err, device.ErrNoDevice) && os.Getenv("CI") == "" {
		t.Skipf("SKIP: no Vulkan device here (%v); install mesa-vulkan-drivers (CI never skips)", err)
	}
	if err != nil {
		t.Fatalf("device.Open: %v", err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return d
}
