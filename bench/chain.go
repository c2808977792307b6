package bench

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/ops"
	"github.com/vkops/vkops/tensor"
)

// A chainPattern is a chain of ops users write, as an ops.Expr and as
// the same ops called one by one.
type chainPattern struct {
	name   string
	masked bool // the chain takes a bool mask beside the data
	// bytes is what one pass moves per element of x: reads and writes.
	bytes func(w int) int
	expr  func(e *ops.Expr, x, mask ops.Node) ops.Node
	ops   func(x, mask *device.Tensor, free func(*device.Tensor)) (*device.Tensor, error)
}

// chainPatterns are issue 33's: a ReLU, a clamp to [-1, 1], a NaN check
// and a finite check over all of x, and an attention-style masked fill;
// and issue 39's ReLU and clamp as the one op each that they are,
// Maximum(x, 0) and Clamp(x, -1, 1), which keep a NaN where the Where
// forms make a ReLU's 0.
var chainPatterns = []chainPattern{
	{"relu", false, func(w int) int { return 2 * w },
		func(e *ops.Expr, x, _ ops.Node) ops.Node { return e.Where(e.Greater(x, 0), x, 0) },
		func(x, _ *device.Tensor, free func(*device.Tensor)) (*device.Tensor, error) {
			m, err := ops.Greater(x, 0)
			if err != nil {
				return nil, err
			}
			defer free(m)
			return ops.Where(m, x, 0)
		}},
	{"clamp", false, func(w int) int { return 2 * w },
		func(e *ops.Expr, x, _ ops.Node) ops.Node {
			lo := e.Where(e.Less(x, -1), -1, x)
			return e.Where(e.Greater(lo, 1), 1, lo)
		},
		func(x, _ *device.Tensor, free func(*device.Tensor)) (*device.Tensor, error) {
			m, err := ops.Less(x, -1)
			if err != nil {
				return nil, err
			}
			defer free(m)
			lo, err := ops.Where(m, -1, x)
			if err != nil {
				return nil, err
			}
			defer free(lo)
			m2, err := ops.Greater(lo, 1)
			if err != nil {
				return nil, err
			}
			defer free(m2)
			return ops.Where(m2, 1, lo)
		}},
	{"relu-max", false, func(w int) int { return 2 * w },
		func(e *ops.Expr, x, _ ops.Node) ops.Node { return e.Maximum(x, 0) },
		func(x, _ *device.Tensor, _ func(*device.Tensor)) (*device.Tensor, error) { return ops.Maximum(x, 0) }},
	{"clamp-op", false, func(w int) int { return 2 * w },
		func(e *ops.Expr, x, _ ops.Node) ops.Node { return e.Clamp(x, -1, 1) },
		func(x, _ *device.Tensor, _ func(*device.Tensor)) (*device.Tensor, error) { return ops.Clamp(x, -1, 1) }},
	{"nan-check", false, func(w int) int { return w },
		func(e *ops.Expr, x, _ ops.Node) ops.Node { return e.ReduceOr(e.IsNaN(x), ops.AllAxes) },
		func(x, _ *device.Tensor, free func(*device.Tensor)) (*device.Tensor, error) {
			m, err := ops.IsNaN(x)
			if err != nil {
				return nil, err
			}
			defer free(m)
			return ops.ReduceLogicalOr(m, everyAxis(m))
		}},
	{"finite-all", false, func(w int) int { return w },
		func(e *ops.Expr, x, _ ops.Node) ops.Node { return e.ReduceAnd(e.IsFinite(x), ops.AllAxes) },
		func(x, _ *device.Tensor, free func(*device.Tensor)) (*device.Tensor, error) {
			m, err := ops.IsFinite(x)
			if err != nil {
				return nil, err
			}
			defer free(m)
			return ops.ReduceLogicalAnd(m, everyAxis(m))
		}},
	{"masked-fill", true, func(w int) int { return 2 * w },
		func(e *ops.Expr, x, mask ops.Node) ops.Node { return e.Where(mask, x, math.Inf(-1)) },
		func(x, mask *device.Tensor, _ func(*device.Tensor)) (*device.Tensor, error) {
			return ops.Where(mask, x, math.Inf(-1))
		}},
}

// nanColumns is issue 38's per-column NaN check, ReduceOr(IsNaN(x))
// over the first axis: fused, one kernel reads x and folds into one bool
// a column; unfused, IsNaN writes the mask and the reduction reads it.
// Like clampNaNInf it is not among chainPatterns;
// BenchmarkChainColumnFold runs it.
var nanColumns = chainPattern{"nan-columns", false, func(w int) int { return w },
	func(e *ops.Expr, x, _ ops.Node) ops.Node { return e.ReduceOr(e.IsNaN(x), []int{0}) },
	func(x, _ *device.Tensor, free func(*device.Tensor)) (*device.Tensor, error) {
		m, err := ops.IsNaN(x)
		if err != nil {
			return nil, err
		}
		defer free(m)
		return ops.ReduceLogicalOr(m, []int{0})
	}}

// clampNaNInf is issue 39's chain of 8 ops and 3 scalars, beyond the
// fused kernel's limits of 4 ops and 2 scalars: a clamp to [-1, 1], then
// NaN and infinities to 0. Fused, it runs in two kernels with one tensor
// between them. It is not among chainPatterns, which the Go loops and
// the benchmark report follow; BenchmarkChainSegments runs it.
var clampNaNInf = chainPattern{"clamp-nan-inf", false, func(w int) int { return 2 * w },
	func(e *ops.Expr, x, _ ops.Node) ops.Node {
		y := e.Where(e.Greater(x, 1), 1, x)
		y = e.Where(e.Less(y, -1), -1, y)
		y = e.Where(e.IsNaN(y), 0, y)
		return e.Where(e.IsInf(y, true, true), 0, y)
	},
	func(x, _ *device.Tensor, free func(*device.Tensor)) (*device.Tensor, error) {
		steps := []struct {
			mask  func(*device.Tensor) (*device.Tensor, error)
			value float64
		}{
			{func(y *device.Tensor) (*device.Tensor, error) { return ops.Greater(y, 1) }, 1},
			{func(y *device.Tensor) (*device.Tensor, error) { return ops.Less(y, -1) }, -1},
			{ops.IsNaN, 0},
			{func(y *device.Tensor) (*device.Tensor, error) { return ops.IsInf(y, true, true) }, 0},
		}
		y := x
		for _, s := range steps {
			m, err := s.mask(y)
			if err != nil {
				return nil, err
			}
			next, err := ops.Where(m, s.value, y)
			free(m)
			if y != x {
				free(y)
			}
			if err != nil {
				return nil, err
			}
			y = next
		}
		return y, nil
	}}

// shapes returns the shapes of the data and the mask on n elements: rows
// of 4096, [n/4096, 4096]; a masked fill's are [b, 64, 4096] and [b, 1,
// 4096], attention's heads and sequence, for n of 16M as issue 33 has
// them. Smaller n make fewer rows.
func (p chainPattern) shapes(n int) (x, mask tensor.Shape) {
	s := min(n, 4096)
	if !p.masked {
		return tensor.Shape{n / s, s}, nil
	}
	h := min(64, n/s)
	return tensor.Shape{n / (h * s), h, s}, tensor.Shape{n / (h * s), 1, s}
}

// Chain returns the chain cases (op "chain", pattern the chain's name)
// on n elements of each type of dts that is f32 or f16: each chain fused (an
// ops.Expr, planned once and replayed) and unfused (the same ops called
// one by one), on random normal data written before timing, with no NaN
// and no infinity, so that the checks read every byte; and on f32, the
// fused chain from a Go slice to a Go slice (Slices: sliceCase), the job
// that GoPeers's loops do. After timing, each result is checked against
// the unfused one, bit for bit.
func Chain(n int, dts []tensor.DType) []*Case {
	var cs []*Case
	for _, dt := range dts {
		if dt != tensor.F32 && dt != tensor.F16 {
			continue
		}
		for _, p := range chainPatterns {
			for _, fused := range []bool{true, false} {
				cs = append(cs, p.chainCase(n, dt, fused))
			}
			// Go has no 16-bit float: a Go program's slices of
			// floats are float32, and the Go loops run on those.
			if dt == tensor.F32 {
				xs, ms := p.shapes(n)
				cs = append(cs, p.sliceCase(xs, ms))
			}
		}
	}
	return cs
}

// everyAxis returns the axes of t, 0 to its rank.
func everyAxis(t *device.Tensor) []int {
	axes := make([]int, bridge.Tensor(t).Dims().Rank())
	for i := range axes {
		axes[i] = i
	}
	return axes
}

func (p chainPattern) chainCase(n int, dt tensor.DType, fused bool) *Case {
	xs, ms := p.shapes(n)
	return p.caseOn(xs, ms, dt, fused)
}

// caseOn is the pattern's case on data of shape xs and a mask of shape
// ms.
func (p chainPattern) caseOn(xs, ms tensor.Shape, dt tensor.DType, fused bool) *Case {
	c := &Case{Op: "chain", Pattern: p.name, DType: dt, Shape: xs, Bytes: uint64(xs.NumElements() * p.bytes(dt.Size())), Fused: &fused}
	if ms != nil {
		c.Bytes += uint64(ms.NumElements())
	}
	c.Setup = func(d *device.Device) (func() error, func(), error) {
		x, mask, err := p.data(d, dt, xs, ms)
		if err != nil {
			return nil, nil, err
		}
		var e ops.Expr
		xn, mn := e.Input(x), ops.Node{}
		if mask != nil {
			mn = e.Input(mask)
		}
		root := p.expr(&e, xn, mn)
		var last *device.Tensor
		keep := func(y *device.Tensor, err error) error {
			last.Free()
			last = y
			return err
		}
		run := func() error { return keep(e.Eval(root)) }
		if !fused {
			run = func() error { return keep(p.ops(x, mask, (*device.Tensor).Free)) }
		}
		c.verify = func() error {
			want, err := p.ops(x, mask, (*device.Tensor).Free)
			if err != nil {
				return err
			}
			defer want.Free()
			return sameBytes(last, want)
		}
		cleanup := func() {
			last.Free()
			x.Free()
			mask.Free()
			c.verify = nil
		}
		return run, cleanup, nil
	}
	return c
}

// data uploads the pattern's operands of type dt (hostData).
func (p chainPattern) data(d *device.Device, dt tensor.DType, xs, ms tensor.Shape) (x, mask *device.Tensor, err error) {
	h, m, err := p.hostData(dt, xs, ms)
	if err != nil {
		return nil, nil, err
	}
	if x, err = bridge.Upload(d, h); err != nil || m == nil {
		return x, nil, err
	}
	if mask, err = bridge.Upload(d, m); err != nil {
		x.Free()
	}
	return x, mask, err
}

// hostData makes the pattern's operands of type dt on the host: x
// random normal, seeded, and the mask (nil where ms is) true at random
// half the time.
func (p chainPattern) hostData(dt tensor.DType, xs, ms tensor.Shape) (x, mask *tensor.Host, err error) {
	rng := rand.New(rand.NewPCG(33, uint64(dt)))
	h, err := tensor.New(dt, xs)
	if err != nil {
		return nil, nil, err
	}
	w := dt.Size()
	for i := range xs.NumElements() {
		s, err := tensor.NewScalar(rng.NormFloat64(), dt)
		if err != nil {
			return nil, nil, err
		}
		for k := range w {
			h.Data[i*w+k] = byte(s.Bits >> (8 * k))
		}
	}
	if ms == nil {
		return h, nil, nil
	}
	m, err := tensor.New(tensor.Bool, ms)
	if err != nil {
		return nil, nil, err
	}
	for i := range m.Data {
		m.Data[i] = byte(rng.IntN(2))
	}
	return h, m, nil
}

// sameBytes reports whether got holds want's shape and bytes.
func sameBytes(got, want *device.Tensor) error {
	g, err := bridge.Tensor(got).Download()
	if err != nil {
		return err
	}
	w, err := bridge.Tensor(want).Download()
	if err != nil {
		return err
	}
	if !g.Shape.Equal(w.Shape) || !bytes.Equal(g.Data, w.Data) {
		return fmt.Errorf("the fused chain's %v%v differs from the ops' %v%v", g.DType, g.Shape, w.DType, w.Shape)
	}
	return nil
}
