package core

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync"

	"github.com/vkops/vkops/vk"
)

func cacheDir(dir string) string {
	switch dir {
	case "-":
		return ""
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		return filepath.Join(base, "vkops")
	}
	return dir
}

// mesaCache is the value vkops gave MESA_SHADER_CACHE_DIR, if any, so
// that a later Open with another cache directory moves it there, where
// a value the user set stays.
var mesaCache struct {
	sync.Mutex
	set string
}

// useMesaCache points Mesa's shader cache at dir/mesa, made if missing,
// where the user has named none (MESA_SHADER_CACHE_DIR, or
// MESA_GLSL_CACHE_DIR, its old name) and dir is set, so that vkops's
// cache directory holds all that a first call can reuse: lavapipe's
// pipeline cache keeps nothing, and Mesa's cache took a fused chain's
// first call from 0.20 to 0.15 s and a select's from 51 to 15 ms
// (lavapipe 22.3.6). Mesa reads the variable as the driver loads, before
// vkops knows which driver it is, so it is set for any; other drivers
// ignore it. The variable is the process's: the last Open's directory,
// or Mesa's default after an Open without one.
func useMesaCache(dir string) error {
	mesaCache.Lock()
	defer mesaCache.Unlock()
	cur := os.Getenv("MESA_SHADER_CACHE_DIR")
	if cur != "" && cur != mesaCache.set || os.Getenv("MESA_GLSL_CACHE_DIR") != "" {
		return nil // the user's
	}
	want := filepath.Join(dir, "mesa")
	if dir == "" || os.MkdirAll(want, 0o755) != nil {
		// No usable vkops directory (none, or one that cannot be made,
		// as under a home that is not writable): Mesa's own default, not
		// the directory of an earlier Open, which may be gone. A cache
		// is a speed-up, never a reason to refuse a device.
		mesaCache.set = ""
		return os.Unsetenv("MESA_SHADER_CACHE_DIR")
	}
	if err := os.Setenv("MESA_SHADER_CACHE_DIR", want); err != nil {
		return fmt.Errorf("device: Mesa's shader cache: %w", err)
	}
	mesaCache.set = want
	return nil
}

// cacheFile names the pipeline cache of this device and driver: a driver
// update or another device never reads a stale cache (the driver would
// reject it anyway, but only after reading it).
func (d *Device) cacheFile() string {
	if d.cacheDir == "" {
		return ""
	}
	return filepath.Join(d.cacheDir, fmt.Sprintf("pipelines-%s-%x.bin", d.info.UUID, d.info.DriverVersion))
}

func (d *Device) loadPipelineCache() (*vk.PipelineCache, error) {
	var data []byte
	if f := d.cacheFile(); f != "" {
		data, _ = os.ReadFile(f) // a missing or unreadable cache is an empty one
	}
	return d.dev.NewPipelineCache(data)
}

// savePipelineCache writes the cache when this run built new pipelines.
// It writes a temporary file and renames it, so that concurrent runs
// never see half a cache.
func (d *Device) savePipelineCache() error {
	f := d.cacheFile()
	if f == "" || d.newPipes == 0 || d.cache == nil {
		return nil
	}
	data, err := d.cache.Data()
	if err != nil || len(data) == 0 {
		return err
	}
	// No cache dir is no error: the next run compiles again.
	writeCacheFile(f, data)
	return nil
}

// writeCacheFile writes data to path through a temporary file renamed
// into place, so that concurrent runs never read half a file, and
// reports whether it did; a failure leaves no file behind.
func writeCacheFile(path string, data []byte) bool {
	dir := filepath.Dir(path)
	if os.MkdirAll(dir, 0o755) != nil {
		return false
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+"-*.tmp")
	if err != nil {
		return false
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
		return false
	}
	return true
}

// Choices persist small decisions per device and driver beside the
// pipeline cache: the kernel variant that measured fastest for each op
// class, so later runs start with it.

func (d *Device) choicesFile() string {
	if d.cacheDir == "" {
		return ""
	}
	return filepath.Join(d.cacheDir, fmt.Sprintf("variants-%s-%x.json", d.info.UUID, d.info.DriverVersion))
}

func (d *Device) loadChoices() {
	d.choices = map[string]string{}
	if f := d.choicesFile(); f != "" {
		if b, err := os.ReadFile(f); err == nil {
			_ = json.Unmarshal(b, &d.choices) // a corrupt file is an empty one
		}
	}
}

func (d *Device) saveChoices() {
	f := d.choicesFile()
	if f == "" || !d.choicesDirty {
		return
	}
	if b, err := json.MarshalIndent(d.choices, "", "  "); err == nil {
		writeCacheFile(f, b)
	}
}

// Choice returns the value stored under key for this device and driver.
func (d *Device) Choice(key string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	v, ok := d.choices[key]
	return v, ok
}

// SetChoice stores value under key; Close saves the choices beside the
// pipeline cache.
func (d *Device) SetChoice(key, value string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.choices[key] != value {
		d.choices[key] = value
		d.choicesDirty = true
	}
}

// Choices returns a copy of every stored choice.
func (d *Device) Choices() map[string]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return maps.Clone(d.choices)
}
