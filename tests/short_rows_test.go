package tests

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/vkops/vkops/ops"
	"github.com/vkops/vkops/tensor"
)

// shortRowShapes returns the output shapes whose rows, of 2 to 17
// elements, run in blocks of whole rows (modeRows in ops/elementwise.go)
// where they are shorter than 16, and a few before and after them: three
// batches of m rows, m = 16 (every block lies in one batch) and m = 5
// (blocks cross batches), plus rows that do not fill the last block.
func shortRowShapes() []tensor.Shape {
	var out []tensor.Shape
	for l := 2; l <= 17; l++ {
		out = append(out, tensor.Shape{3, 16, l}, tensor.Shape{3, 5, l}, tensor.Shape{1, 37, l})
	}
	return out
}

// shortRowOperands returns, for output shape s = [b, m, l], the operand
// shapes that a block of whole rows reads in each of its three ways: by
// vectors (broadcast nowhere, or along the batches only), once a row
// (broadcast along the rows), and element by element ([1, 1, l], whose
// run of l elements is no whole block).
func shortRowOperands(s tensor.Shape) []tensor.Shape {
	return []tensor.Shape{s, {1, s[1], s[2]}, {s[0], s[1], 1}, {1, 1, s[2]}}
}

// TestShortRows runs selects and mask ops over rows of 2 to 17 elements
// with each operand in each of the ways a block of whole rows reads it,
// with every variant of their kernels, on the usual pages and on 4 KiB
// pages (pieces that start inside a block take the element path),
// against cpuref.
func TestShortRows(t *testing.T) {
	byName := map[string]maskOp{}
	for _, op := range maskOps {
		byName[op.name] = op
	}
	masks := []struct {
		op string
		dt tensor.DType
	}{{"greater", tensor.F32}, {"equal", tensor.U8}, {"less-equal", tensor.I64}, {"logical-xor", tensor.Bool}, {"not-equal", tensor.BF16}}
	for _, kernel := range []string{"select", "mask"} {
		t.Run(kernel, func(t *testing.T) {
			forEachKernelVariant(t, kernel, func(t *testing.T, _ string) {
				for _, small := range []bool{false, true} {
					d := selOpen(t, small)
					rng := rand.New(rand.NewPCG(21, 22))
					cases := 0
					for _, s := range shortRowShapes() {
						opsShapes := shortRowOperands(s)
						for i, a := range opsShapes {
							b := opsShapes[(i+1)%len(opsShapes)]
							c := opsShapes[(i+2)%len(opsShapes)]
							if kernel == "select" {
								for _, dt := range []tensor.DType{tensor.Bool, tensor.F16, tensor.F32, tensor.F64} {
									selCheck(t, d, fmt.Sprintf("%v", s), ops.BroadcastNumpy, selRandom(rng, tensor.Bool, a),
										selRandom(rng, dt, b), selRandom(rng, dt, c))
									cases++
								}
								continue
							}
							for _, m := range masks {
								pool := maskPool(rng)
								maskCheck(t, d, byName[m.op], ops.BroadcastNumpy, maskRandom(rng, m.dt, a, pool), maskRandom(rng, m.dt, b, pool))
								cases++
							}
						}
					}
					t.Logf("small pages %v: %d cases", small, cases)
				}
			})
		})
	}
}
