package bench

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/ops"
	"github.com/vkops/vkops/tensor"
)

// The sizes an op case may have, in elements: powers of two, so that
// every pattern's shape divides evenly, from the smallest that keeps a
// 1024-wide row up to 64M, the largest a sweep runs.
const (
	MinSize = 1 << 10
	MaxSize = 1 << 26
)

// DefaultSize is the element count of the default suite: large enough to
// be bandwidth-bound, small enough that the suite takes a few minutes on
// lavapipe with two cores.
const DefaultSize = 1 << 24

// DefaultDTypes are the element types of the default suite's select and
// where cases.
var DefaultDTypes = []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.I8, tensor.Bool}

// CheckSize reports whether n elements is a size the op cases can take:
// a power of two from MinSize to MaxSize.
func CheckSize(n int) error {
	if n < MinSize || n > MaxSize || n&(n-1) != 0 {
		return fmt.Errorf("size %d is not a power of two from %d to %d", n, MinSize, MaxSize)
	}
	return nil
}

// Suite returns the default suite at n elements: Select of each element
// type in dts, Reduce, Mask, Transfer of the bytes of n f32 elements and
// Offload. It panics unless CheckSize(n) is nil.
func Suite(n int, dts []tensor.DType) []*Case {
	var cs []*Case
	for _, dt := range dts {
		cs = append(cs, Select(n, dt)...)
	}
	cs = append(cs, Reduce(n)...)
	cs = append(cs, Mask(n)...)
	cs = append(cs, Transfer(4*n)...)
	cs = append(cs, Chain(n, dts)...)
	return append(cs, Offload(n)...)
}

// Mask returns the mask op cases on n elements (the names bench/peers.py
// uses):
//
//	greater/same       f32 a and b [n]
//	greater/bcast-row  f32 a [n/1024 1024], b [1 1024]
//	is-nan/same        f32 and f16 [n]
//	logical-and/same   bool a and b [n]
//
// Bytes count each input once and the bool output. It panics unless
// CheckSize(n) is nil.
func Mask(n int) []*Case {
	mustSize(n)
	flat, rows := tensor.Shape{n}, tensor.Shape{n / 1024, 1024}
	bin := func(op, pattern string, dt tensor.DType, as, bs tensor.Shape,
		dev func(a, b any, opts ...ops.SelectOption) (*device.Tensor, error),
		ref func(a, b *tensor.Host, mode string) (*tensor.Host, error)) *Case {
		return opSpec{
			op: op, pattern: pattern, dt: dt, shape: as,
			in:  []operand{{shape: as, dt: dt}, {shape: bs, dt: dt}},
			out: operand{shape: as, dt: tensor.Bool},
			dev: func(t []*device.Tensor) (*device.Tensor, error) { return dev(t[0], t[1]) },
			ref: func(h []*tensor.Host) (*tensor.Host, error) { return ref(h[0], h[1], "numpy") },
		}.build()
	}
	isNaN := func(dt tensor.DType) *Case {
		return opSpec{
			op: "is-nan", pattern: "same", dt: dt, shape: flat,
			in:  []operand{{shape: flat, dt: dt}},
			out: operand{shape: flat, dt: tensor.Bool},
			dev: func(t []*device.Tensor) (*device.Tensor, error) { return ops.IsNaN(t[0]) },
			ref: func(h []*tensor.Host) (*tensor.Host, error) { return cpuref.IsNaN(h[0]) },
		}.build()
	}
	return []*Case{
		bin("greater", "same", tensor.F32, flat, flat, ops.Greater, cpuref.Greater),
		bin("greater", "bcast-row", tensor.F32, rows, tensor.Shape{1, 1024}, ops.Greater, cpuref.Greater),
		isNaN(tensor.F32),
		isNaN(tensor.F16),
		bin("logical-and", "same", tensor.Bool, flat, flat, ops.LogicalAnd, cpuref.LogicalAnd),
	}
}

// Select returns the select and where cases on n elements of dt, by
// pattern (the names bench/peers.py uses):
//
//	same         select, cond, then and else all [n]
//	cond-col     select, cond [n/1024 1], then and else [n/1024 1024]
//	cond-row     select, cond [1 1024], then and else [n/1024 1024]
//	general-4d   select, cond [a 1 c 1], then [a b c d], else [1 b 1 d]
//	scalar-else  where, cond and input [n], other a scalar
//	scalars      where, cond [n], input and other both scalars
//
// Bytes count each operand once at its own shape plus the output. It
// panics unless CheckSize(n) is nil.
func Select(n int, dt tensor.DType) []*Case {
	mustSize(n)
	rows := n / 1024
	g := general4D(n)
	sel := func(pattern string, cs, ts, es tensor.Shape) *Case {
		return opSpec{
			op: "select", pattern: pattern, dt: dt, shape: ts,
			in:  []operand{{shape: cs, dt: tensor.Bool}, {shape: ts, dt: dt}, {shape: es, dt: dt}},
			out: operand{shape: ts, dt: dt},
			dev: func(t []*device.Tensor) (*device.Tensor, error) { return ops.Select(t[0], t[1], t[2]) },
			ref: func(h []*tensor.Host) (*tensor.Host, error) { return cpuref.Select(h[0], h[1], h[2], "numpy") },
		}.build()
	}
	flat := tensor.Shape{n}
	in, other := scalars(dt)
	return []*Case{
		sel("same", flat, flat, flat),
		sel("cond-col", tensor.Shape{rows, 1}, tensor.Shape{rows, 1024}, tensor.Shape{rows, 1024}),
		sel("cond-row", tensor.Shape{1, 1024}, tensor.Shape{rows, 1024}, tensor.Shape{rows, 1024}),
		sel("general-4d", tensor.Shape{g[0], 1, g[2], 1}, g, tensor.Shape{1, g[1], 1, g[3]}),
		opSpec{
			op: "where", pattern: "scalar-else", dt: dt, shape: flat,
			in:  []operand{{shape: flat, dt: tensor.Bool}, {shape: flat, dt: dt}},
			out: operand{shape: flat, dt: dt},
			dev: func(t []*device.Tensor) (*device.Tensor, error) {
				return ops.Where(t[0], t[1], ops.Scalar(other, dt))
			},
			ref: func(h []*tensor.Host) (*tensor.Host, error) {
				s, err := tensor.NewScalar(other, dt)
				if err != nil {
					return nil, err
				}
				return cpuref.Where(h[0], cpuref.Operand{T: h[1]}, cpuref.Operand{S: &s})
			},
		}.build(),
		opSpec{
			op: "where", pattern: "scalars", dt: dt, shape: flat,
			in:  []operand{{shape: flat, dt: tensor.Bool}},
			out: operand{shape: flat, dt: dt},
			dev: func(t []*device.Tensor) (*device.Tensor, error) {
				return ops.Where(t[0], ops.Scalar(in, dt), ops.Scalar(other, dt))
			},
			ref: func(h []*tensor.Host) (*tensor.Host, error) {
				a, err := tensor.NewScalar(in, dt)
				if err != nil {
					return nil, err
				}
				b, err := tensor.NewScalar(other, dt)
				if err != nil {
					return nil, err
				}
				return cpuref.Where(h[0], cpuref.Operand{S: &a}, cpuref.Operand{S: &b})
			},
		}.build(),
	}
}

// scalars returns the scalar operands of the where cases: values every
// element type holds exactly (no negatives, for the unsigned ones).
func scalars(dt tensor.DType) (in, other any) {
	if dt == tensor.Bool {
		return true, false
	}
	return 7, 3
}

// Reduce returns the ReduceLogicalOr ("reduce-or") and ReduceLogicalAnd
// ("reduce-and") cases at size n, by pattern:
//
//	axis1, axis0, all  a 2-D [r 4r] tensor of 4n bools (the bytes of n
//	                   f32 elements), over axis 1, axis 0 and both axes
//	axis1-3d           a 3-D tensor of n bools over its middle axis
//	axes02-3d          the same over axes 0 and 2
//	axes13-keep        a 4-D tensor of n bools over axes 1 and 3, keep_dims
//	axis1-sparse       axis1 on sparse data: the early-exit case
//
// At the default size these are [4096 16384], [256 256 256] and
// [64 64 64 64]. Every pattern but the -sparse ones runs on the worst
// case, where each byte must be read: all false for Or, all true for And.
// The -sparse data holds one element in 4096 of the other value, so that
// a kernel stopping at a row's first true (Or) or false (And) reads about
// a quarter of each row. It panics unless CheckSize(n) is nil.
func Reduce(n int) []*Case {
	mustSize(n)
	// rows * 4rows = 4n when n is a power of four; otherwise cols = 8rows.
	rows := 1 << (bits.TrailingZeros(uint(n)) / 2)
	flat := tensor.Shape{rows, 4 * n / rows}
	cube, q := split(n, 3), split(n, 4)
	var cs []*Case
	for _, op := range reduceOps {
		// The identity of the fold everywhere: nothing stops early.
		worst, sparse := op.worst(), fillSparseTrue
		if op.and {
			sparse = fillSparseFalse
		}
		cs = append(cs,
			op.reduceCase("axis1", flat, []int{1}, false, worst),
			op.reduceCase("axis0", flat, []int{0}, false, worst),
			op.reduceCase("all", flat, []int{0, 1}, false, worst),
			op.reduceCase("axis1-3d", cube, []int{1}, false, worst),
			op.reduceCase("axes02-3d", cube, []int{0, 2}, false, worst),
			op.reduceCase("axes13-keep", q, []int{1, 3}, true, worst),
			op.reduceCase("axis1-sparse", flat, []int{1}, false, sparse),
		)
	}
	return cs
}

// reduceOp is one of the reductions the cases run.
type reduceOp struct {
	name string
	and  bool
	dev  func(*device.Tensor, []int, ...ops.ReduceOption) (*device.Tensor, error)
	ref  func(*tensor.Host, []int, bool) (*tensor.Host, error)
}

var reduceOps = []reduceOp{
	{"reduce-or", false, ops.ReduceLogicalOr, cpuref.ReduceLogicalOr},
	{"reduce-and", true, ops.ReduceLogicalAnd, cpuref.ReduceLogicalAnd},
}

// worst is the data on which every byte must be read: the identity of
// the fold everywhere, so nothing stops early.
func (op reduceOp) worst() boolFill {
	if op.and {
		return fillTrue
	}
	return fillFalse
}

// reduceCase is the case of op over axes of a bool tensor of shape
// holding fill.
func (op reduceOp) reduceCase(pattern string, shape tensor.Shape, axes []int, keep bool, fill boolFill) *Case {
	return opSpec{
		op: op.name, pattern: pattern, dt: tensor.Bool, shape: shape,
		in:  []operand{{shape: shape, dt: tensor.Bool, fill: fill}},
		out: operand{shape: reducedShape(shape, axes, keep), dt: tensor.Bool},
		dev: func(t []*device.Tensor) (*device.Tensor, error) {
			return op.dev(t[0], axes, ops.KeepDims(keep))
		},
		ref: func(h []*tensor.Host) (*tensor.Host, error) { return op.ref(h[0], axes, keep) },
	}.build()
}

// reducedShape is the output shape of reducing shape over axes, which
// are in range and distinct.
func reducedShape(shape tensor.Shape, axes []int, keep bool) tensor.Shape {
	out := tensor.Shape{}
	for d, n := range shape {
		switch {
		case !slices.Contains(axes, d):
			out = append(out, n)
		case keep:
			out = append(out, 1)
		}
	}
	return out
}

func mustSize(n int) {
	if err := CheckSize(n); err != nil {
		panic("bench: " + err.Error())
	}
}

// general4D splits n = 2^e elements over [a b c d] by handing out factors
// of two in turn to d (up to 16), c (up to 64), a (up to 16) and b (no
// limit), so that every size keeps four real dimensions and the default
// size gives [16 1024 64 16], as bench/peers.py has it.
func general4D(n int) tensor.Shape {
	caps := [4]int{4, 6, 4, 64} // log2 limits of d, c, a, b
	var exp [4]int
	for e := bits.TrailingZeros(uint(n)); e > 0; {
		for i := range exp {
			if e > 0 && exp[i] < caps[i] {
				exp[i]++
				e--
			}
		}
	}
	return tensor.Shape{1 << exp[2], 1 << exp[3], 1 << exp[1], 1 << exp[0]}
}

// split spreads n = 2^e elements evenly over rank dimensions, the larger
// ones first.
func split(n, rank int) tensor.Shape {
	e := bits.TrailingZeros(uint(n))
	s := make(tensor.Shape, rank)
	for i := range s {
		s[i] = 1 << (e / rank)
		if i < e%rank {
			s[i] *= 2
		}
	}
	return s
}

// operand describes one tensor input or the output of an op case.
type operand struct {
	shape tensor.Shape
	dt    tensor.DType
	fill  boolFill // for bool data
}

// boolFill is the data of a bool operand.
type boolFill int

const (
	fillRandom      boolFill = iota // each element true or false at random
	fillFalse                       // every element false
	fillTrue                        // every element true
	fillSparseTrue                  // false but for one element in 4096, at random
	fillSparseFalse                 // true but for one element in 4096, at random
)

// String describes the data in the Data of a case and its results.
func (f boolFill) String() string {
	return [...]string{"", "all-false", "all-true", "sparse-true (early exit)", "sparse-false (early exit)"}[f]
}

func (o operand) bytes() uint64 { return uint64(o.shape.NumElements() * o.dt.Size()) }

// opSpec describes an op case: its operands, its output, the op on the
// device and its cpuref form, which gives the same result on the host.
type opSpec struct {
	op, pattern string
	dt          tensor.DType
	shape       tensor.Shape // of the largest operand: the case's Shape
	in          []operand
	out         operand
	dev         func([]*device.Tensor) (*device.Tensor, error)
	ref         func([]*tensor.Host) (*tensor.Host, error)
}

func (s opSpec) build() *Case {
	c := &Case{Op: s.op, Pattern: s.pattern, DType: s.dt, Shape: s.shape, Bytes: s.out.bytes()}
	for _, o := range s.in {
		c.Bytes += o.bytes()
		if o.fill != fillRandom {
			c.Data = o.fill.String()
		}
	}
	seed := fnv.New64a()
	seed.Write([]byte(c.Name()))
	inputs := func() []*tensor.Host {
		// One seed per case: the data is the same on every run and for
		// cpuref, and differs between operands.
		rng := rand.New(rand.NewPCG(seed.Sum64(), 0x766b6f7073))
		hs := make([]*tensor.Host, len(s.in))
		for i, o := range s.in {
			hs[i] = randomHost(rng, o)
		}
		return hs
	}
	c.Setup = func(d *device.Device) (func() error, func(), error) {
		ts, err := upload(d, inputs())
		if err != nil {
			return nil, nil, err
		}
		run := func() error {
			out, err := s.dev(ts)
			if err != nil {
				return err
			}
			// Free returns the memory once the work is done, so the next
			// run reuses it as a caller's loop would.
			out.Free()
			return nil
		}
		return run, func() { freeAll(ts) }, nil
	}
	c.check = func(d *device.Device) (got, want *tensor.Host, refMS float64, err error) {
		hs := inputs()
		ts, err := upload(d, hs)
		if err != nil {
			return nil, nil, 0, err
		}
		defer freeAll(ts)
		out, err := s.dev(ts)
		if err != nil {
			return nil, nil, 0, err
		}
		defer out.Free()
		if got, err = bridge.Tensor(out).Download(); err != nil {
			return nil, nil, 0, err
		}
		refMS, err = timeRef(func() error {
			want, err = s.ref(hs)
			return err
		})
		return got, want, refMS, err
	}
	return c
}

// randomHost returns a host tensor of random data: any bit pattern for
// numbers (select copies bits, NaNs included), 0 or 1 for bools.
func randomHost(rng *rand.Rand, o operand) *tensor.Host {
	h, err := tensor.New(o.dt, o.shape)
	if err != nil {
		panic("bench: " + err.Error()) // shapes here are always valid
	}
	switch {
	case o.dt == tensor.Bool && o.fill != fillRandom:
		common, rare := byte(0), byte(1)
		if o.fill == fillTrue || o.fill == fillSparseFalse {
			common, rare = 1, 0
		}
		sparse := o.fill == fillSparseTrue || o.fill == fillSparseFalse
		for i := range h.Data {
			h.Data[i] = common
			if sparse && rng.IntN(4096) == 0 {
				h.Data[i] = rare
			}
		}
	case o.dt == tensor.Bool:
		for i := range h.Data {
			h.Data[i] = byte(rng.Uint32() & 1)
		}
	default:
		b := h.Data
		for len(b) >= 8 {
			binary.LittleEndian.PutUint64(b, rng.Uint64())
			b = b[8:]
		}
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
	}
	return h
}

func upload(d *device.Device, hs []*tensor.Host) ([]*device.Tensor, error) {
	ts := make([]*device.Tensor, 0, len(hs))
	for _, h := range hs {
		t, err := bridge.Device(d).Upload(h)
		if err != nil {
			freeAll(ts)
			return nil, err
		}
		ts = append(ts, bridge.UserTensor(t))
	}
	return ts, nil
}

func freeAll(ts []*device.Tensor) {
	for _, t := range ts {
		t.Free()
	}
}
