package core_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/vkops/vkops/internal/core"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/internal/spirv"
	"github.com/vkops/vkops/shaders"
	"github.com/vkops/vkops/shaders/spec"
	"github.com/vkops/vkops/tensor"
)

func randomHost(t testing.TB, dt tensor.DType, shape tensor.Shape, seed uint64) *tensor.Host {
	t.Helper()
	h, err := tensor.New(dt, shape)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 1))
	for i := range h.Data {
		h.Data[i] = byte(r.Uint32())
	}
	if dt == tensor.Bool {
		for i := range h.Data {
			h.Data[i] &= 1
		}
	}
	return h
}

// roundTrip uploads h, downloads it, and fails unless the bytes match.
func roundTrip(t *testing.T, d *core.Device, h *tensor.Host) {
	t.Helper()
	x, err := d.Upload(h)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	got, err := x.Download()
	if err != nil {
		t.Fatal(err)
	}
	if got.DType != h.DType || !got.Shape.Equal(h.Shape) {
		t.Fatalf("got %v%v, want %v%v", got.DType, got.Shape, h.DType, h.Shape)
	}
	if !bytes.Equal(got.Data, h.Data) {
		t.Fatalf("%v%v: data differs after the round trip", h.DType, h.Shape)
	}
}

func TestRoundTripEveryType(t *testing.T) {
	for _, staging := range []bool{false, true} {
		d := devtest.OpenCore(t, core.Options{Staging: staging})
		for _, dt := range tensor.DTypes {
			for _, shape := range []tensor.Shape{{}, {0}, {3, 0, 2}, {1}, {7}, {3, 5}, {2, 3, 4, 5}, {1000, 37}} {
				t.Run(fmt.Sprintf("staging=%v/%v%v", staging, dt, shape), func(t *testing.T) {
					roundTrip(t, d, randomHost(t, dt, shape, uint64(dt)))
				})
			}
		}
	}
}

// Staged transfers reuse their staging buffers: repeating a round trip
// creates no more Vulkan objects, and the buffers serve transfers of other
// sizes up to their own.
func TestStagingReuse(t *testing.T) {
	d := devtest.OpenCore(t, core.Options{Staging: true, PageSize: 1 << 16})
	var live int64
	var kept int
	for i := range 10 {
		n := 1<<18 - 16*i // four pages, the last shorter each time
		roundTrip(t, d, randomHost(t, tensor.U8, tensor.Shape{n}, uint64(i)))
		if err := d.Sync(); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			live, kept = d.LiveObjects(), d.KeptStaging()
			if kept == 0 {
				t.Fatal("no staging buffer kept after a round trip")
			}
		} else if got, k := d.LiveObjects(), d.KeptStaging(); got != live || k != kept {
			t.Fatalf("round trip %d: %d live Vulkan objects and %d staging buffers kept, %d and %d after the first", i, got, k, live, kept)
		}
	}
}

// Special float values must come back bit for bit: NaN payloads, -0,
// infinities, subnormals.
func TestRoundTripFloatBits(t *testing.T) {
	d := devtest.OpenCore(t, core.Options{})
	f32 := []uint32{0x7fc00001, 0xffbfffff, 0x80000000, 0x7f800000, 0xff800000, 0x00000001, 0x807fffff}
	h, err := tensor.FromSlice(f32)
	if err != nil {
		t.Fatal(err)
	}
	h.DType = tensor.F32
	roundTrip(t, d, h)
	bf, _ := tensor.FromSlice([]tensor.BFloat16{0x7fc1, 0xff81, 0x8000, 0x0001})
	roundTrip(t, d, bf)
}

// Tensors larger than a page span several buffers; small pages exercise
// that without gigabytes.
func TestMultiPage(t *testing.T) {
	for _, staging := range []bool{false, true} {
		d := devtest.OpenCore(t, core.Options{PageSize: 4096, Staging: staging})
		if d.PageSize() != 4096 {
			t.Fatalf("PageSize = %d, want 4096", d.PageSize())
		}
		for _, n := range []int{1023, 1024, 1025, 4096, 10001} {
			h := randomHost(t, tensor.F32, tensor.Shape{n}, uint64(n))
			roundTrip(t, d, h)
		}
	}
}

// TestFillPeek fills tensors of one and several pages, with staged and
// unified memory, and peeks at them: Peek reads a tensor only on a unified
// device with no write pending, and never waits.
func TestFillPeek(t *testing.T) {
	for _, staging := range []bool{false, true} {
		d := devtest.OpenCore(t, core.Options{PageSize: 4096, Staging: staging})
		for _, n := range []int{1, 3, 1024, 1025, 3001} {
			x, err := d.Empty(tensor.U16, tensor.Shape{n})
			if err != nil {
				t.Fatal(err)
			}
			defer x.Free()
			if err := d.Fill(x, 0xbeefbeef); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, x.Bytes())
			if x.Peek(buf) {
				t.Errorf("staging=%v n=%d: Peek read a tensor whose fill is pending", staging, n)
			}
			got, err := x.Download()
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < len(got.Data); i += 2 {
				if got.Data[i] != 0xef || got.Data[i+1] != 0xbe {
					t.Fatalf("staging=%v n=%d: element %d is %#x after a fill with 0xbeef", staging, n, i/2, got.Data[i:i+2])
				}
			}
			ok := x.Peek(buf)
			if ok != d.Unified() {
				t.Errorf("staging=%v n=%d: Peek after the fill completed = %v on a device with Unified %v", staging, n, ok, d.Unified())
			}
			if ok && !bytes.Equal(buf, got.Data) {
				t.Errorf("staging=%v n=%d: Peek read other bytes than Download", staging, n)
			}
			if x.Peek(buf[1:]) {
				t.Errorf("staging=%v n=%d: Peek into a buffer of the wrong size", staging, n)
			}
		}
	}
	d := devtest.OpenCore(t, core.Options{})
	x, err := core.FromSlice(d, []uint32{7})
	if err != nil {
		t.Fatal(err)
	}
	x.Free()
	var buf [4]byte
	if x.Peek(buf[:]) {
		t.Error("Peek read a freed tensor")
	}
	if err := d.Fill(x, 0); !errors.Is(err, core.ErrFreed) {
		t.Errorf("Fill of a freed tensor: %v, want ErrFreed", err)
	}
}

// TestTile tiles tensors of odd sizes across pages, staged and unified,
// to outputs below and above the block that Tile stops doubling at, from
// sources below and above it, and refuses a tile that does not fit a
// whole number of times.
func TestTile(t *testing.T) {
	for _, staging := range []bool{false, true} {
		d := devtest.OpenCore(t, core.Options{PageSize: 4096, Staging: staging})
		for _, c := range []struct{ src, copies int }{{1, 1}, {1, 5000}, {3, 1}, {7, 1001}, {1500, 7}, {4097, 3}, {7, 300001}, {1<<20 + 3, 3}} {
			h := randomHost(t, tensor.U8, tensor.Shape{c.src}, uint64(c.src))
			x, err := d.Upload(h)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Free()
			y, err := d.Empty(tensor.U8, tensor.Shape{c.copies, c.src})
			if err != nil {
				t.Fatal(err)
			}
			defer y.Free()
			if err := d.Tile(y, x); err != nil {
				t.Fatal(err)
			}
			got, err := y.Download()
			if err != nil {
				t.Fatal(err)
			}
			if want := bytes.Repeat(h.Data, c.copies); !bytes.Equal(got.Data, want) {
				t.Errorf("staging=%v: %d copies of %d bytes differ", staging, c.copies, c.src)
			}
		}
		x, err := d.Empty(tensor.U8, tensor.Shape{3})
		if err != nil {
			t.Fatal(err)
		}
		defer x.Free()
		y, err := d.Empty(tensor.U8, tensor.Shape{10})
		if err != nil {
			t.Fatal(err)
		}
		defer y.Free()
		if err := d.Tile(y, x); !errors.Is(err, core.ErrSize) {
			t.Errorf("tile of 3 bytes into 10: %v, want ErrSize", err)
		}
	}
}

// A 300 MiB tensor is larger than lavapipe's maxStorageBufferRange (128
// MiB): it must still round-trip bit-exactly.
func TestLargeTensor(t *testing.T) {
	if testing.Short() {
		t.Skip("300 MiB round trip skipped in -short mode")
	}
	d := devtest.OpenCore(t, core.Options{})
	n := 300 << 20 / 4
	h := randomHost(t, tensor.U32, tensor.Shape{n}, 300)
	x, err := d.Upload(h)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	if x.Pages() < 2 && d.PageSize() < 300<<20 {
		t.Fatalf("300 MiB in %d page(s) of %d bytes", x.Pages(), d.PageSize())
	}
	y, err := d.Empty(tensor.U32, tensor.Shape{n})
	if err != nil {
		t.Fatal(err)
	}
	defer y.Free()
	if err := d.Copy(y, x); err != nil {
		t.Fatal(err)
	}
	got, err := y.Download()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Data, h.Data) {
		t.Fatal("300 MiB tensor differs after upload, copy and download")
	}
	t.Logf("300 MiB in %d pages of %d MiB", x.Pages(), d.PageSize()>>20)
}

var (
	copyWords  = &core.Kernel{Name: "copy_words", Module: func() []byte { return shaders.SPIRV("copy_words") }, Bindings: 2, PushSize: int(unsafe.Sizeof(spec.CopyPush{}))}
	copyTexels = &core.Kernel{Name: "copy_texels", Module: func() []byte { return shaders.SPIRV("copy_texels") }, Bindings: 2, PushSize: int(unsafe.Sizeof(spec.CopyPush{})),
		Kinds: []core.BindingKind{core.TexelRGBA32UI, core.Storage}}
)

// dispatchCopy copies src to dst with the copy_words kernel, page by page.
func dispatchCopy(d *core.Device, dst, src *core.Tensor) error {
	return dispatchCopyWith(d, copyWords, dst, src)
}

func dispatchCopyWith(d *core.Device, k *core.Kernel, dst, src *core.Tensor) error {
	const wg = 64
	for lo := uint64(0); lo < src.Bytes(); lo += d.PageSize() {
		hi := min(lo+d.PageSize(), src.Bytes())
		a, _, err := src.Window(lo, hi)
		if err != nil {
			return err
		}
		b, _, err := dst.Window(lo, hi)
		if err != nil {
			return err
		}
		b.Write = true
		vecs := (hi - lo + 15) / 16
		grid, err := d.Grid((vecs + wg - 1) / wg)
		if err != nil {
			return err
		}
		push := spec.CopyPush{Grid: spec.Grid{N: uint32(vecs), GroupsX: grid[0]}}
		if err := d.Dispatch(k, []uint32{wg}, []core.Arg{a, b}, unsafe.Slice((*byte)(unsafe.Pointer(&push)), unsafe.Sizeof(push)), grid); err != nil {
			return err
		}
	}
	return nil
}

// A chain of dependent dispatches and copies in one batch needs barriers
// between them; more workgroups than one grid dimension allows needs a
// 2-D grid.
func TestDispatchChain(t *testing.T) {
	d := devtest.OpenCore(t, core.Options{PageSize: 1 << 20})
	n := 65535*64*4 + 12345 // more than 65535 workgroups of 64 uvec4s
	h := randomHost(t, tensor.U32, tensor.Shape{n}, 7)
	x, err := d.Upload(h)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	cur := x
	for i := range 4 {
		next, err := d.Empty(tensor.U32, tensor.Shape{n})
		if err != nil {
			t.Fatal(err)
		}
		defer next.Free()
		if i%2 == 0 {
			err = dispatchCopy(d, next, cur)
		} else {
			err = d.Copy(next, cur)
		}
		if err != nil {
			t.Fatal(err)
		}
		cur = next
	}
	got, err := cur.Download()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Data, h.Data) {
		t.Fatal("data differs after a chain of copies")
	}
	grid, err := d.Grid(1 << 20)
	if err != nil || grid[1] < 2 {
		t.Fatalf("Grid(1<<20) = %v, %v: want a 2-D grid", grid, err)
	}
}

func TestChooseDevice(t *testing.T) {
	infos, chosen, err := core.Devices(core.Options{})
	devtest.SkipIfMissing(t, err)
	if err != nil {
		t.Fatal(err)
	}
	if chosen < 0 || chosen >= len(infos) {
		t.Fatalf("chosen %d of %d", chosen, len(infos))
	}
	for i, info := range infos {
		if info.Type > infos[chosen].Type {
			t.Errorf("device %d (%s) ranks above the chosen %s", i, info.TypeName, infos[chosen].TypeName)
		}
	}
	name := strings.ToUpper(infos[0].Name[:3])
	if _, c, err := core.Devices(core.Options{Device: name}); err != nil || c != 0 {
		t.Errorf("Device %q chose %d, %v; want 0", name, c, err)
	}
	if _, c, err := core.Devices(core.Options{Device: "0"}); err != nil || c != 0 {
		t.Errorf("Device \"0\" chose %d, %v", c, err)
	}
	if _, _, err := core.Devices(core.Options{Device: strconv.Itoa(len(infos))}); err == nil {
		t.Error("an index past the last device was accepted")
	}
	if _, _, err := core.Devices(core.Options{Device: "no such device name"}); err == nil {
		t.Error("an unknown name was accepted")
	}
}

func TestMisuse(t *testing.T) {
	d := devtest.OpenCore(t, core.Options{})
	x, err := core.FromSlice(d, []float32{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.ToSlice[int32](x); err == nil {
		t.Error("ToSlice with the wrong element type succeeded")
	}
	if err := x.Write(make([]byte, 5)); err == nil {
		t.Error("Write of the wrong length succeeded")
	}
	x.Free()
	x.Free() // double free is harmless
	if _, err := x.Download(); err == nil || !strings.Contains(err.Error(), "use after Free") {
		t.Errorf("Download after Free: %v", err)
	}
	var nilT *core.Tensor
	if _, err := nilT.Download(); err == nil {
		t.Error("Download of a nil tensor succeeded")
	}
	if _, err := d.Empty(tensor.F32, tensor.Shape{-1}); err == nil {
		t.Error("a negative dimension was accepted")
	}
	if _, err := d.Empty(tensor.Invalid, tensor.Shape{1}); err == nil {
		t.Error("an invalid element type was accepted")
	}
	if _, err := d.Upload(nil); err == nil {
		t.Error("Upload(nil) succeeded")
	}
	if _, err := d.Upload(&tensor.Host{DType: tensor.F32, Shape: tensor.Shape{2}, Data: []byte{1}}); err == nil {
		t.Error("Upload of a short host tensor succeeded")
	}
}

// Wrong lengths, wrong sizes and nil or foreign tensors give errors that
// match their sentinels, and leave the tensors as they were.
func TestUsageErrors(t *testing.T) {
	d := devtest.OpenCore(t, core.Options{})
	other := devtest.OpenCore(t, core.Options{})
	x, err := core.FromSlice(d, []float32{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	y, _ := d.Empty(tensor.F32, tensor.Shape{4})
	defer y.Free()
	z, _ := other.Empty(tensor.F32, tensor.Shape{3})
	defer z.Free()
	var nilT *core.Tensor
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"Write short", x.Write(make([]byte, 11)), core.ErrSize},
		{"Write long", x.Write(make([]byte, 13)), core.ErrSize},
		{"Read short", x.Read(make([]byte, 4)), core.ErrSize},
		{"Read long", x.Read(make([]byte, 16)), core.ErrSize},
		{"Copy of another size", d.Copy(y, x), core.ErrSize},
		{"Copy from another device", d.Copy(x, z), core.ErrMisuse},
		{"Copy into nil", d.Copy(nilT, x), core.ErrMisuse},
		{"Copy from nil", d.Copy(x, nilT), core.ErrMisuse},
		{"Write to nil", nilT.Write(nil), core.ErrMisuse},
		{"Read of nil", nilT.Read(nil), core.ErrMisuse},
		{"Upload of nil", func() error { _, err := d.Upload(nil); return err }(), core.ErrMisuse},
	} {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.want)
		}
	}
	got, err := core.ToSlice[float32](x)
	if err != nil || len(got) != 3 || got[0] != 1 || got[2] != 3 {
		t.Errorf("x after the failed calls: %v, %v", got, err)
	}
}

// Allocating past the heap is an ErrOutOfMemory, and the device still
// works afterwards.
func TestOutOfMemory(t *testing.T) {
	d := devtest.OpenCore(t, core.Options{})
	var heap uint64
	for _, h := range d.Info().Heaps {
		heap = max(heap, h.Size)
	}
	_, err := d.Empty(tensor.U8, tensor.Shape{int(heap) + 1})
	if !errors.Is(err, core.ErrOutOfMemory) {
		t.Fatalf("allocating %d bytes on a heap of %d: %v, want ErrOutOfMemory", heap+1, heap, err)
	}
	roundTrip(t, d, randomHost(t, tensor.F32, tensor.Shape{100}, 1))
}

func TestClose(t *testing.T) {
	d := devtest.OpenCore(t, core.Options{})
	x, err := core.FromSlice(d, []int8{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	// Close releases the pages of tensors never freed, small and large,
	// or the validation layer reports the device destroyed under them.
	if _, err := d.Empty(tensor.F32, tensor.Shape{1 << 20}); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Download(); !errors.Is(err, core.ErrClosed) {
		t.Errorf("Download after Close: %v, want ErrClosed", err)
	}
	if _, err := d.Empty(tensor.F32, tensor.Shape{1}); !errors.Is(err, core.ErrClosed) {
		t.Errorf("Empty after Close: %v, want ErrClosed", err)
	}
	x.Free()
}

// Many goroutines share one core.
func TestConcurrent(t *testing.T) {
	d := devtest.OpenCore(t, core.Options{PageSize: 1 << 16})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				h := randomHost(t, tensor.I16, tensor.Shape{1 + (g*131+i*977)%40000}, uint64(g*1000+i))
				x, err := d.Upload(h)
				if err != nil {
					t.Error(err)
					return
				}
				y, err := d.Empty(h.DType, h.Shape)
				if err != nil {
					t.Error(err)
					return
				}
				if err := dispatchCopy(d, y, x); err != nil {
					t.Error(err)
					return
				}
				got, err := y.Download()
				if err != nil {
					t.Error(err)
					return
				}
				if !bytes.Equal(got.Data, h.Data) {
					t.Errorf("goroutine %d op %d: wrong data", g, i)
				}
				x.Free()
				y.Free()
			}
		})
	}
	wg.Wait()
}

func rss(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skip("no /proc/self/statm")
	}
	f := strings.Fields(string(b))
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// 10,000 create/upload/download/free cycles leave RSS and the count of
// live Vulkan objects flat.
func TestNoLeaks(t *testing.T) {
	d := devtest.OpenCore(t, core.Options{})
	cycles := 10000
	if testing.Short() {
		cycles = 1000
	}
	sizes := []int{1, 100, 4096, 70000, 300000}
	cycle := func(i int) {
		h := randomHost(t, tensor.F32, tensor.Shape{sizes[i%len(sizes)]}, uint64(i))
		x, err := d.Upload(h)
		if err != nil {
			t.Fatal(err)
		}
		y, err := d.Empty(h.DType, h.Shape)
		if err != nil {
			t.Fatal(err)
		}
		if err := dispatchCopy(d, y, x); err != nil {
			t.Fatal(err)
		}
		if _, err := y.Download(); err != nil {
			t.Fatal(err)
		}
		x.Free()
		y.Free()
	}
	for i := range 200 { // warm the pools and the pipeline
		cycle(i)
	}
	runtime.GC()
	rss0, live0 := rss(t), d.LiveObjects()
	for i := range cycles {
		cycle(i)
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	rss1, live1 := rss(t), d.LiveObjects()
	t.Logf("%d cycles: RSS %d -> %d KiB, live Vulkan objects %d -> %d", cycles, rss0>>10, rss1>>10, live0, live1)
	if live1 != live0 {
		t.Errorf("live Vulkan objects grew from %d to %d", live0, live1)
	}
	if rss1-rss0 > 16<<20 {
		t.Errorf("RSS grew by %d KiB over %d cycles", (rss1-rss0)>>10, cycles)
	}
}

// Pipelines built in one run are saved under CacheDir, keyed by device and
// driver, and the next run loads them; so are the modules the pipelines
// were built from, pruned, and a damaged one is pruned again.
func TestPipelineCache(t *testing.T) {
	dir := t.TempDir()
	code := spirv.Prune(shaders.SPIRV("copy_words"), []uint32{64})
	sum := sha256.Sum256(code)
	want := append(slices.Clip(code), sum[:]...)
	for run := range 2 {
		if run == 1 {
			damage(t, filepath.Join(dir, "pruned"))
		}
		d := devtest.OpenCore(t, core.Options{CacheDir: dir})
		x, err := core.FromSlice(d, []uint32{1, 2, 3, 4})
		if err != nil {
			t.Fatal(err)
		}
		y, err := d.Empty(tensor.U32, tensor.Shape{4})
		if err != nil {
			t.Fatal(err)
		}
		if err := dispatchCopy(d, y, x); err != nil {
			t.Fatal(err)
		}
		if got, err := core.ToSlice[uint32](y); err != nil || got[3] != 4 {
			t.Fatalf("run %d: %v, %v", run, got, err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		// Mesa's shader cache, where the driver is Mesa's, lies beside
		// the pipelines in mesa/ (useMesaCache).
		files, _ := os.ReadDir(dir)
		files = slices.DeleteFunc(files, func(f os.DirEntry) bool { return f.IsDir() && (f.Name() == "mesa" || f.Name() == "pruned") })
		if len(files) != 1 || !strings.HasPrefix(files[0].Name(), "pipelines-"+d.Info().UUID) {
			t.Fatalf("run %d: cache dir holds %v, want one pipelines-%s-*.bin", run, files, d.Info().UUID)
		}
		pruned, _ := filepath.Glob(filepath.Join(dir, "pruned", "*"))
		if len(pruned) != 1 {
			t.Fatalf("run %d: pruned/ holds %v, want copy_words's module", run, pruned)
		}
		if got, err := os.ReadFile(pruned[0]); err != nil || !bytes.Equal(got, want) {
			t.Errorf("run %d: %s holds %d bytes (%v), want copy_words pruned and its digest, %d", run, pruned[0], len(got), err, len(want))
		}
	}
}

// damage flips a byte of every file in dir.
func damage(t *testing.T, dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || len(b) < 100 {
			t.Fatalf("%s: %d bytes, %v", f, len(b), err)
		}
		b[len(b)/2] ^= 1
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A batch whose submission fails fails the ops recorded in it, with the
// error; the inputs are intact and later batches run. A staged upload is
// not in the failed batch.
func TestFailedBatch(t *testing.T) {
	for _, staging := range []bool{false, true} {
		t.Run(fmt.Sprintf("staging=%v", staging), func(t *testing.T) {
			d := devtest.OpenCore(t, core.Options{Staging: staging})
			h := randomHost(t, tensor.U32, tensor.Shape{1000}, 3)
			x, err := d.Upload(h)
			if err != nil {
				t.Fatal(err)
			}
			y, _ := d.Empty(tensor.U32, tensor.Shape{1000})
			if err := dispatchCopy(d, y, x); err != nil {
				t.Fatal(err)
			}
			d.FailNextSubmit(false)
			if _, err := y.Download(); !errors.Is(err, core.ErrOutOfMemory) {
				t.Fatalf("Download of a failed batch's output: %v, want ErrOutOfMemory", err)
			}
			if got, err := x.Download(); err != nil || !bytes.Equal(got.Data, h.Data) {
				t.Fatalf("input after a failed batch: %v", err)
			}
			if err := dispatchCopy(d, y, x); err != nil {
				t.Fatal(err)
			}
			if got, err := y.Download(); err != nil || !bytes.Equal(got.Data, h.Data) {
				t.Fatalf("the batch after a failed one: %v", err)
			}
		})
	}
}

// VK_ERROR_DEVICE_LOST makes the device unusable with a clear error
// instead of hanging, and Close still frees every object, staging
// buffers of batches that never completed included.
func TestDeviceLost(t *testing.T) {
	for _, staging := range []bool{false, true} {
		t.Run(fmt.Sprintf("staging=%v", staging), func(t *testing.T) {
			d := devtest.OpenCore(t, core.Options{Staging: staging})
			x, _ := core.FromSlice(d, []float32{1, 2})
			y, _ := d.Empty(tensor.F32, tensor.Shape{2})
			if err := d.Copy(y, x); err != nil {
				t.Fatal(err)
			}
			d.FailNextSubmit(true)
			if _, err := y.Download(); !errors.Is(err, core.ErrDeviceLost) {
				t.Fatalf("Download: %v, want ErrDeviceLost", err)
			}
			if _, err := d.Empty(tensor.F32, tensor.Shape{2}); !errors.Is(err, core.ErrDeviceLost) {
				t.Errorf("Empty after loss: %v, want ErrDeviceLost", err)
			}
			if _, err := x.Download(); !errors.Is(err, core.ErrDeviceLost) {
				t.Errorf("Download after loss: %v, want ErrDeviceLost", err)
			}
		})
	}
}

// Texel-buffer bindings read the same bytes as storage bindings, across
// pages too.
func TestTexelBinding(t *testing.T) {
	for _, staging := range []bool{false, true} {
		t.Run(fmt.Sprintf("staging=%v", staging), func(t *testing.T) { testTexelBinding(t, staging) })
	}
}

func testTexelBinding(t *testing.T, staging bool) {
	d := devtest.OpenCore(t, core.Options{PageSize: 1 << 16, Staging: staging})
	if !d.HasTexels(core.TexelRGBA32UI) {
		t.Skip("SKIP: the device has no rgba32ui storage texel buffers")
	}
	h := randomHost(t, tensor.U32, tensor.Shape{100003}, 9)
	x, err := d.Upload(h)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	y, _ := d.Empty(tensor.U32, h.Shape)
	defer y.Free()
	if err := dispatchCopyWith(d, copyTexels, y, x); err != nil {
		t.Fatal(err)
	}
	got, err := y.Download()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Data, h.Data) {
		t.Fatal("texel copy differs")
	}
	// Kept staging buffers (a buffer and its memory each) are not views.
	if live := d.LiveObjects() - 2*int64(d.KeptStaging()); live > 40 {
		t.Errorf("%d live Vulkan objects after the batch, staging aside: views not released?", live)
	}
}

// GPUTime calls nest: the outer one counts the inner one's work.
func TestGPUTimeNested(t *testing.T) {
	d := devtest.OpenCore(t, core.Options{})
	x, _ := d.Empty(tensor.U8, tensor.Shape{1 << 20})
	y, _ := d.Empty(tensor.U8, tensor.Shape{1 << 20})
	if err := x.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	var inner float64
	outer, err := d.GPUTime(func() error {
		if err := d.Copy(y, x); err != nil {
			return err
		}
		var err error
		inner, err = d.GPUTime(func() error { return d.Copy(x, y) })
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if inner <= 0 || outer <= inner {
		t.Errorf("outer %v ns, inner %v ns: want 0 < inner < outer", outer, inner)
	}
}

// A captured dispatch replays, independent or chained, with the validation
// layer silent and the output as the op left it.
func TestCaptureReplay(t *testing.T) {
	d := devtest.OpenCore(t, core.Options{})
	h := randomHost(t, tensor.U32, tensor.Shape{1000}, 3)
	x, err := d.Upload(h)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	y, _ := d.Empty(tensor.U32, tensor.Shape{1000})
	defer y.Free()
	for _, k := range []*core.Kernel{copyWords, copyTexels} {
		r, err := d.Capture(func() error { return dispatchCopyWith(d, k, y, x) })
		if err != nil {
			t.Fatal(err)
		}
		if r.Dispatches != 1 {
			t.Errorf("%s: captured %d dispatches, want 1", k.Name, r.Dispatches)
		}
		for _, chained := range []bool{false, true} {
			per, err := r.Time(50, chained)
			if err != nil || per <= 0 {
				t.Errorf("%s: Time(50, %v) = %v, %v", k.Name, chained, per, err)
			}
		}
		got, err := y.Download()
		if err != nil || !bytes.Equal(got.Data, h.Data) {
			t.Errorf("%s: output after the replays differs (%v)", k.Name, err)
		}
	}
	if _, err := d.Capture(func() error { return nil }); err == nil {
		t.Error("Capture of no dispatch succeeded")
	}
	_, err = d.Capture(func() error {
		_, err := d.Capture(func() error { return dispatchCopy(d, y, x) })
		return err
	})
	if err == nil {
		t.Error("nested Capture succeeded")
	}
}

// Both ways of binding buffers work wherever the device allows them:
// pushed descriptors (VK_KHR_push_descriptor) and a descriptor set per
// dispatch, whichever the driver's default is. Dispatches over storage
// buffers and texel views, dependent and not, and the floor's replay.
func TestDescriptorModes(t *testing.T) {
	if _, err := core.Open(core.Options{Descriptors: "pushed"}); err == nil || !strings.Contains(err.Error(), "Descriptors") {
		t.Errorf(`Open with Descriptors "pushed": %v, want an error naming the option`, err)
	}
	for _, mode := range []string{"push", "sets"} {
		t.Run(mode, func(t *testing.T) {
			d := devtest.OpenCore(t, core.Options{PageSize: 1 << 16, Descriptors: mode})
			if mode == "push" && !d.PushDescriptors() {
				t.Skip("SKIP: the device lacks VK_KHR_push_descriptor")
			}
			if mode == "sets" && d.PushDescriptors() {
				t.Fatal("descriptor sets asked for, descriptors pushed")
			}
			h := randomHost(t, tensor.U32, tensor.Shape{40003}, 11)
			x, err := d.Upload(h)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Free()
			kernels := []*core.Kernel{copyWords}
			if d.HasTexels(core.TexelRGBA32UI) {
				kernels = append(kernels, copyTexels)
			}
			for _, k := range kernels {
				// x -> y -> z, then the independent x -> w: barriers
				// between dependent dispatches only.
				y, _ := d.Empty(tensor.U32, h.Shape)
				z, _ := d.Empty(tensor.U32, h.Shape)
				w, _ := d.Empty(tensor.U32, h.Shape)
				for _, c := range [][2]*core.Tensor{{y, x}, {z, y}, {w, x}} {
					if err := dispatchCopyWith(d, k, c[0], c[1]); err != nil {
						t.Fatal(err)
					}
				}
				for _, out := range []*core.Tensor{z, w} {
					got, err := out.Download()
					if err != nil || !bytes.Equal(got.Data, h.Data) {
						t.Errorf("%s: copied data differs (%v)", k.Name, err)
					}
				}
				r, err := d.Capture(func() error { return dispatchCopyWith(d, k, y, x) })
				if err != nil {
					t.Fatal(err)
				}
				for _, chained := range []bool{false, true} {
					if per, err := r.Time(20, chained); err != nil || per <= 0 {
						t.Errorf("%s: Time(20, %v) = %v, %v", k.Name, chained, per, err)
					}
				}
				y.Free()
				z.Free()
				w.Free()
			}
		})
	}
}

// CopyRange copies a range across page boundaries of both tensors, and
// refuses ranges past either end and a copy within one tensor.
func TestCopyRange(t *testing.T) {
	d := devtest.OpenCore(t, core.Options{PageSize: 4096})
	h := randomHost(t, tensor.U8, tensor.Shape{10000}, 10000)
	x, err := d.Upload(h)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	y, err := d.Empty(tensor.U8, tensor.Shape{9000})
	if err != nil {
		t.Fatal(err)
	}
	defer y.Free()
	if err := d.Fill(y, 0); err != nil {
		t.Fatal(err)
	}
	if err := d.CopyRange(y, 3000, x, 1001, 5999); err != nil {
		t.Fatal(err)
	}
	got, err := y.Download()
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 9000)
	copy(want[3000:], h.Data[1001:7000])
	if !bytes.Equal(got.Data, want) {
		t.Error("bytes [1001, 7000) copied to [3000, 8999) differ")
	}
	for _, c := range []struct {
		dst         *core.Tensor
		at, from, n uint64
		want        error
	}{
		{y, 0, 9000, 1001, core.ErrSize},
		{y, 8000, 0, 1001, core.ErrSize},
		{x, 0, 1, 1, core.ErrMisuse},
	} {
		if err := d.CopyRange(c.dst, c.at, x, c.from, c.n); !errors.Is(err, c.want) {
			t.Errorf("CopyRange(%v, %d, x, %d, %d) = %v, want %v", c.dst, c.at, c.from, c.n, err, c.want)
		}
	}
}

// A cache directory that cannot be made (here under a file, as under a
// home that is not writable) costs the caches, never the device.
func TestOpenUnmakeableCacheDir(t *testing.T) {
	f := t.TempDir() + "/file"
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	d := devtest.OpenCore(t, core.Options{CacheDir: f + "/vkops"})
	h, err := tensor.FromSlice([]float32{1, -0.5, 2})
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, d, h)
}
