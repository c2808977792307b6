package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/npy"
	"github.com/vkops/vkops/tensor"
)

// writeNpy writes h to name in dir and returns the path.
func writeNpy(t *testing.T, dir, name string, h *tensor.Host) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := npy.WriteFile(p, h); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReduceCommands(t *testing.T) {
	dir := t.TempDir()
	data, _ := tensor.New(tensor.Bool, tensor.Shape{2, 3, 4})
	for i := range data.Data {
		data.Data[i] = byte(i % 5 % 2)
	}
	in := writeNpy(t, dir, "data.npy", data)
	out := filepath.Join(dir, "out.npy")
	refs := map[string]func(*tensor.Host, []int, bool) (*tensor.Host, error){
		"reduce-or": cpuref.ReduceLogicalOr, "reduce-and": cpuref.ReduceLogicalAnd, "reduce-xor": cpuref.ReduceLogicalXor,
	}
	for _, c := range []struct {
		args []string
		axes []int
		keep bool
	}{
		{[]string{"reduce-or", in, "--axes", "2,-3", "-o", out}, []int{2, -3}, false},
		{[]string{"reduce-or", "--axes=1", "--keep-dims", "-o", out, in}, []int{1}, true},
		{[]string{"reduce-and", in, "--axes", " 0 , 1,2 ", "-o", out}, []int{0, 1, 2}, false},
		{[]string{"reduce-and", in, "--axes", "", "-o", out, "--keep-dims"}, nil, true},
		{[]string{"reduce-or", in, "--axes=", "-o", out}, nil, false},
		{[]string{"reduce-xor", in, "--axes", "0,2", "-o", out}, []int{0, 2}, false},
		{[]string{"reduce-xor", in, "--axes", "-1", "--keep-dims", "-o", out}, []int{-1}, true},
	} {
		got := selRun(t, out, c.args...)
		want, err := refs[c.args[0]](data, c.axes, c.keep)
		if err != nil {
			t.Fatal(err)
		}
		if got.DType != tensor.Bool || !got.Shape.Equal(want.Shape) || string(got.Data) != string(want.Data) {
			t.Errorf("vkops %q: got %v%v %v, want bool%v %v", c.args, got.DType, got.Shape, got.Data, want.Shape, want.Data)
		}
	}
}

// Bad input is one line and exit 2, a missing device exit 1; neither
// leaves an output file.
func TestReduceCommandErrors(t *testing.T) {
	dir := t.TempDir()
	bools, _ := tensor.New(tensor.Bool, tensor.Shape{2, 3})
	ints, _ := tensor.New(tensor.I8, tensor.Shape{2, 3})
	in := writeNpy(t, dir, "data.npy", bools)
	i8 := writeNpy(t, dir, "i8.npy", ints)
	junk := filepath.Join(dir, "junk.npy")
	if err := os.WriteFile(junk, []byte("not numpy"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.npy")
	var cases []hardCase
	for _, c := range []struct {
		env  []string
		args []string
		code int
		msg  string
	}{
		{nil, []string{"reduce-or", in, "--axes", "5", "-o", out}, 2,
			"vkops: reduce-or: axis 5 is out of range for rank 2 (want -2..1)"},
		{nil, []string{"reduce-and", in, "--axes", "1,-1", "-o", out}, 2,
			"vkops: reduce-and: axis -1 repeats axis 1 (after normalising)"},
		{nil, []string{"reduce-or", i8, "--axes", "0", "-o", out}, 2,
			"vkops: reduce-or: " + i8 + ": data must be bool, got i8"},
		{nil, []string{"reduce-or", junk, "--axes", "0", "-o", out}, 2, "vkops: reduce-or: npy: not a .npy file"},
		{nil, []string{"reduce-or", filepath.Join(dir, "missing.npy"), "--axes", "0", "-o", out}, 2, "vkops: reduce-or: npy: open"},
		{nil, []string{"reduce-or", in, "-o", out}, 2, "vkops: reduce-or: --axes is required"},
		{nil, []string{"reduce-or", in, "--axes", "0"}, 2, "vkops: reduce-or: -o OUT is required"},
		{nil, []string{"reduce-or", in, "--axes", "0,x", "-o", out}, 2, "vkops: reduce-or: --axes \"0,x\": want integers"},
		{nil, []string{"reduce-and", in, in, "--axes", "0", "-o", out}, 2, "vkops: reduce-and: want one DATA file, got 2"},
		{nil, []string{"reduce-or", in, "--axis", "0", "-o", out}, 2, "vkops: reduce-or: flag provided but not defined"},
		{nil, []string{"reduce-or", in, "--axes", "0", "-o", filepath.Join(dir, "no", "such", "dir.npy")}, 2,
			"vkops: reduce-or: -o " + filepath.Join(dir, "no", "such", "dir.npy") + ": directory " + filepath.Join(dir, "no", "such") + " does not exist"},
		{noDevice, []string{"reduce-or", in, "--axes", "0", "-o", out}, 1, "vkops: "},
	} {
		cases = append(cases, hardCase{args: c.args, env: c.env, code: c.code, msg: c.msg})
	}
	hardRunAll(t, cases, out, []string{dir})
	stdout, _, code := vkops(t, nil, "reduce-and", "--help")
	if code != 0 || !strings.Contains(stdout, "--keep-dims") || !strings.Contains(stdout, "example:") {
		t.Errorf("reduce-and --help: exit %d, %q", code, stdout)
	}
}
