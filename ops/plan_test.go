package ops

import (
	"testing"
	"unsafe"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/shaders/spec"
	"github.com/vkops/vkops/tensor"
)

// The tests reach the vector paths with small shapes, which the CPU
// profile itself runs element by element (elementsMax) as the general
// path does, which every fast path is checked against; TestSmallPieces
// checks that choice. So too the reductions' reading paths, which it
// runs on reduce_small.glsl below smallMax bytes (TestReduceSmall; the
// small kernel is checked with the rest in TestReducePlansAgainstGeneral).
func init() {
	cpuProfile.elementsMax = 0
	reduceTuning.smallMax = 0
}

// shippedReduceTuning is reduceTuning as the CPU profile ships it.
var shippedReduceTuning = reduceTuning

// FuzzPlan draws an elementwise op (select's three inputs, a mask op's
// two or a fused kernel's four, the last two of them perhaps pushed
// scalars), their shapes,
// an element width, a page and a binding span, and a profile (cpu, gpu
// or the general path), plans it on the host, and runs the plan as the
// skeleton (shaders/elementwise.glsl) would, block by block: every
// output element must be written exactly once, no block may write
// outside its piece, every binding must lie in one page of its operand
// and start where the kernel is told, and each mode's preconditions
// must hold. It is how the planner's choice of modes is checked without
// a device; the device tests check the kernels against the general
// path (TestPlansAgainstGeneral).
func FuzzPlan(f *testing.F) {
	f.Add(uint8(0), []byte{3, 5, 7, 1, 3, 5, 7, 9, 3, 5, 1, 9}, uint8(0), uint8(0), uint8(0))
	f.Add(uint8(0), []byte{2, 14, 1, 2, 14, 6, 1, 6}, uint8(1), uint8(1), uint8(1))
	f.Add(uint8(1), []byte{2, 15, 13, 0x80}, uint8(2), uint8(0), uint8(4))
	f.Add(uint8(0), []byte{3, 9, 8, 11, 3, 9, 8, 11, 0x80}, uint8(0), uint8(2), uint8(3))
	f.Add(uint8(0), []byte{2, 15, 1, 2, 15, 12, 2, 1, 12}, uint8(3), uint8(0), uint8(6))
	f.Add(uint8(1), []byte{2, 11, 12, 2, 1, 12}, uint8(0), uint8(5), uint8(2))
	f.Add(uint8(0), []byte{1, 15, 1, 15, 1, 15}, uint8(2), uint8(0), uint8(8))
	f.Fuzz(func(t *testing.T, opSel uint8, shapes []byte, elem uint8, pageLog uint8, profSel uint8) {
		op := []*elemOp{selectElem, maskElem, fusedElems[1]}[opSel%3]
		b := fzBytes(shapes)
		ins := make([]tensor.Shape, op.inputs)
		var outShapes []tensor.Shape
		for x := range ins {
			s, scalar := fzShape(&b)
			if !scalar || x < op.inputs-2 {
				ins[x] = s.Clone() // a non-nil shape: a tensor, maybe 0-D
				outShapes = append(outShapes, ins[x])
			}
		}
		out, clash := tensor.Broadcast(outShapes...)
		if clash != nil || out.Validate() != nil || out.NumElements() == 0 || out.NumElements() > 1<<17 {
			return
		}
		l := newLayout(out, ins...)
		if l.rank > maxRank {
			return
		}
		w := 1 << (elem % 4)
		r := op.newRun(w)
		for x, s := range ins {
			if s != nil {
				r.ts[x] = &device.Tensor{}
			}
		}
		r.ts[op.inputs] = &device.Tensor{}
		prof := []profile{cpuProfile, gpuProfile, cpuProfile}[profSel%3]
		prof.general = profSel%3 == 2
		prof.rowsMin = []uint32{0, elementwiseRowsMin}[profSel/3%2]
		prof.minChunks = []uint64{0, cpuProfile.minChunks}[profSel/3%2]
		prof.elementsMax = []uint32{0, cpuElementsMax}[profSel/3%2]
		page := uint64(4096) << (pageLog % 6)
		tg := target{prof: &prof, page: page, span: int(page >> (pageLog / 6 % 3)), align: 16 << (profSel / 6 % 3),
			group: 64, grid: [3]uint32{65535, 65535, 65535}}
		plan := r.appendPlan(nil, &l, &tg)
		cover := make([]uint8, out.NumElements())
		for i := range plan {
			checkLaunch(t, &r, ins, &plan[i], &tg, cover)
		}
		for e, c := range cover {
			if c != 1 {
				t.Fatalf("%s %v over %v, w%d, %s: element %d written %d times", op.name, ins, out, w, prof.name, e, c)
			}
		}
	})
}

// checkLaunch runs launch ln of run r (inputs of shapes ins) on the
// host as the skeleton would, counting in cover the times each output
// element is written, and checks its bindings and its mode's
// preconditions.
func checkLaunch(t *testing.T, r *run, ins []tensor.Shape, ln *launch, tg *target, cover []uint8) {
	t.Helper()
	nin := r.op.inputs
	if ln.kind != launchKernel {
		t.Fatalf("launch kind %d planned without a pick", ln.kind)
	}
	push := (*spec.ElementwisePush)(unsafe.Pointer(&ln.push))
	dims, base, skip := push.Dims, push.Base[:nin+1], push.Skip
	rank, e := ln.spec[spec.Rank], 16*ln.spec[spec.Chunks]
	mode, rowch := ln.spec[spec.Mode], ln.spec[spec.RowChunks]
	n := uint32(1)
	for i := range rank {
		n *= dims[i]
	}
	first, end := base[nin], base[nin]+n
	for x := range nin + 1 {
		lo, hi := ln.ranges[x][0], ln.ranges[x][1]
		if r.ts[x] == nil {
			continue
		}
		size := uint64(r.sizes[x])
		total := uint64(len(cover)) * size
		if x < nin {
			total = uint64(ins[x].NumElements()) * size
		}
		if lo >= hi || hi > total || lo/tg.page != (hi-1)/tg.page || hi-lo > uint64(tg.span) {
			t.Fatalf("operand %d binds [%d, %d) of %d bytes, pages of %d, span %d", x, lo, hi, total, tg.page, tg.span)
		}
		if uint64(base[x])*size != lo%tg.page%tg.align {
			t.Fatalf("operand %d binds from byte %d: base %d, want %d bytes past an aligned offset", x, lo, base[x], lo%tg.page%tg.align)
		}
	}
	switch mode {
	case spec.ModeRows:
		k := ln.spec[spec.RowLen]
		if ln.role != roleRows || k < 2 || k > 15 || dims[0] != k || e%k != 0 || rank < 2 {
			t.Fatalf("modeRows: rows of %d in blocks of %d, dims %v rank %d, role %d", k, e, dims, rank, ln.role)
		}
	case spec.ModeSeams:
		if ln.role != roleSeams || dims[0] < e {
			t.Fatalf("modeSeams: rows of %d in blocks of %d", dims[0], e)
		}
	}
	global := func(el uint32) int { return int(ln.ranges[nin][0]/uint64(r.sizes[nin])) + int(el-first) }
	mark := func(lo, hi uint32) {
		if lo < first || hi > end {
			t.Fatalf("mode %d writes [%d, %d) outside its piece [%d, %d)", mode, lo, hi, first, end)
		}
		for el := lo; el < hi; el++ {
			cover[global(el)]++
		}
	}
	invocations := ln.grid[0] * ln.grid[1] * ln.grid[2] * tg.group
	if invocations < ln.invocations {
		t.Fatalf("a grid %v of %d invocations a group for %d invocations", ln.grid, tg.group, ln.invocations)
	}
	for i := range invocations {
		e0, lo, hi, ok := simBlock(i, mode, first, skip, n, dims[0], e)
		if !ok {
			continue
		}
		switch mode {
		case spec.ModeAll, spec.ModeEnds:
			mark(lo, hi)
		case spec.ModeWhole:
			coord0 := (lo - first) % dims[0]
			if rank == 1 {
				coord0 = lo - first
			}
			if lo == e0 && hi == e0+e && (rowch != 0 || coord0+e <= dims[0]) {
				mark(lo, hi)
			}
		case spec.ModeSeams:
			mark(e0, e0+e)
		case spec.ModeRows:
			if lo == e0 && hi == e0+e {
				mark(e0, e0+e)
			}
		}
	}
}

// simBlock is the skeleton's block: the block of e elements that
// invocation i owns, its part [lo, hi) in the piece [first+skip,
// first+n), and whether it has one.
func simBlock(i, mode, first, skip, n, dim0, e uint32) (e0, lo, hi uint32, ok bool) {
	end := first + n
	if mode == spec.ModeSeams || mode == spec.ModeEnds {
		rows := n / dim0
		if mode == spec.ModeSeams {
			i++
			if i >= rows {
				return 0, 0, 0, false
			}
		} else {
			if i > 1 {
				return 0, 0, 0, false
			}
			i *= rows
		}
		p := first + i*dim0
		if p%e == 0 {
			return 0, 0, 0, false
		}
		e0 = p / e * e
	} else {
		e0 = ((first+skip)/e + i) * e
	}
	lo, hi = max(e0, first+skip), min(e0+e, end)
	return e0, lo, hi, e0 < end
}

// On the CPU profile pieces of at most elementsMax elements run element
// by element, whose pipelines build faster, and larger ones by vectors;
// on the GPU profile every whole piece runs by vectors.
func TestSmallPieces(t *testing.T) {
	cpu := cpuProfile
	cpu.elementsMax = cpuElementsMax
	most := cpuElementsMax
	for _, c := range []struct {
		op   *elemOp
		prof profile
		n    int
		want uint32
	}{
		{fusedElems[2], cpu, 1024, spec.ModeAll},
		{fusedElems[2], cpu, most, spec.ModeAll},
		{fusedElems[2], cpu, most + 16, spec.ModeWhole},
		{fusedElems[2], gpuProfile, 1024, spec.ModeWhole},
		{maskElem, cpu, 1024, spec.ModeAll},
		{maskElem, cpu, 2 * most, spec.ModeWhole},
		{selectElem, gpuProfile, 1024, spec.ModeWhole},
	} {
		shape := tensor.Shape{c.n}
		ins := make([]tensor.Shape, c.op.inputs)
		r := c.op.newRun(4)
		for x := range ins {
			ins[x] = shape
			r.ts[x] = &device.Tensor{}
		}
		r.ts[c.op.inputs] = &device.Tensor{}
		l := newLayout(shape, ins...)
		tg := target{prof: &c.prof, page: 1 << 30, span: 1 << 30, align: 16, group: 64, grid: [3]uint32{65535, 65535, 65535}}
		plan := r.appendPlan(nil, &l, &tg)
		if len(plan) != 1 || plan[0].spec[spec.Mode] != c.want {
			t.Errorf("%s on %d f32, %s profile: %d launches (%v); want one in mode %d",
				c.op.name, c.n, c.prof.name, len(plan), modes(plan), c.want)
		}
	}
}

// modes returns the modes of a plan's launches.
func modes(plan []launch) []uint32 {
	var m []uint32
	for _, ln := range plan {
		m = append(m, ln.spec[spec.Mode])
	}
	return m
}

// Every kernel family's push constants fit a launch and the 128 bytes
// every device offers.
func TestPushLayoutsFit(t *testing.T) {
	for _, size := range []uintptr{unsafe.Sizeof(spec.ElementwisePush{}), unsafe.Sizeof(spec.ExpandPush{}),
		unsafe.Sizeof(spec.ReduceInnerPush{}), unsafe.Sizeof(spec.ReduceOuterPush{}), unsafe.Sizeof(spec.ReduceGeneralPush{})} {
		if size > uintptr(len(launch{}.push)) || size > 128 {
			t.Errorf("push constants of %d bytes: a launch holds %d, a device at least 128", size, len(launch{}.push))
		}
	}
}
