package ops

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/core"
)

// A variant is one kernel that can run a plan: the portable one, which
// needs no optional device feature, or a faster one that needs something
// of the device (texel-buffer formats, shaderInt64, subgroup operations).
type variant struct {
	name   string
	kernel *core.Kernel
	// rows is the variant's kernel of blocks of whole rows (modeRows),
	// a module of its own so that its code does not slow the building
	// of the other modes' pipelines.
	rows *core.Kernel
	// seams is the variant's kernel of the blocks that a row begins
	// inside (modeSeams), a module of its own as rows is.
	seams *core.Kernel
	// whole, where set, is the variant's kernel of modeWhole, a module
	// of its own as rows is; kernel then runs modeAll and modeEnds.
	whole *core.Kernel
	// needs reports whether the device has what the variant needs; nil
	// for the portable variant.
	needs func(d *device.Device) bool
}

func (v *variant) eligible(d *device.Device) bool { return v.needs == nil || v.needs(d) }

// A family is the variants that run the same plan class of an op at one
// element width; which is fastest depends on the driver, so the choice is
// made by measurement, once per device and driver, and stored beside the
// pipeline cache.
type family struct {
	key      string     // the choice key, e.g. "select/w4/same"
	variants []*variant // variants[0] is the portable one
	// measure times one representative run of v on d in nanoseconds of
	// device time.
	measure func(d *device.Device, v *variant) (float64, error)
	// picked is the last pick and its device: every op picks, and looking
	// the choice up by name, then the driver's defaults, cost more than
	// recording the op's dispatch.
	picked atomic.Pointer[pick]
}

// pick is a family's variant for one device.
type pick struct {
	d *device.Device
	v *variant
}

var registry struct {
	sync.Mutex
	families []*family
	// choosing serialises first-use measurements, so two goroutines do
	// not time the same family at once on a shared device.
	choosing sync.Mutex
}

// register adds f to the families that Tune and Variants know.
func register(f *family) *family {
	registry.Lock()
	defer registry.Unlock()
	registry.families = append(registry.families, f)
	return f
}

// forced returns the variant name that $VKOPS_VARIANT forces, if any:
// for tests and for reproducing a bug on one variant.
func forced() string { return strings.TrimSpace(os.Getenv("VKOPS_VARIANT")) }

// A driverDefault is the variant that `vkops tune` measured fastest for a
// family (a key, or a prefix ending in "/") on a known driver. A first
// call takes it without measuring, which on lavapipe meant building every
// variant's pipeline and timing each on 16 MiB: 0.2-0.6 s before the
// user's op ran. `vkops tune` measures anyway and its choice overrides.
type driverDefault struct {
	vendor  uint32
	driver  core.DriverID
	family  string
	variant string
}

// driverDefaults come from BENCHMARKS.md at a602088, "Kernel variants".
var driverDefaults = []driverDefault{
	// Lavapipe (Mesa llvmpipe): texel loads, and 64-bit stores where the
	// variant has them, are several times faster than storage buffers.
	{0x10005, core.DriverMesaLLVMpipe, "select/", "texel64"},
	{0x10005, core.DriverMesaLLVMpipe, "reduce/rows", "texel"},
	{0x10005, core.DriverMesaLLVMpipe, "reduce/cols", "texel"},
	{0x10005, core.DriverMesaLLVMpipe, "reduce/split", "texel-subgroup"},
	{0x10005, core.DriverMesaLLVMpipe, "mask/", "texel64"},
	// `vkops tune` at 33912b7: texel fastest in all eight minmax
	// families (2.4-3.6 ms against 3.8-4.2 for texel64); without a
	// default, Maximum's first call built and timed all three, 0.34 s.
	{0x10005, core.DriverMesaLLVMpipe, "minmax/", "texel"},
	{0x10005, core.DriverMesaLLVMpipe, "fused1/", "texel64"},
	{0x10005, core.DriverMesaLLVMpipe, "fused2/", "texel64"},
	{0x10005, core.DriverMesaLLVMpipe, "fused3/", "texel64"},
	{0x10005, core.DriverMesaLLVMpipe, "fused4/", "texel64"},
}

// byDefault returns the driver's default variant for f, if the table has
// one that d can run.
func (f *family) byDefault(d *device.Device) *variant {
	info := d.Info()
	for _, dd := range driverDefaults {
		if dd.vendor != info.VendorID || dd.driver != info.DriverID {
			continue
		}
		if dd.family != f.key && !(strings.HasSuffix(dd.family, "/") && strings.HasPrefix(f.key, dd.family)) {
			continue
		}
		for _, v := range f.variants {
			if v.name == dd.variant && v.eligible(d) {
				return v
			}
		}
	}
	return nil
}

// pick returns the variant to run on d: the forced one, else the stored
// choice, else the driver's default, else the fastest eligible one,
// measured now and stored.
func (f *family) pick(d *device.Device) (*variant, error) {
	if name := forced(); name != "" {
		for _, v := range f.variants {
			if v.name == name {
				if !v.eligible(d) {
					return nil, fmt.Errorf("%s: VKOPS_VARIANT=%s: the variant needs a feature %s lacks", f.key, name, d)
				}
				return v, nil
			}
		}
		// A variant of other families only: the portable one runs here.
		// A name no family has is a mistake, refused as a bad
		// $VKOPS_PROFILE is rather than run as if unset.
		if names := variantNames(); !slices.Contains(names, name) {
			return nil, fmt.Errorf("ops: $VKOPS_VARIANT is %q: want %s or empty", name, strings.Join(names, ", "))
		}
		return f.variants[0], nil
	}
	if p := f.picked.Load(); p != nil && p.d == d {
		return p.v, nil
	}
	v := f.stored(d)
	if v == nil {
		v = f.byDefault(d)
	}
	if v != nil {
		f.picked.Store(&pick{d, v})
		return v, nil
	}
	registry.choosing.Lock()
	defer registry.choosing.Unlock()
	if v := f.stored(d); v != nil { // measured while we waited
		return v, nil
	}
	best, _, err := f.tune(d)
	return best, err
}

func (f *family) stored(d *device.Device) *variant {
	name, ok := bridge.Device(d).Choice(f.key)
	if !ok {
		return nil
	}
	for _, v := range f.variants {
		if v.name == name && v.eligible(d) {
			return v
		}
	}
	return nil
}

// tune measures every eligible variant, stores the fastest as the choice
// and returns it with the times measured (0 for variants not eligible).
// A variant that fails to run is never chosen.
func (f *family) tune(d *device.Device) (*variant, []float64, error) {
	times := make([]float64, len(f.variants))
	var eligible []int
	for i, v := range f.variants {
		if v.eligible(d) {
			eligible = append(eligible, i)
		}
	}
	best := 0
	if len(eligible) > 1 {
		for _, i := range eligible {
			ns, err := f.measure(d, f.variants[i])
			if err != nil {
				if derr := d.Err(); derr != nil {
					return nil, times, fmt.Errorf("%s: %w", f.key, derr)
				}
				if i == 0 {
					// Measuring needs memory the op itself may not (a
					// nearly full device): run the portable variant and
					// measure another time.
					return f.variants[0], times, nil
				}
				continue
			}
			times[i] = ns
			if times[best] == 0 || ns < times[best] {
				best = i
			}
		}
	}
	bridge.Device(d).SetChoice(f.key, f.variants[best].name)
	f.picked.Store(&pick{d, f.variants[best]})
	return f.variants[best], times, nil
}

// VariantInfo describes the variants of one family on a device.
type VariantInfo struct {
	Family   string   `json:"family"`
	Variants []string `json:"variants"` // every variant the family has
	Eligible []string `json:"eligible"` // those the device can run
	Chosen   string   `json:"chosen"`   // the stored choice, else the driver's default; "" when neither
	Default  bool     `json:"default"`  // Chosen is the driver's default, not measured here
	// TimesNS are the device times measured by Tune, by variant; absent
	// from Variants.
	TimesNS []float64 `json:"times_ns,omitempty"`
}

func (f *family) info(d *device.Device) VariantInfo {
	vi := VariantInfo{Family: f.key}
	for _, v := range f.variants {
		vi.Variants = append(vi.Variants, v.name)
		if v.eligible(d) {
			vi.Eligible = append(vi.Eligible, v.name)
		}
	}
	if v := f.stored(d); v != nil {
		vi.Chosen = v.name
	} else if v := f.byDefault(d); v != nil {
		vi.Chosen, vi.Default = v.name, true
	}
	return vi
}

// variantNames returns the names of every family's variants, sorted,
// each once.
func variantNames() []string {
	var names []string
	for _, f := range families() {
		for _, v := range f.variants {
			names = append(names, v.name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func families() []*family {
	registry.Lock()
	defer registry.Unlock()
	fs := slices.Clone(registry.families)
	slices.SortFunc(fs, func(a, b *family) int { return strings.Compare(a.key, b.key) })
	return fs
}

// Variants lists every kernel family of every op, its variants, those d
// can run and the one chosen for d so far; nil for a nil d.
func Variants(d *device.Device) []VariantInfo {
	if d == nil {
		return nil
	}
	var out []VariantInfo
	for _, f := range families() {
		out = append(out, f.info(d))
	}
	return out
}

// Tune measures every eligible variant of every family on d, stores the
// fastest of each beside the pipeline cache (saved when d is closed), and
// reports what it measured.
func Tune(d *device.Device) ([]VariantInfo, error) {
	if d == nil {
		return nil, misusef("tune: the device is nil")
	}
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	registry.choosing.Lock()
	defer registry.choosing.Unlock()
	var out []VariantInfo
	for _, f := range families() {
		_, times, err := f.tune(d)
		if err != nil {
			return out, err
		}
		vi := f.info(d)
		vi.TimesNS = times
		out = append(out, vi)
	}
	return out, nil
}
