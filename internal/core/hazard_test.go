package core

import "testing"

// Two wraps of one slice are two tensors over the same memory, so a
// command on a wrapped tensor waits, by a barrier, for every write to a
// wrapped tensor since the last one, and a write to one waits for every
// access to any; tensors of the pool, which never share memory, are
// ordered by their own accesses alone.
func TestHazardWrappedAliases(t *testing.T) {
	a, b := &Tensor{wrapped: true}, &Tensor{wrapped: true}
	p, q := &Tensor{}, &Tensor{}
	read := func(t *Tensor) access { return access{t, 0, 64, false} }
	write := func(t *Tensor) access { return access{t, 0, 64, true} }
	for _, c := range []struct {
		name  string
		first []access
		next  []access
		want  bool
	}{
		{"read of a wrap after a write to another", []access{write(a)}, []access{read(b)}, true},
		{"write to a wrap after a read of another", []access{read(a)}, []access{write(b)}, true},
		{"write to a wrap after a write to another", []access{write(a), read(p)}, []access{write(b), read(q)}, true},
		{"reads of two wraps", []access{read(a)}, []access{read(b)}, false},
		{"read of a wrap after a write to the pool", []access{write(p)}, []access{read(a)}, false},
		{"write to the pool after a write to a wrap", []access{write(a)}, []access{write(q), read(p)}, false},
		{"read of the pool after a write to it", []access{write(p)}, []access{read(p)}, true},
	} {
		var s stream
		s.epoch = 1
		for _, x := range []*Tensor{a, b, p, q} {
			x.hz = hazard{}
		}
		s.noted(&batch{}, c.first, s.needBarrier(c.first))
		if got := s.needBarrier(c.next); got != c.want {
			t.Errorf("%s: barrier %v, want %v", c.name, got, c.want)
		}
	}
}
