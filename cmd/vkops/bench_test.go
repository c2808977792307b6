package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vkops/vkops/internal/devtest"
)

// benchRun runs vkops bench with args and fails t unless it exits 0 with
// nothing on stderr (which is a pipe here, so there is no progress bar).
func benchRun(t *testing.T, args ...string) string {
	t.Helper()
	stdout, stderr, code := vkops(t, nil, append([]string{"bench"}, args...)...)
	if err := missingDevice(code, stderr); err != nil {
		t.Skip(devtest.SkipLine(err))
	}
	if code != 0 || stderr != "" {
		t.Fatalf("vkops bench %q: exit %d, stderr %q\n%s", args, code, stderr, stdout)
	}
	return stdout
}

// --json prints one object per case with the fields the issue names, and
// --compare finds every op case equal to cpuref.
func TestBenchJSONCompare(t *testing.T) {
	out := benchRun(t, "--size", "4096", "--runs", "1", "--warmup", "1", "--compare", "--json",
		"--dtype", "f32,bool", "--overhead=false", "--op", "select,where,reduce-or,reduce-and,greater,is-nan,logical-and")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// select and where: 6 patterns of 2 types; reduce-or and reduce-and:
	// 7 each; the mask ops of f32 and bool: 4.
	if len(lines) != 30 {
		t.Fatalf("%d lines, want 30:\n%s", len(lines), out)
	}
	for _, l := range lines {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		for _, k := range []string{"op", "pattern", "dtype", "shape", "median_ms", "gbps", "fraction_of_copy", "device", "cpuref_ms", "speedup"} {
			if _, ok := v[k]; !ok {
				t.Errorf("no %q in %s", k, l)
			}
		}
		if v["agree"] != true {
			t.Errorf("disagrees with cpuref: %s", l)
		}
		if g, _ := v["gbps"].(float64); g <= 0 {
			t.Errorf("gbps %v: %s", v["gbps"], l)
		}
	}
}

// --op offload runs the whole offload, its zero-copy form and its parts,
// each part beside a Go copy() of its bytes, then the cold first offload
// in a fresh process.
func TestBenchOffload(t *testing.T) {
	out := benchRun(t, "--op", "offload", "--size", "4096", "--runs", "1", "--warmup", "1", "--json", "--overhead=false")
	var cases []string
	var cold []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if v["pattern"] == "cold" {
			if v["cold_ms"].(float64) <= 0 || v["warm_ms"].(float64) <= 0 {
				t.Errorf("cold offload: %s", l)
			}
			cold = append(cold, v["path"].(string))
			continue
		}
		cases = append(cases, v["pattern"].(string)+"/"+v["dtype"].(string))
		if p := v["pattern"]; (p == "fromslice" || p == "toslice") && v["of_host_copy"] == nil {
			t.Errorf("no copy() beside %s", l)
		}
	}
	want := "whole/f32 wrap/f32 resident/f32 fromslice/bool fromslice/f32 toslice/f32"
	if got := strings.Join(cases, " "); got != want {
		t.Errorf("cases %s, want %s", got, want)
	}
	if got := strings.Join(cold, " "); got != "whole wrap" {
		t.Errorf("cold offloads by %q, want whole and wrap", got)
	}
}

// --go runs, beside a chain on f32, the chain from Go slices and the two
// Go loops over them, each a row naming its peer.
func TestBenchGoPeers(t *testing.T) {
	out := benchRun(t, "--op", "chain", "--pattern", "nan-check", "--dtype", "f32", "--size", "4096", "--runs", "1", "--warmup", "1",
		"--json", "--overhead=false", "--go")
	var rows []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var v struct {
			Peer   string  `json:"peer"`
			Fused  *bool   `json:"fused"`
			Slices bool    `json:"slices"`
			Wall   float64 `json:"wall_median_ms"`
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if v.Wall <= 0 {
			t.Errorf("no wall time: %s", l)
		}
		row := v.Peer
		switch {
		case v.Peer != "":
		case v.Slices:
			row = "slices"
		case v.Fused != nil && *v.Fused:
			row = "fused"
		default:
			row = "unfused"
		}
		rows = append(rows, row)
	}
	if got, want := strings.Join(rows, " "), "fused unfused slices go go-parallel"; got != want {
		t.Errorf("rows %s, want %s", got, want)
	}
}

// The table mode prints the header, one row per case, then the per-op
// overhead and the first calls.
func TestBenchTable(t *testing.T) {
	out := benchRun(t, "--size", "4096", "--runs", "1", "--op", "select,reduce-or", "--dtype", "i8,bool",
		"--pattern", "same,axis0", "--shape", "4096", "--first-sizes", "1024")
	for _, want := range []string{"device: ", "GB/s", "of copy", "\nselect/same/i8[4096] ", "\nselect/same/bool[4096] ",
		"per-op overhead, 1000 x select f32[4]:", "us/op batched", "driver floor", "batched per op / independent floor",
		"first call, each case in fresh processes", "select/same/f32[1024]", "reduce-and/axis1/bool[32 32]",
		"chain/nan-check/f32[1 1024]/fused/slices", "cold", "warm", "steady"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	// --shape 4096 leaves out reduce-or/axis0 of [32 128].
	if strings.Contains(out, "\nreduce-or/axis0/bool[32 128] ") {
		t.Errorf("--shape did not filter:\n%s", out)
	}
}

// --pattern picks one zoo pattern by name, at its own size.
func TestBenchZooPattern(t *testing.T) {
	out := benchRun(t, "--op", "select", "--pattern", "zoo-06", "--dtype", "i8", "--runs", "1", "--warmup", "1",
		"--compare", "--json", "--overhead=false")
	var v map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &v); err != nil {
		t.Fatalf("want one JSON line: %v\n%s", err, out)
	}
	if v["pattern"] != "zoo-06" || v["dtype"] != "i8" || v["agree"] != true {
		t.Errorf("want zoo-06 on i8, agreeing with cpuref: %s", out)
	}
}

// --sweep runs each size from 1024 up to --size in powers of 4 and
// draws the plot, with the peers' lines that --peers gives; piped, it
// prints no progress bar.
func TestBenchSweepPlot(t *testing.T) {
	dir := t.TempDir()
	file, peers := filepath.Join(dir, "sweep.svg"), filepath.Join(dir, "peers.json")
	peerRow := `{"peer": "numpy", "op": "where", "pattern": "scalars", "dtype": "f16", "shape": [1024], "bytes": 3072, "median_ms": 0.01, "gbps": 0.3}`
	if err := os.WriteFile(peers, []byte(peerRow+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := benchRun(t, "--sweep", "--size", "16384", "--runs", "1", "--op", "where", "--pattern", "scalars",
		"--dtype", "f16", "--plot", file, "--peers", peers, "--json", "--overhead=false")
	var sizes []int
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var v struct{ Shape []int }
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		sizes = append(sizes, v.Shape[0])
	}
	if len(sizes) != 3 || sizes[0] != 1024 || sizes[1] != 4096 || sizes[2] != 16384 {
		t.Errorf("sweep sizes %v, want [1024 4096 16384]", sizes)
	}
	b, err := os.ReadFile(file)
	if err != nil || !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("numpy f16")) {
		t.Errorf("plot: %v, %q, want an svg with a line \"numpy f16\"", err, b[:min(len(b), 40)])
	}
}

// Bad flags exit 2 with one line beginning "vkops:" before any device
// work, and print nothing on stdout.
func TestBenchBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--op", "nosuchop"},
		{"--op", "select,"},
		{"--dtype", "f31"},
		{"--pattern", "diagonal"},
		{"--pattern", "zoo-99"},
		{"--shape", "4096,x"},
		{"--shape", "0,4"},
		{"--shape", ","},
		{"--shape", "7,7"},
		{"--op", "reduce-or", "--dtype", "f32"},
		{"--size", "1000"},
		{"--size", "512"},
		{"--size", "134217728"},
		{"--runs", "0"},
		{"--warmup", "0"},
		{"--plot", "x.png"},
		{"--sweep", "--plot", "x.jpg"},
		{"--peers", "p.json"},
		{"--sweep", "--plot", "x.png", "--peers", "no-such-peers.json"},
		{"--json", "extra"},
		{"--cold", "sideways"},
	} {
		stdout, stderr, code := vkops(t, nil, append([]string{"bench"}, args...)...)
		lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
		if code != 2 || stdout != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], "vkops: bench") {
			t.Errorf("vkops bench %q: exit %d, stdout %q, stderr %q; want exit 2 and one line \"vkops: bench...\"",
				args, code, stdout, stderr)
		}
	}
}

func TestProgressBar(t *testing.T) {
	var b bytes.Buffer
	p := &progress{w: &b, total: 4}
	p.show("select/same/f32[1024]")
	p.clear()
	p.show("copy/-/u8[4096]")
	p.clear()
	out := b.String()
	if !strings.Contains(out, "] 0/4 select/same/f32[1024]") || !strings.Contains(out, "[======= ") ||
		!strings.Contains(out, "] 1/4 copy/-/u8[4096]") || !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("progress drew %q", out)
	}
	var none *progress
	none.show("x") // a nil bar draws nothing and does not panic
	none.clear()
	if isTerminal(&b) {
		t.Error("a buffer is not a terminal")
	}
}
