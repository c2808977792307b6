package tests

import (
	"testing"

	"github.com/vkops/vkops/bench"
	"github.com/vkops/vkops/tensor"
)

// zooElems is about how many output elements each zoo pattern keeps in
// TestSelectZoo: enough for rows of several blocks, few enough that
// every pattern, width and variant runs in seconds.
const zooElems = 3000

// TestSelectZoo runs every pattern of the benchmark's zoo
// (bench.ZooPatterns), shrunk by ZooPattern.Small, with the usual pages
// and, unless -short, with 4 KiB pages, against cpuref. The patterns
// take the element widths in turn (1, 2, 4 and 8 bytes), so each width
// meets a quarter of the zoo: every pattern and width builds pipelines
// of its own, which is most of the test's time on lavapipe. The variants
// of the select kernel take the patterns in turn too, shifted by one on
// 4 KiB pages: each variant meets each width on each page size, and
// each pattern meets two variants.
func TestSelectZoo(t *testing.T) {
	cases := 0
	for p, small := range []bool{false, true} {
		if small && testing.Short() {
			continue
		}
		d := selOpen(t, small)
		vt := kernelTurns(t, d, "select")
		for i, zp := range bench.ZooPatterns() {
			q := zp.Small(zooElems)
			dt := []tensor.DType{tensor.Bool, tensor.F16, tensor.F32, tensor.F64}[i%4]
			c := q.Case(dt)
			vt.use(i + p)
			res, err := bench.Compare(d, c)
			switch {
			case err != nil:
				t.Errorf("%s (small-pages=%v): %v", c.Name(), small, err)
			case !res.Agree:
				t.Errorf("%s (%s cond %v then %v else %v, small-pages=%v): %s", c.Name(), zp.Mode, q.Cond, q.Then, q.Else, small, res.Mismatch)
			}
			cases++
		}
		t.Logf("small-pages=%v: %v", small, vt)
	}
	t.Logf("%d zoo cases", cases)
}
