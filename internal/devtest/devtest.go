// Package devtest opens devices for tests: with the validation layer on,
// failing the test on any message it prints, and skipping with a clear
// line where no Vulkan device exists (never when $CI is set).
package devtest

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/core"
)

// Open opens a device for t with validation and guard bytes on, and closes
// it at cleanup. Every validation message fails t, and so does a kernel
// that wrote past a tensor's pages.
//
// A benchmark gets neither, unless VKOPS_VALIDATION=1 asks for the layer:
// its checks on every call add to the wall time the benchmark reports
// (0.15-0.6 ms a reduction on lavapipe, more than a small op's work).
func Open(t testing.TB, opts device.Options) *device.Device {
	t.Helper()
	_, bench := t.(*testing.B)
	opts.Validation = !bench
	opts.Guard = !bench
	opts.OnValidation = func(sev, msg string) { t.Errorf("validation %s: %s", sev, msg) }
	if opts.CacheDir == "" {
		opts.CacheDir = "-"
	}
	d, err := device.Open(opts)
	SkipIfMissing(t, err)
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

// SkipIfMissing skips t, with SkipLine, when err says that no Vulkan
// device exists here; never when $CI is set, where the caller's handling
// of err fails the test.
func SkipIfMissing(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, device.ErrNoDevice) && os.Getenv("CI") == "" {
		t.Skip(SkipLine(err))
	}
}

// SkipLine is the line a test skips with when err says that no Vulkan
// device exists here.
func SkipLine(err error) string {
	return fmt.Sprintf("SKIP: no Vulkan device here (%v); install mesa-vulkan-drivers (CI never skips)", err)
}

// Missing returns the error saying that no Vulkan device exists here, or
// nil where one does. It is nil whenever $CI is set, where a missing
// device fails the tests that need one. The loader is asked once.
func Missing() error { return missing() }

var missing = sync.OnceValue(func() error {
	if os.Getenv("CI") != "" {
		return nil
	}
	if _, _, err := device.Devices(device.Options{}); errors.Is(err, device.ErrNoDevice) {
		return err
	}
	return nil
})

// SkipExamples keeps the package's examples from running where Missing
// reports no device, printing the skip line instead: an example's output
// needs a device, and an example cannot skip itself. Call it from
// TestMain before m.Run. Elsewhere, in CI included, it does nothing.
func SkipExamples() {
	err := Missing()
	if err == nil {
		return
	}
	flag.Parse()
	skip := "^Example"
	if prev := flag.Lookup("test.skip").Value.String(); prev != "" {
		skip = prev + "|" + skip
	}
	if err := flag.Set("test.skip", skip); err != nil {
		panic(err)
	}
	fmt.Println("examples:", SkipLine(err))
}

// OpenCore is Open for package core's tests.
func OpenCore(t testing.TB, opts core.Options) *core.Device {
	t.Helper()
	return bridge.Device(Open(t, device.Options(opts)))
}
