package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/vkops/vkops/tensor"
)

// ceilingFile is, in a results directory, what bench/ceiling/run.sh
// printed: lavapipe's own kernels, written in C, timed on the same bytes
// as the suite's 64 MiB cases.
const ceilingFile = "ceiling.txt"

// A ceiling is the C harness's device times of its kernels over N f32.
type ceiling struct {
	n  int                  // f32 elements each kernel reads
	ms map[string][]float64 // by kernel name, each round's median
}

var (
	ceilingN    = regexp.MustCompile(`\bN=(\d+)`)
	ceilingLine = regexp.MustCompile(`^(\S+)\s+ts\s+([0-9.]+) ms`)
)

// readCeiling reads dir's ceilingFile; nil where there is none.
func readCeiling(dir string) (*ceiling, error) {
	data, err := os.ReadFile(filepath.Join(dir, ceilingFile))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	c := &ceiling{ms: map[string][]float64{}}
	for _, l := range strings.Split(string(data), "\n") {
		if m := ceilingN.FindStringSubmatch(l); m != nil && c.n == 0 {
			c.n, _ = strconv.Atoi(m[1])
		}
		if m := ceilingLine.FindStringSubmatch(l); m != nil {
			x, err := strconv.ParseFloat(m[2], 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %q: %w", ceilingFile, l, err)
			}
			c.ms[m[1]] = append(c.ms[m[1]], x)
		}
	}
	if c.n == 0 || len(c.ms) == 0 {
		return nil, fmt.Errorf("%s: no N= line or no kernel times", ceilingFile)
	}
	return c, nil
}

// kernels are the C kernels a case is set beside: for the reductions of
// 4N bools the one that does the least they must, read them
// (read-loop, 16 KiB an invocation as they read), and for those over
// axis 0 also the one that reads them in their order (read-cols); for
// the fused checks of N f32 the one that reads and folds them
// (check-loop); none for other cases.
func (c *ceiling) kernels(r *row) []string {
	elems := tensor.Shape(r.vk[0].Shape).NumElements()
	switch {
	case strings.HasPrefix(r.key.op, "reduce-") && r.key.dtype == "bool" && elems == 4*c.n:
		if r.key.pattern == "axis0" {
			return []string{"read-loop", "read-cols"}
		}
		return []string{"read-loop"}
	case r.key.op == "chain" && r.key.dtype == "f32" && elems == c.n && slices.Contains(r.labels, "fused=true") &&
		(r.key.pattern == "nan-check" || r.key.pattern == "finite-all"):
		return []string{"check-loop"}
	}
	return nil
}

// ceilingTable sets the cases of the same bytes beside the C kernel
// that does the least each must, device times, medians over the runs
// and the rounds; "" without a ceiling.
func ceilingTable(res *results) string {
	c := res.ceiling
	if c == nil {
		return ""
	}
	var b strings.Builder
	for _, r := range res.rows {
		vk := r.figure(func(s sample) float64 { return s.MedianMS }).med
		for _, k := range c.kernels(r) {
			if vk <= 0 || len(c.ms[k]) == 0 {
				continue
			}
			cs := spreadOf(c.ms[k])
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.name(), num(vk), k, cs, num(cs.med/vk))
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return fmt.Sprintf("Beside lavapipe's own ceiling: the C kernel that does the least each case must, on the same %d MiB "+
		"(bench/ceiling/run.sh with the C harness of ../shared/tools/lavapipe-ceiling, %d rounds, "+
		"run after the suite), device times; C / vkops of 1 is the ceiling reached. "+
		"The reductions over axis 0 are set beside read-cols too: the same loads in the order they read, "+
		"down columns of 16 KiB rows, eight 16-byte vectors side by side an invocation.\n\n"+
		"| case | vkops ms | C kernel | its ms | C / vkops |\n|---|---:|---|---:|---:|\n%s",
		4*c.n>>20, len(c.ms["read-loop"]), b.String())
}
