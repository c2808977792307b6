package bench

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// ReduceZooPattern is one reduction of the reduce zoo: a bool tensor of
// Shape reduced over Axes (ascending, none negative), as a user might
// write it rather than as the suite names it.
type ReduceZooPattern struct {
	Name  string `json:"name"`
	Op    string `json:"op"` // "reduce-or" or "reduce-and"
	Shape []int  `json:"shape"`
	Axes  []int  `json:"axes"`
	Keep  bool   `json:"keep"`
}

// The reduce zoo's inputs hold from reduceZooMin to reduceZooMax bools.
const (
	reduceZooMin = 4 << 20
	reduceZooMax = 32 << 20
)

// reduceZooSize is how many patterns the reduce zoo has.
const reduceZooSize = 24

// ReduceZooPatterns returns the reduce zoo: a fixed set of seeded random
// reductions of 4M to 32M bools. Ranks run from 1 to 5, with odd, prime
// and even lengths and axes of size 1 anywhere; each axis is reduced
// with probability 1/2 (at least one), some keep their dimensions, and
// Or and And alternate.
func ReduceZooPatterns() []ReduceZooPattern {
	rng := rand.New(rand.NewPCG(38, 0x727a6f6f))
	var zoo []ReduceZooPattern
	for len(zoo) < reduceZooSize {
		i := len(zoo)
		shape, ok := zooShape(rng, 1+i%5, reduceZooMin, reduceZooMax)
		if !ok {
			continue
		}
		p := ReduceZooPattern{Name: fmt.Sprintf("rzoo-%02d", i), Op: reduceOps[i%2].name, Shape: shape, Keep: rng.IntN(3) == 0}
		for len(p.Axes) == 0 {
			for d := range shape {
				if rng.IntN(2) == 0 {
					p.Axes = append(p.Axes, d)
				}
			}
		}
		zoo = append(zoo, p)
	}
	return zoo
}

// ReduceZoo returns the reduce zoo's cases, named by pattern ("rzoo-00"
// and on), each on the data where every byte must be read.
func ReduceZoo() []*Case {
	var cs []*Case
	for _, p := range ReduceZooPatterns() {
		for _, op := range reduceOps {
			if op.name == p.Op {
				cs = append(cs, op.reduceCase(p.Name, p.Shape, p.Axes, p.Keep, op.worst()))
			}
		}
	}
	return cs
}

// reduceZooFile returns the reduce zoo as bench/reduce_zoo.json holds it
// for bench/peers.py; TestZooFile keeps the file up to date.
func reduceZooFile() []byte {
	return jsonLines(ReduceZooPatterns())
}

// jsonLines returns the values as a JSON array of one value per line.
func jsonLines[T any](vs []T) []byte {
	b := []byte("[\n")
	for i, v := range vs {
		line, err := json.Marshal(v)
		if err != nil {
			panic("bench: " + err.Error())
		}
		b = append(b, line...)
		if i+1 < len(vs) {
			b = append(b, ',')
		}
		b = append(b, '\n')
	}
	return append(b, "]\n"...)
}

// IsReduceZoo reports whether c is one of the reduce zoo's cases.
func IsReduceZoo(c *Case) bool { return strings.HasPrefix(c.Pattern, "rzoo-") }
