package ops

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/shaders/spec"
	"github.com/vkops/vkops/tensor"
)

// A builder makes a chain of ops: on an Expr (fused), op by op on the
// device (unfused) or in cpuref. Operands are its values or scalars.
type builder interface {
	mask(m *maskOp, a, b any) any
	unary(m *maskOp, a any, detect uint32) any
	where(c, a, b any) any
	reduce(red *reduceOp, x any) any // over every axis
	clamp(x, min, max any) any
}

// A chain is a function of its inputs written once for every builder.
type chain struct {
	name string
	make func(b builder, in []any) any
}

// The chains of issue 33 and more.
var chains = []chain{
	{"relu", func(b builder, in []any) any { return b.where(b.mask(greaterOp, in[0], 0), in[0], 0) }},
	{"clamp", func(b builder, in []any) any {
		lo := b.where(b.mask(lessOp, in[0], -1), -1, in[0])
		return b.where(b.mask(greaterOp, lo, 1), 1, lo)
	}},
	{"relu-max", func(b builder, in []any) any { return b.mask(maximumOp, in[0], 0) }},
	{"clamp-op", func(b builder, in []any) any { return b.clamp(in[0], -1, 1) }},
	{"max-min-where", func(b builder, in []any) any {
		return b.where(in[1], b.mask(maximumOp, in[0], -1), b.mask(minimumOp, 1, in[0]))
	}},
	{"nan-check", func(b builder, in []any) any { return b.reduce(reduceOrOp, b.unary(isNaNOp, in[0], 0)) }},
	{"finite-all", func(b builder, in []any) any { return b.reduce(reduceAndOp, b.unary(isFiniteOp, in[0], 0)) }},
	{"masked-fill", func(b builder, in []any) any { return b.where(in[1], in[0], math.Inf(-1)) }},
	{"mask-logic", func(b builder, in []any) any {
		return b.mask(logicalXorOp, b.mask(logicalOrOp, in[1], b.unary(isInfOp, in[0], 1)), b.mask(equalOp, in[0], in[0]))
	}},
}

// exprBuilder builds on an Expr.
type exprBuilder struct{ e *Expr }

func (b exprBuilder) mask(m *maskOp, x, y any) any { return b.e.binary(m, x, y, nil) }
func (b exprBuilder) unary(m *maskOp, x any, detect uint32) any {
	return b.e.unary(m, x.(Node), detect)
}
func (b exprBuilder) where(c, x, y any) any   { return b.e.Where(c, x, y) }
func (b exprBuilder) clamp(x, lo, hi any) any { return b.e.Clamp(x, lo, hi) }
func (b exprBuilder) reduce(red *reduceOp, x any) any {
	return b.e.reduce(red, x.(Node), AllAxes, nil)
}

// opsBuilder runs each op at once on the device; its values are freed
// when t ends.
type opsBuilder struct {
	t testing.TB
}

func (b opsBuilder) keep(y *device.Tensor, err error) any {
	b.t.Helper()
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(y.Free)
	return y
}
func (b opsBuilder) mask(m *maskOp, x, y any) any { return b.keep(m.binary(x, y, nil)) }
func (b opsBuilder) unary(m *maskOp, x any, detect uint32) any {
	return b.keep(m.unary(x.(*device.Tensor), detect))
}
func (b opsBuilder) where(c, x, y any) any { return b.keep(Where(c.(*device.Tensor), x, y)) }
func (b opsBuilder) clamp(x, lo, hi any) any {
	return b.keep(Clamp(x.(*device.Tensor), lo, hi))
}
func (b opsBuilder) reduce(red *reduceOp, x any) any {
	axes := make([]int, bridge.Tensor(x.(*device.Tensor)).Dims().Rank())
	for i := range axes {
		axes[i] = i
	}
	return b.keep(reduceLogical(red, x.(*device.Tensor), axes, nil))
}

// refBuilder computes in cpuref. A scalar takes the element type of the
// tensor beside it, as the ops' rules say.
type refBuilder struct{ t testing.TB }

func (b refBuilder) host(v any, dt tensor.DType) *tensor.Host {
	if h, ok := v.(*tensor.Host); ok {
		return h
	}
	s, err := tensor.NewScalar(v, dt)
	if err != nil {
		b.t.Fatal(err)
	}
	return &tensor.Host{DType: dt, Shape: tensor.Shape{}, Data: scalarBytes(s)}
}

func (b refBuilder) must(h *tensor.Host, err error) any {
	b.t.Helper()
	if err != nil {
		b.t.Fatal(err)
	}
	return h
}

func (b refBuilder) mask(m *maskOp, x, y any) any {
	dt := tensor.Invalid
	for _, v := range []any{x, y} {
		if h, ok := v.(*tensor.Host); ok {
			dt = h.DType
		}
	}
	f := map[*maskOp]func(a, b *tensor.Host, mode string) (*tensor.Host, error){
		equalOp: cpuref.Equal, notEqualOp: cpuref.NotEqual, lessOp: cpuref.Less, lessEqualOp: cpuref.LessEqual,
		greaterOp: cpuref.Greater, greaterEqualOp: cpuref.GreaterEqual,
		logicalAndOp: cpuref.LogicalAnd, logicalOrOp: cpuref.LogicalOr, logicalXorOp: cpuref.LogicalXor,
		maximumOp: cpuref.Maximum, minimumOp: cpuref.Minimum,
	}[m]
	return b.must(f(b.host(x, dt), b.host(y, dt), "numpy"))
}

func (b refBuilder) unary(m *maskOp, x any, detect uint32) any {
	h := x.(*tensor.Host)
	switch m {
	case isInfOp:
		return b.must(cpuref.IsInf(h, detect&1 != 0, detect&2 != 0))
	case isNaNOp:
		return b.must(cpuref.IsNaN(h))
	case isFiniteOp:
		return b.must(cpuref.IsFinite(h))
	}
	return b.must(cpuref.LogicalNot(h))
}

func (b refBuilder) where(c, x, y any) any {
	dt := tensor.F32
	for _, v := range []any{x, y} {
		if h, ok := v.(*tensor.Host); ok {
			dt = h.DType
		}
	}
	op := func(v any) cpuref.Operand {
		if h, ok := v.(*tensor.Host); ok {
			return cpuref.Operand{T: h}
		}
		s, err := tensor.NewScalar(v, dt)
		if err != nil {
			b.t.Fatal(err)
		}
		return cpuref.Operand{S: &s}
	}
	return b.must(cpuref.Where(c.(*tensor.Host), op(x), op(y)))
}

func (b refBuilder) clamp(x, lo, hi any) any {
	h := x.(*tensor.Host)
	s := func(v any) tensor.Scalar {
		if sc, ok := v.(tensor.Scalar); ok {
			return sc
		}
		sc, err := tensor.NewScalar(v, h.DType)
		if err != nil {
			b.t.Fatal(err)
		}
		return sc
	}
	return b.must(cpuref.Clamp(h, s(lo), s(hi)))
}

func (b refBuilder) reduce(red *reduceOp, x any) any {
	h := x.(*tensor.Host)
	axes := make([]int, len(h.Shape))
	for i := range axes {
		axes[i] = i
	}
	return b.must(red.ref(h, axes, false))
}

// specialHost returns a tensor of dt whose elements are random bits with
// the type's special values among them: NaNs of several payloads and
// signs, ±0, ±inf, subnormals, and for integers their extremes.
func specialHost(rng *rand.Rand, dt tensor.DType, shape tensor.Shape) *tensor.Host {
	h := randomHost(rng, dt, shape)
	specials := map[tensor.DType][]uint64{
		tensor.F16:  {0x7e00, 0xfe01, 0x7c01, 0x0000, 0x8000, 0x7c00, 0xfc00, 0x0001, 0x83ff, 0x3c00},
		tensor.BF16: {0x7fc0, 0xffc1, 0x7f81, 0x0000, 0x8000, 0x7f80, 0xff80, 0x0001, 0x807f, 0x3f80},
		tensor.F32:  {0x7fc00000, 0xffc00001, 0x7f800001, 0, 0x80000000, 0x7f800000, 0xff800000, 1, 0x807fffff, 0x3f800000},
		tensor.F64: {0x7ff8000000000000, 0xfff8000000000001, 0x7ff0000000000001, 0, 1 << 63, 0x7ff0000000000000,
			0xfff0000000000000, 1, 0x800fffffffffffff, 0x3ff0000000000000},
		tensor.I64: {1 << 63, 1<<63 - 1, 0, 1<<64 - 1, 1},
		tensor.U64: {1 << 63, 1<<63 - 1, 0, 1<<64 - 1, 1},
	}[dt]
	w := dt.Size()
	for i := 0; i < len(h.Data)/w && len(specials) > 0; i++ {
		if rng.IntN(3) == 0 {
			v := specials[rng.IntN(len(specials))]
			for k := range w {
				h.Data[i*w+k] = byte(v >> (8 * k))
			}
		}
	}
	return h
}

// runChain builds c three ways on inputs hosts (uploaded to d) and fails
// t unless the fused Expr (by Eval, and by EvalInto a tensor of
// garbage), the ops one by one and cpuref agree bit for bit. It returns
// the Expr's plan.
func runChain(t *testing.T, d *device.Device, c chain, hosts []*tensor.Host) *compiled {
	t.Helper()
	return runChainOf(t, d, c, hosts, true)
}

// runChainOf is runChain, which leaves out the ops one by one unless
// unfused.
func runChainOf(t *testing.T, d *device.Device, c chain, hosts []*tensor.Host, unfused bool) *compiled {
	t.Helper()
	var e Expr
	var in, dev, ref []any
	for _, h := range hosts {
		x := upload(t, d, h)
		in, dev, ref = append(in, e.Input(x)), append(dev, x), append(ref, h)
	}
	root := c.make(exprBuilder{&e}, in).(Node)
	got, err := e.Eval(root)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	defer got.Free()
	plan := e.compiled[len(e.compiled)-1]
	want := c.make(refBuilder{t}, ref).(*tensor.Host)
	into := garbage(t, d, got.DType(), got.Shape())
	if err := e.EvalInto(root, into); err != nil {
		t.Fatalf("%s: EvalInto: %v", c.name, err)
	}
	ys := []*device.Tensor{got, into}
	if unfused {
		ys = append(ys, c.make(opsBuilder{t}, dev).(*device.Tensor))
	}
	for k, y := range ys {
		h, err := bridge.Tensor(y).Download()
		if err != nil {
			t.Fatal(err)
		}
		if !h.Shape.Equal(want.Shape) || !bytes.Equal(h.Data, want.Data) {
			i := 0
			for i < len(h.Data) && i < len(want.Data) && h.Data[i] == want.Data[i] {
				i++
			}
			t.Fatalf("%s on %v%v, inputs %v (%s, %d steps, %s pages): got %v, differs from cpuref's %v at byte %d",
				c.name, hosts[0].DType, hosts[0].Shape, hosts[len(hosts)-1].Shape, [...]string{"the Expr", "EvalInto", "op by op"}[k], plan.kernels(), map[bool]string{true: "4 KiB", false: "large"}[bridge.Device(d).PageSize() == 4096], h.Shape, want.Shape, i)
		}
	}
	return plan
}

// garbage returns a dt tensor of shape on d whose bytes are 0xa5, freed
// when t ends.
func garbage(t *testing.T, d *device.Device, dt tensor.DType, shape tensor.Shape) *device.Tensor {
	t.Helper()
	h, err := tensor.New(dt, shape)
	if err != nil {
		t.Fatal(err)
	}
	for i := range h.Data {
		h.Data[i] = 0xa5
	}
	return upload(t, d, h)
}

// fusedWhole reports whether c runs as one fused kernel.
func (c *compiled) fusedWhole() bool { return len(c.steps) == 1 && c.steps[0].seg != nil }

// last returns the fused kernel of c's last step, an empty one where
// that runs as its op.
func (c *compiled) last() *segment {
	if s := c.steps[len(c.steps)-1].seg; s != nil {
		return s
	}
	return &segment{}
}

// TestExprChains runs each chain on f32 and f16 in three broadcast
// classes (the mask as the data's shape, a column, a row), fused against
// unfused against cpuref; each of more than one op must have run fused.
// The 36 cases take in turn the CPU and the GPU profile on the usual
// pages and on 4 KiB pages (pageProfiles), so that each profile runs
// every chain in every class and at both types, and each chain meets
// both page sizes: the matrix once, not once a page size and profile.
// -short runs f32 only.
func TestExprChains(t *testing.T) {
	t.Cleanup(func() { forcedProfile.Store(nil) })
	pps := pageProfiles(t)
	rng, n := rand.New(rand.NewPCG(60, 0)), [4]int{}
	dts := []tensor.DType{tensor.F32, tensor.F16}
	if testing.Short() {
		dts = dts[:1]
	}
	for di, dt := range dts {
		for mi, masks := range []tensor.Shape{{37, 130}, {37, 1}, {1, 130}} {
			for ci, c := range chains {
				k := (di + mi + ci) % len(pps)
				pp := pps[k]
				forcedProfile.Store(pp.p)
				hosts := []*tensor.Host{specialHost(rng, dt, tensor.Shape{37, 130}), randomHost(rng, tensor.Bool, masks)}
				// A masked fill, a ReLU by Maximum and a Clamp are one op
				// each, which runs as itself.
				single := c.name == "masked-fill" || c.name == "relu-max" || c.name == "clamp-op"
				if fused := runChain(t, pp.d, c, hosts).fusedWhole(); fused != !single {
					t.Errorf("%s %v, mask %v, profile %s: fused %v", c.name, dt, masks, pp.p.name, fused)
				}
				n[k]++
			}
		}
	}
	t.Logf("cases by page size and profile: %v", n)
}

// A pageProfile is a device, of the usual pages or of 4 KiB, and the
// profile its ops plan by.
type pageProfile struct {
	d *device.Device
	p *profile
}

// pageProfiles opens a device of the usual pages and one of 4 KiB pages
// and returns each with the CPU and the GPU profile, alternating the
// profiles: a case of turn i takes the i mod 4th, so that turns of
// either parity meet both page sizes. The CPU profile takes the ops'
// own chunks at any size, as the small tensors of the tests would not.
func pageProfiles(t *testing.T) []pageProfile {
	usual, small := devtest.Open(t, device.Options{}), devtest.Open(t, device.Options{PageSize: 4096})
	return []pageProfile{{usual, &cpuChunks}, {usual, &gpuProfile}, {small, &cpuChunks}, {small, &gpuProfile}}
}

// cpuChunks is the CPU profile with the ops' own chunks and their
// vector paths at any size.
var cpuChunks = func() profile {
	p := cpuProfile
	p.minChunks, p.elementsMax = 0, 0
	return p
}()

// instructionChains are chains that between them take every instruction
// of the fused kernel on one element type: the tests of values as a
// select's cond (their lanes), as bools (packed), and folded; select on
// a bool input's logical not; the classifiers; for bools, the logical ops and a select
// of bools. in[0] and in[1] are data of the type, in[2] a bool mask.
func instructionChains(dt tensor.DType) []chain {
	cs := []chain{
		{"where-less", func(b builder, in []any) any { return b.where(b.mask(lessOp, in[0], in[1]), in[0], in[1]) }},
		{"xor-eq-le", func(b builder, in []any) any {
			return b.mask(logicalXorOp, b.mask(equalOp, in[0], in[1]), b.mask(lessEqualOp, in[0], in[1]))
		}},
		{"and-ne-ge", func(b builder, in []any) any {
			return b.mask(logicalAndOp, b.mask(notEqualOp, in[1], in[0]), b.mask(greaterEqualOp, in[0], in[1]))
		}},
		{"where-not", func(b builder, in []any) any { return b.where(b.unary(logicalNotOp, in[2], 0), in[0], in[1]) }},
		{"any-greater", func(b builder, in []any) any { return b.reduce(reduceOrOp, b.mask(greaterOp, in[0], in[1])) }},
		{"all-or", func(b builder, in []any) any {
			return b.reduce(reduceAndOp, b.mask(logicalOrOp, in[2], b.mask(lessOp, in[0], in[1])))
		}},
		{"max-min", func(b builder, in []any) any {
			return b.mask(minimumOp, b.mask(maximumOp, in[0], in[1]), in[1])
		}},
		{"clamp-where", func(b builder, in []any) any {
			lo, hi := clampBounds(dt)
			return b.where(in[2], b.clamp(in[0], lo, hi), b.clamp(in[1], hi, lo))
		}},
	}
	if dt.IsFloat() {
		cs = append(cs,
			chain{"nan-or-inf", func(b builder, in []any) any {
				return b.mask(logicalOrOp, b.unary(isNaNOp, in[0], 0), b.unary(isInfOp, in[1], 2))
			}},
			chain{"where-finite", func(b builder, in []any) any {
				return b.where(b.unary(isFiniteOp, in[0], 0), in[0], b.where(b.unary(isInfOp, in[0], 1), in[1], 0))
			}},
		)
	}
	if dt == tensor.Bool {
		cs = append(cs, chain{"bool-logic", func(b builder, in []any) any {
			return b.where(b.mask(logicalAndOp, in[0], in[2]), b.mask(logicalXorOp, in[0], in[1]), b.unary(logicalNotOp, in[1], 0))
		}})
	}
	return cs
}

// clampBounds returns two bounds of dt for the Clamps of
// instructionChains: a NaN-free pair in each float type (its min below
// its max), 0 and 1 otherwise.
func clampBounds(dt tensor.DType) (lo, hi any) {
	if dt.IsFloat() {
		return -0.5, 2
	}
	if dt == tensor.Bool {
		return false, true
	}
	return 0, 1
}

// TestExprInstructions runs every instruction on every element type,
// special values among random bits, fused against cpuref; each chain
// must have run fused. The ops one by one are left out: the mask and
// select tests check each of them on every type against cpuref, and here
// they built 324 of the 411 pipelines (most of the test's time on
// lavapipe). -short runs every other chain of each type, alternating.
func TestExprInstructions(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	rng := rand.New(rand.NewPCG(61, 62))
	for di, dt := range tensor.DTypes {
		for ci, c := range instructionChains(dt) {
			if testing.Short() && (di+ci)%2 != 0 {
				continue
			}
			hosts := []*tensor.Host{specialHost(rng, dt, tensor.Shape{17, 33}), specialHost(rng, dt, tensor.Shape{1, 33}),
				randomHost(rng, tensor.Bool, tensor.Shape{17, 1})}
			if !runChainOf(t, d, c, hosts, false).fusedWhole() {
				t.Errorf("%s on %v: ran op by op", c.name, dt)
			}
		}
	}
}

// clampNaNInf is issue 39's chain of 8 ops and 3 scalars: a clamp to
// [-1, 1], then NaN and infinities to 0.
var clampNaNInf = chain{"clamp-nan-inf", func(b builder, in []any) any {
	x := b.where(b.mask(greaterOp, in[0], 1), 1, in[0])
	x = b.where(b.mask(lessOp, x, -1), -1, x)
	x = b.where(b.unary(isNaNOp, x, 0), 0, x)
	return b.where(b.unary(isInfOp, x, 3), 0, x)
}}

// TestExprLimits runs chains beyond the fused kernel's limits, which
// must run in segments, each within them, with the same result as the
// ops one by one: five inputs, three scalars, six ops, eight ops and
// three scalars (before a fold, too), two element types besides bool,
// and a reduction inside a chain. Each must take as many steps as its
// plan names and fuse as many of them.
func TestExprLimits(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	rng := rand.New(rand.NewPCG(63, 64))
	f32 := func(s ...int) *tensor.Host { return specialHost(rng, tensor.F32, tensor.Shape(s)) }
	for _, c := range []struct {
		chain
		hosts          []*tensor.Host
		kernels, fused int
	}{
		{chain{"five inputs", func(b builder, in []any) any {
			x := b.mask(logicalOrOp, b.mask(lessOp, in[0], in[1]), b.mask(lessOp, in[2], in[3]))
			return b.where(x, in[4], 0)
		}}, []*tensor.Host{f32(5, 7), f32(7), f32(5, 1), f32(5, 7), f32(5, 7)}, 2, 1},
		{chain{"three scalars", func(b builder, in []any) any {
			return b.where(b.mask(lessOp, in[0], 1), 2, b.where(b.mask(lessOp, in[0], 3), in[0], 1))
		}}, []*tensor.Host{f32(5, 7)}, 2, 2},
		{chain{"six ops", func(b builder, in []any) any {
			x := b.mask(logicalOrOp, b.mask(lessOp, in[0], in[1]), b.mask(greaterOp, in[0], in[1]))
			return b.where(b.mask(logicalXorOp, x, b.unary(isNaNOp, in[0], 0)), in[0], in[1])
		}}, []*tensor.Host{f32(5, 7), f32(5, 7)}, 2, 2},
		{clampNaNInf, []*tensor.Host{f32(37, 130)}, 2, 2},
		{chain{"clamp-nan-inf-any", func(b builder, in []any) any {
			return b.reduce(reduceOrOp, b.unary(isNaNOp, clampNaNInf.make(b, in), 0))
		}}, []*tensor.Host{f32(37, 130)}, 3, 3},
		{chain{"two types", func(b builder, in []any) any { return b.where(b.mask(lessOp, in[0], in[1]), in[2], in[2]) }},
			[]*tensor.Host{f32(5, 7), f32(5, 7), specialHost(rng, tensor.F16, tensor.Shape{5, 7})}, 2, 0},
		// Each Maximum walks 5 merged dimensions or fewer, the two fused
		// 10: a cut, where the rank limit once failed Eval.
		{chain{"ten dimensions", func(b builder, in []any) any {
			return b.mask(maximumOp, b.mask(maximumOp, in[0], in[1]), in[2])
		}}, []*tensor.Host{f32(2, 2, 1, 1, 2, 2, 1, 1, 2, 2), f32(2, 2, 2, 2, 2, 2, 2, 2, 2, 2), f32(2, 1, 1, 2, 2, 1, 1, 2, 2, 1)}, 2, 0},
		{chain{"reduction inside", func(b builder, in []any) any {
			return b.where(b.reduce(reduceOrOp, b.unary(isNaNOp, in[0], 0)), 0, in[0])
		}}, []*tensor.Host{f32(5, 7)}, 2, 1},
	} {
		plan := runChain(t, d, c.chain, c.hosts)
		fused := 0
		for _, s := range plan.steps {
			if s.seg != nil {
				fused++
			}
		}
		if plan.kernels() != c.kernels || fused != c.fused {
			t.Errorf("%s: %d steps, %d fused; want %d, %d", c.name, plan.kernels(), fused, c.kernels, c.fused)
		}
	}
}

// TestExprErrors checks that a node made from bad operands carries the
// error its op gives for them, that a node made from it carries it on,
// and that Eval returns it.
func TestExprErrors(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	rng := rand.New(rand.NewPCG(65, 66))
	x := upload(t, d, randomHost(rng, tensor.F32, tensor.Shape{3, 4}))
	b := upload(t, d, randomHost(rng, tensor.Bool, tensor.Shape{3, 4}))
	r := upload(t, d, randomHost(rng, tensor.F32, tensor.Shape{5}))
	// Broadcast along alternate axes, which merge into none: 9 dimensions.
	odd := upload(t, d, randomHost(rng, tensor.F32, tensor.Shape{2, 1, 2, 1, 2, 1, 2, 1, 2}))
	even := upload(t, d, randomHost(rng, tensor.F32, tensor.Shape{1, 2, 1, 2, 1, 2, 1, 2, 1}))
	oddB := upload(t, d, randomHost(rng, tensor.Bool, tensor.Shape{2, 1, 2, 1, 2, 1, 2, 1, 2}))
	var e Expr
	xn, bn, rn := e.Input(x), e.Input(b), e.Input(r)
	on, en := e.Input(odd), e.Input(even)
	for _, c := range []struct {
		node Node
		op   func() (*device.Tensor, error)
	}{
		{e.Greater(xn, "7"), func() (*device.Tensor, error) { return Greater(x, "7") }},
		{e.Less(xn, rn), func() (*device.Tensor, error) { return Less(x, r) }},
		{e.LogicalAnd(xn, bn), func() (*device.Tensor, error) { return LogicalAnd(x, b) }},
		{e.IsNaN(bn), func() (*device.Tensor, error) { return IsNaN(b) }},
		{e.Where(xn, xn, 0), func() (*device.Tensor, error) { return Where(x, x, 0) }},
		{e.Where(bn, xn, int8(1)<<6), func() (*device.Tensor, error) { return Where(b, x, int8(1)<<6) }},
		{e.Where(bn, 300, Scalar(1, tensor.I8)), func() (*device.Tensor, error) { return Where(b, 300, Scalar(1, tensor.I8)) }},
		{e.Select(bn, xn, rn), func() (*device.Tensor, error) { return Select(b, x, r) }},
		{e.Equal(xn, rn, WithBroadcast(BroadcastNone)), func() (*device.Tensor, error) { return Equal(x, r, WithBroadcast(BroadcastNone)) }},
		{e.ReduceOr(xn, AllAxes), func() (*device.Tensor, error) { return ReduceLogicalOr(x, []int{0, 1}) }},
		{e.Maximum(on, en), func() (*device.Tensor, error) { return Maximum(odd, even) }},
		{e.Clamp(e.Maximum(on, en), 0, 1), func() (*device.Tensor, error) { return Maximum(odd, even) }},
		{e.Where(oddB, on, en), func() (*device.Tensor, error) { return Where(oddB, odd, even) }},
		{e.Select(oddB, en, on), func() (*device.Tensor, error) { return Select(oddB, even, odd) }},
		{e.ReduceAnd(bn, []int{2}), func() (*device.Tensor, error) { return ReduceLogicalAnd(b, []int{2}) }},
	} {
		y, want := c.op()
		if y != nil {
			y.Free()
		}
		_, got := e.Eval(c.node)
		if err := c.node.Err(); want != nil && (err == nil || err.Error() != want.Error()) {
			t.Errorf("Err: %v; the op: %v", err, want)
		}
		if want == nil {
			if got != nil {
				t.Errorf("%v: the op runs, Eval says %v", c.node, got)
			}
			continue
		}
		if got == nil || got.Error() != want.Error() || !errors.Is(got, ErrInvalid) {
			t.Errorf("Eval: %v; the op: %v", got, want)
		}
		if _, on := e.Eval(e.LogicalNot(e.IsNaN(e.Where(c.node, xn, xn)))); on == nil || on.Error() != want.Error() {
			t.Errorf("a node made from it: %v; want %v", on, want)
		}
	}
	var other Expr
	if _, err := e.Eval(e.IsNaN(other.Input(x))); err == nil {
		t.Error("a node of another expression: no error")
	}
	if _, err := e.Eval(xn); err == nil {
		t.Error("Eval of an input: no error")
	}
	// A nil *Expr makes zero Nodes, which carry an error, and evaluates
	// none: no method of it panics.
	var none *Expr
	for _, n := range []Node{none.Input(x), none.Greater(x, 0), none.IsNaN(xn), none.Where(b, x, 0), none.Select(b, x, x),
		none.ReduceOr(none.Input(b), AllAxes)} {
		if err := n.Err(); err == nil || !errors.Is(err, ErrInvalid) {
			t.Errorf("a node of a nil Expr: %v", err)
		}
	}
	if _, err := none.Eval(Node{}); err == nil || !errors.Is(err, ErrInvalid) {
		t.Errorf("Eval of a nil Expr: %v", err)
	}
}

// TestExprOutputTooLarge (issue 37, item 3) broadcasts inputs, each
// along its own axis, into results whose element count overflows an int
// or whose bytes cannot be addressed. The node of that result must carry
// the error its op gives when called on its own, and so must every node
// made from it; Eval of any of them must return it, not panic. Where the
// ops one by one are cheap (zero-size inputs, or small intermediates)
// they run, and the last of them must say the same words.
func TestExprOutputTooLarge(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	rng := rand.New(rand.NewPCG(71, 72))
	const n = 65536
	whereGreater := func(e *Expr, in []Node) Node { return e.Where(e.Greater(in[0], in[1]), in[2], in[3]) }
	andGreater := func(e *Expr, in []Node) Node {
		return e.LogicalAnd(e.Greater(in[0], in[1]), e.Greater(in[2], in[3]))
	}
	whereLess := func(e *Expr, in []Node) Node {
		return e.Where(e.Greater(in[0], in[1]), e.Less(in[2], 0), e.Less(in[3], 0))
	}
	opsWhereGreater := func(o *oneByOne, in []*device.Tensor) {
		o.do(Where(o.do(Greater(in[0], in[1])), in[2], in[3]))
	}
	opsAndGreater := func(o *oneByOne, in []*device.Tensor) {
		o.do(LogicalAnd(o.do(Greater(in[0], in[1])), o.do(Greater(in[2], in[3]))))
	}
	opsWhereLess := func(o *oneByOne, in []*device.Tensor) {
		o.do(Where(o.do(Greater(in[0], in[1])), o.do(Less(in[2], 0)), o.do(Less(in[3], 0))))
	}
	for _, c := range []struct {
		name string
		dt   tensor.DType
		dims []tensor.Shape
		node func(e *Expr, in []Node) Node
		// ops runs the chain op by op; nil where an intermediate would
		// take gigabytes.
		ops  func(o *oneByOne, in []*device.Tensor)
		want string // the error; "" for the ops' one
	}{
		{"where-greater", tensor.F32, alongAxes(n, n, n, n), whereGreater, nil,
			"where: output: shape [65536 65536 65536 65536]: element count overflows"},
		{"where-greater/zero-size", tensor.F32, zeroSize(alongAxes(n, n, n, n)), whereGreater, opsWhereGreater, ""},
		{"logical-and-greater", tensor.F32, alongAxes(n, n, n, n), andGreater, nil,
			"logical-and: output: shape [65536 65536 65536 65536]: element count overflows"},
		{"logical-and-greater/zero-size", tensor.F32, zeroSize(alongAxes(n, n, n, n)), andGreater, opsAndGreater, ""},
		{"reduce_or-root", tensor.F32, alongAxes(n, n, n, n),
			func(e *Expr, in []Node) Node { return e.ReduceOr(andGreater(e, in), AllAxes) }, nil,
			"logical-and: output: shape [65536 65536 65536 65536]: element count overflows"},
		{"reduce_or-root/zero-size", tensor.F32, zeroSize(alongAxes(n, n, n, n)),
			func(e *Expr, in []Node) Node { return e.ReduceOr(andGreater(e, in), AllAxes) },
			func(o *oneByOne, in []*device.Tensor) {
				opsAndGreater(o, in)
				o.do(ReduceLogicalOr(o.last(), nil))
			}, ""},
		{"reduce_and-root", tensor.F32, alongAxes(n, n, n, n),
			func(e *Expr, in []Node) Node { return e.ReduceAnd(whereLess(e, in), AllAxes) }, nil,
			"where: output: shape [65536 65536 65536 65536]: element count overflows"},
		{"reduce_and-root/zero-size", tensor.F32, zeroSize(alongAxes(n, n, n, n)),
			func(e *Expr, in []Node) Node { return e.ReduceAnd(whereLess(e, in), []int{1, 3}) },
			func(o *oneByOne, in []*device.Tensor) {
				opsWhereLess(o, in)
				o.do(ReduceLogicalAnd(o.last(), []int{1, 3}))
			}, ""},
		{"select/zero-size", tensor.F32, []tensor.Shape{{0, 1, 1}, {0, 1 << 32, 1}, {0, 1, 1 << 32}},
			func(e *Expr, in []Node) Node { return e.Select(e.Greater(in[0], 0), in[1], in[2]) },
			func(o *oneByOne, in []*device.Tensor) { o.do(Select(o.do(Greater(in[0], 0)), in[1], in[2])) },
			"select: output: shape [0 4294967296 4294967296]: element count overflows"},
		{"where-greater/too-many", tensor.F64, alongAxes(1<<8, 1<<8, 1<<15, 1<<15), whereGreater, opsWhereGreater,
			"where: output: shape [256 256 32768 32768] of f64: 70368744177664 elements are too many to address"},
		{"logical-and-greater/too-many", tensor.F32, alongAxes(1<<13, 1<<12, 1<<12, 1<<12), andGreater, opsAndGreater,
			"logical-and: output: shape [8192 4096 4096 4096] of bool: 562949953421312 elements are too many to address"},
		{"reduce_logical_or/too-many", tensor.Bool, []tensor.Shape{{0, 1 << 40, 1 << 20}},
			func(e *Expr, in []Node) Node { return e.ReduceOr(in[0], []int{0}, KeepDims(true)) },
			func(o *oneByOne, in []*device.Tensor) { o.do(ReduceLogicalOr(in[0], []int{0}, KeepDims(true))) },
			"reduce_logical_or: output: shape [1 1099511627776 1048576] of bool: 1152921504606846976 elements are too many to address"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var e Expr
			ts := make([]*device.Tensor, len(c.dims))
			in := make([]Node, len(c.dims))
			for i, s := range c.dims {
				ts[i] = upload(t, d, randomHost(rng, c.dt, s))
				in[i] = e.Input(ts[i])
			}
			want := c.want
			if c.ops != nil {
				var o oneByOne
				c.ops(&o, ts)
				o.free()
				if o.err == nil || (want != "" && o.err.Error() != want) || !errors.Is(o.err, ErrInvalid) {
					t.Fatalf("the ops one by one: %v; want %q, matching ErrInvalid", o.err, want)
				}
				want = o.err.Error()
			}
			root := c.node(&e, in)
			for _, n := range []Node{root, e.ReduceOr(e.IsNaN(root), AllAxes), e.LogicalNot(root)} {
				_, got := e.Eval(n)
				for _, err := range []error{n.Err(), got} {
					if err == nil || err.Error() != want || !errors.Is(err, ErrInvalid) {
						t.Errorf("%v: %v; want %q, matching ErrInvalid", n, err, want)
					}
				}
			}
		})
	}
}

// alongAxes returns a shape for each size, of rank len(sizes): the ith
// is sizes[i] along axis i and 1 along the others, so that they broadcast
// to their outer product.
func alongAxes(sizes ...int) []tensor.Shape {
	shapes := make([]tensor.Shape, len(sizes))
	for i, n := range sizes {
		shapes[i] = make(tensor.Shape, len(sizes))
		for k := range shapes[i] {
			shapes[i][k] = 1
		}
		shapes[i][i] = n
	}
	return shapes
}

// zeroSize returns shapes, each with a new outer axis of size zero: their
// broadcast has the same sizes after it, and no elements.
func zeroSize(shapes []tensor.Shape) []tensor.Shape {
	out := make([]tensor.Shape, len(shapes))
	for i, s := range shapes {
		out[i] = append(tensor.Shape{0}, s...)
	}
	return out
}

// oneByOne runs ops on the device one at a time, as a caller without an
// Expr does: it keeps the first error and every result, to free.
type oneByOne struct {
	err  error
	kept []*device.Tensor
}

// do keeps y, an op's result, or its error, and returns y.
func (o *oneByOne) do(y *device.Tensor, err error) *device.Tensor {
	if o.err == nil {
		o.err = err
	}
	if y != nil {
		o.kept = append(o.kept, y)
	}
	return y
}

// last returns the latest result kept, or nil after an error.
func (o *oneByOne) last() *device.Tensor {
	if o.err != nil || len(o.kept) == 0 {
		return nil
	}
	return o.kept[len(o.kept)-1]
}

// free frees the results kept.
func (o *oneByOne) free() {
	for _, y := range o.kept {
		y.Free()
	}
	o.kept = nil
}

// TestExprReplay evaluates a planned root again after Set gives it other
// inputs, against the ops one by one, and checks Set's rules.
func TestExprReplay(t *testing.T) {
	d := devtest.Open(t, device.Options{PageSize: 4096})
	rng := rand.New(rand.NewPCG(67, 68))
	shape := tensor.Shape{33, 129}
	var e Expr
	xn := e.Input(upload(t, d, specialHost(rng, tensor.F32, shape)))
	root := chains[1].make(exprBuilder{&e}, []any{xn})
	nan := e.ReduceOr(e.IsNaN(xn), AllAxes)
	for i := range 3 {
		h := specialHost(rng, tensor.F32, shape)
		if i == 2 {
			for k := range h.Data {
				h.Data[k] = 0 // no NaN
			}
		}
		x := upload(t, d, h)
		if err := e.Set(xn, x); err != nil {
			t.Fatal(err)
		}
		for _, n := range []Node{root.(Node), nan} {
			got, err := e.Eval(n)
			if err != nil {
				t.Fatal(err)
			}
			var want *device.Tensor
			if n == nan {
				want = opsBuilder{t}.reduce(reduceOrOp, opsBuilder{t}.unary(isNaNOp, x, 0)).(*device.Tensor)
			} else {
				want = chains[1].make(opsBuilder{t}, []any{x}).(*device.Tensor)
			}
			g, _ := bridge.Tensor(got).Download()
			w, _ := bridge.Tensor(want).Download()
			got.Free()
			if !bytes.Equal(g.Data, w.Data) {
				t.Errorf("replay %d: differs from the ops", i)
			}
		}
	}
	for _, bad := range []*device.Tensor{
		upload(t, d, randomHost(rng, tensor.F32, tensor.Shape{33, 128})),
		upload(t, d, randomHost(rng, tensor.F16, shape)),
	} {
		if err := e.Set(xn, bad); err == nil {
			t.Errorf("Set with %v: no error", bad)
		}
	}
	if err := e.Set(nan, upload(t, d, randomHost(rng, tensor.F32, shape))); err == nil {
		t.Error("Set of an op's node: no error")
	}
}

// TestExprEmpty evaluates chains over no elements: an empty result, and
// a fold's identity.
func TestExprEmpty(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	rng := rand.New(rand.NewPCG(69, 70))
	for _, c := range chains {
		runChain(t, d, c, []*tensor.Host{randomHost(rng, tensor.F32, tensor.Shape{0, 5}), randomHost(rng, tensor.Bool, tensor.Shape{0, 5})})
	}
}

// FuzzExpr builds random chains of up to five ops over two inputs and
// scalars, each step on an Expr and with the ops one by one: where a
// step's operands break its op's rules, both must say so in the same
// words; else the Expr's result, fused or not, must be the ops' bit for
// bit, in no more kernels than the chain's ops and scalars need
// (fewestKernels).
func FuzzExpr(f *testing.F) {
	f.Add(uint8(0), uint8(1), []byte{0, 0, 1, 12, 0, 2, 3})
	f.Add(uint8(1), uint8(0), []byte{10, 0, 0, 13, 2, 0, 1, 7, 1, 0})
	f.Add(uint8(2), uint8(2), []byte{3, 1, 6, 9, 0, 0, 12, 2, 5, 6})
	f.Add(uint8(3), uint8(1), []byte{5, 0, 1, 6, 2, 1, 12, 3, 0, 6, 11, 4, 0})
	d := devtest.Open(f, device.Options{})
	f.Fuzz(func(t *testing.T, dtSel, shapeSel uint8, prog []byte) {
		dt := []tensor.DType{tensor.F32, tensor.F16, tensor.I8, tensor.Bool}[dtSel%4]
		shapes := [][2]tensor.Shape{{{7, 9}, {7, 9}}, {{7, 9}, {1, 9}}, {{7, 1}, {9}}}[shapeSel%3]
		rng := rand.New(rand.NewPCG(uint64(dtSel), uint64(shapeSel)))
		var e Expr
		ex, ov := []any{}, []any{}
		for _, s := range shapes {
			x := upload(t, d, specialHost(rng, dt, s))
			ex, ov = append(ex, e.Input(x)), append(ov, x)
		}
		b := fzBytes(prog)
		pick := func() (any, any) {
			k := b.next() % (len(ex) + 2)
			if k >= len(ex) {
				return k - len(ex), k - len(ex) // the scalars 0 and 1
			}
			return ex[k], ov[k]
		}
		for step := 0; step < 5 && len(b) > 0; step++ {
			code := b.next() % 17
			var en any
			var ot *device.Tensor
			var oerr error
			switch {
			case code < 9:
				m := []*maskOp{equalOp, notEqualOp, lessOp, lessEqualOp, greaterOp, greaterEqualOp, logicalAndOp, logicalOrOp, logicalXorOp}[code]
				ea, oa := pick()
				eb, obb := pick()
				en = e.binary(m, ea, eb, nil)
				ot, oerr = m.binary(oa, obb, nil)
			case code < 13:
				m := []*maskOp{logicalNotOp, isNaNOp, isInfOp, isFiniteOp}[code-9]
				k := b.next() % len(ex)
				en = e.unary(m, ex[k].(Node), 3)
				ot, oerr = m.unary(ov[k].(*device.Tensor), 3)
			case code < 15:
				m := []*maskOp{maximumOp, minimumOp}[code-13]
				ea, oa := pick()
				eb, obb := pick()
				en = e.binary(m, ea, eb, nil)
				ot, oerr = m.binary(oa, obb, nil)
			case code == 15:
				k, lo := b.next()%len(ex), b.next()%2 // the bounds 0 and 1, either way round
				en = e.Clamp(ex[k], lo, 1-lo)
				ot, oerr = Clamp(ov[k].(*device.Tensor), lo, 1-lo)
			default:
				k := b.next() % len(ex)
				ec, oc := ex[k], ov[k]
				ea, oa := pick()
				eb, obb := pick()
				en = e.Where(ec, ea, eb)
				ot, oerr = Where(oc.(*device.Tensor), oa, obb)
			}
			eerr := en.(Node).Err()
			if (eerr == nil) != (oerr == nil) || eerr != nil && eerr.Error() != oerr.Error() {
				t.Fatalf("step %d: the Expr says %v, the op %v", step, eerr, oerr)
			}
			if oerr != nil {
				return
			}
			t.Cleanup(ot.Free)
			ex, ov = append(ex, en), append(ov, ot)
		}
		if len(ex) == len(shapes) {
			return
		}
		root := ex[len(ex)-1].(Node)
		got, err := e.Eval(root)
		if err != nil {
			t.Fatal(err)
		}
		defer got.Free()
		if k, most := e.compiled[0].kernels(), fewestKernels(&e, root.i); hasVote(d) && k > most {
			t.Fatalf("%d steps, want at most %d:\n%s", k, most, e.compiled[0].explain(&e))
		}
		into := garbage(t, d, got.DType(), got.Shape())
		if err := e.EvalInto(root, into); err != nil {
			t.Fatal(err)
		}
		w, _ := bridge.Tensor(ov[len(ov)-1].(*device.Tensor)).Download()
		for k, y := range []*device.Tensor{got, into} {
			g, _ := bridge.Tensor(y).Download()
			if !g.Shape.Equal(w.Shape) || !bytes.Equal(g.Data, w.Data) {
				t.Fatalf("the Expr's %v (%s) differs from the ops' %v", g.Shape, [...]string{"Eval", "EvalInto"}[k], w.Shape)
			}
		}
	})
}

// fewestKernels returns the fewest kernels that root's chain of ops can
// take: its ops, fuseMaxOps to a kernel; its distinct scalars,
// fuseMaxScalars to a kernel; its element types besides bool, one to a
// kernel; one at least.
func fewestKernels(e *Expr, root int32) int {
	ops := e.order(root, nil)
	var scalars []exprArg
	var types []tensor.DType
	for _, i := range ops {
		n := &e.nodes[i-1]
		dts := []tensor.DType{n.dt}
		for _, a := range n.args[:n.nargs] {
			dt := a.dt
			if a.node != 0 {
				dt = e.nodes[a.node-1].dt
			} else if !slices.Contains(scalars, a) {
				scalars = append(scalars, a)
			}
			dts = append(dts, dt)
		}
		for _, dt := range dts {
			if dt != tensor.Bool && !slices.Contains(types, dt) {
				types = append(types, dt)
			}
		}
	}
	return max((len(ops)+fuseMaxOps-1)/fuseMaxOps, (len(scalars)+fuseMaxScalars-1)/fuseMaxScalars, len(types), 1)
}

// TestExprRowFolds runs reductions of a chain's result that fold in the
// fused kernel: by rows where each row is whole chunks (rows of 16, 64,
// 128, 192 and 3 × 64 elements, over the last axis or two, kept or
// not), by rows into outputs that repeat (the channels of [N C H W]
// over N, H and W), and down columns that are whole chunks (over the
// first axis or two); and reductions that reduce the fused chain's mask
// after it (rows of 130, columns of 40, kept axes on both sides of a
// reduced one); against the ops one by one, with NaNs and infinities in
// a row now and then. The cases take in turn the CPU and the GPU
// profile on usual and 4 KiB pages (pageProfiles): each profile meets
// every shape at both types, and every shape both page sizes.
func TestExprRowFolds(t *testing.T) {
	t.Cleanup(func() { forcedProfile.Store(nil) })
	pps := pageProfiles(t)
	rng, n := rand.New(rand.NewPCG(71, 0)), [4]int{}
	for ci, c := range []struct {
		shape tensor.Shape
		axes  []int
		keep  bool
		folds bool
	}{
		{tensor.Shape{37, 128}, []int{1}, false, true},
		{tensor.Shape{300, 16}, []int{-1}, true, true},
		{tensor.Shape{5, 3, 64}, []int{1, 2}, false, true},
		{tensor.Shape{7, 1, 192}, []int{2}, true, true},
		{tensor.Shape{2, 3, 4, 64}, []int{2, 3}, false, true},
		{tensor.Shape{37, 130}, []int{1}, false, false},
		{tensor.Shape{8, 64}, []int{0}, false, true},
		{tensor.Shape{300, 48}, []int{-2}, true, true},
		{tensor.Shape{3, 5, 32}, []int{0, 1}, false, true},
		{tensor.Shape{4, 6, 2, 32}, []int{0, 2, 3}, true, true},
		{tensor.Shape{9, 40}, []int{0}, false, false},
		{tensor.Shape{3, 4, 32}, []int{1}, false, false},
	} {
		for di, dt := range []tensor.DType{tensor.F32, tensor.F16} {
			h := specialHost(rng, dt, c.shape)
			for ai, and := range []bool{false, true} {
				k := (ci + di + ai) % len(pps)
				pp := pps[k]
				forcedProfile.Store(pp.p)
				e, g, w := foldAgainstOps(t, upload(t, pp.d, h), and, c.axes, c.axes, c.keep)
				name := fmt.Sprintf("%s profile, page %d, %v%v over %v (and %v)", pp.p.name, bridge.Device(pp.d).PageSize(), dt, c.shape, c.axes, and)
				if !g.Shape.Equal(w.Shape) || !bytes.Equal(g.Data, w.Data) {
					t.Fatalf("%s: got %v %v, want %v %v", name, g.Shape, g.Data, w.Shape, w.Data)
				}
				if folds := e.compiled[0].last().fold != spec.FoldNone; folds != c.folds {
					t.Errorf("%s: folded in the kernel %v, want %v", name, folds, c.folds)
				}
				n[k]++
			}
		}
	}
	t.Logf("cases by page size and profile: %v", n)
}

// TestExprLongFolds runs folds long enough for the CPU profile's long
// blocks (profile.foldChunks): over all of a tensor whose elements end
// in a partial block, and over rows that hold the blocks whole or that
// the blocks straddle,
// each with one NaN or infinity planted at a block's edge, in the last
// partial block or nowhere, against the ops one by one, under both
// profiles.
func TestExprLongFolds(t *testing.T) {
	t.Cleanup(func() { forcedProfile.Store(nil) })
	d := devtest.Open(t, device.Options{})
	long := 16 * cpuProfile.foldChunks
	for _, p := range []*profile{&cpuProfile, &gpuProfile} {
		forcedProfile.Store(p)
		for _, c := range []struct {
			shape tensor.Shape
			axes  []int
		}{
			{tensor.Shape{3*long + 37}, AllAxes},
			{tensor.Shape{2, long}, AllAxes},
			{tensor.Shape{3, long}, []int{1}},
			{tensor.Shape{3, long + 16}, []int{1}}, // blocks straddle rows
		} {
			n := c.shape.NumElements()
			opAxes := c.axes
			for _, at := range []int{-1, 0, long - 1, long, n - 1} {
				for _, and := range []bool{false, true} {
					h := finiteHost(tensor.F32, c.shape)
					if at >= 0 {
						bits := uint32(0x7fc00000) // a NaN: IsNaN's true, IsFinite's false
						if and {
							bits = 0xff800000 // -inf
						}
						binary.LittleEndian.PutUint32(h.Data[4*at:], bits)
					}
					e, g, w := foldAgainstOps(t, upload(t, d, h), and, c.axes, opAxes, false)
					name := fmt.Sprintf("%s profile, %v over %v, planted at %d (and %v)", p.name, c.shape, c.axes, at, and)
					if !bytes.Equal(g.Data, w.Data) {
						t.Fatalf("%s: got %v, want %v", name, g.Data, w.Data)
					}
					if p == &cpuProfile && !hasBlocksOf(e.compiled[0].last().plan, uint32(long)) {
						t.Errorf("%s: no blocks of %d elements", name, long)
					}
				}
			}
		}
	}
}

// TestExprGrid shrinks workgroups to one invocation of one chunk, so
// that a fused ReLU, a fold over every element and a fold by rows each
// need more than 65535 workgroups: against the ops one by one, with a
// NaN planted in the last workgroup's elements.
func TestExprGrid(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	setTuning(t, 1, 1)
	n := 16*65535*2 + 96
	if g, err := bridge.Device(d).Grid(uint64(n) / 16); err != nil || g[1] < 2 {
		t.Fatalf("grid %v, %v: want more than one row of workgroups", g, err)
	}
	rng := rand.New(rand.NewPCG(72, 73))
	hosts := []*tensor.Host{specialHost(rng, tensor.F32, tensor.Shape{n}), randomHost(rng, tensor.Bool, tensor.Shape{n})}
	if !runChain(t, d, chains[0], hosts).fusedWhole() {
		t.Errorf("%s: ran op by op", chains[0].name)
	}
	for _, shape := range []tensor.Shape{{n}, {n / 16, 16}} {
		h := finiteHost(tensor.F32, shape)
		binary.LittleEndian.PutUint32(h.Data[4*(n-3):], 0x7fc00000)
		axes := []int{len(shape) - 1}
		e, got, want := foldAgainstOps(t, upload(t, d, h), false, axes, axes, false)
		if e.compiled[0].last().fold == spec.FoldNone {
			t.Errorf("%v: not folded in the kernel", shape)
		}
		for i := range want.Data {
			if got.Data[i] != want.Data[i] {
				t.Fatalf("%v: element %d is %d, want %d", shape, i, got.Data[i], want.Data[i])
			}
		}
	}
}

// foldAgainstOps evaluates a NaN check of x, ReduceOr(IsNaN(x)), or
// with and a finite check, ReduceAnd(IsFinite(x)), over axes as an Expr
// and over opAxes by the ops one by one, and returns the Expr and the
// two results.
func foldAgainstOps(t *testing.T, x *device.Tensor, and bool, axes, opAxes []int, keep bool) (*Expr, *tensor.Host, *tensor.Host) {
	t.Helper()
	e := new(Expr)
	xn := e.Input(x)
	root := e.ReduceOr(e.IsNaN(xn), axes, KeepDims(keep))
	mask, reduce := IsNaN, ReduceLogicalOr
	if and {
		root = e.ReduceAnd(e.IsFinite(xn), axes, KeepDims(keep))
		mask, reduce = IsFinite, ReduceLogicalAnd
	}
	m, err := mask(x)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	var hosts [2]*tensor.Host // the Expr's, then the ops'
	for i, run := range []func() (*device.Tensor, error){
		func() (*device.Tensor, error) { return e.Eval(root) },
		func() (*device.Tensor, error) { return reduce(m, opAxes, KeepDims(keep)) },
	} {
		res, err := run()
		if err != nil {
			t.Fatal(err)
		}
		hosts[i], err = bridge.Tensor(res).Download()
		res.Free()
		if err != nil {
			t.Fatal(err)
		}
	}
	return e, hosts[0], hosts[1]
}

// finiteHost returns a tensor of dt whose elements are all 1.5.
func finiteHost(dt tensor.DType, shape tensor.Shape) *tensor.Host {
	h, err := tensor.New(dt, shape)
	if err != nil {
		panic(err)
	}
	for i := 0; i < len(h.Data); i += 4 {
		binary.LittleEndian.PutUint32(h.Data[i:], math.Float32bits(1.5))
	}
	return h
}

// hasBlocksOf reports whether a launch of plan runs blocks of elems.
func hasBlocksOf(plan []launch, elems uint32) bool {
	for _, l := range plan {
		if l.kind == launchKernel && l.elems == elems {
			return true
		}
	}
	return false
}

// TestExprExplain checks Explain's text for four chains: a ReLU, one
// kernel; the clamp of clampNaNInf, split in two by the kernel's limit
// of ops; a NaN check of a ReLU down its columns, which the kernel folds;
// and one along a middle axis, which it cannot; and that Eval then runs
// the plan Explain made.
func TestExprExplain(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	rng := rand.New(rand.NewPCG(74, 75))
	x := upload(t, d, specialHost(rng, tensor.F32, tensor.Shape{8, 64}))
	z := upload(t, d, specialHost(rng, tensor.F32, tensor.Shape{3, 4, 32}))
	var e Expr
	xn, zn := e.Input(x), e.Input(z)
	relu := e.Where(e.Greater(xn, 0), xn, 0)
	// Each Maximum walks 5 merged dimensions, the two fused 10.
	ten := func(s ...int) Node { return e.Input(upload(t, d, specialHost(rng, tensor.F32, tensor.Shape(s)))) }
	maxes := e.Maximum(e.Maximum(ten(2, 2, 1, 1, 2, 2, 1, 1, 2, 2), ten(2, 2, 2, 2, 2, 2, 2, 2, 2, 2)), ten(2, 1, 1, 2, 2, 1, 1, 2, 2, 1))
	// Cut one op at a time, first the Maximum and then the second Minimum, this
	// takes three kernels; cutting the comparison alone, whose scalar no other op
	// uses, leaves two (fewestCuts).
	le := e.LessEqual(xn, 1)
	scalars := e.Minimum(e.Minimum(e.Maximum(le, true), e.Minimum(le, false)), true)
	for _, c := range []struct {
		root Node
		want string
	}{
		{relu, `2 ops in 1 kernel
1. fused greater, where (in1; scalar 0) -> f32[8 64]
`},
		{clampNaNInf.make(exprBuilder{&e}, []any{xn}).(Node), `8 ops in 2 kernels
1. fused greater, where, less, where (in1; scalars 1, -1) -> f32[8 64]; boundary: 5 ops > 4
2. fused is-nan, where, is-inf, where (#1; scalar 0) -> f32[8 64]
`},
		{scalars, `5 ops in 2 kernels
1. op less-equal (in1; scalar 1) -> bool[8 64]; boundary: 3 scalars > 2, 5 ops > 4
2. fused maximum, minimum, minimum, minimum (#1; scalars true, false) -> bool[8 64]
`},
		{maxes, `2 ops in 2 kernels
1. op maximum (in3, in4) -> f32[2 2 2 2 2 2 2 2 2 2]; boundary: a broadcast of 10 dimensions > 8
2. op maximum (#1, in5) -> f32[2 2 2 2 2 2 2 2 2 2]
`},
		{e.ReduceOr(e.IsNaN(relu), []int{0}), `4 ops in 1 kernel
1. fused greater, where, is-nan, fold any down 64 columns (in1; scalar 0) -> bool[64]
`},
		{e.ReduceOr(e.IsNaN(e.Where(e.Greater(zn, 0), zn, 0)), []int{1}), `4 ops in 2 kernels
1. fused greater, where, is-nan (in2; scalar 0) -> bool[3 4 32]; boundary: reduction over axes the kernel cannot fold
2. op reduce_logical_or over axes [1] (#1) -> bool[3 32]
`},
	} {
		got, err := e.Explain(c.root)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("got\n%s\nwant\n%s", got, c.want)
		}
		n := len(e.compiled)
		y, err := e.Eval(c.root)
		if err != nil {
			t.Fatal(err)
		}
		y.Free()
		if len(e.compiled) != n {
			t.Errorf("Eval planned again after Explain")
		}
	}
}

// TestExprEvalInto evaluates into the caller's tensors: a slice made a
// tensor by Wrap, which holds the result with no copy out, and the
// results of chains that end in reductions; and checks EvalInto's
// rules, each broken one leaving dst as it was.
func TestExprEvalInto(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	rng := rand.New(rand.NewPCG(71, 72))
	shape := tensor.Shape{32, 130} // whole 16-byte words, as Wrap imports
	var e Expr
	xn := e.Input(upload(t, d, specialHost(rng, tensor.F32, shape)))
	relu := e.Maximum(xn, 0)
	want, err := e.Eval(relu)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Free()
	wb, _ := bridge.Tensor(want).Download()
	out := device.MakeSlice[float32](shape.NumElements())
	dst, err := device.Wrap(d, out, shape...)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Free()
	if err := e.EvalInto(relu, dst); err != nil {
		t.Fatal(err)
	}
	if err := dst.Wait(); err != nil {
		t.Fatal(err)
	}
	got := tensor.Bytes(out)
	if !dst.Wrapped() {
		got = make([]byte, len(got))
		if err := bridge.Tensor(dst).Read(got); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, wb.Data) {
		t.Errorf("EvalInto a wrapped slice (wrapped %v) differs from Eval", dst.Wrapped())
	}

	// A chain that ends in a reduction the kernel cannot fold (a second
	// kernel), one folded over every axis, and a reduction of an input
	// over a size-1 axis (a copy made 0 or 1).
	zn := e.Input(upload(t, d, specialHost(rng, tensor.F32, tensor.Shape{3, 4, 32})))
	bn := e.Input(upload(t, d, randomHost(rng, tensor.Bool, tensor.Shape{3, 1, 32})))
	chain := e.IsNaN(e.Where(e.Greater(zn, 0), zn, 0))
	for _, red := range []Node{e.ReduceOr(chain, []int{1}), e.ReduceOr(chain, AllAxes), e.ReduceAnd(bn, []int{1})} {
		rw, err := e.Eval(red)
		if err != nil {
			t.Fatal(err)
		}
		defer rw.Free()
		rd := garbage(t, d, tensor.Bool, rw.Shape())
		if err := e.EvalInto(red, rd); err != nil {
			t.Fatal(err)
		}
		rwb, _ := bridge.Tensor(rw).Download()
		rdb, _ := bridge.Tensor(rd).Download()
		if !bytes.Equal(rwb.Data, rdb.Data) {
			t.Errorf("EvalInto of %v (%d kernels) differs from Eval", rw, e.compiled[len(e.compiled)-1].kernels())
		}
	}

	freed := garbage(t, d, tensor.F32, shape)
	freed.Free()

	other := devtest.Open(t, device.Options{})
	for _, c := range []struct {
		dst  *device.Tensor
		want string
	}{
		{nil, "expr: dst is nil"},
		{freed, "expr: dst f32[32 130] was freed"},
		{garbage(t, d, tensor.F16, shape), "expr: dst f16[32 130] is not of maximum's result type and shape f32[32 130]"},
		{garbage(t, d, tensor.F32, tensor.Shape{130, 32}), "expr: dst f32[130 32] is not of maximum's result type and shape f32[32 130]"},
		{e.nodes[xn.i-1].t, "expr: dst f32[32 130] shares memory with the expression's input f32[32 130]; evaluate into another tensor"},
		{garbage(t, other, tensor.F32, shape), "expr: dst is on another device than maximum's operands"},
	} {
		var before []byte
		if c.dst != nil && c.dst.Err() == nil {
			h, _ := bridge.Tensor(c.dst).Download()
			before = h.Data
		}
		err := e.EvalInto(relu, c.dst)
		if err == nil || err.Error() != c.want || !errors.Is(err, ErrInvalid) {
			t.Errorf("EvalInto(%v): got %v, want %q", c.dst, err, c.want)
		}
		if before != nil {
			if h, _ := bridge.Tensor(c.dst).Download(); !bytes.Equal(h.Data, before) {
				t.Errorf("EvalInto(%v) failed and changed dst", c.dst)
			}
		}
	}
	if err := e.EvalInto(Node{}, dst); err == nil || !errors.Is(err, ErrInvalid) {
		t.Errorf("EvalInto of the zero Node: got %v", err)
	}

	// A slice's first two thirds wrapped as the input, its last two as
	// dst: they share the middle third.
	xs := device.MakeSlice[float32](3 * 4096)
	wx, err := device.Wrap(d, xs[:2*4096], 64, 128)
	if err != nil {
		t.Fatal(err)
	}
	defer wx.Free()
	twice, err := device.Wrap(d, xs[4096:], 64, 128)
	if err != nil {
		t.Fatal(err)
	}
	defer twice.Free()
	if !wx.Wrapped() || !twice.Wrapped() {
		t.Logf("the device cannot import host memory: no second Wrap to test")
		return
	}
	wr := e.Maximum(e.Input(wx), 0)
	err = e.EvalInto(wr, twice)
	if want := "expr: dst f32[64 128] shares memory with the expression's input f32[64 128]; evaluate into another tensor"; err == nil || err.Error() != want {
		t.Errorf("EvalInto a second Wrap of the input's slice: got %v, want %q", err, want)
	}
	if err := e.EvalInto(wr, garbage(t, d, tensor.F32, tensor.Shape{64, 128})); err != nil {
		t.Error(err)
	}
}

// TestExprReduceXor runs parity chains, which the fused kernel has no
// fold for: the chain's result is written and the reduction reads it,
// equal to the ops one by one and to cpuref; Explain says why.
func TestExprReduceXor(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	rng := rand.New(rand.NewPCG(73, 74))
	c := chain{"nan-parity", func(b builder, in []any) any { return b.reduce(reduceXorOp, b.unary(isNaNOp, in[0], 0)) }}
	for _, shape := range []tensor.Shape{{37, 130}, {0, 5}} {
		if k := runChain(t, d, c, []*tensor.Host{specialHost(rng, tensor.F32, shape)}).kernels(); k != 2 && shape.NumElements() > 0 {
			t.Errorf("parity of IsNaN over %v: %d kernels, want 2", shape, k)
		}
	}
	var e Expr
	x := e.Input(upload(t, d, specialHost(rng, tensor.F32, tensor.Shape{3, 4, 32})))
	got, err := e.Explain(e.ReduceXor(e.Greater(x, 0), []int{1}))
	want := `2 ops in 2 kernels
1. op greater (in1; scalar 0) -> bool[3 4 32]; boundary: the kernel has no xor fold
2. op reduce_logical_xor over axes [1] (#1) -> bool[3 32]
`
	if err != nil || got != want {
		t.Errorf("got\n%s%v\nwant\n%s", got, err, want)
	}
	if _, err := e.Eval(e.ReduceXor(x, nil)); err == nil || err.Error() != "reduce_logical_xor: data must be bool, got f32" {
		t.Errorf("ReduceXor of f32: %v", err)
	}
}

// TestExprFreedInput frees an input after its Expr is made, and after it
// is planned: Eval and EvalInto must return the error the op itself gives
// for the freed operand, naming it, and leave the device usable.
func TestExprFreedInput(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	rng := rand.New(rand.NewPCG(76, 77))
	for _, c := range []struct {
		name string
		node func(e *Expr, x, y Node) Node
		op   func(x, y *device.Tensor) (*device.Tensor, error)
	}{
		{"maximum", func(e *Expr, x, y Node) Node { return e.Maximum(x, y) }, func(x, y *device.Tensor) (*device.Tensor, error) { return Maximum(x, y) }},
		{"greater", func(e *Expr, x, y Node) Node { return e.IsNaN(e.Where(e.Greater(x, y), x, 0)) },
			func(x, y *device.Tensor) (*device.Tensor, error) { return Greater(x, y) }},
		{"clamp", func(e *Expr, x, y Node) Node { return e.Minimum(e.Clamp(y, 0, 1), x) },
			func(x, y *device.Tensor) (*device.Tensor, error) { return Clamp(y, 0, 1) }},
	} {
		for _, planned := range []bool{false, true} {
			x := upload(t, d, randomHost(rng, tensor.F32, tensor.Shape{4}))
			y := upload(t, d, randomHost(rng, tensor.F32, tensor.Shape{4}))
			var e Expr
			root := c.node(&e, e.Input(x), e.Input(y))
			if planned {
				if _, err := e.Explain(root); err != nil {
					t.Fatal(err)
				}
			}
			y.Free()
			_, want := c.op(x, y)
			_, got := e.Eval(root)
			if got == nil || got.Error() != want.Error() || !errors.Is(got, ErrInvalid) || !errors.Is(got, device.ErrFreed) {
				t.Errorf("%s (planned %v): Eval: %v; the op: %v", c.name, planned, got, want)
			}
			into := garbage(t, d, e.nodes[root.i-1].dt, tensor.Shape{4})
			if err := e.EvalInto(root, into); err == nil || err.Error() != want.Error() {
				t.Errorf("%s (planned %v): EvalInto: %v; the op: %v", c.name, planned, err, want)
			}
		}
	}
	if got, err := Maximum(upload(t, d, randomHost(rng, tensor.F32, tensor.Shape{4})), 0); err != nil {
		t.Errorf("the device after: %v", err)
	} else {
		got.Free()
	}
}
