package core

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vkops/vkops/internal/spirv"
)

// Pruned modules persist in the cache directory, so that a later
// process hands the driver a kernel's module for the same constants
// without pruning it again: spirv.Prune took 4-5 ms of a warm first
// call of a fused ReLU and 7-9 ms of the clamp's (lavapipe, 2026-12-02).
// A file is named by a digest of the module, the constants and
// spirv.Version, so that what it holds is a pruning of exactly that
// module for those constants whatever build of vkops wrote it; it ends
// in a digest of what it holds, so that a damaged file is pruned again,
// never handed to the driver.

// prunedBudget bounds the bytes of the pruned modules kept: past it,
// the older half goes. A fused module pruned is 10-70 KB.
const prunedBudget = 32 << 20

// prunedModule returns k's module pruned for spec, from the cache
// directory where an earlier run left it; d.mu must be held.
func (d *Device) prunedModule(k *Kernel, spec []uint32) []byte {
	path := d.prunedFile(k, spec)
	if path != "" {
		if code, ok := readPruned(path); ok {
			return code
		}
	}
	code := spirv.Prune(k.code(), spec)
	if path != "" {
		writePruned(path, code)
	}
	return code
}

// prunedFile names the file of k's module pruned for spec, "" where
// there is no cache directory.
func (d *Device) prunedFile(k *Kernel, spec []uint32) string {
	if d.cacheDir == "" {
		return ""
	}
	h := sha256.New()
	sum := k.sum()
	h.Write(sum[:])
	var w [4]byte
	for _, v := range append([]uint32{spirv.Version, uint32(len(spec))}, spec...) {
		binary.LittleEndian.PutUint32(w[:], v)
		h.Write(w[:])
	}
	return filepath.Join(d.cacheDir, "pruned", hex.EncodeToString(h.Sum(nil)[:16])+".spv")
}

// prunedKept reports whether an earlier process left k's module pruned
// for spec in the cache directory.
func (d *Device) prunedKept(k *Kernel, spec []uint32) bool {
	path := d.prunedFile(k, spec)
	if path == "" {
		return false
	}
	_, err := os.Stat(path)
	return err == nil
}

// readPruned reads a module that writePruned wrote, and reports whether
// it is whole.
func readPruned(path string) ([]byte, bool) {
	b, err := os.ReadFile(path)
	if err != nil || len(b) < sha256.Size+20 {
		return nil, false
	}
	code, sum := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	want := sha256.Sum256(code)
	return code, len(code)%4 == 0 && bytes.Equal(sum, want[:])
}

// writePruned writes code and its digest to path, and keeps the
// directory within prunedBudget.
func writePruned(path string, code []byte) {
	sum := sha256.Sum256(code)
	if writeCacheFile(path, append(slices.Clip(code), sum[:]...)) {
		trimPruned(filepath.Dir(path))
	}
}

// trimPruned removes the older half of dir's modules, by modification
// time, where they hold more than prunedBudget bytes.
func trimPruned(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type file struct {
		name string
		mod  int64
		size int64
	}
	var files []file
	var total int64
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !strings.HasSuffix(e.Name(), ".spv") {
			continue
		}
		files = append(files, file{e.Name(), info.ModTime().UnixNano(), info.Size()})
		total += info.Size()
	}
	if total <= prunedBudget {
		return
	}
	slices.SortFunc(files, func(a, b file) int { return cmp.Compare(a.mod, b.mod) })
	for _, f := range files[:len(files)/2] {
		os.Remove(filepath.Join(dir, f.name))
	}
}
