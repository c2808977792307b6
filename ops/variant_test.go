package ops

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/tensor"
)

// TestNilDevice: Tune of a nil device is an error, and Variants lists
// nothing for it, rather than either panicking.
func TestNilDevice(t *testing.T) {
	if vi, err := Tune(nil); vi != nil || err == nil || !errors.Is(err, ErrInvalid) {
		t.Errorf("Tune(nil) = %v, %v; want an error matching ErrInvalid", vi, err)
	}
	if vi := Variants(nil); vi != nil {
		t.Errorf("Variants(nil) = %v, want nil", vi)
	}
}

// Every default names a family that exists and a variant of it, so that
// renaming one cannot quietly turn the table off.
func TestDriverDefaultsTable(t *testing.T) {
	for _, dd := range driverDefaults {
		found := false
		for _, f := range families() {
			if f.key != dd.family && !(strings.HasSuffix(dd.family, "/") && strings.HasPrefix(f.key, dd.family)) {
				continue
			}
			for _, v := range f.variants {
				found = found || v.name == dd.variant
			}
		}
		if !found {
			t.Errorf("default %s=%s: no such family or variant", dd.family, dd.variant)
		}
	}
}

// On a driver the table knows, first calls take its defaults without
// measuring anything; elsewhere, or without the table, they measure and
// store the choice.
func TestDriverDefaults(t *testing.T) {
	d := devtest.Open(t, device.Options{})
	rng := rand.New(rand.NewPCG(8, 9))
	known := false
	var missing []string
	for _, f := range families() {
		v := f.byDefault(d)
		if v == nil {
			missing = append(missing, f.key)
			continue
		}
		known = true
		if !v.eligible(d) {
			t.Errorf("%s: default %s is not eligible on %s", f.key, v.name, d)
		}
	}
	// A driver the table knows measures nothing on a first call: a
	// family without a default built and timed every variant, 0.3 s.
	if known && len(missing) > 0 {
		t.Errorf("%s: no default for %v", d, missing)
	}
	t.Logf("%s, driver ID %d: defaults known: %v", d, d.Info().DriverID, known)
	checkSelect(t, d, randomHost(rng, tensor.Bool, tensor.Shape{30}), randomHost(rng, tensor.F32, tensor.Shape{30}), randomHost(rng, tensor.F32, tensor.Shape{30}))
	_, stored := bridge.Device(d).Choice(selectElem.families[4][classSame].key)
	if known == stored {
		t.Errorf("defaults known %v, but a first select stored a measured choice: %v", known, stored)
	}
	if vi := selectElem.families[4][classSame].info(d); vi.Chosen == "" || vi.Default != known {
		t.Errorf("info %+v after a select", vi)
	}

	saved := driverDefaults
	driverDefaults = nil
	t.Cleanup(func() { driverDefaults = saved })
	checkSelect(t, d, randomHost(rng, tensor.Bool, tensor.Shape{30}), randomHost(rng, tensor.U8, tensor.Shape{30}), randomHost(rng, tensor.U8, tensor.Shape{30}))
	if _, ok := bridge.Device(d).Choice(selectElem.families[1][classSame].key); !ok {
		t.Error("without defaults, a first select stored no choice")
	}
}

// $VKOPS_VARIANT names a variant of some family: one of another family
// runs the portable variant, and a name no family has is refused with
// the valid names, as a bad $VKOPS_PROFILE is, rather than ignored.
func TestForcedVariantName(t *testing.T) {
	f := minmaxElem.families[4][0]
	for _, c := range []struct {
		name string
		want string // the variant picked, or "" for an error
	}{
		{"portable", "portable"},
		{" portable ", "portable"},
		{"texel-subgroup", "portable"}, // a reduction's variant only
		{"bogus", ""},
		{"Texel", ""},
	} {
		t.Setenv("VKOPS_VARIANT", c.name)
		v, err := f.pick(nil) // no device: names are settled before any is asked
		switch {
		case c.want == "" && (err == nil || !strings.Contains(err.Error(), `$VKOPS_VARIANT is "`+strings.TrimSpace(c.name)+`": want portable, texel, `)):
			t.Errorf("VKOPS_VARIANT=%q: pick = %v, %v; want an error naming the variable, the value and the choices", c.name, v, err)
		case c.want != "" && (err != nil || v.name != c.want):
			t.Errorf("VKOPS_VARIANT=%q: pick = %v, %v; want variant %s", c.name, v, err, c.want)
		}
	}
}

// eachVariant runs f as a subtest per variant of vs, with the variant
// forced; those d cannot run are skipped. With -short only the last
// variant d can run does, the one with the most paths.
func eachVariant(t *testing.T, d *device.Device, vs []*variant, f func(t *testing.T)) {
	if testing.Short() {
		i := len(vs) - 1
		for i > 0 && !vs[i].eligible(d) {
			i--
		}
		vs = vs[i : i+1]
	}
	for _, v := range vs {
		t.Run(v.name, func(t *testing.T) {
			if !v.eligible(d) {
				t.Skipf("SKIP: %v cannot run variant %s", d, v.name)
			}
			t.Setenv("VKOPS_VARIANT", v.name)
			f(t)
		})
	}
}

// variantsInTurn runs f as a subtest per variant of vs that d can run,
// with the variant forced, as eachVariant does, but the variants share
// one matrix of cases instead of each running all of it: f runs the
// cases whose turn mine accepts, turn mod the number of variants being
// the subtest's index. The variants differ only in how they load and
// store, so each needs every mode and every kind of case, not every
// case: a case's turn sums its indices in the matrix's loops, so that
// every kind of case meets every variant across the other loops. With
// -short only the last variant runs its share, as with eachVariant.
func variantsInTurn(t *testing.T, d *device.Device, vs []*variant, f func(t *testing.T, mine func(turn int) bool)) {
	var eligible []*variant
	for _, v := range vs {
		if v.eligible(d) {
			eligible = append(eligible, v)
		} else {
			t.Logf("SKIP: %v cannot run variant %s", d, v.name)
		}
	}
	n := len(eligible)
	for k, v := range eligible {
		if testing.Short() && k != n-1 {
			continue
		}
		t.Run(v.name, func(t *testing.T) {
			t.Setenv("VKOPS_VARIANT", v.name)
			f(t, func(turn int) bool { return turn%n == k })
		})
	}
}

// lastInTurn returns whether a case of turn runs with the last variant
// d can run of vs in variantsInTurn: -short's share.
func lastInTurn(d *device.Device, vs []*variant, turn int) bool {
	n := 0
	for _, v := range vs {
		if v.eligible(d) {
			n++
		}
	}
	return turn%n == n-1
}
