package tests

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/ops"
	"github.com/vkops/vkops/tensor"
)

// The lifecycle stress test (issue 37): one device shared, as a program
// shares it, by workers that run mixed ops, Expr replays, Wrap and View,
// transfers and reads, each result checked against cpuref; tensors freed
// by another goroutine while an op uses them; a filler that runs the heap
// to its limit and back, again and again; and Close in the middle, from
// three goroutines at once, after which every call reports ErrClosed.
// Each round opens the device another way: unified memory, staged
// transfers, imported transfers (VKOPS_TRANSFERS=staged and import, as on
// a discrete GPU), and the GPU profile's plans.
//
// Every error must be one that the moment explains: ErrClosed once Close
// began, ErrOutOfMemory while the filler holds the heap (after which the
// device must still run an op), ErrFreed where another goroutine freed
// the tensor. The tensors held throughout keep their bytes up to Close.
// Each round lasts dur (half with -short) after a warm-up, and longer
// only until every action and one heap cycle have run (at most
// stressCap): a busy machine under -race once ran none in 1.2 s (8 of
// 20 runs), and a round that ran none proves nothing. Run it under
// -race (make test-race) and with the validation layer (devtest).

// stressRounds are the ways each round opens the device.
var stressRounds = []struct {
	name string
	opts device.Options
}{
	{"unified", device.Options{PageSize: 1 << 16}},
	{"staged", device.Options{Staging: true, Transfers: "staged", PageSize: 1 << 16}},
	{"import", device.Options{Staging: true, Transfers: "import"}},
	{"gpu-profile", device.Options{Profile: device.ProfileGPU, PageSize: 1 << 20}},
}

// stressKinds are the workers' actions. The ops take f32 and bool only,
// so that a round builds few pipelines: TestConcurrentMixedOps covers
// every type; this test covers a device's life.
var stressKinds = []string{"select", "where", "reduce", "greater", "is-nan", "chain", "transfer", "expr", "wrap", "free-race", "expr-free-race"}

const stressWorkers = 6

// stressCap bounds a round's time after its warm-up.
const stressCap = 30 * time.Second

func TestLifecycleStress(t *testing.T) {
	dur := 2500 * time.Millisecond
	if testing.Short() {
		dur = 1200 * time.Millisecond
	}
	for i, r := range stressRounds {
		t.Run(r.name, func(t *testing.T) { stressRound(t, r.opts, dur, uint64(i)) })
	}
}

// stress is one round's shared state.
type stress struct {
	t      *testing.T
	d      *device.Device
	sh     *concShared
	closed atomic.Bool // Close has begun
	kinds  []string
	counts []atomic.Int64 // actions done, by kind
	oom    atomic.Int64   // ErrOutOfMemory met by workers
	freed  atomic.Int64   // ops that met a tensor freed meanwhile
	cycles atomic.Int64   // the filler's cycles, full heap and back
	failed atomic.Int64
}

func stressRound(t *testing.T, opts device.Options, dur time.Duration, seed uint64) {
	// Kernel variants measured once are kept, as in the concurrency test.
	opts.CacheDir = os.Getenv("VKOPS_CACHE_DIR")
	d := devtest.Open(t, opts)
	g0 := runtime.NumGoroutine()
	rng := rand.New(rand.NewPCG(seed, 37))
	s := &stress{t: t, d: d, kinds: stressKinds}
	s.counts = make([]atomic.Int64, len(s.kinds))
	s.sh = &concShared{
		hCond: misRandom(rng, tensor.Bool, tensor.Shape{24, 1, 40}),
		hThen: misRandom(rng, tensor.F32, tensor.Shape{24, 3, 40}),
		hData: misRandom(rng, tensor.Bool, tensor.Shape{7, 60, 9}),
	}
	var held misInputs
	s.sh.cond, s.sh.then, s.sh.data = held.add(t, d, s.sh.hCond), held.add(t, d, s.sh.hThen), held.add(t, d, s.sh.hData)
	held.add(t, d, misRandom(rng, tensor.F64, tensor.Shape{3, 5000})) // several pages
	start := time.Now()
	// Each action once first, so that the round's time goes to the
	// device's life rather than to building its pipelines.
	var warm stressExpr
	for _, kind := range s.kinds {
		for range 3 {
			if err := s.act(rng, kind, &warm); err != nil {
				t.Fatalf("%s, before the round: %v", kind, err)
			}
		}
	}
	warmed := time.Now()
	var wg sync.WaitGroup
	for g := range stressWorkers {
		wg.Go(func() { s.work(g, seed) })
	}
	wg.Go(s.fill)
	s.await(warmed.Add(time.Duration(float64(dur)*(0.6+0.4*rng.Float64()))), warmed.Add(stressCap))
	s.intact(&held)
	s.closed.Store(true)
	var closers sync.WaitGroup
	for range 3 {
		closers.Go(func() {
			if err := d.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
	closers.Wait()
	wg.Wait()
	if live := bridge.Device(d).LiveObjects(); live != 0 {
		t.Errorf("%d Vulkan objects live after Close", live)
	}
	if _, err := ops.Greater(s.sh.then, 0); !errors.Is(err, device.ErrClosed) {
		t.Errorf("an op after Close: %v, want ErrClosed", err)
	}
	s.report(warmed.Sub(start), time.Since(warmed), g0)
}

// await returns at end, or after it once every kind of action and one
// heap cycle have run, or at limit.
func (s *stress) await(end, limit time.Time) {
	for {
		now := time.Now()
		if now.After(limit) || now.After(end) && s.everyPartRan() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// everyPartRan reports whether the filler has cycled and the workers
// have done every kind of action.
func (s *stress) everyPartRan() bool {
	for k := range s.counts {
		if s.counts[k].Load() == 0 {
			return false
		}
	}
	return s.cycles.Load() > 0
}

// report logs what the round did, and fails it where a part never ran.
func (s *stress) report(warmup, elapsed time.Duration, g0 int) {
	var mix []string
	total := int64(0)
	for k, name := range s.kinds {
		n := s.counts[k].Load()
		total += n
		mix = append(mix, fmt.Sprintf("%s %d", name, n))
	}
	s.t.Logf("warm-up %v, then %v: %d actions checked (%s); %d met a full heap, %d a tensor freed meanwhile; %d heap cycles; goroutines %d -> %d",
		warmup.Round(time.Millisecond), elapsed.Round(time.Millisecond), total, strings.Join(mix, ", "), s.oom.Load(), s.freed.Load(), s.cycles.Load(), g0, runtime.NumGoroutine())
	if !s.everyPartRan() {
		s.t.Errorf("in %v the round ran %d heap cycles and %d actions, not every kind: too few to prove anything", stressCap, s.cycles.Load(), total)
	}
}

// intact checks, before Close, that the tensors held throughout still
// hold their bytes, retrying a download that met the filler's full heap.
func (s *stress) intact(held *misInputs) {
	for i, x := range held.ts {
		h, err := bridge.Tensor(x).Download()
		for tries := 0; errors.Is(err, device.ErrOutOfMemory) && tries < 100; tries++ {
			time.Sleep(10 * time.Millisecond)
			h, err = bridge.Tensor(x).Download()
		}
		switch {
		case err != nil:
			s.t.Errorf("held tensor %v: %v", x, err)
		case !bytes.Equal(h.Data, held.hosts[i].Data):
			s.t.Errorf("held tensor %v changed", x)
		}
	}
}

// work runs random actions until the device reports ErrClosed.
func (s *stress) work(g int, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, uint64(g)))
	var ex stressExpr
	for {
		k := rng.IntN(len(s.kinds))
		err := s.act(rng, s.kinds[k], &ex)
		if err == nil {
			s.counts[k].Add(1)
			continue
		}
		if !s.expected(s.kinds[k], err) {
			return
		}
		if errors.Is(err, device.ErrClosed) {
			return
		}
		s.oom.Add(1)
		if err := s.stillWorks(); err != nil {
			if !errors.Is(err, device.ErrClosed) {
				s.t.Errorf("after %s met a full heap: %v", s.kinds[k], err)
			}
			return
		}
	}
}

// expected reports whether err is one that the moment explains:
// ErrClosed once Close has begun, ErrOutOfMemory (the filler), and fails
// the test otherwise.
func (s *stress) expected(kind string, err error) bool {
	switch {
	case errors.Is(err, device.ErrClosed) && s.closed.Load():
		return true
	case errors.Is(err, device.ErrOutOfMemory):
		if !strings.Contains(err.Error(), "live tensors") {
			s.t.Errorf("%s: out of memory, without saying what holds the heap: %v", kind, err)
		}
		return true
	}
	if s.failed.Add(1) <= 10 {
		s.t.Errorf("%s: %v", kind, err)
	}
	return false
}

// act runs one action of the given kind.
func (s *stress) act(rng *rand.Rand, kind string, ex *stressExpr) error {
	switch kind {
	case "select":
		return concOp(s.d, rng, "select-shared", s.sh)
	case "where":
		return stressWhere(s.d, rng)
	case "reduce":
		return concOp(s.d, rng, []string{"reduce-or", "reduce-and", "reduce-shared"}[rng.IntN(3)], s.sh)
	case "greater":
		x := make([]float32, 1+rng.IntN(20000))
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		return greaterOnce(s.d, x)
	case "is-nan":
		return s.freeRace(rng, false, nil, false)
	case "chain":
		return concOp(s.d, rng, "select+reduce", s.sh)
	case "transfer":
		return concOp(s.d, rng, "upload/download", s.sh)
	case "expr":
		return ex.replay(s.d, rng)
	case "wrap":
		return stressWrap(s.d, rng)
	case "free-race":
		return s.freeRace(rng, false, nil, true)
	case "expr-free-race":
		return s.freeRace(rng, true, ex, true)
	}
	return fmt.Errorf("unknown kind %q", kind)
}

// stressWhere runs Where on f32 operands that broadcast, one a scalar.
func stressWhere(d *device.Device, rng *rand.Rand) error {
	out := concShape(rng)
	hc, ha := misRandom(rng, tensor.Bool, concSub(rng, out)), stressF32(rng, concSub(rng, out))
	zs := tensor.Scalar{DType: tensor.F32, Bits: uint64(math.Float32bits(2.5))}
	want, err := cpuref.Where(hc, cpuref.Operand{T: ha}, cpuref.Operand{S: &zs})
	if err != nil {
		return err
	}
	c, err := bridge.Device(d).Upload(hc)
	if err != nil {
		return err
	}
	defer c.Free()
	a, err := bridge.Device(d).Upload(ha)
	if err != nil {
		return err
	}
	defer a.Free()
	y, err := ops.Where(bridge.UserTensor(c), a, float32(2.5))
	if err != nil {
		return err
	}
	return checked(y, want)
}

// stillWorks runs a small op and checks it, once the heap has room
// again: the device must stay usable after any error.
func (s *stress) stillWorks() error {
	x := []float32{-1, 0, 2, float32(math.NaN())}
	for tries := 0; ; tries++ {
		err := greaterOnce(s.d, x)
		if !errors.Is(err, device.ErrOutOfMemory) || tries == 200 {
			return err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fill allocates tensors of 32 to 256 MiB until the heap is full, holds
// them a moment, then frees them all, and again, until Close. It fills
// the 32 MiB ones, so that work not yet finished holds some of what it
// frees; the others stay untouched, which costs lavapipe no page faults.
func (s *stress) fill() {
	sizes := []int{32 << 20, 64 << 20, 128 << 20, 256 << 20}
	for cycle := 0; ; cycle++ {
		var got []*device.Tensor
		err := func() error {
			for i := 0; ; i++ {
				size := sizes[(cycle+i)%len(sizes)]
				x, err := bridge.Device(s.d).Empty(tensor.U8, tensor.Shape{size})
				if err != nil {
					return err
				}
				got = append(got, bridge.UserTensor(x))
				if size == sizes[0] {
					if err := bridge.Device(s.d).Fill(x, uint32(i)*0x01010101); err != nil {
						return err
					}
				}
			}
		}()
		if errors.Is(err, device.ErrOutOfMemory) {
			time.Sleep(20 * time.Millisecond) // the workers meet the full heap
		}
		for _, x := range got {
			x.Free()
		}
		if !s.expected("heap filler", err) || errors.Is(err, device.ErrClosed) {
			return
		}
		s.cycles.Add(1)
	}
}

// freeRace runs IsNaN, or an Expr replay when expr is set, on a new
// tensor, which another goroutine frees meanwhile when race is set: the
// op runs on it, with the right result, or reports ErrFreed.
func (s *stress) freeRace(rng *rand.Rand, expr bool, ex *stressExpr, race bool) error {
	h := stressF32(rng, tensor.Shape{1 + rng.IntN(20000)})
	if expr {
		h = stressF32(rng, ex.shape(s.d, rng))
	}
	x, err := bridge.Device(s.d).Upload(h)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	delay := time.Duration(rng.IntN(200)) * time.Microsecond
	if race {
		wg.Go(func() {
			time.Sleep(delay)
			x.Free()
		})
	} else {
		defer x.Free()
	}
	defer wg.Wait()
	var y *device.Tensor
	var want *tensor.Host
	if expr {
		y, want, err = ex.run(bridge.UserTensor(x), h)
	} else {
		y, err = ops.IsNaN(bridge.UserTensor(x))
		want, _ = cpuref.IsNaN(h)
	}
	if errors.Is(err, device.ErrFreed) {
		s.freed.Add(1)
		return nil
	}
	if err != nil {
		return err
	}
	return checked(y, want)
}

// checked downloads y, frees it and compares it with want.
func checked(y *device.Tensor, want *tensor.Host) error {
	d, err := downloadDiff(y, want)
	if err == nil && d != "" {
		err = errors.New(d)
	}
	return err
}

// stressF32 returns random f32 values of the given shape, a NaN now and
// then.
func stressF32(rng *rand.Rand, shape tensor.Shape) *tensor.Host {
	h, err := tensor.New(tensor.F32, shape)
	if err != nil {
		panic(err)
	}
	for i := range h.Len() {
		v := float32(rng.NormFloat64())
		if rng.IntN(500) == 0 {
			v = float32(math.NaN())
		}
		*(*float32)(unsafe.Pointer(&h.Data[4*i])) = v
	}
	return h
}

// stressExpr is a worker's own Expr, a ReLU, planned on first use and
// replayed with each new input after, every other time into a new
// tensor of its own (EvalInto).
type stressExpr struct {
	e    ops.Expr
	in   ops.Node
	relu ops.Node
	dims tensor.Shape
	runs int
}

// shape returns the input shape of the Expr, choosing it on first use.
func (ex *stressExpr) shape(d *device.Device, rng *rand.Rand) tensor.Shape {
	if ex.dims == nil {
		ex.dims = tensor.Shape{1 + rng.IntN(64), 1 + rng.IntN(300)}
	}
	return ex.dims
}

// run sets x, whose values are h's, as the input and evaluates the ReLU,
// returning cpuref's result beside it.
func (ex *stressExpr) run(x *device.Tensor, h *tensor.Host) (*device.Tensor, *tensor.Host, error) {
	if ex.relu.Err() != nil {
		ex.in = ex.e.Input(x)
		ex.relu = ex.e.Where(ex.e.Greater(ex.in, 0), ex.in, 0)
	} else if err := ex.e.Set(ex.in, x); err != nil {
		return nil, nil, err
	}
	zero, err := tensor.New(tensor.F32, tensor.Shape{})
	if err != nil {
		return nil, nil, err
	}
	pos, err := cpuref.Greater(h, zero, "numpy")
	if err != nil {
		return nil, nil, err
	}
	zs := tensor.Scalar{DType: tensor.F32}
	want, err := cpuref.Where(pos, cpuref.Operand{T: h}, cpuref.Operand{S: &zs})
	if err != nil {
		return nil, nil, err
	}
	if ex.runs++; ex.runs%2 == 1 {
		y, err := ex.e.Eval(ex.relu)
		return y, want, err
	}
	y, err := bridge.Device(x.Device()).Empty(tensor.F32, ex.dims)
	if err != nil {
		return nil, nil, err
	}
	if err := ex.e.EvalInto(ex.relu, bridge.UserTensor(y)); err != nil {
		y.Free()
		return nil, nil, err
	}
	return bridge.UserTensor(y), want, nil
}

// replay evaluates the ReLU on new input and checks it.
func (ex *stressExpr) replay(d *device.Device, rng *rand.Rand) error {
	h := stressF32(rng, ex.shape(d, rng))
	x, err := bridge.Device(d).Upload(h)
	if err != nil {
		return err
	}
	defer x.Free()
	y, want, err := ex.run(bridge.UserTensor(x), h)
	if err != nil {
		return err
	}
	return checked(y, want)
}

// stressWrap wraps a slice, runs an op on it, changes the slice through
// View after Wait and runs the op again: each result as cpuref's.
func stressWrap(d *device.Device, rng *rand.Rand) error {
	n := 1024 * (1 + rng.IntN(16))
	s := alignedF32(n)
	copy(tensor.Bytes(s), stressF32(rng, tensor.Shape{n}).Data)
	w, err := device.Wrap(d, s)
	if err != nil {
		return err
	}
	defer w.Free()
	for round := range 2 {
		y, err := ops.IsNaN(w)
		if err != nil {
			return err
		}
		h, err := tensor.FromSlice(s)
		if err != nil {
			return err
		}
		want, _ := cpuref.IsNaN(h)
		if err := checked(y, want); err != nil {
			return fmt.Errorf("wrap round %d: %w", round, err)
		}
		if err := w.Wait(); err != nil {
			return err
		}
		views, err := device.View[float32](w)
		if err != nil {
			return err
		}
		if !bytes.Equal(tensor.Bytes(slices.Concat(views...)), tensor.Bytes(s)) {
			return fmt.Errorf("wrap round %d: View of a wrapped slice differs from it", round)
		}
		page := views[rng.IntN(len(views))]
		page[rng.IntN(len(page))] = float32(math.NaN()) // the slice's own memory
	}
	return nil
}

// alignedF32 returns n float32s (n a multiple of 1024) on whole pages of
// 4 KiB, which Wrap imports where the device can.
func alignedF32(n int) []float32 {
	back := make([]float32, n+1024)
	skip := (4096 - int(uintptr(unsafe.Pointer(&back[0])))%4096) % 4096 / 4
	return back[skip : skip+n : skip+n+1024]
}
