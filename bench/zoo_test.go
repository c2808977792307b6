package bench

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/vkops/vkops/tensor"
)

var update = flag.Bool("update", false, "rewrite zoo.json and reduce_zoo.json from the patterns")

// TestZooFile checks that zoo.json and reduce_zoo.json, which
// bench/peers.py reads, are the zoos that ZooPatterns and
// ReduceZooPatterns draw; go test -run TestZooFile -update rewrites them.
func TestZooFile(t *testing.T) {
	for name, want := range map[string][]byte{"zoo.json": zooFile(), "reduce_zoo.json": reduceZooFile()} {
		if *update {
			if err := os.WriteFile(name, want, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from its patterns: run go test ./bench -run TestZooFile -update", name)
		}
	}
}

// TestReduceZooPatterns checks that the reduce zoo covers what it
// promises: ranks 1 to 5, inputs of 4M to 32M, odd and prime lengths,
// axes of size 1, Or and And, kept dimensions, inner, outer and mixed
// axis sets, and every axis.
func TestReduceZooPatterns(t *testing.T) {
	zoo := ReduceZooPatterns()
	ranks, ops := map[int]bool{}, map[string]bool{}
	var prime, odd, unit, keep, inner, outer, mixed, all bool
	for _, p := range zoo {
		n := tensor.Shape(p.Shape).NumElements()
		if n < reduceZooMin || n > reduceZooMax {
			t.Errorf("%s: %d elements", p.Name, n)
		}
		ranks[len(p.Shape)] = true
		ops[p.Op] = true
		for _, d := range p.Shape {
			prime = prime || d > 1000 && nextPrime(d) == d
			odd = odd || d > 1000 && d%2 == 1
			unit = unit || d == 1
		}
		keep = keep || p.Keep
		last := p.Axes[len(p.Axes)-1] == len(p.Shape)-1
		inner = inner || len(p.Axes) == 1 && last && len(p.Shape) > 1
		outer = outer || !last
		mixed = mixed || last && len(p.Axes) > 1 && len(p.Axes) < len(p.Shape)
		all = all || len(p.Axes) == len(p.Shape)
	}
	if len(ranks) != 5 || len(ops) != 2 || !prime || !odd || !unit || !keep || !inner || !outer || !mixed || !all {
		t.Errorf("ranks %v, ops %v, prime %v, odd %v, size-1 axes %v, keep %v, inner %v, outer %v, mixed %v, all %v",
			ranks, ops, prime, odd, unit, keep, inner, outer, mixed, all)
	}
}

// TestZooPatterns checks that the zoo covers what it promises: ranks 1
// to 6, sizes from 4M to 16M, odd and prime lengths, axes of size 1,
// one-element operands, pdpd and wheres with scalars.
func TestZooPatterns(t *testing.T) {
	zoo := ZooPatterns()
	if len(zoo) < 30 {
		t.Fatalf("%d patterns, want at least 30", len(zoo))
	}
	ranks := map[int]bool{}
	var prime, odd, unit, one, pdpd, scalar bool
	for _, p := range zoo {
		n := tensor.Shape(p.Out).NumElements()
		if n < zooMin || n > zooMax {
			t.Errorf("%s: %d elements", p.Name, n)
		}
		ranks[len(p.Out)] = true
		for _, d := range p.Out {
			prime = prime || d > 1000 && nextPrime(d) == d
			odd = odd || d > 1000 && d%2 == 1
			unit = unit || d == 1
		}
		for _, s := range [][]int{p.Cond, p.Then, p.Else} {
			one = one || s != nil && tensor.Shape(s).NumElements() == 1
		}
		pdpd = pdpd || p.Mode == "pdpd"
		scalar = scalar || p.Then == nil || p.Else == nil
	}
	if len(ranks) != 6 || !prime || !odd || !unit || !one || !pdpd || !scalar {
		t.Errorf("ranks %v, prime %v, odd %v, size-1 axes %v, one-element operands %v, pdpd %v, scalars %v",
			ranks, prime, odd, unit, one, pdpd, scalar)
	}
}
