package main

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.want from the output")

// fixture copies testdata files and directories into a temporary
// directory, which it returns.
func fixture(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		err := filepath.WalkDir(filepath.Join("testdata", n), func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			rel, _ := filepath.Rel("testdata", path)
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, rel), data, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	file := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test ./bench/report -update rewrites it); got:\n%s", name, got)
	}
}

// Two runs of vkops and of the peers render into the page of every case
// and the cpu blocks of two files, and leave the gpu blocks as they
// were: fused and unfused chains are rows of their own beside the same
// peers, an op's parts make a table, and a peer's case that vkops did not
// run is left out; the cases vkops ran alone come last, whatever file
// they came from. The Go loops (labelled slices=true) stand beside the
// chain from Go slices alone, and fill the cpu-go block and a sentence
// of the summary.
func TestRenderCPU(t *testing.T) {
	dir := fixture(t, "in.md", "readme.md", "cpu")
	md := filepath.Join(dir, "in.md") + "," + filepath.Join(dir, "readme.md")
	if _, err := run([]string{"-md", md, filepath.Join(dir, "cpu")}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"in.md": "in.md.want", "readme.md": "readme.md.want", "cpu/README.md": "page.md.want"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		golden(t, want, string(got))
	}
}

// A GPU bundle's output is taken into results/DEVICE with what its log
// says of the driver and the GPU, and fills the gpu blocks.
func TestAddGPU(t *testing.T) {
	dir := fixture(t, "in.md", "readme.md")
	results := filepath.Join(dir, "results")
	md := filepath.Join(dir, "in.md") + "," + filepath.Join(dir, "readme.md")
	if _, err := run([]string{"-add", "testdata/gpu", "-results", results, "-commit", "def5678", "-command", "run.sh bench", "-md", md}); err != nil {
		t.Fatal(err)
	}
	m, err := readMeta(filepath.Join(results, "nvidia-h100-80gb-hbm3"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Driver != "NVIDIA 580.159.04" || m.Machine != "clocks.sm 1980 MHz, memory.total 81559 MiB (nvidia-smi)" || m.Commit != "def5678" {
		t.Errorf("meta %+v", m)
	}
	for _, f := range []string{"bench.json", "peers_cuda.json", "log.txt", "README.md"} {
		if _, err := os.Stat(filepath.Join(results, "nvidia-h100-80gb-hbm3", f)); err != nil {
			t.Error(err)
		}
	}
	got, err := os.ReadFile(filepath.Join(dir, "in.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"old", "torch-cuda / vkops", "| select | 1 | 2600 | 3.10 | 1238 | 0.838 |"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("in.md lacks %q:\n%s", want, got)
		}
	}
	if _, err := run([]string{"-add", filepath.Join(results, "nvidia-h100-80gb-hbm3"), "-results", results, "-md", md}); err == nil {
		t.Error("-add of the device's own directory: no error")
	}
}

// Bad input is an error that says what is wrong, and writes nothing.
func TestBadInput(t *testing.T) {
	dir := fixture(t, "in.md", "cpu")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no directory", nil, "want a results directory"},
		{"both", []string{"-add", "testdata/gpu", "testdata/cpu"}, "want a results directory"},
		{"no meta", []string{"testdata/gpu"}, "meta.json"},
		{"no vkops results", []string{"-add", "testdata"}, "no vkops results"},
		{"no blocks", []string{"-md", filepath.Join("testdata", "gpu", "log.txt"), filepath.Join(dir, "cpu")}, "no cpu-* block"},
		{"no sweep", []string{"-md", filepath.Join(dir, "in.md"), "-plot", filepath.Join(dir, "p.png"), filepath.Join(dir, "cpu")}, "no sweep"},
	} {
		_, err := run(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "cpu", pageFile)); err == nil {
		t.Error("a failed run wrote the page")
	}
}

func TestNum(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{
		{0, "0.00"}, {0.0826, "0.0826"}, {0.000123, "0.000123"}, {0.9996, "1.00"}, {1.234, "1.23"},
		{9.996, "10.0"}, {12.34, "12.3"}, {99.96, "100"}, {2605.41, "2605"},
	} {
		if got := num(tc.x); got != tc.want {
			t.Errorf("num(%v) = %q, want %q", tc.x, got, tc.want)
		}
	}
}

func TestDeviceNames(t *testing.T) {
	for _, tc := range []struct {
		device, name, kind, slug string
	}{
		{"llvmpipe (LLVM 15.0.6, 256 bits) (cpu, llvmpipe)", "llvmpipe (LLVM 15.0.6, 256 bits)", "cpu", "lavapipe"},
		{"NVIDIA H200 (discrete-gpu, NVIDIA)", "NVIDIA H200", "gpu", "nvidia-h200"},
		{"odd", "odd", "gpu", "odd"},
	} {
		m := meta{Device: tc.device}
		if m.deviceName() != tc.name || m.kind() != tc.kind || m.slug() != tc.slug {
			t.Errorf("%q: %q %q %q, want %q %q %q", tc.device, m.deviceName(), m.kind(), m.slug(), tc.name, tc.kind, tc.slug)
		}
	}
}

func TestFillBlocksUnended(t *testing.T) {
	_, _, err := fillBlocks("<!-- begin x -->\ntext\n", map[string]string{"x": "new"})
	if err == nil {
		t.Error("a block without its end: no error")
	}
}
