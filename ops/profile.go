package ops

import (
	"sync/atomic"

	"github.com/vkops/vkops/device"
)

// A profile holds every device-specific choice of the planners. Each
// device runs the profile that device.Open resolved for it
// (device.Profile), so that tests on lavapipe run a GPU's plans with
// VKOPS_PROFILE=gpu; each choice cites the measurement behind it.
type profile struct {
	name string
	// group is the most invocations of an elementwise workgroup (the
	// device may allow fewer).
	group int
	// chunks is the 16-element chunks an elementwise invocation does, or
	// 0 for the op's own count by element width (elemOp.chunks). A GPU
	// wants the most invocations in flight: on an H100 one chunk ran the
	// masks 1.5-1.8x and i8 select 1.65x as fast as lavapipe's counts
	// (BenchmarkElementwiseTuning).
	chunks int
	// minChunks is the fewest bytes of a piece that takes the op's own
	// chunks (elemOp.chunks); smaller ones take one, whose pipeline
	// lavapipe compiles faster: a first call of Greater on f32[1024]
	// took 33 ms with one chunk an invocation, 50 with two, where a
	// launch so small costs the same either way.
	minChunks uint64
	// elementsMax is the most elements of a piece that runs element by
	// element (modeAll) where it could run by vectors. That path's code
	// is the smaller, and lavapipe builds and compiles its pipeline
	// faster: first calls on f32[1024], warm (Mesa's cache, pruned
	// modules kept), went from 12.6 to 9.0 ms (Greater), 13.5 to 10.4
	// (select) and 22 to 13 (a fused ReLU, whose vector path is a module
	// of its own), cold from 63 to 42, 114 to 60 (the clamp written with
	// Where) and 70 to 48 (Maximum); median of 5 and 3 fresh processes.
	// Pieces of 4096 elements ran no slower (select, Greater and Where
	// of f32, i8 and bools, the fused chains: within the 0.1 ms noise of
	// a launch); 16K i8 took 0.1 ms more, 64K 0.35 more.
	elementsMax uint32
	// foldChunks, where nonzero, is the chunks of a block that folds its
	// result (a fused chain's terminal any or all) instead of storing
	// it. lavapipe pays for each invocation: a fused NaN check of 16M
	// f32 ran in 0.54 of the time with blocks of 256 chunks as with one
	// (2.1 against 3.9 ms), 16 chunks took 2.3x as long as 64, 1024 no
	// less than 256; lavapipe's own C kernel for the same test took 1.5x
	// as long with 64 bytes an invocation as with 16 KiB (bench/ceiling,
	// check and check-loop).
	foldChunks int
	// rowsMin is the fewest elements of a piece that runs short rows in
	// blocks of whole rows (modeRows). Its pipelines, one per row length
	// and way of reading the inputs, are slow to build: a first call of
	// zoo-17 or zoo-23 with fresh caches took lavapipe 0.55-0.87 s,
	// against 25-30 ms for a block path's pipeline; the zoo's patterns of
	// 4M-16M elements save 7-27 ms a call, and the pipeline caches keep
	// the pipelines from run to run.
	rowsMin uint32
	// rowsMax, where nonzero, is the largest modeRows block. On an H100
	// blocks of up to 144 elements (rows of 2-10, 12 and 14) ran 1.1-3.3x
	// as fast as element by element, but those of 176 to 240 (rows of
	// 11, 13 and 15) up to 7x as slow, zoo-23 among them.
	rowsMax uint32
	// rows16 takes modeRows blocks of 16 rows for rows of 1- and 2-byte
	// elements that fit a 16-byte vector, where the piece starts on one
	// (rowGroup): on lavapipe a lane then pays its odometer and loads
	// for up to 16x as many elements. Rows of 2 to 15 i8 ran in
	// 0.39-0.71 of the time, of 2 to 8 f16 in 0.64-0.88; rows of f32 ran
	// up to 1.4x as long, and f16 rows of 10 and 12 no faster.
	rows16 bool
	// measureBytes is the size of each operand in the runs that time an
	// elementwise family's variants: on lavapipe large enough that a
	// dispatch's fixed cost is small beside it, small enough that
	// measuring every variant on first use takes a fraction of a second.
	// On an H100, 16 MiB took about 10 us, most of it fixed cost, and hid
	// a 1.5x difference in how variants store.
	measureBytes uint64
	// reduce spreads a reduction's work (reduceTune).
	reduce *reduceTune
	// quick, where set, is the profile a call plans by where this one's
	// plans would dispatch a pipeline new to the device
	// (core.Device.Fresh): lavapipe compiles a kernel at its first
	// dispatch, and the quick profile's kernels compile faster
	// (cpuQuickProfile).
	quick *profile
	// general plans every piece element by element (modeAll) and fills
	// no output without a kernel: the general path, which tests check
	// every fast path against.
	general bool
}

// cpuElementsMax is the CPU profile's elementsMax.
const cpuElementsMax = 4096

// elementwiseRowsMin is the profiles' rowsMin: 4 MiB of f32.
const elementwiseRowsMin = 1 << 20

var (
	cpuProfile = profile{name: "cpu", group: 256, minChunks: 1 << 20, elementsMax: cpuElementsMax, foldChunks: 256, rowsMin: elementwiseRowsMin, rows16: true,
		measureBytes: 16 << 20, reduce: &reduceTuning, quick: &cpuQuickProfile}
	gpuProfile = profile{name: "gpu", group: 256, chunks: 1, rowsMin: elementwiseRowsMin, rowsMax: 144,
		measureBytes: 64 << 20, reduce: &reduceTuningGPU}
)

// cpuQuickProfile is the CPU profile with one chunk an elementwise
// invocation (as on a GPU) and reduceQuickTuning: its pipelines compile
// faster on lavapipe. Cold first calls of LogicalAnd on bool[16M] took
// 41-44 ms with one chunk, 65-79 with four; the runs after were level.
var cpuQuickProfile profile

func init() {
	q := cpuProfile
	q.name, q.chunks, q.reduce, q.quick = "cpu-quick", 1, &reduceQuickTuning, nil
	cpuQuickProfile = q
}

// noQuick returns p, or where p has a quick profile a copy without it.
func noQuick(p *profile) *profile {
	if p.quick == nil {
		return p
	}
	q := *p
	q.quick = nil
	return &q
}

// forcedProfile, when set, is the profile every device plans by: tests
// set it to run the general path.
var forcedProfile atomic.Pointer[profile]

// profileOf returns the profile d plans by.
func profileOf(d *device.Device) *profile {
	if p := forcedProfile.Load(); p != nil {
		return p
	}
	if d.Profile() == device.ProfileGPU {
		return &gpuProfile
	}
	return &cpuProfile
}

// chunksFor returns the chunks per invocation of op on elements of w
// bytes.
func (p *profile) chunksFor(op *elemOp, w int) uint32 {
	if p.chunks != 0 {
		return uint32(p.chunks)
	}
	return uint32(op.chunks[w])
}

// rowsFor reports whether a piece of n elements runs in modeRows blocks
// of g elements.
func (p *profile) rowsFor(n, g uint32) bool {
	return g != 0 && n >= max(g, p.rowsMin) && (p.rowsMax == 0 || g <= p.rowsMax)
}
