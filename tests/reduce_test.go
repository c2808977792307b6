// Package tests checks ops against cpuref across packages: every device
// result must equal the oracle's, byte for byte, and every error message
// must be the oracle's.
package tests

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/ops"
	"github.com/vkops/vkops/tensor"
)

// reduceFn is ReduceLogicalOr or ReduceLogicalAnd, on device and host.
type reduceFn struct {
	name string
	dev  func(*device.Tensor, []int, ...ops.ReduceOption) (*device.Tensor, error)
	host func(*tensor.Host, []int, bool) (*tensor.Host, error)
}

var reduceFns = []reduceFn{
	{"or", ops.ReduceLogicalOr, cpuref.ReduceLogicalOr},
	{"and", ops.ReduceLogicalAnd, cpuref.ReduceLogicalAnd},
}

// reduceOnDevice uploads h, reduces it on d and downloads the result.
func reduceOnDevice(d *device.Device, f reduceFn, h *tensor.Host, axes []int, keepDims bool) (*tensor.Host, error) {
	x, err := bridge.Device(d).Upload(h)
	if err != nil {
		return nil, err
	}
	defer x.Free()
	y, err := f.dev(bridge.UserTensor(x), axes, ops.KeepDims(keepDims))
	if err != nil {
		return nil, err
	}
	defer y.Free()
	return bridge.Tensor(y).Download()
}

// reduceCheck runs f on the device and on the host and fails t unless
// both give the same bytes and shape, or the same error, which on the
// device matches ops.ErrInvalid.
func reduceCheck(t *testing.T, d *device.Device, f reduceFn, h *tensor.Host, axes []int, keepDims bool) {
	t.Helper()
	want, werr := f.host(h, axes, keepDims)
	got, err := reduceOnDevice(d, f, h, axes, keepDims)
	name := fmt.Sprintf("%s %v axes %v keep_dims %v", f.name, h.Shape, axes, keepDims)
	switch {
	case werr != nil || err != nil:
		if werr == nil || err == nil || err.Error() != werr.Error() || !errors.Is(err, ops.ErrInvalid) {
			t.Fatalf("%s: error %v, want %v", name, err, werr)
		}
	case !got.Shape.Equal(want.Shape) || got.DType != tensor.Bool:
		t.Fatalf("%s: got %v%v, want bool%v", name, got.DType, got.Shape, want.Shape)
	case string(got.Data) != string(want.Data):
		for i := range got.Data {
			if got.Data[i] != want.Data[i] {
				t.Fatalf("%s: element %d is %d, want %d (of %d)", name, i, got.Data[i], want.Data[i], len(want.Data))
			}
		}
	}
}

// reduceData returns bool data of the given shape: mostly false with
// trues at density 1/every (mostly true with falses when flip is set),
// and "true" bytes that are not all 1, as docs/specs.md#element-types
// allows.
func reduceData(rng *rand.Rand, shape tensor.Shape, every int, flip bool) *tensor.Host {
	h, err := tensor.New(tensor.Bool, shape)
	if err != nil {
		panic(err)
	}
	for i := range h.Data {
		odd := rng.IntN(every) == 0
		if odd != flip {
			h.Data[i] = byte(1 + rng.IntN(255))
		}
	}
	return h
}

// OpenVINO ReduceLogicalOr-1, "Examples": the four [6,12,10,24]
// layers, with data whose results have closed forms (as in cpuref's
// test): data[a,b,c,d] = a%2 == 0 && b%3 == 0 && c == d%10. And reduces
// the negation, which negates each result. Each kernel variant of the
// classes they reach runs them (forEachReduceVariant).
func TestReduceSpecExamples(t *testing.T) {
	forEachReduceVariant(t, reduceMatrixFamilies, testReduceSpecExamples)
}

func testReduceSpecExamples(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	const A, B, C, D = 6, 12, 10, 24
	in, _ := tensor.New(tensor.Bool, tensor.Shape{A, B, C, D})
	neg, _ := tensor.New(tensor.Bool, tensor.Shape{A, B, C, D})
	i := 0
	for a := range A {
		for b := range B {
			for c := range C {
				for dd := range D {
					if a%2 == 0 && b%3 == 0 && c == dd%10 {
						in.Data[i] = 1
					} else {
						neg.Data[i] = 1
					}
					i++
				}
			}
		}
	}
	type form func(a, b, c, d int) bool
	ab := func(a, b, _, _ int) bool { return a%2 == 0 && b%3 == 0 }
	acd := func(a, _, c, d int) bool { return a%2 == 0 && c == d%10 }
	for _, c := range []struct {
		axes  []int
		keep  bool
		shape tensor.Shape
		f     form
		dims  [4]int // the output's extent in each input dimension
	}{
		{[]int{2, 3}, true, tensor.Shape{6, 12, 1, 1}, ab, [4]int{A, B, 1, 1}},
		{[]int{2, 3}, false, tensor.Shape{6, 12}, ab, [4]int{A, B, 1, 1}},
		{[]int{1}, false, tensor.Shape{6, 10, 24}, acd, [4]int{A, 1, C, D}},
		{[]int{-2}, false, tensor.Shape{6, 12, 24}, ab, [4]int{A, B, 1, D}},
	} {
		var want []byte
		for a := range c.dims[0] {
			for b := range c.dims[1] {
				for cc := range c.dims[2] {
					for dd := range c.dims[3] {
						want = append(want, boolByte(c.f(a, b, cc, dd)))
					}
				}
			}
		}
		for _, f := range reduceFns {
			data, flip := in, byte(0)
			if f.name == "and" {
				data, flip = neg, 1
			}
			got, err := reduceOnDevice(d, f, data, c.axes, c.keep)
			if err != nil {
				t.Fatalf("%s axes %v: %v", f.name, c.axes, err)
			}
			if !got.Shape.Equal(c.shape) {
				t.Errorf("%s axes %v keep_dims %v: shape %v, want %v", f.name, c.axes, c.keep, got.Shape, c.shape)
			}
			for k, w := range want {
				if got.Data[k] != w^flip {
					t.Fatalf("%s axes %v: element %d is %d, want %d", f.name, c.axes, k, got.Data[k], w^flip)
				}
			}
			reduceCheck(t, d, f, data, c.axes, c.keep)
		}
	}
}

// boolByte is a bool as a bool tensor's byte.
func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// reduceShapes are the shapes of TestReduceAxisSubsets, ranks 0 to 5,
// with dimensions of 1 and 0; the larger ones cross 4 KiB pages.
var reduceShapes = []tensor.Shape{
	{},
	{1}, {0}, {7}, {4101},
	{3, 5}, {1, 9}, {0, 4}, {4, 0}, {33, 129}, {2, 5000}, {1300, 3},
	{2, 3, 4}, {5, 1, 7}, {0, 3, 1}, {17, 9, 33}, {40, 2, 70},
	{6, 12, 10, 24}, {2, 1, 3, 5}, {3, 0, 2, 2}, {4, 5, 6, 7}, {9, 17, 5, 23},
	{2, 3, 1, 4, 5}, {3, 2, 2, 0, 3}, {3, 5, 7, 11, 13}, {1, 4, 1, 6, 1},
}

// reduceMatrixFamilies are the families of the plan classes that
// TestReduceAxisSubsets, TestReduceRandom, TestReduceShortRows and
// TestReduceGarbagePadding reach: their tensors are too small for a
// split dispatch, which needs rows of more than 16 KiB and 256 KiB in
// one dispatch (TestReduceLoneElement and TestReduceLarge split rows
// with every variant). A family without the variant forced runs its
// portable one, so forcing texel-subgroup there reran portable.
var reduceMatrixFamilies = []string{"reduce/rows", "reduce/cols"}

// reduceMatrixTurns returns the variant turns of a reduce matrix on a
// device with pages of the given size: the variants in turn on the
// device's pages, and nil, the device's choice, on 4 KiB pages. Each
// spec constant a plan takes (a row's length in vectors up to 64, in
// bytes up to 15, ...) is a pipeline, and 4 KiB pages cut rows into
// pieces of every length: forced there, each variant built nearly all
// of its ~180 pipelines, the portable ones at about a second each in
// LLVM on a fresh machine (Mesa keeps them in ~/.cache after). Every
// variant still reads 4 KiB pages in TestReduceGarbagePadding and
// TestReduceLoneElement, which reach each reading path.
func reduceMatrixTurns(t *testing.T, d *device.Device, page uint64) *variantTurns {
	t.Helper()
	if page != 0 {
		return nil
	}
	return reduceTurns(t, d, reduceMatrixFamilies...)
}

// Every subset of the axes of every shape, as given and as negative
// axes in reverse order, with and without keep_dims, Or and And, on
// sparse and dense data, with the device's pages and with 4 KiB pages:
// the device must match cpuref exactly. The kernel variants take the
// cases in turn on the device's pages (reduceMatrixTurns). With -short,
// each shape, axis set, data and page runs once, Or or And, as given or
// negative, keep_dims or not taking turns: every plan, not every way of
// asking for it, which changes only the host's bookkeeping.
func TestReduceAxisSubsets(t *testing.T) {
	for _, page := range []uint64{0, 4096} {
		t.Run(fmt.Sprintf("page=%d", page), func(t *testing.T) {
			d := devtest.Open(t, device.Options{PageSize: page})
			vt := reduceMatrixTurns(t, d, page)
			rng := rand.New(rand.NewPCG(7, page))
			cases, group := 0, 0
			for _, shape := range reduceShapes {
				r := shape.Rank()
				for _, flip := range []bool{false, true} {
					h := reduceData(rng, shape, 40, flip)
					for mask := range 1 << r {
						var axes, neg []int
						for a := range r {
							if mask>>a&1 == 1 {
								axes = append(axes, a)
								neg = append([]int{a - r}, neg...)
							}
						}
						// The way of asking that -short takes: each for
						// two groups in a row, which the variants take
						// in turn.
						pick, way := group/2%8, 0
						group++
						for _, f := range reduceFns {
							for _, keep := range []bool{false, true} {
								for _, ax := range [][]int{axes, neg} {
									if !testing.Short() || way == pick {
										vt.use(cases)
										reduceCheck(t, d, f, h, ax, keep)
										cases++
									}
									way++
								}
							}
						}
					}
				}
			}
			t.Logf("%d cases (%v)", cases, vt)
		})
	}
}

// Random shapes of rank 0 to 5 with dimensions of every residue modulo
// 4 and 16, random axes as given or negative, in random order, on 4 KiB
// pages, with the device's choice of variant (reduceMatrixTurns): the
// cases a fixed list may miss. 5000 cases; with -short the first 500.
func TestReduceRandom(t *testing.T) {
	d := devtest.Open(t, device.Options{PageSize: 4096})
	rng := rand.New(rand.NewPCG(11, 13))
	sizes := []int{0, 1, 1, 2, 3, 4, 5, 7, 15, 16, 17, 33, 48, 64, 100, 129, 300, 1000}
	total := 5000
	if testing.Short() {
		total = 500
	}
	cases := 0
	for cases < total {
		shape := tensor.Shape{}
		n := 1
		for range rng.IntN(6) {
			k := sizes[rng.IntN(len(sizes))]
			shape = append(shape, k)
			n *= max(k, 1)
		}
		if n > 1<<18 {
			continue
		}
		var axes []int
		for _, a := range rng.Perm(shape.Rank()) {
			switch rng.IntN(3) {
			case 0:
				axes = append(axes, a)
			case 1:
				axes = append(axes, a-shape.Rank())
			}
		}
		h := reduceData(rng, shape, 1+rng.IntN(300), rng.IntN(2) == 0)
		reduceCheck(t, d, reduceFns[rng.IntN(2)], h, axes, rng.IntN(2) == 0)
		cases++
	}
	t.Logf("%d cases", cases)
}

// Rows of every length from 1 to 16 bytes, then of many lengths up to
// 1100 (each class of the rows kernel, and lengths either side of its
// bounds), reduced over the last axis, in counts of rows either side of
// the 16 that share an output vector; reductions over size-1 axes alone,
// which only normalise bytes to 0/1; on the device's pages and on 4 KiB
// pages, whose pieces start anywhere in a vector. The data mixes rows
// that hold an odd byte with rows that do not, and "true" bytes that are
// not 1. On the device's pages the kernel variants take the lengths in
// turn (reduceMatrixTurns). With -short, the lengths of 1 to 16 and
// either side of the classes' bounds only.
func TestReduceShortRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 17))
	lengths := []int{}
	for n := 1; n <= 16; n++ {
		lengths = append(lengths, n)
	}
	if !testing.Short() {
		for n := 17; n <= 1100; n += 1 + n/8 {
			lengths = append(lengths, n)
		}
	}
	lengths = append(lengths, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025)
	cases := 0
	for _, page := range []uint64{0, 4096} {
		t.Run(fmt.Sprintf("page=%d", page), func(t *testing.T) {
			d := devtest.Open(t, device.Options{PageSize: page})
			vt := reduceMatrixTurns(t, d, page)
			for j, n := range lengths {
				for _, rows := range []int{1, 15, 16, 17, 1000, 4099} {
					if n*rows > 1<<20 {
						continue
					}
					h := reduceData(rng, tensor.Shape{rows, n}, 2*n, rng.IntN(2) == 0)
					vt.use(j)
					reduceCheck(t, d, reduceFns[cases%2], h, []int{1}, cases%3 == 0)
					cases++
				}
			}
			for _, c := range []struct {
				shape tensor.Shape
				axes  []int
			}{
				{tensor.Shape{1, 70001}, []int{0}},
				{tensor.Shape{70001, 1}, []int{1}},
				{tensor.Shape{3, 1, 4099, 1}, []int{1, 3}},
				{tensor.Shape{1, 1, 16}, []int{0, 1}},
				{tensor.Shape{1 << 18, 1}, []int{-1}},
				{tensor.Shape{5}, []int{}},
			} {
				for _, f := range reduceFns {
					h := reduceData(rng, c.shape, 3, f.name == "and")
					vt.use(cases)
					reduceCheck(t, d, f, h, c.axes, cases%2 == 0)
					cases++
				}
			}
			t.Logf("%v", vt)
		})
	}
	t.Logf("%d cases", cases)
}

// A single odd element anywhere must decide its output: a lone true in
// falses for Or, a lone false in trues for And, at the first, middle and
// last element of long rows, columns and whole tensors, with rows split
// across invocations and pages. The tensors are too large for cpuref to
// be quick; the expected output is the identity everywhere but at the
// odd element's output index. Every kernel variant runs them.
func TestReduceLoneElement(t *testing.T) {
	forEachReduceVariant(t, nil, testReduceLoneElement)
}

func testReduceLoneElement(t *testing.T) {
	shapes := []struct {
		shape tensor.Shape
		axes  []int
	}{
		{tensor.Shape{3 << 20}, []int{0}},
		{tensor.Shape{(1 << 20) + 7}, []int{0}},
		{tensor.Shape{2, (1 << 20) + 3}, []int{1}},
		{tensor.Shape{3, 100003}, []int{-1}},
		{tensor.Shape{100003, 3}, []int{0}},
		{tensor.Shape{4099, 48}, []int{0}},
		{tensor.Shape{5, 4099, 7}, []int{0, 2}},
		{tensor.Shape{5, 4099, 7}, []int{1}},
	}
	cases := 0
	for _, page := range []uint64{0, 4096} {
		d := devtest.Open(t, device.Options{PageSize: page})
		for _, s := range shapes {
			h, _ := tensor.New(tensor.Bool, s.shape)
			n := len(h.Data)
			for _, f := range reduceFns {
				fill := byte(0)
				if f.name == "and" {
					fill = 1
				}
				for _, at := range []int{-1, 0, n / 2, n - 1} {
					for i := range h.Data {
						h.Data[i] = fill
					}
					if at >= 0 {
						h.Data[at] = 1 - fill
					}
					got, err := reduceOnDevice(d, f, h, s.axes, false)
					if err != nil {
						t.Fatal(err)
					}
					odd := -1
					if at >= 0 {
						odd = reduceOutputIndex(s.shape, s.axes, at)
					}
					for i, b := range got.Data {
						if want := boolByte((i == odd) != (fill == 1)); b != want {
							t.Fatalf("page %d %s %v axes %v, odd element %d: output %d is %d, want %d",
								page, f.name, s.shape, s.axes, at, i, b, want)
						}
					}
					cases++
				}
			}
		}
	}
	t.Logf("%d cases", cases)
}

// reduceOutputIndex returns the index of the output element that input
// element i of shape folds into when axes are reduced.
func reduceOutputIndex(shape tensor.Shape, axes []int, i int) int {
	reduced := make([]bool, len(shape))
	for _, a := range axes {
		reduced[(a+len(shape))%len(shape)] = true
	}
	out, scale := 0, 1
	for d := len(shape) - 1; d >= 0; d-- {
		if !reduced[d] {
			out += i % shape[d] * scale
			scale *= shape[d]
		}
		i /= shape[d]
	}
	return out
}

// Each rule is an error before anything runs, with cpuref's message, and
// matches ops.ErrInvalid.
func TestReduceErrors(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	bools := func(shape ...int) *tensor.Host {
		h, _ := tensor.New(tensor.Bool, shape)
		return h
	}
	i8, _ := tensor.New(tensor.I8, tensor.Shape{2})
	f32, _ := tensor.New(tensor.F32, tensor.Shape{2, 2})
	cases := []struct {
		h    *tensor.Host
		axes []int
		keep bool
	}{
		{bools(1, 2, 3), []int{5}, false},
		{bools(1, 2, 3), []int{0, 3}, false},
		{bools(1, 2, 3), []int{-4}, true},
		{bools(1, 2, 3), []int{2, -1}, false},
		{bools(1, 2, 3), []int{0, 1, 0}, false},
		{bools(1, 2, 3), []int{-3, 0}, false},
		{bools(), []int{0}, false},
		{bools(), []int{-1}, true},
		{bools(0, 4), []int{0, 0}, false},
		{i8, []int{0}, false},
		{f32, nil, false},
		// Reducing the zero dimension would make [1 2^50]: too many.
		{bools(0, 1<<50), []int{0}, false},
	}
	n := 0
	for _, c := range cases {
		for _, f := range reduceFns {
			_, werr := f.host(c.h, c.axes, c.keep)
			if werr == nil {
				t.Fatalf("cpuref %s %v%v axes %v: no error", f.name, c.h.DType, c.h.Shape, c.axes)
			}
			x, err := bridge.Device(d).Upload(c.h)
			if err != nil {
				t.Fatal(err)
			}
			live := bridge.Device(d).LiveObjects()
			y, err := f.dev(bridge.UserTensor(x), c.axes, ops.KeepDims(c.keep))
			if err == nil || err.Error() != werr.Error() {
				t.Errorf("%s %v%v axes %v: error %v, want %q", f.name, c.h.DType, c.h.Shape, c.axes, err, werr)
			}
			if !errors.Is(err, ops.ErrInvalid) || y != nil {
				t.Errorf("%s %v%v axes %v: got %v, %v; want nil and an error matching ErrInvalid", f.name, c.h.DType, c.h.Shape, c.axes, y, err)
			}
			if live != bridge.Device(d).LiveObjects() {
				t.Errorf("%s %v%v axes %v: %d Vulkan objects before, %d after", f.name, c.h.DType, c.h.Shape, c.axes, live, bridge.Device(d).LiveObjects())
			}
			x.Free()
			n++
		}
	}
	t.Logf("%d cases agree with cpuref", n)
}

// Tensors that are nil, never made or freed are errors, not panics.
func TestReduceBadTensors(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	freed, _ := device.FromSlice(d, []bool{true, false}, 2)
	freed.Free()
	freedEmpty, _ := device.FromSlice(d, []bool{}, 0, 3)
	freedEmpty.Free()
	for _, c := range []struct {
		name string
		x    *device.Tensor
		want string
	}{
		{"nil", nil, "reduce_logical_or: data is nil"},
		{"zero value", &device.Tensor{}, "reduce_logical_or: data is nil"},
		{"freed", freed, "reduce_logical_or: data bool[2] was freed"},
		{"freed empty", freedEmpty, "reduce_logical_or: data bool[0 3] was freed"},
	} {
		y, err := ops.ReduceLogicalOr(c.x, []int{0})
		if err == nil || err.Error() != c.want || !errors.Is(err, ops.ErrInvalid) || y != nil {
			t.Errorf("%s: got %v, %v; want error %q", c.name, y, err, c.want)
		}
	}
	_, err := cpuref.ReduceLogicalOr(nil, []int{0}, false)
	if err == nil || err.Error() != "reduce_logical_or: data is nil" {
		t.Errorf("cpuref: %v", err)
	}

	x, _ := device.FromSlice(d, []bool{true}, 1)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ops.ReduceLogicalAnd(x, []int{0}); !errors.Is(err, device.ErrClosed) {
		t.Errorf("closed device: %v, want ErrClosed", err)
	}
}

// The output is a new tensor and data is never written, the identity
// included; results are 0 or 1 whatever nonzero bytes data holds.
func TestReduceLeavesData(t *testing.T) {
	d := devtest.Open(t, device.Options{PageSize: 4096})
	h := &tensor.Host{DType: tensor.Bool, Shape: tensor.Shape{3, 3000}, Data: make([]byte, 9000)}
	for i := range h.Data {
		h.Data[i] = byte(i * 7)
	}
	x, err := bridge.Device(d).Upload(h)
	if err != nil {
		t.Fatal(err)
	}
	for _, axes := range [][]int{nil, {0}, {1}, {0, 1}} {
		for _, f := range reduceFns {
			y, err := f.dev(bridge.UserTensor(x), axes)
			if err != nil {
				t.Fatal(err)
			}
			if bridge.Tensor(y) == x {
				t.Fatalf("%s axes %v: the output is data itself", f.name, axes)
			}
			got, err := bridge.Tensor(y).Download()
			if err != nil {
				t.Fatal(err)
			}
			for i, b := range got.Data {
				if b > 1 {
					t.Fatalf("%s axes %v: output byte %d is %d", f.name, axes, i, b)
				}
			}
			if err := bridge.Tensor(y).Write(make([]byte, y.Bytes())); err != nil {
				t.Fatal(err)
			}
			y.Free()
			after, err := x.Download()
			if err != nil {
				t.Fatal(err)
			}
			if string(after.Data) != string(h.Data) {
				t.Fatalf("%s axes %v: data changed", f.name, axes)
			}
			reduceCheck(t, d, f, h, axes, true)
		}
	}
}

// An output of no elements records no work at all.
func TestReduceEmptyOutput(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	x, err := device.FromSlice(d, []bool{}, 3, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, axes := range [][]int{nil, {0}, {2}, {0, -1}} {
		var y *device.Tensor
		ns, err := bridge.Device(d).GPUTime(func() error {
			var err error
			y, err = ops.ReduceLogicalAnd(x, axes, ops.KeepDims(true))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if ns != 0 || y.Len() != 0 {
			t.Errorf("axes %v: %v after %g ns of device work, want no elements and no work", axes, y, ns)
		}
		y.Free()
	}
}

// Tensors larger than the device's 128 MiB binding limit (lavapipe),
// and dispatches of more than 65535 workgroups, at full size, with every
// kernel variant of the classes each reaches: texel views as large as a
// page. The host's data and answers are made once for every variant.
func TestReduceLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("reads more than 128 MiB")
	}
	// A full reduction of 160 MiB + 3, rows split across invocations:
	// the lone odd element is the last.
	t.Run("160MiB", func(t *testing.T) {
		n := 160<<20 + 3
		h := &tensor.Host{DType: tensor.Bool, Shape: tensor.Shape{n}, Data: make([]byte, n)}
		forEachReduceVariant(t, nil, func(t *testing.T) {
			d := devtest.Open(t, device.Options{})
			for _, f := range reduceFns {
				fill := byte(0)
				if f.name == "and" {
					fill = 1
				}
				for i := range h.Data {
					h.Data[i] = fill
				}
				for _, last := range []byte{fill, 1 - fill} {
					h.Data[n-1] = last
					got, err := reduceOnDevice(d, f, h, []int{0}, false)
					if err != nil {
						t.Fatal(err)
					}
					// The other elements are the identity: the last decides.
					if got.Data[0] != last {
						t.Errorf("%s of %d bytes, last %d: got %d", f.name, n, last, got.Data[0])
					}
				}
			}
		})
	})

	// [8200, 20483] over each axis: rows cross the page boundaries.
	rng := rand.New(rand.NewPCG(3, 9))
	t.Run("rows-and-columns", func(t *testing.T) {
		const R, C = 8200, 20483
		h := reduceData(rng, tensor.Shape{R, C}, 50000, false)
		rows, cols := make([]byte, R), make([]byte, C)
		for r := range R {
			for c := range C {
				if h.Data[r*C+c] != 0 {
					rows[r], cols[c] = 1, 1
				}
			}
		}
		forEachReduceVariant(t, reduceMatrixFamilies, func(t *testing.T) {
			d := devtest.Open(t, device.Options{})
			for axis, want := range [][]byte{cols, rows} {
				got, err := reduceOnDevice(d, reduceFns[0], h, []int{axis}, false)
				if err != nil {
					t.Fatal(err)
				}
				if string(got.Data) != string(want) {
					t.Errorf("or over axis %d of [%d %d] differs from the host", axis, R, C)
				}
			}
		})
	})

	// 2^24 + 5 rows of 2: one invocation per four rows and 64 per
	// workgroup make more than 65535 workgroups.
	t.Run("many-workgroups", func(t *testing.T) {
		const M = 1<<24 + 5
		h := reduceData(rng, tensor.Shape{M, 2}, 3, false)
		want := make([]byte, M)
		for m := range M {
			want[m] = boolByte(h.Data[2*m] != 0 && h.Data[2*m+1] != 0)
		}
		forEachReduceVariant(t, reduceMatrixFamilies, func(t *testing.T) {
			d := devtest.Open(t, device.Options{})
			got, err := reduceOnDevice(d, reduceFns[1], h, []int{1}, false)
			if err != nil {
				t.Fatal(err)
			}
			for m := range M {
				if got.Data[m] != want[m] {
					t.Fatalf("and over rows of 2: row %d is %d, want %d", m, got.Data[m], want[m])
				}
			}
		})
	})
}

// FuzzReduce compares the device with cpuref on small tensors of any
// rank up to 4, any axes (in range or not) and 4 KiB pages.
func FuzzReduce(f *testing.F) {
	f.Add([]byte{6, 12, 10, 24}, []byte{2, 3}, true, false, []byte{0, 1, 0, 0, 2})
	f.Add([]byte{3, 0, 5}, []byte{1}, false, true, []byte{})
	f.Add([]byte{}, []byte{}, false, false, []byte{7})
	f.Add([]byte{40, 200}, []byte{0xff}, false, true, []byte{1, 1, 1, 0})
	d := devtest.Open(f, device.Options{PageSize: 4096})
	f.Fuzz(func(t *testing.T, dims, axes []byte, keepDims, and bool, data []byte) {
		if len(dims) > 4 || len(axes) > 5 {
			return
		}
		shape := tensor.Shape{}
		n := 1
		for _, b := range dims {
			shape = append(shape, int(b))
			n *= int(b)
		}
		if n > 1<<16 {
			return
		}
		h, _ := tensor.New(tensor.Bool, shape)
		if len(data) > 0 {
			for i := range h.Data {
				h.Data[i] = data[i%len(data)]
			}
		}
		var ax []int
		for _, a := range axes {
			ax = append(ax, int(int8(a))%7)
		}
		fn := reduceFns[0]
		if and {
			fn = reduceFns[1]
		}
		reduceCheck(t, d, fn, h, ax, keepDims)
	})
}
