package core_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"unsafe"
	"weak"

	"github.com/vkops/vkops/internal/core"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/tensor"
)

// paths are the ways bytes move between Go slices and a device that the
// offload tests run through: the host mapping tensors (lavapipe's own
// way), and, with Options.Staging, what a discrete GPU does, each of
// Options.Transfers. Pages of 4 KiB split every tensor of more than a
// page, and chunks of staged transfers with them.
var paths = []struct {
	name string
	opts core.Options
}{
	{"mapped", core.Options{PageSize: 4096}},
	{"staged", core.Options{PageSize: 4096, Staging: true, Transfers: "staged"}},
	{"direct", core.Options{PageSize: 4096, Staging: true, Transfers: "direct"}},
	{"import", core.Options{PageSize: 4096, Staging: true, Transfers: "import"}},
}

// aligned returns n elements of T that start on a multiple of align
// bytes, and whose capacity reaches the multiple of align after them.
func aligned[T any](n int, align uint64) []T {
	var z T
	size := int(unsafe.Sizeof(z))
	a := int(align)
	back := make([]T, n+2*a/size)
	skip := (a - int(uintptr(unsafe.Pointer(unsafe.SliceData(back))))%a) % a / size
	return back[skip : skip+n : skip+n+a/size]
}

// same reports whether a and b hold the same bits: random bytes make
// NaNs, which == does not find equal.
func same[T tensor.Element](a, b []T) bool { return bytes.Equal(tensor.Bytes(a), tensor.Bytes(b)) }

// fill writes random bytes into s; for bools, 0 or 1.
func fill[T tensor.Element](s []T, seed uint64) {
	b := tensor.Bytes(s)
	r := rand.New(rand.NewPCG(seed, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	if tensor.DTypeOf[T]() == tensor.Bool {
		for i := range b {
			b[i] &= 1
		}
	}
}

// Every element type goes up by FromSlice and Wrap and comes back by
// ToSlice, ToSliceInto and View, through every path, at sizes below a
// page, of several pages, and of none.
func TestSlicesEveryType(t *testing.T) {
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			d := devtest.OpenCore(t, p.opts)
			if got := d.Transfers(); p.name != "mapped" && got != p.name && !(p.name == "import" && got == "staged") {
				t.Errorf("Transfers() = %q", got)
			}
			for _, n := range []int{0, 1, 13, 4096, 3*4096 + 5} {
				slicesEveryType(t, d, n)
			}
		})
	}
}

func slicesEveryType(t *testing.T, d *core.Device, n int) {
	t.Helper()
	roundTrips(t, d, n, []bool{})
	roundTrips(t, d, n, []int8{})
	roundTrips(t, d, n, []uint8{})
	roundTrips(t, d, n, []int16{})
	roundTrips(t, d, n, []uint16{})
	roundTrips(t, d, n, []int32{})
	roundTrips(t, d, n, []uint32{})
	roundTrips(t, d, n, []int64{})
	roundTrips(t, d, n, []uint64{})
	roundTrips(t, d, n, []tensor.Float16{})
	roundTrips(t, d, n, []tensor.BFloat16{})
	roundTrips(t, d, n, []float32{})
	roundTrips(t, d, n, []float64{})
}

// roundTrips checks n elements of T (of the type of the empty slice
// given) up and back by each way.
func roundTrips[T tensor.Element](t *testing.T, d *core.Device, n int, _ []T) {
	t.Helper()
	dt := tensor.DTypeOf[T]()
	_, align := d.CanWrap()
	want := aligned[T](n, max(align, 16))
	fill(want, uint64(n)*31+uint64(dt))
	name := fmt.Sprintf("%v[%d]", dt, n)
	up := map[string]func() (*core.Tensor, error){
		"FromSlice": func() (*core.Tensor, error) { return core.FromSlice(d, want) },
		"Wrap":      func() (*core.Tensor, error) { return core.Wrap(d, want) },
	}
	for how, f := range up {
		x, err := f()
		if err != nil {
			t.Fatalf("%s %s: %v", name, how, err)
		}
		if !x.Shape().Equal(tensor.Shape{n}) || x.DType() != dt {
			t.Fatalf("%s %s made %v", name, how, x)
		}
		// Lengths of whole 16-byte words wrap, the others are copied.
		if ok, _ := d.CanWrap(); how == "Wrap" && x.Wrapped() != (ok && x.Bytes()%16 == 0) {
			t.Errorf("%s: Wrapped() = %v on a device that can wrap: %v", name, x.Wrapped(), ok)
		}
		got, err := core.ToSlice[T](x)
		if err != nil || !same(got, want) {
			t.Fatalf("%s %s, ToSlice: %v, equal %v", name, how, err, same(got, want))
		}
		into := make([]T, n)
		if err := core.ToSliceInto(x, into); err != nil || !same(into, want) {
			t.Fatalf("%s %s, ToSliceInto: %v, equal %v", name, how, err, same(into, want))
		}
		if views, err := core.View[T](x); d.Unified() || x.Wrapped() {
			if err != nil || !same(slices.Concat(views...), want) || len(views) != x.Pages() {
				t.Fatalf("%s %s, View: %v, %d views of %d pages", name, how, err, len(views), x.Pages())
			}
		} else if !errors.Is(err, core.ErrMisuse) {
			t.Fatalf("%s %s: View on a device that stages: %v, want ErrMisuse", name, how, err)
		}
		x.Free()
	}
}

// Where the device holds a bool as any nonzero byte, ToSlice,
// ToSliceInto and View of a select's result give Go bools of 0 or 1.
func TestBoolsCanonical(t *testing.T) {
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			d := devtest.OpenCore(t, p.opts)
			raw := make([]byte, 3*4096+7)
			for i := range raw {
				raw[i] = byte(i * 37)
			}
			x, err := d.Empty(tensor.Bool, tensor.Shape{len(raw)})
			if err != nil {
				t.Fatal(err)
			}
			defer x.Free()
			if err := x.Write(raw); err != nil {
				t.Fatal(err)
			}
			got, err := core.ToSlice[bool](x)
			if err != nil {
				t.Fatal(err)
			}
			into := make([]bool, len(raw))
			if err := core.ToSliceInto(x, into); err != nil {
				t.Fatal(err)
			}
			for _, bs := range [][]bool{got, into} {
				for i, b := range tensor.Bytes(bs) {
					if b != min(raw[i], 1) {
						t.Fatalf("bool %d holds byte %d, want %d (written %d)", i, b, min(raw[i], 1), raw[i])
					}
				}
			}
		})
	}
}

// wrapDevice opens a device of 4 KiB pages that can wrap slices, and
// returns it with the alignment they need; it skips t where the device
// cannot.
func wrapDevice(t *testing.T) (*core.Device, uint64) {
	t.Helper()
	d := devtest.OpenCore(t, core.Options{PageSize: 4096})
	ok, align := d.CanWrap()
	if !ok {
		t.Skipf("%s cannot import host memory", d)
	}
	return d, align
}

// Wrap uses a slice in place where it can and copies it otherwise, and
// says which: a slice off the alignment, one whose length is no whole
// number of 16-byte words or whose capacity stops short of the next
// alignment is copied.
func TestWrapFallsBack(t *testing.T) {
	d, align := wrapDevice(t)
	n := int(3*align/4) + 4 // three alignments and a word
	base := aligned[float32](n+8, align)
	fill(base, 1)
	for _, c := range []struct {
		name    string
		s       []float32
		wrapped bool
	}{
		{"aligned", base[:n], true},
		{"off the alignment", base[4 : n+4], false},
		{"length not of whole words", base[:n-1], false},
		{"capacity short", base[:n:n], false},
		{"empty", base[:0], true},
		{"empty and off the alignment", base[1:1], true},
	} {
		x, err := core.Wrap(d, c.s)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if x.Wrapped() != c.wrapped {
			t.Errorf("%s: Wrapped() = %v, want %v", c.name, x.Wrapped(), c.wrapped)
		}
		got, err := core.ToSlice[float32](x)
		if err != nil || !same(got, c.s) {
			t.Errorf("%s: ToSlice gave %d elements, %v", c.name, len(got), err)
		}
		x.Free()
	}
	if _, err := core.Wrap(d, base[:10], 3, 4); err == nil {
		t.Error("Wrap of 10 elements as [3 4] succeeded")
	}
}

// One slice wrapped twice is one memory: what is written through one
// tensor, by the host or an op, is read through the other, and through
// the slice once the op is done; a slice larger than a page spans pages.
func TestWrapTwice(t *testing.T) {
	d, align := wrapDevice(t)
	n := 5*1024 + 256 // 5.25 pages of u32
	s := aligned[uint32](n, align)
	a, err := core.Wrap(d, s)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Free()
	b, err := core.Wrap(d, s)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if !a.Wrapped() || !b.Wrapped() || a.Pages() != 6 {
		t.Fatalf("Wrapped %v %v, %d pages", a.Wrapped(), b.Wrapped(), a.Pages())
	}
	want := make([]uint32, n)
	fill(want, 3)
	if err := a.Write(tensor.Bytes(want)); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s, want) {
		t.Fatal("Write through a wrapped tensor did not land in its slice")
	}
	src, err := core.FromSlice(d, slices.Repeat([]uint32{7}, n))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Free()
	if err := dispatchCopy(d, b, src); err != nil {
		t.Fatal(err)
	}
	if err := b.Wait(); err != nil {
		t.Fatal(err)
	}
	views, err := core.View[uint32](a)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range [][]uint32{s, slices.Concat(views...)} {
		if slices.IndexFunc(v, func(x uint32) bool { return x != 7 }) >= 0 {
			t.Fatal("an op's write through one wrapped tensor is not in the slice and the other")
		}
	}
}

// A wrapped slice freed while an op that reads it is pending stays
// pinned and alive until the op is done: the op reads what the slice
// held, and only then may the slice be collected.
func TestWrapFreedWhilePending(t *testing.T) {
	d, align := wrapDevice(t)
	n := 4 * 1024
	want := make([]uint32, n)
	fill(want, 9)
	out, err := d.Empty(tensor.U32, tensor.Shape{n})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Free()
	gone := func() weak.Pointer[uint32] {
		s := aligned[uint32](n, align)
		copy(s, want)
		x, err := core.Wrap(d, s)
		if err != nil || !x.Wrapped() {
			t.Fatalf("Wrap: %v, wrapped %v", err, x.Wrapped())
		}
		// Enough work ahead that the copy is still pending at Free.
		for range 20 {
			if err := dispatchCopy(d, out, x); err != nil {
				t.Fatal(err)
			}
		}
		x.Free()
		return weak.Make(&s[:1][0])
	}()
	runtime.GC()
	runtime.GC()
	if gone.Value() == nil {
		t.Fatal("the slice of a wrapped tensor was collected while an op read it")
	}
	got, err := core.ToSlice[uint32](out)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("op on a wrapped slice freed while pending: %v, equal %v", err, slices.Equal(got, want))
	}
	for range 5 {
		runtime.GC()
	}
	if gone.Value() != nil {
		t.Error("the slice of a freed wrapped tensor is still held after its op completed")
	}
}

// A View of a tensor of several pages fills it in place and reads an
// op's result in place, with no copy.
func TestViewPages(t *testing.T) {
	d := devtest.OpenCore(t, core.Options{PageSize: 4096})
	n := 3*2048 + 100 // 3.05 pages of i16
	x, err := d.Empty(tensor.I16, tensor.Shape{n})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	views, err := core.View[int16](x)
	if err != nil {
		t.Fatal(err)
	}
	if len(views) != 4 || len(views[0]) != 2048 || len(views[3]) != 100 {
		t.Fatalf("%d views, of %d and %d elements", len(views), len(views[0]), len(views[len(views)-1]))
	}
	want := make([]int16, 0, n)
	for _, v := range views {
		fill(v, uint64(len(want)))
		want = append(want, v...)
	}
	y, err := d.Empty(tensor.I16, tensor.Shape{n})
	if err != nil {
		t.Fatal(err)
	}
	defer y.Free()
	if err := dispatchCopy(d, y, x); err != nil {
		t.Fatal(err)
	}
	out, err := core.View[int16](y)
	if err != nil || !slices.Equal(slices.Concat(out...), want) {
		t.Fatalf("View of an op's result: %v", err)
	}
	if _, err := core.View[uint16](y); !errors.Is(err, core.ErrMisuse) {
		t.Errorf("View of i16 as u16: %v, want ErrMisuse", err)
	}
}

// ToSliceInto and Write allocate nothing where the host maps the
// tensor, for tensors large enough to be copied by several goroutines;
// staged, a record of each chunk's batch (two here, each way).
func TestTransfersAllocateNothing(t *testing.T) {
	for _, staging := range []bool{false, true} {
		d := devtest.OpenCore(t, core.Options{Staging: staging})
		n := 3 << 20
		src := make([]float32, n)
		fill(src, 4)
		x, err := core.FromSlice(d, src)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]float32, n)
		// AllocsPerRun counts the whole process's allocations: the
		// fewest of three counts leaves out the runtime's own, such as
		// an earlier test's finalizers (2 once, under cgocheck2).
		allocs := math.Inf(1)
		for range 3 {
			allocs = min(allocs, testing.AllocsPerRun(3, func() {
				if err := core.ToSliceInto(x, dst); err != nil {
					t.Fatal(err)
				}
				if err := x.Write(tensor.Bytes(src)); err != nil {
					t.Fatal(err)
				}
			}))
		}
		if want := map[bool]float64{false: 0, true: 4}[staging]; allocs > want {
			t.Errorf("staging=%v: ToSliceInto and Write of %d bytes allocated %v times, want at most %v", staging, x.Bytes(), allocs, want)
		}
		if !same(dst, src) {
			t.Errorf("staging=%v: ToSliceInto read wrong data", staging)
		}
		x.Free()
	}
}

// Wrong types and lengths are usage errors naming the tensor.
func TestSliceMisuse(t *testing.T) {
	d := devtest.OpenCore(t, core.Options{})
	x, err := core.FromSlice(d, []float32{1, 2, 3, 4}, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	if _, err := core.ToSlice[int32](x); !errors.Is(err, core.ErrMisuse) {
		t.Errorf("ToSlice[int32] of f32: %v, want ErrMisuse", err)
	}
	if err := core.ToSliceInto(x, make([]float32, 3)); !errors.Is(err, core.ErrSize) {
		t.Errorf("ToSliceInto 3 elements of 4: %v, want ErrSize", err)
	}
	if _, err := core.FromSlice(d, []float32{1, 2, 3}, 2, 2); err == nil {
		t.Error("FromSlice of 3 elements as [2 2] succeeded")
	}
	var nilT *core.Tensor
	if _, err := core.ToSlice[float32](nilT); !errors.Is(err, core.ErrMisuse) {
		t.Errorf("ToSlice of nil: %v, want ErrMisuse", err)
	}
	x.Free()
	if err := core.ToSliceInto(x, make([]float32, 4)); !errors.Is(err, core.ErrFreed) {
		t.Errorf("ToSliceInto after Free: %v, want ErrFreed", err)
	}
}

// Uploads, downloads, ops and frees from many goroutines at once, on
// tensors of their own and on one they share, mapped and staged: run
// with -race, the host copies that run with the device unlocked must
// neither race nor lose data, and a tensor freed while another goroutine
// reads it is read whole or reported freed.
func TestConcurrentTransfers(t *testing.T) {
	for _, staging := range []bool{false, true} {
		t.Run(fmt.Sprintf("staging=%v", staging), func(t *testing.T) {
			d := devtest.OpenCore(t, core.Options{PageSize: 1 << 16, Staging: staging})
			n := 3<<20/4 + 3
			shared := make([]uint32, n)
			fill(shared, 11)
			sh, err := core.FromSlice(d, shared)
			if err != nil {
				t.Fatal(err)
			}
			defer sh.Free()
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() { concurrentTransfers(t, d, sh, shared, g) })
			}
			wg.Wait()
		})
	}
}

func concurrentTransfers(t *testing.T, d *core.Device, sh *core.Tensor, shared []uint32, g int) {
	mine := make([]uint32, 1+g*40000)
	got := make([]uint32, len(shared))
	for i := range 6 {
		fill(mine, uint64(g*100+i))
		x, err := core.FromSlice(d, mine)
		if err != nil {
			t.Error(err)
			return
		}
		y, err := d.Empty(tensor.U32, x.Shape())
		if err != nil {
			t.Error(err)
			return
		}
		if err := dispatchCopy(d, y, x); err != nil {
			t.Error(err)
			return
		}
		x.Free() // pending: the copy still reads it
		out, err := core.ToSlice[uint32](y)
		if err != nil || !slices.Equal(out, mine) {
			t.Errorf("goroutine %d round %d: %v, equal %v", g, i, err, slices.Equal(out, mine))
		}
		// Readers of the shared tensor, and one writer of the same bytes.
		if g == 0 {
			err = sh.Write(tensor.Bytes(shared))
		} else {
			err = core.ToSliceInto(sh, got)
			if err == nil && !slices.Equal(got, shared) {
				t.Errorf("goroutine %d round %d: shared tensor read wrong", g, i)
			}
		}
		if err != nil {
			t.Error(err)
		}
		// A read racing its tensor's Free: whole, or ErrFreed.
		z, err := core.FromSlice(d, mine)
		if err != nil {
			t.Error(err)
			return
		}
		done := make(chan error)
		go func() { done <- core.ToSliceInto(z, out) }()
		z.Free()
		if err := <-done; err != nil && !errors.Is(err, core.ErrFreed) {
			t.Errorf("read racing Free: %v", err)
		} else if err == nil && !slices.Equal(out, mine) {
			t.Errorf("read racing Free read wrong data")
		}
		y.Free()
	}
}

// Close waits for host copies that run with the device unlocked, and
// the copies report the device closed or finish whole.
func TestCloseDuringTransfers(t *testing.T) {
	d := devtest.OpenCore(t, core.Options{})
	src := make([]float32, 4<<20)
	x, err := core.FromSlice(d, src)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			dst := make([]float32, len(src))
			for {
				err := core.ToSliceInto(x, dst)
				if errors.Is(err, core.ErrClosed) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	if err := d.Close(); err != nil {
		t.Error(err)
	}
	wg.Wait()
}

// A copy never reads what it writes (VUID-vkCmdCopyBuffer-pRegions-00117,
// which the validation layer reports): Copy and Tile of a tensor onto
// itself, or between two wraps of one slice, are no-ops, the bytes being
// in place; between wraps that overlap in part, they are ErrMisuse.
// Issue 37 found Copy(a, a) and Tile(a, a) recording overlapping copies.
func TestCopyOverlap(t *testing.T) {
	d, align := wrapDevice(t)
	n := 3 * int(align) // u32s: three pages of 4 KiB
	s := aligned[uint32](2*n, align)
	fill(s, 9)
	want := slices.Clone(s)
	whole, err := core.Wrap(d, s[:n])
	must(t, err)
	again, err := core.Wrap(d, s[:n])
	must(t, err)
	shifted, err := core.Wrap(d, s[align/4:][:n]) // one page on
	must(t, err)
	pool, err := core.FromSlice(d, s[:n])
	must(t, err)
	for _, c := range []struct {
		name   string
		op     func() error
		misuse bool
		dst    *core.Tensor
	}{
		{"Copy(a, a)", func() error { return d.Copy(pool, pool) }, false, pool},
		{"Tile(a, a)", func() error { return d.Tile(pool, pool) }, false, pool},
		{"Copy(wrap, wrap)", func() error { return d.Copy(whole, whole) }, false, whole},
		{"Copy of two wraps of one slice", func() error { return d.Copy(again, whole) }, false, again},
		{"Tile of two wraps of one slice", func() error { return d.Tile(whole, again) }, false, whole},
		{"Copy of overlapping wraps", func() error { return d.Copy(shifted, whole) }, true, shifted},
		{"Tile of overlapping wraps", func() error { return d.Tile(whole, shifted) }, true, whole},
	} {
		err := c.op()
		if c.misuse != errors.Is(err, core.ErrMisuse) || !c.misuse && err != nil {
			t.Errorf("%s: %v, want misuse %v", c.name, err, c.misuse)
		}
		must(t, d.Sync())
		if !slices.Equal(s, want) {
			t.Fatalf("%s changed the slice", c.name)
		}
		got, err := core.ToSlice[uint32](c.dst)
		must(t, err)
		if !slices.Equal(got, want[:n]) && c.dst != shifted {
			t.Errorf("%s: the destination changed", c.name)
		}
	}
	for _, x := range []*core.Tensor{whole, again, shifted, pool} {
		x.Free()
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
