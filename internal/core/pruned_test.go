package core

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// Past the budget, the older half of the pruned modules goes, by
// modification time; under it, none does.
func TestTrimPruned(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	var names []string
	for i := range 6 {
		name := filepath.Join(dir, string(rune('a'+i))+".spv")
		writePruned(name, make([]byte, prunedBudget/8))
		// Oldest first: a.spv is written longest ago.
		if err := os.Chtimes(name, now, now.Add(time.Duration(i-10)*time.Hour)); err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.Base(name))
	}
	trimPruned(dir)
	if got := listSPV(t, dir); !slices.Equal(got, names) {
		t.Fatalf("under the budget, trim left %v, want %v", got, names)
	}
	for i := 6; i < 10; i++ {
		name := filepath.Join(dir, string(rune('a'+i))+".spv")
		writePruned(name, make([]byte, prunedBudget/8))
		names = append(names, filepath.Base(name))
	}
	// The ninth file went past the budget, and the four oldest went.
	if got := listSPV(t, dir); !slices.Equal(got, names[4:]) {
		t.Errorf("past the budget, trim left %v, want %v", got, names[4:])
	}
}

// A module read back is what was written, and a file cut short or
// changed is no module.
func TestReadPruned(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.spv")
	code := []byte{3, 2, 0x23, 7, 0, 0, 1, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0}
	writePruned(path, code)
	if got, ok := readPruned(path); !ok || !slices.Equal(got, code) {
		t.Fatalf("read back %v, %v; want %v", got, ok, code)
	}
	b, _ := os.ReadFile(path)
	for name, bad := range map[string][]byte{
		"cut short": b[:len(b)-1],
		"changed":   append(append([]byte{}, b[:4]...), append([]byte{0xff}, b[5:]...)...),
		"empty":     nil,
	} {
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, ok := readPruned(path); ok {
			t.Errorf("%s: read as a module", name)
		}
	}
	if _, ok := readPruned(filepath.Join(dir, "missing.spv")); ok {
		t.Error("a missing file read as a module")
	}
}

func listSPV(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.spv"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	slices.Sort(m)
	return m
}
