package ops_test

import (
	"fmt"
	"math"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/ops"
)

// A NaN check that never leaves the device: IsNaN makes the mask, and
// ReduceLogicalOr over every axis says whether any element is set.
func ExampleIsNaN() {
	d, err := device.Open(device.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	x, _ := device.FromSlice(d, []float32{1, 2, float32(math.NaN()), 4, 5, 6}, 2, 3)
	defer x.Free()

	mask, err := ops.IsNaN(x)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer mask.Free()
	anyNaN, err := ops.ReduceLogicalOr(mask, []int{0, 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer anyNaN.Free()
	got, _ := device.ToSlice[bool](anyNaN)
	fmt.Println(anyNaN, got)
	// Output: bool[] [true]
}

// ReLU on the device: Greater compares x with the scalar 0 (converted to
// x's type), and Select keeps x where the mask is set and a zero
// elsewhere.
func ExampleGreater() {
	d, err := device.Open(device.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	x, _ := device.FromSlice(d, []float32{-2, -0.5, 0, 0.5, 2, float32(math.Inf(-1))}, 2, 3)
	zero, _ := device.FromSlice(d, []float32{0})
	defer x.Free()
	defer zero.Free()

	positive, err := ops.Greater(x, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer positive.Free()
	y, err := ops.Select(positive, x, zero)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer y.Free()
	got, _ := device.ToSlice[float32](y)
	fmt.Println(y, got)
	// Output: f32[2 3] [0 0 0 0.5 2 0]
}
