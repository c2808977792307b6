package bench

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/ops"
	"github.com/vkops/vkops/tensor"
)

// Without a GPU, a Go program's real alternative to vkops is not numpy
// but a loop over its slice, or that loop split over its cores. This
// file holds those loops for the chains and the offload, written as a Go
// programmer would write them (no unsafe, no assembly), each computing
// bit for bit what the vkops chain computes, and the vkops case they
// stand beside: the fused chain from a Go slice to a Go slice.

// Peer names of the Go loops (Case.Peer, Result.Peer).
const (
	PeerGo         = "go"          // one loop over the slice
	PeerGoParallel = "go-parallel" // the loop split into GOMAXPROCS parts on goroutines
)

// relu writes Where(Greater(x, 0), x, 0) into dst. Go's max(v, 0) is
// that but for a NaN, which it keeps and the chain makes 0 (a NaN is
// not greater than 0); max(-0, 0) is +0, as is the chain's. The if/else
// that spells out the chain took about 4 times as long on the chains'
// random normal data (16M elements, 95-113 ms against 19-35 on lavapipe's
// 2-vCPU machine): its branch follows the random signs and is
// mispredicted half the time, where max compiles to branchless MINSS
// and the NaN test's branch is never taken.
func relu(dst, x []float32) {
	for i, v := range x {
		if math.IsNaN(float64(v)) {
			v = 0
		}
		dst[i] = max(v, 0)
	}
}

// clamp writes the chain's clamp to [-1, 1] into dst: Where(Less(x, -1),
// -1, x), then Where(Greater(lo, 1), 1, lo). min(max(v, -1), 1) is the
// same bit for bit: a NaN passes through with its bits (Go's min and max
// return the NaN operand, as the chain's Where copies it), and -0 stays
// -0. It is branchless, as relu's max is.
func clamp(dst, x []float32) {
	for i, v := range x {
		dst[i] = min(max(v, -1), 1)
	}
}

// reluMax writes Maximum(x, 0) into dst. Go's max(v, 0) is that, +0
// for -0 included, but for a NaN's sign, which it clears (-NaN gives
// +NaN on amd64); the test keeps the NaN whole, and is never taken on
// the benchmark's data.
func reluMax(dst, x []float32) {
	for i, v := range x {
		if v != v {
			dst[i] = v
			continue
		}
		dst[i] = max(v, 0)
	}
}

// anyNaN is ReduceOr(IsNaN(x)) over all of x. It stops at the first
// NaN; the benchmark's data has none, so it reads every element, as the
// device does.
func anyNaN(x []float32) bool {
	for _, v := range x {
		if math.IsNaN(float64(v)) {
			return true
		}
	}
	return false
}

// allFinite is ReduceAnd(IsFinite(x)) over all of x, stopping at the
// first NaN or infinity.
func allFinite(x []float32) bool {
	for _, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return false
		}
	}
	return true
}

// maskedFill writes Where(mask, x, -inf) into dst, x of shape [b, heads,
// seq] and the mask [b, 1, seq]: each batch's mask row serves its heads.
// Go has no branchless select of a float by a bool: the if follows the
// random mask, as selectInto's follows the random cond.
func maskedFill(dst, x []float32, mask []bool, heads, seq int) {
	inf := float32(math.Inf(-1))
	for b := range len(mask) / seq {
		m := mask[b*seq : (b+1)*seq]
		for h := range heads {
			row := (b*heads + h) * seq
			src, out := x[row:row+seq], dst[row:row+seq]
			for s, keep := range m {
				if keep {
					out[s] = src[s]
				} else {
					out[s] = inf
				}
			}
		}
	}
}

// selectInto writes cond ? a : b into dst: the offload's select.
func selectInto(dst []float32, cond []bool, a, b []float32) {
	for i, c := range cond {
		if c {
			dst[i] = a[i]
		} else {
			dst[i] = b[i]
		}
	}
}

// inParts splits [0, n) into GOMAXPROCS parts of about equal length and
// calls f on each, part k on a goroutine of its own, and waits for them:
// how a Go program spreads a loop over its cores. Goroutines are started
// per call, as a function that does this would.
func inParts(n int, f func(k, lo, hi int)) {
	p := max(min(runtime.GOMAXPROCS(0), n), 1)
	var wg sync.WaitGroup
	for k := range p {
		lo, hi := k*n/p, (k+1)*n/p
		wg.Go(func() { f(k, lo, hi) })
	}
	wg.Wait()
}

// goChain runs a chain of chainPatterns as a Go loop over the slices of
// cs, on one goroutine or, parallel, on GOMAXPROCS: it writes an
// elementwise chain's result into out, and returns a check's.
func goChain(name string, cs *chainSlices, out []float32, parallel bool) (func() bool, error) {
	x := cs.x
	// Clamp(x, -1, 1) is the Where chain's clamp, bit for bit.
	each := map[string]func(dst, x []float32){"relu": relu, "clamp": clamp, "relu-max": reluMax, "clamp-op": clamp}[name]
	switch {
	case each != nil && !parallel:
		return func() bool { each(out, x); return false }, nil
	case each != nil:
		return func() bool {
			inParts(len(x), func(_, lo, hi int) { each(out[lo:hi], x[lo:hi]) })
			return false
		}, nil
	case name == "masked-fill":
		heads, seq := cs.xs[1], cs.xs[2]
		if !parallel {
			return func() bool { maskedFill(out, x, cs.mask, heads, seq); return false }, nil
		}
		// Whole batches a part: each reads its own rows of the mask.
		return func() bool {
			inParts(cs.xs[0], func(_, lo, hi int) {
				rows := heads * seq
				maskedFill(out[lo*rows:hi*rows], x[lo*rows:hi*rows], cs.mask[lo*seq:hi*seq], heads, seq)
			})
			return false
		}, nil
	case name == "nan-check" || name == "finite-all":
		check, all := anyNaN, false
		if name == "finite-all" {
			check, all = allFinite, true
		}
		if !parallel {
			return func() bool { return check(x) }, nil
		}
		return func() bool {
			got := make([]bool, runtime.GOMAXPROCS(0))
			for k := range got {
				got[k] = all // a part that is not run holds the fold's identity
			}
			inParts(len(x), func(k, lo, hi int) { got[k] = check(x[lo:hi]) })
			for _, g := range got {
				if g != all {
					return !all
				}
			}
			return all
		}, nil
	}
	return nil, fmt.Errorf("no Go loop for the chain %q", name)
}

// chainSlices are a chain's f32 operands as Go slices, written before
// any case is timed, each starting on a multiple of wrapAlign so that
// Wrap uses it in place.
type chainSlices struct {
	x      []float32
	mask   []bool // nil for a chain without a mask
	xs, ms tensor.Shape
	// reduces: the chain ends in a reduction over all of x, to one bool.
	reduces bool
}

// slices makes the pattern's operands on x of shape xs (and a mask of
// shape ms): the data of hostData, as the resident cases have it.
func (p chainPattern) slices(xs, ms tensor.Shape) (*chainSlices, error) {
	h, m, err := p.hostData(tensor.F32, xs, ms)
	if err != nil {
		return nil, err
	}
	// A chain that writes nothing per element, only reads x, ends in a
	// reduction over all of it.
	cs := &chainSlices{x: aligned[float32](xs.NumElements()), xs: xs, ms: ms, reduces: p.bytes(4) == 4}
	for i := range cs.x {
		cs.x[i] = math.Float32frombits(uint32(h.Data[4*i]) | uint32(h.Data[4*i+1])<<8 | uint32(h.Data[4*i+2])<<16 | uint32(h.Data[4*i+3])<<24)
	}
	if m != nil {
		cs.mask = aligned[bool](ms.NumElements())
		for i, b := range m.Data {
			cs.mask[i] = b != 0
		}
	}
	return cs, nil
}

// want is the chain's result on the device, the ops called one by one
// on uploads of the slices: what every case on them must return.
func (p chainPattern) want(d *device.Device, cs *chainSlices) ([]byte, error) {
	x, err := device.FromSlice(d, cs.x, cs.xs...)
	if err != nil {
		return nil, err
	}
	defer x.Free()
	var mask *device.Tensor
	if cs.mask != nil {
		if mask, err = device.FromSlice(d, cs.mask, cs.ms...); err != nil {
			return nil, err
		}
		defer mask.Free()
	}
	y, err := p.ops(x, mask, (*device.Tensor).Free)
	if err != nil {
		return nil, err
	}
	defer y.Free()
	h, err := bridge.Tensor(y).Download()
	if err != nil {
		return nil, err
	}
	return h.Data, nil
}

// resultBytes are a chain's result as the device stores it: out's
// float32s, or one byte for a check's bool.
func (cs *chainSlices) resultBytes(out []float32, check bool) []byte {
	if cs.reduces {
		if check {
			return []byte{1}
		}
		return []byte{0}
	}
	b := make([]byte, 4*len(out))
	for i, v := range out {
		u := math.Float32bits(v)
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
	}
	return b
}

// output is the slice an elementwise chain writes, written before
// timing so that no run pays for its first touch; nil for a check.
func (cs *chainSlices) output() []float32 {
	if cs.reduces {
		return nil
	}
	out := aligned[float32](len(cs.x))
	for i := range out {
		out[i] = -1
	}
	return out
}

// sliceCase is the fused chain from a Go slice to a Go slice, as a Go
// program runs it each time it has new data: Wrap of x (and the mask)
// and of the output slice, written before timing, Set on the planned
// Expr, EvalInto the wrapped output, its Wait, and Free; a check over
// all of x evaluates and reads its bool into a []bool of one
// (ToSliceInto). It is timed by the wall clock: the wait for the
// result's bytes in the slice is part of the job.
func (p chainPattern) sliceCase(xs, ms tensor.Shape) *Case {
	fused := true
	c := &Case{Op: "chain", Pattern: p.name, DType: tensor.F32, Shape: xs, Bytes: uint64(xs.NumElements() * p.bytes(4)),
		Fused: &fused, Slices: true, HostOnly: true}
	if ms != nil {
		c.Bytes += uint64(ms.NumElements())
	}
	c.Setup = func(d *device.Device) (func() error, func(), error) {
		cs, err := p.slices(xs, ms)
		if err != nil {
			return nil, nil, err
		}
		out, check := cs.output(), []bool{false}
		var e ops.Expr
		var xn, mn, root ops.Node
		run := func() error {
			x, err := device.Wrap(d, cs.x, xs...)
			if err != nil {
				return err
			}
			defer x.Free()
			var mask *device.Tensor
			if cs.mask != nil {
				if mask, err = device.Wrap(d, cs.mask, ms...); err != nil {
					return err
				}
				defer mask.Free()
			}
			if root == (ops.Node{}) {
				xn = e.Input(x)
				if mask != nil {
					mn = e.Input(mask)
				}
				root = p.expr(&e, xn, mn)
			} else {
				if err := e.Set(xn, x); err != nil {
					return err
				}
				if mask != nil {
					if err := e.Set(mn, mask); err != nil {
						return err
					}
				}
			}
			if cs.reduces {
				y, err := e.Eval(root)
				if err != nil {
					return err
				}
				defer y.Free()
				return device.ToSliceInto(y, check)
			}
			y, err := device.Wrap(d, out, xs...)
			if err != nil {
				return err
			}
			defer y.Free()
			if err := e.EvalInto(root, y); err != nil {
				return err
			}
			if !y.Wrapped() { // a device that cannot import got a copy
				return device.ToSliceInto(y, out)
			}
			return y.Wait()
		}
		c.verify = func() error { return p.verify(d, cs, cs.resultBytes(out, check[0])) }
		return run, func() { c.verify = nil }, nil
	}
	return c
}

// verify checks a result against want, bit for bit.
func (p chainPattern) verify(d *device.Device, cs *chainSlices, got []byte) error {
	want, err := p.want(d, cs)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		return fmt.Errorf("%s differs from the ops' result at byte %d of %d", p.name, i, len(want))
	}
	return nil
}

// GoPeers returns the Go programmer's own alternatives to the cases
// from Go slices on n elements, each as a plain loop over the slices
// (Peer "go") and as that loop split into GOMAXPROCS parts on goroutines
// (Peer "go-parallel"): every chain on f32 (beside Chain's Slices
// cases) and the offload's select (beside offload/whole). Their inputs
// and outputs are Go slices written before timing, the data the vkops
// cases have; after timing, each result is checked bit for bit against
// the device's ops on the same data. They are timed by the wall clock,
// and run on the host alone: the device only checks them. It panics
// unless CheckSize(n) is nil.
func GoPeers(n int) []*Case {
	mustSize(n)
	var cs []*Case
	for _, parallel := range []bool{false, true} {
		peer, version := PeerGo, runtime.Version()
		if parallel {
			peer, version = PeerGoParallel, fmt.Sprintf("%s GOMAXPROCS=%d", version, runtime.GOMAXPROCS(0))
		}
		for _, p := range chainPatterns {
			xs, ms := p.shapes(n)
			c := p.sliceCase(xs, ms)
			c.Fused, c.Peer, c.Version = nil, peer, version
			c.Setup = p.goSetup(c, xs, ms, parallel)
			cs = append(cs, c)
		}
		cs = append(cs, goOffload(n, peer, version, parallel))
	}
	return cs
}

// goSetup is the Setup of the pattern's Go loop case c.
func (p chainPattern) goSetup(c *Case, xs, ms tensor.Shape, parallel bool) func(d *device.Device) (func() error, func(), error) {
	return func(d *device.Device) (func() error, func(), error) {
		cs, err := p.slices(xs, ms)
		if err != nil {
			return nil, nil, err
		}
		out := cs.output()
		loop, err := goChain(p.name, cs, out, parallel)
		if err != nil {
			return nil, nil, err
		}
		var check bool
		c.verify = func() error { return p.verify(d, cs, cs.resultBytes(out, check)) }
		return func() error { check = loop(); return nil }, func() { c.verify = nil }, nil
	}
}

// goOffload is the offload's select as a Go loop from the offload's
// slices into a result slice written before timing (offload/whole's
// ToSlice allocates its result instead).
func goOffload(n int, peer, version string, parallel bool) *Case {
	c := &Case{Op: "offload", Pattern: "whole", DType: tensor.F32, Shape: tensor.Shape{n}, Bytes: uint64(13 * n), HostOnly: true,
		Peer: peer, Version: version}
	c.Setup = func(*device.Device) (func() error, func(), error) {
		o := newOffloadData(n)
		out := aligned[float32](n)
		for i := range out {
			out[i] = -1
		}
		run := func() error { selectInto(out, o.cond, o.then, o.els); return nil }
		if parallel {
			run = func() error {
				inParts(n, func(_, lo, hi int) { selectInto(out[lo:hi], o.cond[lo:hi], o.then[lo:hi], o.els[lo:hi]) })
				return nil
			}
		}
		c.verify = func() error { return o.check(out) }
		return run, func() { c.verify = nil }, nil
	}
	return c
}
