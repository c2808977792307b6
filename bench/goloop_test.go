package bench

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/tensor"
)

// specialF32 are the values where a loop and the chain part ways if
// either is wrong: NaNs of both signs, quiet and signaling, with
// payloads; infinities; zeros of both signs; the clamp's bounds and
// their neighbours.
var specialF32 = []uint32{
	0x7fc00000, 0xffc00000, 0x7fc00123, 0x7f800001, 0xff800005, // NaNs
	0x7f800000, 0xff800000, 0x00000000, 0x80000000, 0x00000001, 0x80000001,
	0x3f800000, 0xbf800000, 0x3f800001, 0xbf800001, 0x3f7fffff, 0xbf7fffff, 0x7f7fffff, 0xff7fffff,
}

// hostF32 is a host tensor of x's bits, of shape s.
func hostF32(t *testing.T, x []float32, s tensor.Shape) *tensor.Host {
	h, err := tensor.New(tensor.F32, s)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range x {
		u := math.Float32bits(v)
		h.Data[4*i], h.Data[4*i+1], h.Data[4*i+2], h.Data[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
	}
	return h
}

// refChain is the chain of pattern name computed by cpuref, op by op as
// chain.go's ops are called: what the Go loops must equal bit for bit.
func refChain(t *testing.T, name string, x, mask *tensor.Host) *tensor.Host {
	scalar := func(v float64) *tensor.Scalar {
		s, err := tensor.NewScalar(v, tensor.F32)
		if err != nil {
			t.Fatal(err)
		}
		return &s
	}
	scalarHost := func(v float64) *tensor.Host {
		h, err := tensor.New(tensor.F32, tensor.Shape{})
		if err != nil {
			t.Fatal(err)
		}
		u := math.Float32bits(float32(v))
		h.Data[0], h.Data[1], h.Data[2], h.Data[3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
		return h
	}
	must := func(h *tensor.Host, err error) *tensor.Host {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	all := make([]int, x.Shape.Rank())
	for i := range all {
		all[i] = i
	}
	switch name {
	case "relu":
		m := must(cpuref.Greater(x, scalarHost(0), "numpy"))
		return must(cpuref.Where(m, cpuref.Operand{T: x}, cpuref.Operand{S: scalar(0)}))
	case "clamp":
		m := must(cpuref.Less(x, scalarHost(-1), "numpy"))
		lo := must(cpuref.Where(m, cpuref.Operand{S: scalar(-1)}, cpuref.Operand{T: x}))
		m = must(cpuref.Greater(lo, scalarHost(1), "numpy"))
		return must(cpuref.Where(m, cpuref.Operand{S: scalar(1)}, cpuref.Operand{T: lo}))
	case "relu-max":
		return must(cpuref.Maximum(x, scalarHost(0), "numpy"))
	case "clamp-op":
		return must(cpuref.Clamp(x, *scalar(-1), *scalar(1)))
	case "nan-check":
		return must(cpuref.ReduceLogicalOr(must(cpuref.IsNaN(x)), all, false))
	case "finite-all":
		return must(cpuref.ReduceLogicalAnd(must(cpuref.IsFinite(x)), all, false))
	case "masked-fill":
		return must(cpuref.Where(mask, cpuref.Operand{T: x}, cpuref.Operand{S: scalar(math.Inf(-1))}))
	}
	t.Fatalf("no reference for %s", name)
	return nil
}

// The Go loops, plain and split over 1 to 7 goroutines, return what
// cpuref's ops return, bit for bit, on data full of special values (a
// NaN or an infinity, or none, in each part) and on shapes whose parts
// split unevenly: the peers compute what the chains compute.
func TestGoLoopsMatchCPURef(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	rng := rand.New(rand.NewPCG(40, 7))
	for _, p := range chainPatterns {
		shapes := [][2]tensor.Shape{{{7, 13}}, {{1, 4096}}, {{5, 1000}}}
		if p.masked {
			shapes = [][2]tensor.Shape{{{3, 5, 8}, {3, 1, 8}}, {{1, 64, 16}, {1, 1, 16}}, {{7, 2, 3}, {7, 1, 3}}}
		}
		for _, sh := range shapes {
			xs, ms := sh[0], sh[1]
			for _, data := range []string{"special", "normal", "one-nan", "one-inf"} {
				cs := &chainSlices{x: make([]float32, xs.NumElements()), xs: xs, ms: ms, reduces: p.bytes(4) == 4}
				for i := range cs.x {
					cs.x[i] = float32(rng.NormFloat64())
					if data == "special" {
						cs.x[i] = math.Float32frombits(specialF32[rng.IntN(len(specialF32))])
					}
				}
				switch data {
				case "one-nan":
					cs.x[rng.IntN(len(cs.x))] = float32(math.NaN())
				case "one-inf":
					cs.x[rng.IntN(len(cs.x))] = float32(math.Inf(1))
				}
				var mh *tensor.Host
				if ms != nil {
					cs.mask = make([]bool, ms.NumElements())
					var err error
					if mh, err = tensor.New(tensor.Bool, ms); err != nil {
						t.Fatal(err)
					}
					for i := range cs.mask {
						cs.mask[i] = rng.IntN(2) == 1
						if cs.mask[i] {
							mh.Data[i] = 1
						}
					}
				}
				want := refChain(t, p.name, hostF32(t, cs.x, xs), mh)
				for _, procs := range []int{0, 1, 2, 3, 7} {
					runtime.GOMAXPROCS(max(procs, 1))
					out := make([]float32, len(cs.x))
					loop, err := goChain(p.name, cs, out, procs > 0)
					if err != nil {
						t.Fatal(err)
					}
					got := cs.resultBytes(out, loop())
					if !slices.Equal(got, want.Data) {
						t.Errorf("%s on %s %v, %d goroutines (0: the plain loop): differs from cpuref", p.name, data, xs, procs)
					}
				}
			}
		}
	}
	// The offload's select, plain and in parts.
	o := newOffloadData(MinSize + 3)
	for _, procs := range []int{1, 3} {
		runtime.GOMAXPROCS(procs)
		out := make([]float32, o.n)
		inParts(o.n, func(_, lo, hi int) { selectInto(out[lo:hi], o.cond[lo:hi], o.then[lo:hi], o.els[lo:hi]) })
		if err := o.check(out); err != nil {
			t.Errorf("offload select in %d parts: %v", procs, err)
		}
	}
}

// inParts covers [0, n) once, in GOMAXPROCS parts at most, none empty.
func TestInParts(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3, 8} {
		runtime.GOMAXPROCS(procs)
		for _, n := range []int{1, 2, 5, 1000} {
			seen := make([]int, n)
			parts := make([]bool, procs)
			inParts(n, func(k, lo, hi int) {
				parts[k] = true
				for i := lo; i < hi; i++ {
					seen[i]++
				}
				if lo >= hi {
					t.Errorf("GOMAXPROCS %d, n %d: part %d is empty", procs, n, k)
				}
			})
			for i, s := range seen {
				if s != 1 {
					t.Fatalf("GOMAXPROCS %d, n %d: element %d covered %d times", procs, n, i, s)
				}
			}
		}
	}
}

// GoPeers's cases run, are checked against the device's ops, and name
// their peer and Go; the chains from slices are there beside them.
func TestGoPeers(t *testing.T) {
	d := devtest.Open(t, device.Options{CacheDir: cacheDir})
	r := NewRunner(d, Options{Warmup: 1, Runs: 1})
	n := 2 * 64 * 4096 // two batches of the masked fill: its parallel loop splits them
	var cases []*Case
	for _, c := range Chain(n, []tensor.DType{tensor.F32}) {
		if c.Slices {
			cases = append(cases, c)
		}
	}
	if len(cases) != len(chainPatterns) {
		t.Errorf("%d chains from slices, want %d", len(cases), len(chainPatterns))
	}
	peers := map[string]int{}
	for _, c := range append(cases, GoPeers(n)...) {
		res, err := r.Run(c)
		if errors.Is(err, ErrSkip) {
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.Name(), err)
		}
		if res.WallMS <= 0 || res.MedianMS != res.WallMS || res.Peer != c.Peer {
			t.Errorf("%s: %+v", c.Name(), res)
		}
		if c.Op == "chain" && !res.Slices {
			t.Errorf("%s: not marked as from slices", c.Name())
		}
		if c.Peer != "" {
			peers[c.Peer]++
			if res.Fused != nil || res.Version == "" || res.CopyGBps != 0 {
				t.Errorf("%s: a peer's result %+v", c.Name(), res)
			}
		}
	}
	for _, p := range []string{PeerGo, PeerGoParallel} {
		if peers[p] != len(chainPatterns)+1 {
			t.Errorf("%d cases of %s, want %d", peers[p], p, len(chainPatterns)+1)
		}
	}
}

// The check a Go loop's case runs after timing passes its result and
// fails one wrong element.
func TestGoPeerCheck(t *testing.T) {
	d := devtest.Open(t, device.Options{CacheDir: cacheDir})
	p := chainPatterns[0]
	cs, err := p.slices(p.shapes(MinSize))
	if err != nil {
		t.Fatal(err)
	}
	out := cs.output()
	relu(out, cs.x)
	if err := p.verify(d, cs, cs.resultBytes(out, false)); err != nil {
		t.Fatal(err)
	}
	out[3] = -out[3] - 1
	if err := p.verify(d, cs, cs.resultBytes(out, false)); err == nil {
		t.Error("a wrong result passed")
	}
}

// BenchmarkGoPeers runs each chain on f32 from a Go slice to a Go slice
// on vkops (Wrap, the Expr, ToSliceInto) and as the Go loops, and the
// offload's select whole on vkops and as the loops, in turn in each
// iteration, at the suite's size; every result is checked after its
// runs. The metrics are the medians of the iterations' Go wall time over
// vkops's, above 1 where vkops is faster.
//
//	go test ./bench -run X -bench GoPeers -benchtime 3x
func BenchmarkGoPeers(b *testing.B) {
	d := devtest.Open(b, device.Options{CacheDir: cacheDir})
	n := DefaultSize
	peers := GoPeers(n)
	var vk []*Case
	for _, c := range Chain(n, []tensor.DType{tensor.F32}) {
		if c.Slices {
			vk = append(vk, c)
		}
	}
	vk = append(vk, Offload(n)[0])
	for _, v := range vk {
		var mine []*Case
		for _, c := range peers {
			if c.Op == v.Op && c.Pattern == v.Pattern {
				mine = append(mine, c)
			}
		}
		b.Run(fmt.Sprintf("%s/%s", v.Op, v.Pattern), func(b *testing.B) {
			ratios := map[string][]float64{}
			for b.Loop() {
				base, err := Run(d, v, Options{Runs: 5})
				if err != nil {
					b.Fatal(err)
				}
				for _, c := range mine {
					res, err := Run(d, c, Options{Runs: 5})
					if err != nil {
						b.Fatal(err)
					}
					ratios[c.Peer] = append(ratios[c.Peer], res.WallMS/base.WallMS)
				}
			}
			for peer, rs := range ratios {
				b.ReportMetric(median(rs), peer+"/vkops")
			}
		})
	}
}
