//go:build glfw

package glfwloader_test

import (
	"os"
	"runtime"
	"slices"
	"testing"

	"github.com/go-gl/glfw/v3.3/glfw"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/glfwloader"
	"github.com/vkops/vkops/internal/devtest"
)

func init() { runtime.LockOSThread() } // GLFW wants the main thread

// With GLFW's loader in place (under Xvfb in CI), a device opens and a
// tensor round-trips.
func TestUseGLFWLoader(t *testing.T) {
	if err := glfw.Init(); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("SKIP: GLFW cannot initialise (no display?): %v; run under xvfb-run -a", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(glfw.Terminate) // runs after the device closes: Terminate unloads Vulkan
	if err := glfwloader.Use(); err != nil {
		t.Fatal(err)
	}
	d := devtest.Open(t, device.Options{})
	want := []float32{1, -2, 3.5}
	x, err := device.FromSlice(d, want)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	got, err := device.ToSlice[float32](x)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if err := glfwloader.Use(); err == nil {
		t.Error("a second loader was accepted after a device was opened")
	}
}
