package device_test

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/devtest"
)

// TestMain skips the examples where no Vulkan device exists, outside CI:
// their output needs one (devtest.SkipExamples).
func TestMain(m *testing.M) {
	devtest.SkipExamples()
	os.Exit(m.Run())
}

// Open the best device, move a tensor to it and back.
func ExampleOpen() {
	d, err := device.Open(device.Options{}) // or Options{Device: "1"}, or $VKOPS_DEVICE
	if err != nil {
		fmt.Println(err) // errors.Is(err, device.ErrNoDevice) without a Vulkan driver
		return
	}
	defer d.Close()

	x, err := device.FromSlice(d, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer x.Free()
	back, err := device.ToSlice[float32](x)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(x, x.Bytes(), "bytes:", back)
	// Output:
	// f32[2 3] 24 bytes: [1 2 3 4 5 6]
}

// Errors name what went wrong with sentinels that errors.Is matches.
func ExampleErrFreed() {
	d, err := device.Open(device.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	x, err := device.FromSlice(d, []int8{1, 2, 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	x.Free()
	_, err = x.Download()
	fmt.Println(errors.Is(err, device.ErrFreed))

	y, err := device.FromSlice(d, []int8{4, 5, 6})
	if err != nil {
		fmt.Println(err)
		return
	}
	d.Close()
	_, err = y.Download()
	fmt.Println(errors.Is(err, device.ErrClosed))
	// Output:
	// true
	// true
}
