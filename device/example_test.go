package device_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"testing"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/ops"
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
	_, err = bridge.Tensor(x).Download()
	fmt.Println(errors.Is(err, device.ErrFreed))

	y, err := device.FromSlice(d, []int8{4, 5, 6})
	if err != nil {
		fmt.Println(err)
		return
	}
	d.Close()
	_, err = bridge.Tensor(y).Download()
	fmt.Println(errors.Is(err, device.ErrClosed))
	// Output:
	// true
	// true
}

// Hand the device a Go slice's own memory, where it can use it, and
// read a result in place: no copy either way.
func ExampleWrap() {
	d, err := device.Open(device.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()

	// Slices of 32 KiB and more start on whole pages; smaller or
	// misaligned ones are copied, and Wrapped reports false.
	data := make([]uint32, 1<<15)
	for i := range data {
		data[i] = uint32(i)
	}
	x, err := device.Wrap(d, data)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer x.Free() // data stays pinned until the device is done with it
	y, err := bridge.Device(d).Empty(x.DType(), x.Shape())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer y.Free()
	if err := bridge.Device(d).Copy(y, bridge.Tensor(x)); err != nil { // an op that reads x
		fmt.Println(err)
		return
	}
	// Ops read data when they run: Wait before writing it again.
	if err := x.Wait(); err != nil {
		fmt.Println(err)
		return
	}
	data[0] = 7

	if bridge.Device(d).Unified() {
		pages, err := device.View[uint32](bridge.UserTensor(y)) // waits for the copy
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(pages[0][:4])
	} else {
		back, err := device.ToSlice[uint32](bridge.UserTensor(y))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(back[:4])
	}
	// Output:
	// [0 1 2 3]
}

// Make a slice that Wrap imports, fill it in place, and check it for a
// NaN in one pass that writes no mask.
func ExampleMakeSlice() {
	d, err := device.Open(device.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()

	xs := device.MakeSlice[float32](1_000_000) // on 4 KiB boundaries, zeroed
	for i := range xs {
		xs[i] = float32(i) // the program's data, written in place
	}
	x, err := device.Wrap(d, xs) // x.Wrapped() is true: the device reads xs itself
	if err != nil {
		log.Fatal(err)
	}
	var e ops.Expr
	nan, err := e.Eval(e.ReduceOr(e.IsNaN(e.Input(x)), ops.AllAxes)) // one pass, see below
	if err != nil {
		log.Fatal(err)
	}
	anyNaN, err := device.Value[bool](nan)
	if err != nil {
		log.Fatal(err)
	}

	fmt.Println(x, anyNaN)
	// Output:
	// f32[1000000] false
}
