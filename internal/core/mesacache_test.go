package core

import (
	"os"
	"testing"
)

// useMesaCache names Mesa's shader cache under vkops's directory only
// where the user named none and vkops has one, and moves its own choice
// to the directory of a later Open; a directory it cannot make is no
// error, as Open must not fail for a cache.
func TestUseMesaCache(t *testing.T) {
	c, u := t.TempDir(), t.TempDir()
	f := c + "/file" // a file where a directory would go: MkdirAll fails
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir, shader, glsl, want string
	}{
		{"unset", c, "", "", c + "/mesa"},
		{"user's", c, "/u", "", "/u"},
		{"user's old name", c, "", "/g", ""},
		{"no vkops dir", "", "", "", ""},
		{"vkops's, moved", u, c + "/mesa", "", u + "/mesa"},
		{"vkops's, none now", "", c + "/mesa", "", ""},
		{"vkops's cannot be made", f + "/sub", c + "/mesa", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("MESA_SHADER_CACHE_DIR", tt.shader)
			t.Setenv("MESA_GLSL_CACHE_DIR", tt.glsl)
			mesaCache.set = c + "/mesa"
			t.Cleanup(func() { mesaCache.set = "" })
			if err := useMesaCache(tt.dir); err != nil {
				t.Fatal(err)
			}
			if got := os.Getenv("MESA_SHADER_CACHE_DIR"); got != tt.want {
				t.Errorf("MESA_SHADER_CACHE_DIR = %q, want %q", got, tt.want)
			}
		})
	}
}
