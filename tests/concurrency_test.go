package tests

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/ops"
	"github.com/vkops/vkops/tensor"
)

// Concurrency (issue #6): one device shared by 8 goroutines, each
// running a mix of selects, wheres, reductions, chains of them, uploads
// and downloads, on tensors of their own and on tensors all of them read
// at once. Every result is checked against cpuref. Run under -race in
// make test-race (with -short: 100 ops per goroutine).

// concKinds names the op kinds the goroutines draw from.
var concKinds = []string{"select", "select-shared", "where", "reduce-or", "reduce-and", "reduce-shared", "select+reduce", "upload/download"}

// concShared are the tensors every goroutine reads at once.
type concShared struct {
	cond, then, data    *device.Tensor
	hCond, hThen, hData *tensor.Host
}

// concShape draws a shape of rank 0 to 4 whose dimensions are small,
// with a zero now and then, of at most about 3000 elements: with 4 KiB
// pages, the larger ones span pages and split into several dispatches.
func concShape(rng *rand.Rand) tensor.Shape {
	s := make(tensor.Shape, rng.IntN(5))
	n := 1
	for i := range s {
		s[i] = 1 + rng.IntN(12)
		if rng.IntN(4) == 0 {
			s[i] = 1
		}
		if n*s[i] > 3000 {
			s[i] = 1
		}
		n *= s[i]
	}
	if len(s) > 0 && rng.IntN(40) == 0 {
		s[rng.IntN(len(s))] = 0
	}
	return s
}

// concSub returns a shape that broadcasts one way to s: leading
// dimensions dropped and some dimensions made 1.
func concSub(rng *rand.Rand, s tensor.Shape) tensor.Shape {
	sub := s[rng.IntN(len(s)+1):].Clone()
	for i := range sub {
		if rng.IntN(3) == 0 {
			sub[i] = 1
		}
	}
	return sub
}

// concAxes draws distinct axes of a rank-r tensor, negative or not.
func concAxes(rng *rand.Rand, r int) []int {
	var axes []int
	for _, a := range rng.Perm(r)[:rng.IntN(r+1)] {
		if rng.IntN(2) == 0 {
			a -= r
		}
		axes = append(axes, a)
	}
	return axes
}

// concDTypes are the element types select and where move.
var concDTypes = []tensor.DType{tensor.Bool, tensor.I8, tensor.U8, tensor.I16, tensor.F16, tensor.BF16, tensor.I32, tensor.U32, tensor.F32, tensor.I64, tensor.U64, tensor.F64}

// concOp runs one op of the given kind on d and checks it against
// cpuref, returning what went wrong.
func concOp(d *device.Device, rng *rand.Rand, kind string, sh *concShared) error {
	var owned []*device.Tensor
	defer func() {
		for _, x := range owned {
			x.Free()
		}
	}()
	// up uploads hs in order, stopping at the first error.
	up := func(hs ...*tensor.Host) ([]*device.Tensor, error) {
		xs := make([]*device.Tensor, len(hs))
		for i, h := range hs {
			x, err := bridge.Device(d).Upload(h)
			if err != nil {
				return nil, err
			}
			owned = append(owned, bridge.UserTensor(x))
			xs[i] = bridge.UserTensor(x)
		}
		return xs, nil
	}
	// result downloads y, frees it and compares it with want.
	result := func(y *device.Tensor, err error, want *tensor.Host, werr error) error {
		if werr != nil {
			return fmt.Errorf("cpuref: %v", werr)
		}
		if err != nil {
			return err
		}
		s, err := downloadDiff(y, want)
		if err != nil {
			return err
		}
		if s != "" {
			return fmt.Errorf("%s", s)
		}
		return nil
	}
	switch kind {
	case "select":
		modes := []string{"numpy", "none", "pdpd"}
		m := rng.IntN(3)
		dt := concDTypes[rng.IntN(len(concDTypes))]
		out := concShape(rng)
		cs, as, bs := out, out, out
		switch m {
		case 0:
			as, bs = concSub(rng, out), concSub(rng, out)
			res, _ := tensor.Broadcast(as, bs)
			cs = concSub(rng, res)
		case 2:
			bs, cs = concSub(rng, out), concSub(rng, out)
		}
		hc, ha, hb := misRandom(rng, tensor.Bool, cs), misRandom(rng, dt, as), misRandom(rng, dt, bs)
		want, werr := cpuref.Select(hc, ha, hb, modes[m])
		xs, err := up(hc, ha, hb)
		if err != nil {
			return err
		}
		y, err := ops.Select(xs[0], xs[1], xs[2], ops.WithBroadcast(ops.Broadcast(m)))
		if err := result(y, err, want, werr); err != nil {
			return fmt.Errorf("select %s %v%v %v%v %v%v: %w", modes[m], hc.DType, cs, dt, as, dt, bs, err)
		}
	case "select-shared":
		// then and cond shared by all; else of this goroutine.
		hb := misRandom(rng, tensor.F32, concSub(rng, sh.hThen.Shape))
		want, werr := cpuref.Select(sh.hCond, sh.hThen, hb, "numpy")
		xs, err := up(hb)
		if err != nil {
			return err
		}
		y, err := ops.Select(sh.cond, sh.then, xs[0])
		if err := result(y, err, want, werr); err != nil {
			return fmt.Errorf("select of shared tensors, else %v: %w", hb.Shape, err)
		}
	case "where":
		dt := concDTypes[1+rng.IntN(len(concDTypes)-1)]
		out := concShape(rng)
		hc, ha := misRandom(rng, tensor.Bool, concSub(rng, out)), misRandom(rng, dt, concSub(rng, out))
		v := rng.IntN(100)
		s, err := tensor.NewScalar(v, dt)
		if err != nil {
			return err
		}
		var other any = v // a plain number, converted to dt
		if rng.IntN(2) == 0 {
			other = s // a typed scalar, used bit for bit
		}
		want, werr := cpuref.Where(hc, cpuref.Operand{T: ha}, cpuref.Operand{S: &s})
		xs, err := up(hc, ha)
		if err != nil {
			return err
		}
		y, err := ops.Where(xs[0], xs[1], other)
		if err := result(y, err, want, werr); err != nil {
			return fmt.Errorf("where %v %v%v %T(%d): %w", hc.Shape, dt, ha.Shape, other, v, err)
		}
	case "reduce-or", "reduce-and", "reduce-shared":
		f, ref := ops.ReduceLogicalOr, cpuref.ReduceLogicalOr
		if kind == "reduce-and" || (kind == "reduce-shared" && rng.IntN(2) == 0) {
			f, ref = ops.ReduceLogicalAnd, cpuref.ReduceLogicalAnd
		}
		h, x := sh.hData, sh.data
		if kind != "reduce-shared" {
			h = misRandom(rng, tensor.Bool, concShape(rng))
			// Mostly one value with the other here and there, so that
			// results are not all alike.
			fill := byte(rng.IntN(2))
			for i := range h.Data {
				if rng.IntN(50) != 0 {
					h.Data[i] = fill
				}
			}
			xs, err := up(h)
			if err != nil {
				return err
			}
			x = xs[0]
		}
		axes, keep := concAxes(rng, h.Shape.Rank()), rng.IntN(2) == 0
		want, werr := ref(h, axes, keep)
		y, err := f(x, axes, ops.KeepDims(keep))
		if err := result(y, err, want, werr); err != nil {
			return fmt.Errorf("%s %v axes %v keep %v: %w", kind, h.Shape, axes, keep, err)
		}
	case "select+reduce":
		// A chain whose intermediate is never downloaded.
		out := concShape(rng)
		hc, ha, hb := misRandom(rng, tensor.Bool, concSub(rng, out)), misRandom(rng, tensor.Bool, out), misRandom(rng, tensor.Bool, concSub(rng, out))
		mid, werr := cpuref.Select(hc, ha, hb, "numpy")
		if werr != nil {
			return werr
		}
		axes := concAxes(rng, out.Rank())
		want, werr := cpuref.ReduceLogicalOr(mid, axes, false)
		xs, err := up(hc, ha, hb)
		if err != nil {
			return err
		}
		m, err := ops.Select(xs[0], xs[1], xs[2])
		if err != nil {
			return err
		}
		owned = append(owned, m)
		y, err := ops.ReduceLogicalOr(m, axes)
		if err := result(y, err, want, werr); err != nil {
			return fmt.Errorf("select %v then reduce axes %v: %w", out, axes, err)
		}
	case "upload/download":
		dt := concDTypes[rng.IntN(len(concDTypes))]
		h := misRandom(rng, dt, concShape(rng))
		xs, err := up(h)
		if err != nil {
			return err
		}
		x := xs[0]
		// Overwrite it once, then read it back both ways.
		h2 := misRandom(rng, dt, h.Shape)
		if err := bridge.Tensor(x).Write(h2.Data); err != nil {
			return err
		}
		got, err := bridge.Tensor(x).Download()
		if err != nil {
			return err
		}
		if s := selDiff(got, h2); s != "" {
			return fmt.Errorf("upload/download %v%v: %s", dt, h.Shape, s)
		}
		buf := make([]byte, x.Bytes())
		if err := bridge.Tensor(x).Read(buf); err != nil {
			return err
		}
		if string(buf) != string(h2.Data) {
			return fmt.Errorf("read %v%v: bytes differ", dt, h.Shape)
		}
	default:
		return fmt.Errorf("unknown kind %q", kind)
	}
	return nil
}

func TestConcurrentMixedOps(t *testing.T) {
	const goroutines = 8
	perG := 1000
	if testing.Short() {
		perG = 100
	}
	// $VKOPS_CACHE_DIR, which make test sets, keeps the kernel variants
	// chosen by measurement from one run to the next; without it they
	// are measured on first use, by whichever goroutine gets there first.
	d := devtest.Open(t, device.Options{PageSize: 4096, CacheDir: os.Getenv("VKOPS_CACHE_DIR")})
	rng := rand.New(rand.NewPCG(8, 8))
	sh := &concShared{
		hCond: misRandom(rng, tensor.Bool, tensor.Shape{24, 1, 40}),
		hThen: misRandom(rng, tensor.F32, tensor.Shape{24, 3, 40}),
		hData: misRandom(rng, tensor.Bool, tensor.Shape{7, 60, 9}),
	}
	var in misInputs
	sh.cond, sh.then, sh.data = in.add(t, d, sh.hCond), in.add(t, d, sh.hThen), in.add(t, d, sh.hData)
	g0 := runtime.NumGoroutine()
	var counts [8]atomic.Int64
	var failed atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 88))
			for i := range perG {
				k := rng.IntN(len(concKinds))
				if err := concOp(d, rng, concKinds[k], sh); err != nil {
					t.Errorf("goroutine %d op %d (%s): %v", g, i, concKinds[k], err)
					if failed.Add(1) > 10 {
						return
					}
				}
				counts[k].Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	in.intact(t, "the concurrent ops")
	total := int64(0)
	var mix string
	for k, name := range concKinds {
		mix += fmt.Sprintf(" %s %d,", name, counts[k].Load())
		total += counts[k].Load()
	}
	t.Logf("%d goroutines x %d ops = %d ops checked against cpuref in %v:%s goroutines %d -> %d",
		goroutines, perG, total, elapsed.Round(time.Millisecond), mix, g0, runtime.NumGoroutine())
}
