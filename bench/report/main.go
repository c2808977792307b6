// Command report writes the benchmark tables of BENCHMARKS.md and
// README.md, and the plot, from the results kept under bench/results:
// `make bench-report` runs it after measuring.
//
//	go run ./bench/report [-md FILES] [-plot FILE] DIR
//	go run ./bench/report -add SRC [-commit C] [-command CMD] [-seconds N] [-md FILES] [-plot FILE]
//
// DIR is one device's directory, bench/results/DEVICE: every *.json file
// in it is one run's lines of `vkops bench --json` or `bench/peers.py
// --json` (several runs give medians and ranges), meta.json says what
// they were measured on, and sweep/ holds the sweep the plot draws.
// -add first makes that directory from SRC, a run of this machine or a
// GPU run brought back (the bench.json, peers_cuda.json and log.txt of
// the GPU bundle's run.sh), replacing the device's earlier results.
//
// The page of every case goes into DIR/README.md; a CPU device's
// headline table and summary sentence fill the blocks cpu-headline and
// cpu-summary of the markdown files, and its cases beside the Go loops
// (bench.GoPeers) the block cpu-go where there is one; any other
// device's gpu-headline, gpu-summary and gpu-go. Cases render from the
// JSON alone: a new op's results are new rows.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	wrote, err := run(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
	fmt.Println("report: wrote", strings.Join(wrote, ", "))
}

// run does what main does, and returns the files it wrote.
func run(args []string) ([]string, error) {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	add := fs.String("add", "", "take the results in this directory into `-results`/DEVICE first")
	resultsDir := fs.String("results", "bench/results", "with -add, the directory of the devices' results")
	commit := fs.String("commit", "", "with -add, the commit measured (default: HEAD, -dirty where the code differs)")
	command := fs.String("command", "make bench-report", "with -add, the command that measured")
	seconds := fs.Int("seconds", 0, "with -add, how long it took")
	mdList := fs.String("md", "BENCHMARKS.md,README.md", "comma-separated markdown files whose blocks to write")
	plotFile := fs.String("plot", "", "draw the sweep into this .png or .svg file")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	dir := fs.Arg(0)
	switch {
	case *add != "" && fs.NArg() == 0:
		var err error
		if dir, err = take(*add, *resultsDir, *commit, *command, *seconds); err != nil {
			return nil, err
		}
	case *add == "" && fs.NArg() == 1:
	default:
		return nil, errors.New("want a results directory, or -add SRC alone")
	}
	res, err := load(dir)
	if err != nil {
		return nil, err
	}
	var wrote []string
	if *plotFile != "" {
		if err := plot(dir, res.meta, *plotFile); err != nil {
			return nil, err
		}
		wrote = append(wrote, *plotFile)
	}
	files, err := write(res, dir, strings.Split(*mdList, ","))
	return append(wrote, files...), err
}

// pageFile is, in a results directory, the page that shows every case.
const pageFile = "README.md"

// write writes the page of every case into dir, and fills the device's
// blocks in the markdown files, whose first is the one the page links
// back to. It writes nothing unless some file has such a block.
func write(res *results, dir string, files []string) ([]string, error) {
	page := filepath.Join(dir, pageFile)
	k := res.meta.kind()
	texts := map[string]string{}
	for _, f := range files {
		link, err := relPath(filepath.Dir(f), page)
		if err != nil {
			return nil, err
		}
		blocks := map[string]string{
			k + "-headline": headline(res, link),
			k + "-summary":  summary(res),
			k + "-go":       goTable(res),
			k + "-ceiling":  ceilingTable(res),
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		text, found, err := fillBlocks(string(data), blocks)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if len(found) > 0 {
			texts[f] = text
		}
	}
	if len(texts) == 0 {
		return nil, fmt.Errorf("no %s-* block in %s", k, strings.Join(files, ", "))
	}
	back, err := relPath(dir, files[0])
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(page, []byte(pageOf(res, back)), 0o644); err != nil {
		return nil, err
	}
	wrote := []string{page}
	for _, f := range files {
		if text, ok := texts[f]; ok {
			if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
				return nil, err
			}
			wrote = append(wrote, f)
		}
	}
	return wrote, nil
}

// relPath is the link from directory from to file, with slashes.
func relPath(from, file string) (string, error) {
	a, err := filepath.Abs(from)
	if err != nil {
		return "", err
	}
	b, err := filepath.Abs(file)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(a, b)
	return filepath.ToSlash(rel), err
}

// take copies the results in src into resultsDir/DEVICE, the device
// named by src's vkops results, in place of what was there, with their
// meta.json, and returns that directory.
func take(src, resultsDir, commit, command string, seconds int) (string, error) {
	files, err := filepath.Glob(filepath.Join(src, "*.json"))
	if err != nil {
		return "", err
	}
	device := ""
	for _, f := range files {
		ss, _, err := readLines(f)
		if err != nil {
			return "", err
		}
		for _, s := range ss {
			if s.Peer == "" && device == "" {
				device = s.Device
			}
		}
	}
	if device == "" {
		return "", fmt.Errorf("%s: no vkops results (*.json of vkops bench --json)", src)
	}
	m, err := newMeta(src, device, commit, command, seconds)
	if err != nil {
		return "", err
	}
	dest := filepath.Join(resultsDir, m.slug())
	if same(src, dest) {
		return "", fmt.Errorf("%s is already the results of %s: render it without -add", src, device)
	}
	if err := os.RemoveAll(dest); err != nil {
		return "", err
	}
	for _, pattern := range []string{"*.json", "info.txt", "log.txt", ceilingFile, filepath.Join(sweepDir, "*.json")} {
		if err := copyFiles(src, dest, pattern); err != nil {
			return "", err
		}
	}
	return dest, writeMeta(dest, m)
}

// same reports whether two paths name the same directory.
func same(a, b string) bool {
	x, err1 := filepath.Abs(a)
	y, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && x == y
}

// copyFiles copies the files of src that match pattern to the same names
// under dest.
func copyFiles(src, dest, pattern string) error {
	files, err := filepath.Glob(filepath.Join(src, pattern))
	if err != nil {
		return err
	}
	for _, f := range files {
		rel, err := filepath.Rel(src, f)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		to := filepath.Join(dest, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(to, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
