package spec

import "testing"

// The program's fields fit their words without overlapping, and hold
// what goes in them: every register, op code, key, fold and program
// length, and a bit for each input and scalar.
func TestFusedFields(t *testing.T) {
	for _, word := range [][]Field{headFields, insFields} {
		var used uint64
		for _, f := range word {
			bits := (uint64(1)<<f.Bits - 1) << f.Shift
			if f.Bits == 0 || bits>>32 != 0 || used&bits != 0 {
				t.Errorf("%s: bits %d-%d overlap another field or leave the word", f.Name, f.Shift, f.Shift+f.Bits-1)
			}
			used |= bits
		}
	}
	for _, c := range []struct {
		f    Field
		most int
	}{
		{InsRegA, FusedRegs - 1}, {InsRegB, FusedRegs - 1}, {InsRegC, FusedRegs - 1},
		{InsOp, len(opNames) - 1}, {HeadKey, len(keyNames) - 1}, {HeadFold, len(foldNames) - 1},
		{HeadOps, FusedMaxOps}, {HeadInBool, 1<<FusedInputs - 1}, {HeadScalarBool, 1<<FusedScalars - 1},
	} {
		if v := uint32(c.most); c.f.Get(c.f.Put(v)) != v {
			t.Errorf("%s (%d bits) cannot hold %d", c.f.Name, c.f.Bits, c.most)
		}
	}
}
