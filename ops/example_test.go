package ops_test

import (
	"errors"
	"fmt"
	"log"
	"math"
	"os"
	"testing"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/ops"
)

// TestMain skips the examples where no Vulkan device exists, outside CI:
// their output needs one (devtest.SkipExamples).
func TestMain(m *testing.M) {
	devtest.SkipExamples()
	os.Exit(m.Run())
}

// The README's tour of the API: a select, a reduction and two masks,
// chained on the device and read back once.
func Example() {
	d, err := device.Open(device.Options{}) // best device: discrete, integrated, virtual, then lavapipe
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()

	cond, _ := device.FromSlice(d, []bool{true, false, true, false, false, true}, 3, 2)
	then, _ := device.FromSlice(d, []float32{-5, 3, 1, -2, 4, 0}, 3, 2)
	els, _ := device.FromSlice(d, []float32{1, 2, 3, 4, 5, 6}, 3, 2)

	out, err1 := ops.Select(cond, then, els)          // stays on the device
	rows, err2 := ops.ReduceLogicalOr(cond, []int{1}) // any true in each row: ops chain without a round trip
	pos, err3 := ops.Greater(then, 0)                 // a mask made on the device: then > 0
	nan, err4 := ops.IsNaN(then)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		log.Fatal(err)
	}
	got, err := device.ToSlice[float32](out) // waits only for the work it needs
	if err != nil {
		log.Fatal(err)
	}

	fmt.Println(out, got)
	for _, m := range []*device.Tensor{rows, pos, nan} {
		bits, _ := device.ToSlice[bool](m)
		fmt.Println(m, bits)
	}
	// Output:
	// f32[3 2] [-5 2 1 4 5 0]
	// bool[3] [true true true]
	// bool[3 2] [false true true false true false]
	// bool[3 2] [false false false false false false]
}

// Select picks then's elements where cond is true and else's where it is
// false; else, a row, is broadcast numpy-style to then's shape.
func ExampleSelect() {
	d, err := device.Open(device.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	cond, _ := device.FromSlice(d, []bool{true, false, true, false, false, true}, 2, 3)
	then, _ := device.FromSlice(d, []int32{1, 2, 3, 4, 5, 6}, 2, 3)
	els, _ := device.FromSlice(d, []int32{-1, -2, -3}, 3)

	y, err := ops.Select(cond, then, els)
	if err != nil {
		fmt.Println(err)
		return
	}
	got, err := device.ToSlice[int32](y)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(y, got)

	// Shapes that do not broadcast are refused before anything runs.
	col, _ := device.FromSlice(d, []int32{7, 8}, 2)
	_, err = ops.Select(cond, then, col)
	fmt.Println(err)
	// Output:
	// i32[2 3] [1 -2 3 -1 -2 6]
	// select: then shape [2 3] and else shape [2] do not broadcast (axis -1: 3 vs 2)
}

// Where takes tensors or scalars; a scalar beside a tensor converts to
// the tensor's element type, exactly, or is an error.
func ExampleWhere() {
	d, err := device.Open(device.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	cond, _ := device.FromSlice(d, []bool{true, false, true, false})
	x, _ := device.FromSlice(d, []uint8{10, 20, 30, 40})

	y, err := ops.Where(cond, x, 0) // the plain 0 becomes a u8
	if err != nil {
		fmt.Println(err)
		return
	}
	got, _ := device.ToSlice[uint8](y)
	fmt.Println(y, got)

	_, err = ops.Where(cond, x, -1) // u8 cannot hold -1
	fmt.Println(err)
	// Output:
	// u8[4] [10 0 30 0]
	// where: other scalar -1 cannot be represented as u8
}

// ReduceLogicalOr folds bool data along axes; KeepDims keeps the reduced
// axes with size 1.
func ExampleReduceLogicalOr() {
	d, err := device.Open(device.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	data, _ := device.FromSlice(d, []bool{
		false, false, false,
		false, true, false,
	}, 2, 3)

	rows, err := ops.ReduceLogicalOr(data, []int{1})
	if err != nil {
		fmt.Println(err)
		return
	}
	got, _ := device.ToSlice[bool](rows)
	fmt.Println(rows, got)

	all, err := ops.ReduceLogicalOr(data, []int{0, -1}, ops.KeepDims(true))
	if err != nil {
		fmt.Println(err)
		return
	}
	got, _ = device.ToSlice[bool](all)
	fmt.Println(all, got)
	// Output:
	// bool[2] [false true]
	// bool[1 1] [true]
}

// An Expr runs a chain of ops as one pass: a ReLU reads x once and
// writes its result once, and a NaN check folds into one bool with no
// mask written. Nodes carry their op's errors, which Eval returns.
func ExampleExpr() {
	d, err := device.Open(device.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	t, _ := device.FromSlice(d, []float32{-2, -0.5, 0, 1.5, 3, -1}, 2, 3)
	t2, _ := device.FromSlice(d, []float32{4, -4, 2, -2, 1, -1}, 2, 3)

	var e ops.Expr
	x := e.Input(t)
	relu := e.Where(e.Greater(x, 0), x, 0)
	y, err := e.Eval(relu) // one pass: read x, write the result
	if err != nil {
		log.Fatal(err)
	}
	nan, err := e.Eval(e.ReduceOr(e.IsNaN(x), ops.AllAxes)) // one pass, no mask written: any NaN in x?
	if err != nil {
		log.Fatal(err)
	}
	if err := e.Set(x, t2); err != nil { // same shape and type
		log.Fatal(err)
	}
	y2, err := e.Eval(relu) // replays the plan, on t2
	if err != nil {
		log.Fatal(err)
	}

	got, _ := device.ToSlice[float32](y)
	anyNaN, _ := device.Value[bool](nan)
	got2, _ := device.ToSlice[float32](y2)
	fmt.Println(got, nan, anyNaN, got2)

	_, err = e.Eval(e.Where(e.Greater(x, 0), x, "zero"))
	fmt.Println(err)
	// Output:
	// [0 0 0 1.5 3 0] bool[] false [4 0 2 0 1 0]
	// where: other scalar of Go type string is not a number
}

// Explain shows the plan Eval runs: here a clamp to [-1, 1] that then
// turns NaN and infinities to 0, eight ops and three scalars, which the
// fused kernel's limits (four ops, two scalars) split in two kernels,
// with one intermediate tensor between them.
func ExampleExpr_Explain() {
	d, err := device.Open(device.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	t, _ := device.FromSlice(d, []float32{-2, 0.5, float32(math.NaN()), float32(math.Inf(1)), 3, -1}, 2, 3)

	var e ops.Expr
	x := e.Input(t)
	y := e.Where(e.Greater(x, 1), 1, x)
	y = e.Where(e.Less(y, -1), -1, y)
	y = e.Where(e.IsNaN(y), 0, y)
	y = e.Where(e.IsInf(y, true, true), 0, y)
	plan, err := e.Explain(y)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(plan)
	res, err := e.Eval(y) // runs the plan
	if err != nil {
		log.Fatal(err)
	}
	got, _ := device.ToSlice[float32](res)
	fmt.Println(got)
	// Output:
	// 8 ops in 2 kernels
	// 1. fused greater, where, less, where (in1; scalars 1, -1) -> f32[2 3]; boundary: 5 ops > 4
	// 2. fused is-nan, where, is-inf, where (#1; scalar 0) -> f32[2 3]
	// [-1 0.5 0 1 1 -1]
}

// EvalInto writes a chain's result where the caller wants it: into a Go
// slice made a tensor by Wrap, the kernel stores the result in the slice
// itself, with no copy out. Wait, then read the slice. A device that
// cannot import host memory gets a copy (Wrapped reports false): read it
// back with ToSliceInto.
func ExampleExpr_EvalInto() {
	d, err := device.Open(device.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	xs := device.MakeSlice[float32](8) // on the device's alignment: Wrap imports it
	copy(xs, []float32{-2, 0.5, 3, -1, 4, -0.25, 1, 2})
	out := device.MakeSlice[float32](8)

	x, _ := device.Wrap(d, xs, 2, 4)
	y, _ := device.Wrap(d, out, 2, 4)
	defer x.Free()
	defer y.Free()
	var e ops.Expr
	relu := e.Maximum(e.Input(x), 0)
	if err := e.EvalInto(relu, y); err != nil {
		log.Fatal(err)
	}
	if err := y.Wait(); err != nil { // the kernel has written out
		log.Fatal(err)
	}
	if !y.Wrapped() {
		if err := device.ToSliceInto(y, out); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println(out)
	// Output:
	// [0 0.5 3 0 4 0 1 2]
}
