package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/npy"
	"github.com/vkops/vkops/tensor"
)

// parseNumber tells numbers from file names: every spelling of a number,
// signed ones and ones beyond float64's range included, and nothing else.
func TestParseNumber(t *testing.T) {
	for _, c := range []struct {
		s    string
		want any // nil: a number beyond float64's range; "file": not a number
	}{
		{"42", int64(42)},
		{"-1", int64(-1)},
		{"-0x7f", int64(-127)},
		{"0b101", int64(5)},
		{"1_000", int64(1000)},
		{"18446744073709551615", uint64(math.MaxUint64)},
		{"-2.5", -2.5},
		{"1e-400", 0.0},
		{"0x1p-2", 0.25},
		{"-inf", math.Inf(-1)},
		{"+Infinity", math.Inf(1)},
		{"99999999999999999999", 1e20},
		{"0x1_0000_0000_0000_0000", 0x1p64},
		{"-0o2000000000000000000000", -0x1p64},
		{"1e400", nil},
		{"-1e400", nil},
		{"-0x1p2000", nil},
		{"0x1" + fmt.Sprintf("%0300d", 0), nil},
		{"abc", "file"},
		{"1e400x", "file"},
		{"x.npy", "file"},
		{"", "file"},
		{"-", "file"},
		{"0x", "file"},
		{"+-1", "file"},
		{" 1", "file"},
		{"nan1", "file"},
		{"1/2", "file"},
	} {
		v, ok := parseNumber(c.s)
		switch {
		case c.want == "file":
			if ok {
				t.Errorf("parseNumber(%q) = %v, true; want no number", c.s, v)
			}
		case !ok || fmt.Sprintf("%T %v", v, v) != fmt.Sprintf("%T %v", c.want, c.want):
			t.Errorf("parseNumber(%q) = %T %v, %v; want %T %v, true", c.s, v, v, ok, c.want, c.want)
		}
	}
	for _, s := range []string{"nan", "NaN", "+nan", "-nan", "-NAN"} {
		v, ok := parseNumber(s)
		if f, isFloat := v.(float64); !ok || !isFloat || !math.IsNaN(f) || math.Signbit(f) != (s[0] == '-') {
			t.Errorf("parseNumber(%q) = %v, %v; want a NaN of its sign", s, v, ok)
		}
	}
}

// The rule of the --help: where a number may stand, an argument that
// reads as one is a number even when a file of that name exists, and
// ./NAME names the file; where only a file goes, the argument is a path.
func TestNumberOperandFileNames(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.npy")
	writeNpy(t, dir, "c.npy", selHost(t, []int{3}, true, false, true))
	writeNpy(t, dir, "x.npy", selHost(t, []int{3}, float32(7), 8, 9))
	writeNpy(t, dir, "1", selHost(t, []int{3}, float32(5), float32(math.NaN()), 6))
	writeNpy(t, dir, "-1", selHost(t, []int{3}, float32(-5), -6, -7))
	for _, c := range []struct {
		args []string
		want *tensor.Host
	}{
		{[]string{"where", "c.npy", "1", "x.npy"}, selHost(t, []int{3}, float32(1), 8, 1)},
		{[]string{"where", "c.npy", "./1", "x.npy"}, selHost(t, []int{3}, float32(5), 8, 6)},
		{[]string{"where", "c.npy", "x.npy", "-1"}, selHost(t, []int{3}, float32(7), -1, 9)},
		{[]string{"where", "c.npy", "x.npy", "./-1"}, selHost(t, []int{3}, float32(7), -6, 9)},
		{[]string{"less", "1", "x.npy"}, selHost(t, []int{3}, true, true, true)},
		{[]string{"less", "./1", "x.npy"}, selHost(t, []int{3}, true, false, true)},
		{[]string{"greater", "-1", "./-1"}, selHost(t, []int{3}, true, true, true)},
		{[]string{"equal", "./-1", "-6"}, selHost(t, []int{3}, false, true, false)},
		{[]string{"is-nan", "1"}, selHost(t, []int{3}, false, true, false)},
		{[]string{"select", "c.npy", "-1", "x.npy"}, selHost(t, []int{3}, float32(-5), 8, -7)},
	} {
		args := append(c.args, "-o", out)
		stdout, stderr, code := vkopsIn(t, dir, nil, args...)
		if err := missingDevice(code, stderr); err != nil {
			t.Skip(devtest.SkipLine(err))
		}
		if code != 0 || stdout != "" || stderr != "" {
			t.Errorf("vkops %q: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
			continue
		}
		got, err := npy.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(out); err != nil {
			t.Fatal(err)
		}
		selSame(t, fmt.Sprint(c.args), got, c.want)
	}
}
