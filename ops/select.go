package ops

import (
	"encoding/binary"
	"fmt"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/tensor"
)

// Broadcast is Select's auto_broadcast attribute, which the binary mask
// ops take too (docs/specs.md#broadcasting).
type Broadcast uint8

const (
	// BroadcastNumpy, the default, broadcasts then and else to each other,
	// numpy style, and cond one way to the result.
	BroadcastNumpy Broadcast = iota
	// BroadcastNone requires cond, then and else to have equal shapes.
	BroadcastNone
	// BroadcastPDPD gives the output then's shape; else, then cond, must
	// broadcast one way to it.
	BroadcastPDPD
)

// String returns the attribute's value as OpenVINO spells it: "numpy",
// "none" or "pdpd".
func (b Broadcast) String() string {
	switch b {
	case BroadcastNumpy:
		return "numpy"
	case BroadcastNone:
		return "none"
	case BroadcastPDPD:
		return "pdpd"
	}
	return fmt.Sprintf("broadcast(%d)", uint8(b))
}

// SelectOption configures Select, and the binary mask ops alike;
// WithBroadcast makes one. It is a value, not a function, so that
// passing options allocates nothing.
type SelectOption struct {
	broadcast Broadcast
}

// selectConfig is what the options of a call come to: the last of each
// kind wins.
type selectConfig struct {
	broadcast Broadcast
}

func configure(opts []SelectOption) selectConfig {
	var c selectConfig
	for _, o := range opts {
		c.broadcast = o.broadcast
	}
	return c
}

// WithBroadcast sets Select's auto_broadcast attribute; the default is
// BroadcastNumpy.
func WithBroadcast(b Broadcast) SelectOption { return SelectOption{broadcast: b} }

// Select returns a new tensor whose elements are then's where cond is true
// and els's where it is false: OpenVINO Select-1 as docs/specs.md#select
// states it. cond must be bool; then and els must share an element type,
// which is the output's; elements are copied bit for bit. The inputs must
// live on one device and are not modified.
//
// Every rule is checked before anything runs, and a rejected input gives
// an error matching ErrInvalid whose message is the one cpuref.Select
// gives for the same input, such as
//
//	select: cond shape [3 5] cannot be broadcast one way to [2 3 4 5] (axis -2: 3 vs 4)
//
// One limit is the kernels' own: a broadcast that keeps more than eight
// dimensions once adjacent ones that broadcast alike are merged is
// refused, saying so.
func Select(cond, then, els *device.Tensor, opts ...SelectOption) (*device.Tensor, error) {
	const op = "select"
	c := configure(opts)
	// The mode is an attribute of the op, so it is checked before the data.
	if c.broadcast > BroadcastPDPD {
		return nil, invalidf("%s: unknown broadcast %q (want none, numpy or pdpd)", op, c.broadcast)
	}
	if err := checkTensors(op, []string{"cond", "then", "else"}, cond, then, els); err != nil {
		return nil, err
	}
	var buf [maxRank]int
	out, err := resolveSelect(op, c, tensorArg(cond, "cond"), tensorArg(then, "then"), tensorArg(els, "else"), &buf)
	if err != nil {
		return nil, err
	}
	return blend(op, then.DType(), out, cond, operand{t: then}, operand{t: els}, nil)
}

// resolveSelect checks Select's rules on the types and shapes of cond, then
// and else, tensors or nodes, and that the output can be held
// (checkOutput), and returns the output's shape, in buf.
func resolveSelect(op string, c selectConfig, cond, then, els whereArg, buf *[maxRank]int) (tensor.Shape, error) {
	if cond.dt != tensor.Bool {
		return nil, invalidf("%s: cond must be bool, got %v", op, cond.dt)
	}
	if then.dt != els.dt {
		return nil, invalidf("%s: then is %v but else is %v", op, then.dt, els.dt)
	}
	cs, ts, es := cond.shape(), then.shape(), els.shape()
	var out tensor.Shape
	switch c.broadcast {
	case BroadcastNone:
		if !cs.Equal(ts) || !ts.Equal(es) {
			return nil, invalidf("%s: broadcast none needs equal shapes: cond %v then %v else %v", op, cs, ts, es)
		}
		out = ts
	case BroadcastNumpy:
		// Step 1: then and else broadcast each other.
		var clash *tensor.Clash
		out, clash = tensor.AppendBroadcast(buf[:0], ts, es)
		if clash != nil {
			return nil, invalidf("%s: then shape %v and else shape %v do not broadcast (%v)", op, ts, es, clash)
		}
		// Step 2: cond fits that result one way; it never widens it.
		if err := fitsOneWay(op, "cond", cs, out); err != nil {
			return nil, err
		}
	case BroadcastPDPD:
		out = ts
		if err := fitsOneWay(op, "else", es, out); err != nil {
			return nil, err
		}
		if err := fitsOneWay(op, "cond", cs, out); err != nil {
			return nil, err
		}
	}
	if _, err := checkOutput(op, then.dt, out); err != nil {
		return nil, err
	}
	return out, nil
}

// fitsOneWay reports, in cpuref's words, whether the operand's shape src
// broadcasts one way to dst.
func fitsOneWay(op, name string, src, dst tensor.Shape) error {
	if clash := tensor.FitsOneWay(src, dst); clash != nil {
		// Quoting a copy of dst keeps it from escaping (see blend).
		return invalidf("%s: %s shape %v cannot be broadcast one way to %v (%v)", op, name, src, dst.Clone(), clash)
	}
	return nil
}

// blend returns a new tensor of shape out and element type dt, holding
// a's element where cond's is true and b's where it is false. Each
// operand's shape must fit out one way and a and b must hold dt; out may
// be on the caller's stack (see run.execute).
func blend(op string, dt tensor.DType, out tensor.Shape, cond *device.Tensor, a, b operand, dst *device.Tensor) (*device.Tensor, error) {
	r := selectElem.newRun(dt.Size())
	r.ts[0], r.ts[1], r.ts[2] = cond, a.t, b.t
	r.shapes[0], r.shapes[1], r.shapes[2] = bridge.Tensor(cond).Dims(), a.shape(), b.shape()
	r.bits = [2]uint64{a.bits, b.bits}
	pickByCond(&r)
	return r.execute(op, cond.Device(), dt, out, dst)
}

// pickByCond sets the pick of select run r where cond is one element
// whose value the host can read at once (device.Tensor.Peek): the output
// is then the operand cond picks, broadcast, which the engine may fill,
// tile or expand instead of running the kernel (run.planPick). The
// picked value is known where it is a scalar or a one-element tensor
// the host can read at once too.
func pickByCond(r *run) {
	cond := r.ts[0]
	var c [1]byte
	if cond.Len() != 1 || !bridge.Tensor(cond).Peek(c[:]) {
		return
	}
	r.pick = 2
	if c[0] != 0 {
		r.pick = 1
	}
	t := r.ts[r.pick]
	r.pickBits, r.pickKnown = r.bits[r.pick-1], t == nil
	if t != nil && t.Len() == 1 {
		var b [8]byte
		r.pickKnown = bridge.Tensor(t).Peek(b[:r.width])
		r.pickBits = binary.LittleEndian.Uint64(b[:])
	}
}

// selectElem describes Select, and Where, to the engine: inputs cond
// (bool), then and else (either may be a pushed scalar), the output of
// their type (shaders/select.glsl). Its families are timed on a select
// of three tensors, which mostly loads, and one with then and else
// pushed, as Where's scalars are, which mostly stores, its time scaled
// to the bytes of the first so that both weigh alike. A GPU may tie
// variants on the first and not on the second: on an H100, f32 with
// scalars took 0.085 ms with 16-byte stores and 0.055 ms with the
// 32-byte stores of texel64, three tensors 0.084 ms with either. Each
// invocation writes 64 bytes or more on lavapipe.
var selectElem = (&elemOp{
	name: "select", inputs: 3, bools: 1, rows: true,
	chunks: [9]int{1: 4, 2: 2, 4: 1, 8: 1},
	probes: []probe{{}, {pushed: 0b110, weight: func(w int) float64 { return float64(1+3*w) / float64(1+w) }}},
}).register()
