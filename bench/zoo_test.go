package bench

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/vkops/vkops/tensor"
)

var update = flag.Bool("update", false, "rewrite zoo.json from ZooPatterns")

// TestZooFile checks that zoo.json, which bench/peers.py reads, is the
// zoo that ZooPatterns draws; go test -run TestZooFile -update rewrites it.
func TestZooFile(t *testing.T) {
	want := zooFile()
	if *update {
		if err := os.WriteFile("zoo.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("zoo.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("zoo.json differs from ZooPatterns: run go test ./bench -run TestZooFile -update")
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
