package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vkops/vkops/bench"
	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/tensor"
)

// sweepMax is the largest size --sweep runs when --size is not given.
const sweepMax = bench.MaxSize

// tinyOps is how many tiny ops the per-op overhead is measured over.
const tinyOps = 1000

// runBench is `vkops bench`: the suite of bench.Suite, filtered by the
// flags, with each case beside the device's copy bandwidth on the same
// bytes; then the per-op overhead and first-call latencies.
func runBench(e *env, args []string) error {
	f, err := parseBenchFlags(e, args)
	if err != nil {
		return err
	}
	if f.cold != "" {
		return runCold(e, f.cold, f.size, f.runs, f.asJSON)
	}
	if f.firstCase != "" {
		return runFirst(e, f.firstCase, f.size, f.runs)
	}
	sizes := []int{f.size}
	if f.sweep {
		sizes = sweepSizes(f.size)
	}
	pick, err := newPicker(f.opList, f.dtList, f.patList, f.shapeArg)
	if err != nil {
		return err
	}
	pick.goPeers = f.goPeers
	var cases [][]*bench.Case // by size
	total := 0
	for i, n := range sizes {
		cs := pick.cases(n, i == 0)
		cases = append(cases, cs)
		total += len(cs)
	}
	if total == 0 {
		return badInput("bench: no case matches --op %q --dtype %q --pattern %q --shape %q at size %d",
			f.opList, f.dtList, f.patList, f.shapeArg, f.size)
	}
	d, err := e.open()
	if err != nil {
		return err
	}
	defer d.Close()
	return runSuite(e, d, f, cases, total)
}

// benchFlags are `vkops bench`'s flags, checked.
type benchFlags struct {
	opList, dtList, patList, shapeArg string
	size, runs, warmup                int
	compare, asJSON, sweep, overhead  bool
	goPeers                           bool
	plotFile                          string
	peers                             []bench.Result // read from --peers
	cold, firstCase                   string
	firsts                            []int // --first-sizes
}

// parseBenchFlags parses and checks `vkops bench`'s arguments.
func parseBenchFlags(e *env, args []string) (*benchFlags, error) {
	fs := newFlags(e, "bench", "bench [--op OPS] [--dtype TYPES] [--pattern PATTERNS] [--shape DIMS] [--size N] "+
		"[--runs N] [--compare] [--json] [--sweep [--plot FILE]] [--overhead=false] [--go]",
		"vkops bench --op select,where --dtype f32 --compare")
	f := &benchFlags{}
	fs.StringVar(&f.opList, "op", "", "comma-separated ops to run: select, where, reduce-or, reduce-and, greater, is-nan, logical-and, upload, download, copy, "+
		"offload (a select from Go slices to a Go slice, its parts, and the cold first one in a fresh process) (default: all)")
	fs.StringVar(&f.dtList, "dtype", "", "comma-separated element types; select and where run on each (default: f32,f16,bf16,i8,bool), "+
		"reduce-or and reduce-and are bool, transfers u8")
	fs.StringVar(&f.patList, "pattern", "", "comma-separated patterns to run, such as same, cond-col, axis0, zoo: "+
		"the select zoo's seeded random broadcasts of 4M-16M elements, at their own sizes, or one of them, such as zoo-06, "+
		"or rzoo: the reduce zoo's seeded random shapes and axes of 4M-32M bools, or one of them, such as rzoo-03 (default: all but the zoos)")
	fs.StringVar(&f.shapeArg, "shape", "", "run only the cases of this shape, such as 4096,16384")
	fs.IntVar(&f.size, "size", bench.DefaultSize, fmt.Sprintf("elements of the select and where cases, a power of two from %d to %d; "+
		"reduce [r 4r] has 4x as many, transfers move 4x as many bytes; with --sweep, the largest size, %d unless given",
		bench.MinSize, bench.MaxSize, sweepMax))
	fs.IntVar(&f.runs, "runs", 7, "timed runs per case")
	fs.IntVar(&f.warmup, "warmup", 2, fmt.Sprintf("untimed runs per case before the timed ones (on a GPU, for %v at least)", bench.GPUWarmup))
	fs.BoolVar(&f.compare, "compare", false, "also run cpuref on each op case: its time, the speedup, and a bit-exact check")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object per case (and one with op \"overhead\")")
	fs.BoolVar(&f.sweep, "sweep", false, fmt.Sprintf("run every size from %d to --size in powers of 4", bench.MinSize))
	fs.StringVar(&f.plotFile, "plot", "", "with --sweep, draw GB/s against size into this .png or .svg file")
	peersFile := fs.String("peers", "", "with --plot, draw also the results in this `file`, the output of bench/peers.py --sweep --json (numpy and torch)")
	fs.BoolVar(&f.overhead, "overhead", true, "also measure the per-op overhead and first-call latencies")
	fs.BoolVar(&f.goPeers, "go", false, "also run the chains on f32 and offload/whole as a Go program would without vkops: "+
		"a plain loop over its slices (peer go) and that loop split over GOMAXPROCS goroutines (peer go-parallel)")
	fs.StringVar(&f.cold, "cold", "", "time only the first offload of --size elements in this process and the ones after it, "+
		"by this path: whole (FromSlice and ToSlice) or wrap (Wrap and View); --op offload runs both, each in a fresh process")
	fs.StringVar(&f.firstCase, "first-call", "", "time only this first-call case's first run in this process and the --runs after it, "+
		"as one JSON object (what the first-call report runs in a fresh process)")
	firstSizes := fs.String("first-sizes", fmt.Sprintf("%d,%d", bench.MinSize, bench.DefaultSize),
		"comma-separated sizes whose first calls the overhead report measures, each case in fresh processes (\"\" for none)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) > 0 {
		return nil, badInput("bench: unexpected argument %q", pos[0])
	}
	if f.firsts, err = parseFirstSizes(*firstSizes); err != nil {
		return nil, err
	}
	sizeSet := false
	fs.Visit(func(fl *flag.Flag) { sizeSet = sizeSet || fl.Name == "size" })
	if f.sweep && !sizeSet {
		f.size = sweepMax
	}
	if err := bench.CheckSize(f.size); err != nil {
		return nil, badInput("bench: --size: %v", err)
	}
	// The first run of a case builds its pipelines: it is never timed.
	if f.runs <= 0 || f.warmup <= 0 {
		return nil, badInput("bench: --runs and --warmup must be at least 1")
	}
	if err := f.checkPlot(*peersFile); err != nil {
		return nil, err
	}
	return f, nil
}

// checkPlot checks --plot and reads --peers, the file named peersFile.
func (f *benchFlags) checkPlot(peersFile string) (err error) {
	if f.plotFile != "" {
		if !f.sweep {
			return badInput("bench: --plot needs --sweep")
		}
		if err := bench.CheckPlotFile(f.plotFile); err != nil {
			return badInput("bench: --plot: %v", err)
		}
		if err := checkOutputDir("bench", "--plot", f.plotFile); err != nil {
			return err
		}
	}
	if peersFile != "" {
		if f.plotFile == "" {
			return badInput("bench: --peers needs --plot")
		}
		if f.peers, err = readPeers(peersFile); err != nil {
			return badInput("bench: --peers: %v", err)
		}
	}
	return nil
}

// runSuite runs cases, total of them, on d and reports them as f asks:
// rows, the zoo's summary, the cold offload, the plot and the overhead.
func runSuite(e *env, d *device.Device, f *benchFlags, cases [][]*bench.Case, total int) error {
	r := bench.NewRunner(d, bench.Options{Warmup: f.warmup, Runs: f.runs, Compare: f.compare})
	out := newReport(e, f.asJSON, f.compare, cases)
	var bar *progress
	if f.sweep && isTerminal(e.stderr) {
		bar = &progress{w: e.stderr, total: total}
	}
	out.header(d, f.warmup, f.runs)
	var results []bench.Result
	var disagree []string
	compared := 0
	for _, cs := range cases {
		for _, c := range cs {
			bar.show(c.Name())
			res, err := r.Run(c)
			bar.clear()
			if errors.Is(err, bench.ErrSkip) {
				out.skipped(c, err)
				continue
			}
			if err != nil {
				return err
			}
			if err := out.row(c, res); err != nil {
				return err
			}
			results = append(results, res)
			if res.Agree != nil {
				compared++
				if !*res.Agree {
					disagree = append(disagree, c.Name()+": "+res.Mismatch)
				}
			}
		}
	}
	out.zooSummary(results)
	if slices.ContainsFunc(results, func(r bench.Result) bool { return r.Op == "offload" }) {
		if err := out.coldOffload(e, f.size, f.runs); err != nil {
			return err
		}
	}
	if f.plotFile != "" {
		title := fmt.Sprintf("vkops bench --sweep: %s, %s", d, time.Now().Format("2006-01-02"))
		if err := bench.Plot(f.plotFile, title, append(results, f.peers...), r.Copies()); err != nil {
			return err
		}
		if !f.asJSON {
			fmt.Fprintf(e.stdout, "\nplot: %s\n", f.plotFile)
		}
	}
	if f.overhead {
		if err := out.overhead(e, d, f.firsts); err != nil {
			return err
		}
	}
	if len(disagree) > 0 {
		return fmt.Errorf("bench: %d of %d compared cases disagree with cpuref; first %s", len(disagree), compared, disagree[0])
	}
	return nil
}

// sweepSizes returns the powers of four times MinSize up to largest, and
// largest itself when it falls between them.
func sweepSizes(largest int) []int {
	var sizes []int
	for n := bench.MinSize; n <= largest; n *= 4 {
		sizes = append(sizes, n)
	}
	if sizes[len(sizes)-1] != largest {
		sizes = append(sizes, largest)
	}
	return sizes
}

// picker holds the flags that choose cases; the zero value of each
// chooses all.
type picker struct {
	ops, patterns map[string]bool
	dtypes        []tensor.DType
	dtypeSet      map[tensor.DType]bool
	shape         tensor.Shape
	zoo           bool // the zoo's cases are picked: all of it, or patterns of it by name
	rzoo          bool // the reduce zoo's, likewise
	goPeers       bool // the Go loops (bench.GoPeers) run beside the cases they stand for
}

// newPicker checks the flags against the cases that exist, so that a
// misspelt op or pattern is bad input rather than an empty run.
func newPicker(opList, dtList, patList, shapeArg string) (*picker, error) {
	p := &picker{dtypes: bench.DefaultDTypes}
	known := append(bench.Suite(bench.MinSize, tensor.DTypes), &bench.Case{Op: "select", Pattern: "zoo"},
		&bench.Case{Op: "reduce-or", Pattern: "rzoo"})
	for _, z := range bench.ZooPatterns() {
		known = append(known, &bench.Case{Op: z.Op, Pattern: z.Name})
	}
	for _, z := range bench.ReduceZooPatterns() {
		known = append(known, &bench.Case{Op: z.Op, Pattern: z.Name})
	}
	var err error
	if p.ops, err = pickNames("op", opList, known, func(c *bench.Case) string { return c.Op }); err != nil {
		return nil, err
	}
	if p.patterns, err = pickNames("pattern", patList, known, patternOf); err != nil {
		return nil, err
	}
	p.zoo = p.patterns["zoo"] || slices.ContainsFunc(known, func(c *bench.Case) bool { return bench.IsZoo(c) && p.patterns[c.Pattern] })
	p.rzoo = p.patterns["rzoo"] || slices.ContainsFunc(known, func(c *bench.Case) bool { return bench.IsReduceZoo(c) && p.patterns[c.Pattern] })
	if dtList != "" {
		p.dtypes, p.dtypeSet = nil, map[tensor.DType]bool{}
		for _, s := range strings.Split(dtList, ",") {
			dt, err := tensor.ParseDType(s)
			if err != nil {
				return nil, badInput("bench: --dtype: %v", err)
			}
			if !p.dtypeSet[dt] {
				p.dtypes = append(p.dtypes, dt)
				p.dtypeSet[dt] = true
			}
		}
	}
	if shapeArg != "" {
		for _, s := range strings.FieldsFunc(shapeArg, func(r rune) bool { return r == ',' || r == 'x' }) {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n <= 0 {
				return nil, badInput("bench: --shape %q: want positive dimensions separated by commas, such as 4096,16384", shapeArg)
			}
			p.shape = append(p.shape, n)
		}
		if p.shape == nil {
			return nil, badInput("bench: --shape %q: want positive dimensions separated by commas, such as 4096,16384", shapeArg)
		}
	}
	return p, nil
}

// pickNames parses a comma-separated list of names that must each be the
// name of some case; nil means every name.
func pickNames(flagName, list string, known []*bench.Case, name func(*bench.Case) string) (map[string]bool, error) {
	if list == "" {
		return nil, nil
	}
	var valid []string
	for _, c := range known {
		if n := name(c); !slices.Contains(valid, n) {
			valid = append(valid, n)
		}
	}
	want := map[string]bool{}
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if !slices.Contains(valid, s) {
			return nil, badInput("bench: unknown --%s %q (want one of %s)", flagName, s, strings.Join(valid, ", "))
		}
		want[s] = true
	}
	return want, nil
}

// patternOf names a case's pattern as --pattern spells it: "-" for none.
func patternOf(c *bench.Case) string {
	if c.Pattern == "" {
		return "-"
	}
	return c.Pattern
}

// cases returns the picked cases at size n, and a zoo's when it or one
// of its patterns is picked and first is set: the zoos have sizes of
// their own. With goPeers, the Go loops that match follow the suite's cases,
// so that each is measured moments after the case it stands beside.
func (p *picker) cases(n int, first bool) []*bench.Case {
	var out []*bench.Case
	all := bench.Suite(n, p.dtypes)
	if p.goPeers {
		all = append(all, bench.GoPeers(n)...)
	}
	if first && p.zoo {
		for _, dt := range p.dtypes {
			all = append(all, bench.Zoo(dt)...)
		}
	}
	if first && p.rzoo {
		all = append(all, bench.ReduceZoo()...)
	}
	for _, c := range all {
		zoo, rzoo := bench.IsZoo(c), bench.IsReduceZoo(c)
		switch {
		case p.ops != nil && !p.ops[c.Op] && !(zoo && p.ops["select"]):
		case p.patterns != nil && !p.patterns[patternOf(c)] && !(zoo && p.patterns["zoo"]) && !(rzoo && p.patterns["rzoo"]):
		case p.dtypeSet != nil && !p.dtypeSet[c.DType]:
		case p.shape != nil && !p.shape.Equal(c.Shape):
		default:
			out = append(out, c)
		}
	}
	return out
}

// report prints results as a table whose rows appear as cases finish, or
// as JSON lines.
type report struct {
	w       io.Writer
	json    *json.Encoder // nil for a table
	compare bool
	width   int // of the case column
}

func newReport(e *env, asJSON, compare bool, cases [][]*bench.Case) *report {
	r := &report{w: e.stdout, compare: compare, width: len("case")}
	if asJSON {
		r.json = json.NewEncoder(e.stdout)
	}
	for _, cs := range cases {
		for _, c := range cs {
			r.width = max(r.width, len(c.Name()))
		}
	}
	return r
}

func (r *report) header(d *device.Device, warmup, runs int) {
	if r.json != nil {
		return
	}
	fmt.Fprintf(r.w, "device: %s\n", d)
	warm := fmt.Sprintf("%d warm-up", warmup)
	if w := bench.WarmupTime(d); w > 0 {
		warm += fmt.Sprintf(" (%v at least)", w)
	}
	fmt.Fprintf(r.w, "%s and %d timed runs per case; ms are medians, spread = max - min; gpu from timestamps\n", warm, runs)
	fmt.Fprintf(r.w, "GB/s: bytes read + written over gpu time; copy: vkCmdCopyBuffer moving the same bytes; of copy: GB/s / copy\n")
	fmt.Fprintf(r.w, "host cases: copy() ms: a Go copy() of the bytes they move; of copy(): that time / wall ms\n\n")
	fmt.Fprintf(r.w, "%-*s %9s %8s %9s %8s %7s %7s %7s %10s %9s", r.width, "case", "gpu ms", "spread", "wall ms", "spread", "GB/s", "copy", "of copy",
		"copy() ms", "of copy()")
	if r.compare {
		fmt.Fprintf(r.w, " %10s %8s %6s", "cpuref ms", "speedup", "agree")
	}
	fmt.Fprintln(r.w)
}

func (r *report) row(c *bench.Case, res bench.Result) error {
	if r.json != nil {
		return r.json.Encode(res)
	}
	fmt.Fprintf(r.w, "%-*s %9.4f %8.4f %9.4f %8.4f %7.2f %7.2f %7.2f", r.width, c.Name(),
		res.MedianMS, res.SpreadMS, res.WallMS, res.WallSpreadMS, res.GBps, res.CopyGBps, res.FractionOfCopy)
	if res.HostCopyMS > 0 {
		fmt.Fprintf(r.w, " %10.3f %9.2f", res.HostCopyMS, res.OfHostCopy)
	} else {
		fmt.Fprintf(r.w, " %10s %9s", "-", "-")
	}
	if r.compare {
		switch {
		case res.Agree == nil:
			fmt.Fprintf(r.w, " %10s %8s %6s", "-", "-", "-")
		case *res.Agree:
			fmt.Fprintf(r.w, " %10.1f %8.2f %6s", res.CPURefMS, res.Speedup, "yes")
		default:
			fmt.Fprintf(r.w, " %10.1f %8.2f %6s", res.CPURefMS, res.Speedup, "NO")
		}
	}
	_, err := fmt.Fprintln(r.w)
	return err
}

// skipped notes, in a table, a case the device cannot run; JSON has no
// line for it.
func (r *report) skipped(c *bench.Case, err error) {
	if r.json == nil {
		fmt.Fprintf(r.w, "%-*s %s\n", r.width, c.Name(), err)
	}
}

// zooSummary prints, after a table with zoo cases, the worst and the
// geometric mean of their fractions of copy.
func (r *report) zooSummary(results []bench.Result) {
	if r.json != nil {
		return
	}
	var s bench.ZooSummary
	for _, res := range results {
		s.Add(res)
	}
	if s.N > 0 {
		fmt.Fprintf(r.w, "\nzoo: %d cases, of copy: worst %.2f (%s), geometric mean %.2f\n", s.N, s.Worst, s.WorstName, s.GeoMean())
	}
}

// overhead measures and prints the per-op overhead on d and the first
// calls of each size of sizes, each in fresh processes on the same
// device choice.
func (r *report) overhead(e *env, d *device.Device, sizes []int) error {
	per, err := bench.MeasurePerOp(d, tinyOps)
	if err != nil {
		return err
	}
	var first []bench.FirstCall
	for _, n := range sizes {
		fs, err := bench.FirstCalls(firstRunner(e), n, bench.FirstCallCases(n))
		if err != nil {
			return err
		}
		first = append(first, fs...)
	}
	if r.json != nil {
		return r.json.Encode(struct {
			Op         string            `json:"op"`
			Device     string            `json:"device"`
			PerOp      bench.PerOp       `json:"per_op"`
			FirstCalls []bench.FirstCall `json:"first_calls"`
		}{"overhead", d.String(), per, first})
	}
	fmt.Fprintf(r.w, "\nper-op overhead, %d x %s: %.1f us/op batched, %.1f us/op with a submit and wait each\n",
		per.Ops, per.Op, per.BatchedUS, per.SubmitEachUS)
	fmt.Fprintf(r.w, "driver floor, the same dispatch %d times in one command buffer: %.1f us independent, %.1f us chained by barriers\n",
		per.Ops, per.FloorUS, per.FloorChainedUS)
	fmt.Fprintf(r.w, "batched per op / independent floor (%d dispatch per op): %.2fx\n", per.Dispatches, per.Ratio)
	if len(first) == 0 {
		return nil
	}
	fmt.Fprintf(r.w, "first call, each case in fresh processes: cold = an empty cache dir and Mesa's shader cache off, "+
		"warm = the dir and Mesa's cache that an earlier process filled; steady = the warm process's calls after its first\n")
	width := 0
	for _, f := range first {
		width = max(width, len(f.Case))
	}
	for _, f := range first {
		fmt.Fprintf(r.w, "  %-*s cold %8.1f ms   warm %8.1f ms   steady %8.1f ms   (%d bytes saved)\n",
			width, f.Case, f.ColdMS, f.WarmMS, f.SteadyMS, f.CacheBytes)
	}
	return nil
}

// parseFirstSizes parses --first-sizes.
func parseFirstSizes(list string) ([]int, error) {
	var sizes []int
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err == nil {
			err = bench.CheckSize(n)
		}
		if err != nil {
			return nil, badInput("bench: --first-sizes: %q: %v", s, err)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

// firstRuns are the runs a first-call process times after its first.
const firstRuns = 3

// firstRunner returns the bench.FirstRunner that runs `vkops bench
// --first-call` in a fresh process, so that the first call meets a fresh
// driver and fresh pages as a program's would.
func firstRunner(e *env) bench.FirstRunner {
	return func(c *bench.Case, n int, env []string) (bench.FirstRun, error) {
		var res bench.FirstRun
		args := []string{"bench", "--first-call", c.Name(), "--size", strconv.Itoa(n), "--runs", strconv.Itoa(firstRuns)}
		if e.device != "" {
			args = append([]string{"--device", e.device}, args...)
		}
		cmd, err := selfCommand(args...)
		if err != nil {
			return res, fmt.Errorf("bench: first call of %s: %w", c.Name(), err)
		}
		cmd.Env = append(os.Environ(), env...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return res, fmt.Errorf("bench: first call of %s in a fresh process: %v: %s", c.Name(), err, strings.TrimSpace(stderr.String()))
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return res, fmt.Errorf("bench: first call of %s: %v in %q", c.Name(), err, out)
		}
		return res, nil
	}
}

// runFirst is `vkops bench --first-call CASE`: the case of
// bench.FirstCallCases on n elements named CASE, its first run in this
// process and the runs after it, as one JSON object.
func runFirst(e *env, name string, n, runs int) error {
	for _, c := range bench.FirstCallCases(n) {
		if c.Name() == name {
			res, err := bench.MeasureFirst(device.Options{Device: e.device}, c, runs)
			if err != nil {
				return err
			}
			return json.NewEncoder(e.stdout).Encode(res)
		}
	}
	return badInput("bench: --first-call %q: no such case on %d elements", name, n)
}

// isTerminal reports whether w is a terminal, where a progress bar that
// redraws itself belongs; a pipe or file gets none.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progress is a one-line bar on a terminal, drawn while a case runs and
// cleared before its row is printed; a nil *progress draws nothing.
type progress struct {
	w           io.Writer
	done, total int
}

func (p *progress) show(name string) {
	if p == nil {
		return
	}
	const width = 30
	filled := width * p.done / p.total
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d %s\x1b[K", strings.Repeat("=", filled), strings.Repeat(" ", width-filled), p.done, p.total, name)
}

func (p *progress) clear() {
	if p == nil {
		return
	}
	p.done++
	fmt.Fprint(p.w, "\r\x1b[K")
}

// readPeers reads the results that `bench/peers.py --json` printed, one
// JSON object a line.
func readPeers(file string) ([]bench.Result, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var rs []bench.Result
	for i, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var r bench.Result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", file, i+1, err)
		}
		if r.Peer == "" || r.Bytes == 0 {
			return nil, fmt.Errorf("%s:%d: not a result of peers.py --json (no peer or bytes)", file, i+1)
		}
		rs = append(rs, r)
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("%s: no results", file)
	}
	return rs, nil
}

// runCold is `vkops bench --cold PATH`: the first offload of this
// process by path and the ones after it (bench.MeasureCold), as one JSON
// object or a line.
func runCold(e *env, path string, n, runs int, asJSON bool) error {
	if path != "whole" && path != "wrap" {
		return badInput("bench: --cold %q: want whole or wrap", path)
	}
	res, err := bench.MeasureCold(device.Options{Device: e.device}, n, runs, path)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(res)
	}
	fmt.Fprintf(e.stdout, "offload %v by %s on %s: first in this process %.1f ms (%d page faults), warm %.1f ms (%d), cold / warm %.2f\n",
		res.Shape, path, res.Device, res.ColdMS, res.ColdFaults, res.WarmMS, res.WarmFaults, res.Ratio)
	return nil
}

// selfCommand returns a command that runs this program with args; tests,
// whose binary runs as vkops only when told, replace it.
var selfCommand = func(args ...string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return exec.Command(exe, args...), nil
}

// coldOffload runs `vkops bench --cold` by each path in a fresh process,
// so that its first offload meets fresh pages and a fresh device as a
// program's would, and prints what it measured.
func (r *report) coldOffload(e *env, n, runs int) error {
	if r.json == nil {
		fmt.Fprintf(r.w, "\nthe first offload in a fresh process (cold) and the %d after it (warm, medians), page faults beside:\n", runs)
	}
	for _, path := range []string{"whole", "wrap"} {
		args := []string{"bench", "--cold", path, "--size", strconv.Itoa(n), "--runs", strconv.Itoa(runs), "--json"}
		if e.device != "" {
			args = append([]string{"--device", e.device}, args...)
		}
		cmd, err := selfCommand(args...)
		if err != nil {
			return fmt.Errorf("bench: offload/cold: %w", err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		msg := strings.TrimSpace(stderr.String())
		if err != nil && strings.Contains(msg, bench.ErrSkip.Error()) {
			if r.json == nil {
				fmt.Fprintf(r.w, "  %s: %s\n", path, msg)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("bench: offload/cold by %s in a fresh process: %v: %s", path, err, msg)
		}
		var res bench.ColdOffload
		if err := json.Unmarshal(out, &res); err != nil {
			return fmt.Errorf("bench: offload/cold: %v in %q", err, out)
		}
		if r.json != nil {
			if err := r.json.Encode(res); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(r.w, "  offload/cold/f32%v by %-5s cold %8.1f ms (%6d faults)   warm %8.1f ms (%6d faults)   cold / warm %.2f\n",
			res.Shape, path, res.ColdMS, res.ColdFaults, res.WarmMS, res.WarmFaults, res.Ratio)
	}
	return nil
}
