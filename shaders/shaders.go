// Package shaders embeds the SPIR-V of the GLSL compute shaders beside
// it. `make shaders` writes each module's NAME.comp into generated/ from
// shaders/spec's tables, apart from the hand-written GLSL here, and
// compiles it into NAME.spv with glslc, its ids renumbered densely by
// spirv-opt --compact-ids; the SPIR-V is committed, so that
// building vkops needs no shader compiler.
package shaders

import (
	"embed"
	"fmt"
)

//go:embed generated/*.spv
var spirv embed.FS

// SPIRV returns the compiled module of NAME.comp. It panics when there is
// none: a missing shader is a build mistake that every test catches, not
// a condition to handle at run time.
func SPIRV(name string) []byte {
	b, err := spirv.ReadFile("generated/" + name + ".spv")
	if err != nil {
		panic(fmt.Sprintf("shaders: %s.spv is not embedded; run make shaders", name))
	}
	return b
}
