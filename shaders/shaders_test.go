package shaders

import (
	"encoding/binary"
	"testing"

	"github.com/vkops/vkops/shaders/spec"
)

// Every module vkops runs is embedded and starts with SPIR-V's magic
// number: ops reads a module only when a device first builds one of its
// pipelines, so a missing one would not show when the program starts.
func TestModulesEmbedded(t *testing.T) {
	for _, m := range spec.Modules() {
		b := SPIRV(m.Name)
		if len(b) < 20 || len(b)%4 != 0 || binary.LittleEndian.Uint32(b) != 0x07230203 {
			t.Errorf("%s: %d bytes, not a SPIR-V module", m.Name, len(b))
		}
	}
}
