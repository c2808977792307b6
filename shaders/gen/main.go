// Command gen writes the shader sources that come from Go's tables
// (package shaders/spec), spec.glsl, the fused kernels' register file
// fused_regs.glsl and every module's .comp file, into
// the directory named by its argument, and removes the .comp files and
// their SPIR-V that name no module. It leaves a file that is already
// current untouched, so that make recompiles only what changed. make
// shaders runs it before glslc, and make check-shaders runs it into a
// temporary directory to prove the committed files current.
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vkops/vkops/shaders/spec"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./shaders/gen DIR")
		os.Exit(2)
	}
	if err := generate(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func generate(dir string) error {
	want := map[string]bool{}
	if err := update(filepath.Join(dir, "spec.glsl"), spec.Header()); err != nil {
		return err
	}
	if err := update(filepath.Join(dir, "fused_regs.glsl"), spec.FusedRegisters()); err != nil {
		return err
	}
	for _, m := range spec.Modules() {
		want[m.Name] = true
		if err := update(filepath.Join(dir, m.Name+".comp"), m.Source()); err != nil {
			return err
		}
	}
	stale, err := filepath.Glob(filepath.Join(dir, "*.comp"))
	if err != nil {
		return err
	}
	for _, f := range stale {
		if name := strings.TrimSuffix(filepath.Base(f), ".comp"); !want[name] {
			for _, g := range []string{f, strings.TrimSuffix(f, ".comp") + ".spv"} {
				if err := os.Remove(g); err != nil && !os.IsNotExist(err) {
					return err
				}
			}
		}
	}
	return nil
}

// update writes text to file unless the file holds it already.
func update(file, text string) error {
	if old, err := os.ReadFile(file); err == nil && bytes.Equal(old, []byte(text)) {
		return nil
	}
	return os.WriteFile(file, []byte(text), 0o644)
}
