package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/ops"
	"github.com/vkops/vkops/tensor"
)

// ZooPattern is one broadcast pattern of the zoo: shapes a user might
// run rather than those the suite names. Then or Else is nil for a
// scalar operand of Where; an empty shape is a 0-D tensor.
type ZooPattern struct {
	Name string `json:"name"`
	Op   string `json:"op"`   // "select" or "where"
	Mode string `json:"mode"` // Select's auto_broadcast: "numpy" or "pdpd"
	Cond []int  `json:"cond"`
	Then []int  `json:"then"`
	Else []int  `json:"else"`
	Out  []int  `json:"out"`
}

// The zoo's outputs have from zooMin to zooMax elements.
const (
	zooMin = 4 << 20
	zooMax = 16 << 20
)

// zooSize is how many patterns the zoo has.
const zooSize = 36

// ZooPatterns returns the zoo: a fixed set of seeded random broadcast
// patterns of 4M to 16M output elements. Ranks run from 1 to 6, with
// odd, prime and even lengths and axes of size 1 anywhere; each operand
// is broadcast along its own random axes, some operands hold one
// element, and some patterns are pdpd selects or wheres with scalars.
func ZooPatterns() []ZooPattern {
	rng := rand.New(rand.NewPCG(10, 0x7a6f6f))
	var zoo []ZooPattern
	for i := 0; len(zoo) < zooSize; i++ {
		if p, ok := zooPattern(rng, len(zoo)); ok {
			zoo = append(zoo, p)
		}
	}
	return zoo
}

// zooPattern draws pattern number i, or reports false when the draw
// falls outside the zoo's sizes.
func zooPattern(rng *rand.Rand, i int) (ZooPattern, bool) {
	out, ok := zooShape(rng, 1+i%6, zooMin, zooMax)
	if !ok {
		return ZooPattern{}, false
	}

	p := ZooPattern{Name: fmt.Sprintf("zoo-%02d", i), Op: "select", Mode: "numpy", Out: out}
	// Each operand is broadcast along each axis with probability 2/5.
	shape := func() []int {
		s := slices.Clone(out)
		for d := range s {
			if rng.IntN(5) < 2 {
				s[d] = 1
			}
		}
		return s
	}
	p.Cond, p.Then, p.Else = shape(), shape(), shape()
	switch i % 6 {
	case 1:
		p.Mode = "pdpd"
		p.Then = slices.Clone(out)
	case 3:
		p.Op = "where"
		p.Else = nil
		p.Then = slices.Clone(out) // the only tensor beside cond: it shapes the output with it
		if i%12 == 9 {
			p.Then = nil
			p.Cond = slices.Clone(out)
		}
	}
	switch i % 7 {
	case 2:
		if p.Then != nil || p.Else != nil {
			p.Cond = make([]int, len(out))
		}
	case 4:
		if p.Else != nil {
			p.Else = make([]int, len(out))
		}
	}
	for _, s := range [][]int{p.Cond, p.Else} {
		if s != nil && s[0] == 0 {
			for d := range s {
				s[d] = 1 // a one-element operand
			}
		}
	}
	// Numpy's output is the broadcast of then and else (where: of every
	// tensor): each axis must be whole in one of them.
	for d := range out {
		switch {
		case p.Then == nil && p.Else == nil:
		case p.Then != nil && p.Then[d] == out[d]:
		case p.Else != nil && p.Else[d] == out[d]:
		case p.Op == "where" && p.Cond[d] == out[d]:
		case p.Then != nil:
			p.Then[d] = out[d]
		default:
			p.Else[d] = out[d]
		}
	}
	// Operands of lower rank: leading axes of size 1 dropped, all of
	// them from some one-element operands.
	for _, s := range []*[]int{&p.Cond, &p.Then, &p.Else} {
		for len(*s) > 0 && (*s)[0] == 1 && rng.IntN(3) > 0 {
			*s = (*s)[1:]
		}
	}
	return p, true
}

// zooShape draws a shape of rank dimensions holding lo to hi elements,
// or reports false when the draw falls outside: every axis but one takes
// a length from a list of small, odd, prime and even ones, and that one
// the rest, made odd, prime or left as it is.
func zooShape(rng *rand.Rand, rank, lo, hi int) ([]int, bool) {
	lengths := []int{1, 1, 2, 3, 4, 5, 7, 8, 11, 13, 16, 17, 31, 64, 100, 127, 255, 509, 1000, 1021}
	target := lo + rng.IntN(hi-lo)
	out := make([]int, rank)
	big := rng.IntN(rank)
	rest := 1
	for d := range out {
		if d != big {
			out[d] = lengths[rng.IntN(len(lengths))]
			rest *= out[d]
		}
	}
	if rest > target/3 {
		return nil, false
	}
	// The remaining axis takes the rest of the elements, made odd, prime
	// or left as it is.
	n := target / rest
	switch rng.IntN(3) {
	case 0:
		n |= 1
	case 1:
		n = nextPrime(n)
	}
	out[big] = n
	if total := rest * n; total < lo || total > hi {
		return nil, false
	}
	return out, true
}

func nextPrime(n int) int {
	for ; ; n++ {
		prime := n > 1
		for f := 2; f*f <= n && prime; f++ {
			prime = n%f != 0
		}
		if prime {
			return n
		}
	}
}

// Small returns the pattern shrunk to at most about max output elements,
// for tests: every length above 12 becomes one from 13 to 29 of the
// same kind (odd, even) and the largest axes halve while too many
// remain, so the broadcast axes and the operands' ranks stay as they are.
func (p ZooPattern) Small(max int) ZooPattern {
	out := slices.Clone(p.Out)
	for d, n := range out {
		if n > 12 {
			out[d] = 13 + n%17
		}
	}
	for tensor.Shape(out).NumElements() > max {
		d := 0
		for i, n := range out {
			if n > out[d] {
				d = i
			}
		}
		out[d] = (out[d] + 1) / 2
	}
	shrink := func(s []int) []int {
		if s == nil {
			return nil
		}
		s = slices.Clone(s)
		for i := range s {
			if s[i] != 1 {
				s[i] = out[len(out)-len(s)+i]
			}
		}
		return s
	}
	q := p
	q.Out, q.Cond, q.Then, q.Else = out, shrink(p.Cond), shrink(p.Then), shrink(p.Else)
	return q
}

// Zoo returns the zoo's cases on elements of dt, named by pattern
// ("zoo-00" and on).
func Zoo(dt tensor.DType) []*Case {
	var cs []*Case
	for _, p := range ZooPatterns() {
		cs = append(cs, p.Case(dt))
	}
	return cs
}

// Case returns the pattern as a bench case on elements of dt. Bytes
// count each operand once at its own shape plus the output.
func (p ZooPattern) Case(dt tensor.DType) *Case {
	spec := opSpec{op: p.Op, pattern: p.Name, dt: dt, shape: p.Out, out: operand{shape: p.Out, dt: dt}}
	spec.in = []operand{{shape: p.Cond, dt: tensor.Bool}}
	if p.Then != nil {
		spec.in = append(spec.in, operand{shape: p.Then, dt: dt})
	}
	if p.Else != nil {
		spec.in = append(spec.in, operand{shape: p.Else, dt: dt})
	}
	in, other := scalars(dt)
	if p.Op == "select" {
		mode := map[string]ops.Broadcast{"numpy": ops.BroadcastNumpy, "pdpd": ops.BroadcastPDPD}[p.Mode]
		spec.dev = func(t []*device.Tensor) (*device.Tensor, error) {
			return ops.Select(t[0], t[1], t[2], ops.WithBroadcast(mode))
		}
		spec.ref = func(h []*tensor.Host) (*tensor.Host, error) { return cpuref.Select(h[0], h[1], h[2], p.Mode) }
		return spec.build()
	}
	// Where: the tensors come in order, then and else as scalars where
	// the pattern has none.
	spec.dev = func(t []*device.Tensor) (*device.Tensor, error) {
		var a, b any = ops.Scalar(in, dt), ops.Scalar(other, dt)
		k := 1
		if p.Then != nil {
			a, k = t[k], k+1
		}
		if p.Else != nil {
			b = t[k]
		}
		return ops.Where(t[0], a, b)
	}
	spec.ref = func(h []*tensor.Host) (*tensor.Host, error) {
		sa, err := tensor.NewScalar(in, dt)
		if err != nil {
			return nil, err
		}
		sb, err := tensor.NewScalar(other, dt)
		if err != nil {
			return nil, err
		}
		a, b := cpuref.Operand{S: &sa}, cpuref.Operand{S: &sb}
		k := 1
		if p.Then != nil {
			a, k = cpuref.Operand{T: h[k]}, k+1
		}
		if p.Else != nil {
			b = cpuref.Operand{T: h[k]}
		}
		return cpuref.Where(h[0], a, b)
	}
	return spec.build()
}

// zooFile returns the zoo as bench/zoo.json holds it for bench/peers.py,
// one pattern per line; TestZooFile keeps the file up to date.
func zooFile() []byte { return jsonLines(ZooPatterns()) }

// IsZoo reports whether c is one of the zoo's cases.
func IsZoo(c *Case) bool { return strings.HasPrefix(c.Pattern, "zoo-") }

// ZooSummary gathers the zoo's results: how many, the worst fraction of
// copy and the geometric mean of them all.
type ZooSummary struct {
	N         int
	Worst     float64
	WorstName string
	logSum    float64
}

// Add counts res if it is a zoo case's.
func (s *ZooSummary) Add(res Result) {
	if !strings.HasPrefix(res.Pattern, "zoo-") || res.FractionOfCopy <= 0 {
		return
	}
	if s.N == 0 || res.FractionOfCopy < s.Worst {
		s.Worst = res.FractionOfCopy
		s.WorstName = fmt.Sprintf("%s/%s/%s%v", res.Op, res.Pattern, res.DType, res.Shape)
	}
	s.N++
	s.logSum += math.Log(res.FractionOfCopy)
}

// GeoMean returns the geometric mean of the fractions of copy.
func (s *ZooSummary) GeoMean() float64 { return math.Exp(s.logSum / float64(s.N)) }
