package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vkops/vkops/bench"
)

// wall is vkops's wall time of a row over its runs: what a caller waits
// for, and what the ratios divide by.
func (r *row) wall() spread {
	return r.figure(func(s sample) float64 { return s.WallMS })
}

// figure is one figure of vkops's samples over the runs.
func (r *row) figure(f func(sample) float64) spread {
	return spreadOf(field(r.vk, f))
}

// peerMS is a peer's time over its runs.
func (r *row) peerMS(peer string) spread {
	return spreadOf(field(r.peers[peer], func(s sample) float64 { return s.MedianMS }))
}

// ratio is a peer's median time over vkops's median wall time, above 1
// where vkops is faster; false where the peer did not run the case.
func (r *row) ratio(peer string) (float64, bool) {
	p, w := r.peerMS(peer), r.wall()
	if p.n == 0 || w.med <= 0 {
		return 0, false
	}
	return p.med / w.med, true
}

// group is what the headline groups a row by: its op and its labels,
// so that a chain fused and unfused are rows of their own.
func (r *row) group() string { return strings.Join(append([]string{r.key.op}, r.labels...), " ") }

// ops are the groups of the rows in order, each once.
func (res *results) ops() []string {
	var ops []string
	for _, r := range res.rows {
		if !slices.Contains(ops, r.group()) {
			ops = append(ops, r.group())
		}
	}
	return ops
}

// compared are the rows of group op that some peer ran, or all of op's
// where no peer ran any case.
func (res *results) compared(op string) []*row {
	var rows []*row
	for _, r := range res.rows {
		if r.group() == op && (len(r.peers) > 0 || len(res.peers) == 0) {
			rows = append(rows, r)
		}
	}
	return rows
}

// headline is the table a reader sees first: for each op beside a peer,
// its cases' bandwidth and the peers' time over vkops's, geometric means
// with their ranges; then the same over every case, and a link to the
// page of every case.
func headline(res *results, page string) string {
	var b strings.Builder
	b.WriteString(res.metaLine() + "\n\n")
	b.WriteString("| op | cases | vkops GB/s | of copy |")
	for _, p := range res.peers {
		fmt.Fprintf(&b, " %s / vkops |", p)
	}
	b.WriteString("\n|---|---:|---:|---:|" + strings.Repeat("---:|", len(res.peers)) + "\n")
	for _, op := range res.ops() {
		rows := res.compared(op)
		if len(rows) == 0 {
			continue
		}
		gbps := positive(rows, func(r *row) float64 { return r.figure(func(s sample) float64 { return s.GBps }).med })
		frac := positive(rows, func(r *row) float64 { return r.figure(func(s sample) float64 { return s.FractionOfCopy }).med })
		fmt.Fprintf(&b, "| %s | %d | %s | %s |", op, len(rows), geoSpread(gbps), geoSpread(frac))
		for _, p := range res.peers {
			fmt.Fprintf(&b, " %s |", geoSpread(ratios(rows, p)))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\n%s Every case, and the per-op cost: [%s](%s).\n", res.overall(), page, page)
	return b.String()
}

// overall says, for each peer, its time over vkops's in geometric mean
// over every case it ran, and in how many vkops was faster.
func (res *results) overall() string {
	var parts []string
	for _, p := range res.peers {
		rs := ratios(res.rows, p)
		faster := 0
		for _, x := range rs {
			if x > 1 {
				faster++
			}
		}
		parts = append(parts, fmt.Sprintf("%s %s (vkops faster in %d of %d cases)", p, num(geoSpread(rs).med), faster, len(rs)))
	}
	return "Each cell: geometric mean over the op's cases (range). Peer / vkops over every case, geometric mean: " +
		strings.Join(parts, ", ") + "."
}

// summary is one sentence for the README: the device and the peers'
// time over vkops's in geometric mean.
func summary(res *results) string {
	var parts []string
	for i, p := range res.peers {
		times := " times"
		if i == 0 {
			times = " times vkops's wall time"
		}
		parts = append(parts, fmt.Sprintf("%s takes %s%s", p, num(geoSpread(ratios(res.rows, p)).med), times))
	}
	if len(parts) == 0 {
		parts = []string{"no peer ran beside vkops"}
	}
	return fmt.Sprintf("On %s, %s: %s, in geometric mean over the cases beside it (commit `%s`, %s).",
		res.meta.deviceName(), res.meta.Machine, strings.Join(parts, ", "), res.meta.Commit, res.meta.Date) + goSummary(res)
}

// goRows are the rows beside both Go loops (bench.GoPeers): the cases a
// Go program runs from slice to slice, on vkops or in a loop of its own.
func (res *results) goRows() []*row {
	var rows []*row
	for _, r := range res.rows {
		if len(r.peers[bench.PeerGo]) > 0 && len(r.peers[bench.PeerGoParallel]) > 0 {
			rows = append(rows, r)
		}
	}
	return rows
}

// goSummary says, after the summary, in which cases vkops is ahead of
// the Go loops and in which it is not, each with the two loops' times
// over vkops's; "" where they did not run.
func goSummary(res *results) string {
	var both, plain, neither []string
	for _, r := range res.goRows() {
		g, _ := r.ratio(bench.PeerGo)
		gp, _ := r.ratio(bench.PeerGoParallel)
		name := fmt.Sprintf("%s/%s %s/%s", r.key.op, r.key.pattern, num(g), num(gp))
		switch {
		case g > 1 && gp > 1:
			both = append(both, name)
		case g > 1 || gp > 1:
			plain = append(plain, name)
		default:
			neither = append(neither, name)
		}
	}
	if len(both)+len(plain)+len(neither) == 0 {
		return ""
	}
	list := func(xs []string) string {
		if len(xs) == 0 {
			return "none"
		}
		return strings.Join(xs, ", ")
	}
	return fmt.Sprintf(" Beside a Go program's own loop over its slices (%s / vkops and %s / vkops, the loop on one goroutine and "+
		"split over GOMAXPROCS), vkops from slice to slice is faster than both in %s; than one of them in %s; slower than both in %s.",
		bench.PeerGo, bench.PeerGoParallel, list(both), list(plain), list(neither))
}

// goTable is each case beside the Go loops: vkops's wall time from Go
// slices to Go slices, its time on resident tensors where that is a row
// of its own (the same case without slices=true), and each loop's time
// over vkops's; "" where no Go loop ran.
func goTable(res *results) string {
	rows := res.goRows()
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(res.metaLine() + "\n\n")
	peers := []string{bench.PeerGo, bench.PeerGoParallel}
	b.WriteString("| case | vkops wall ms | resident ms |")
	for _, p := range peers {
		fmt.Fprintf(&b, " %s ms | %s / vkops |", p, p)
	}
	b.WriteString("\n|---|---:|---:|" + strings.Repeat("---:|---:|", len(peers)) + "\n")
	for _, r := range rows {
		resident := "–"
		for _, o := range res.rows {
			if o.key == r.key && slices.Contains(r.labels, "slices=true") &&
				slices.Equal(o.labels, slices.DeleteFunc(slices.Clone(r.labels), func(l string) bool { return l == "slices=true" })) {
				resident = o.wall().String()
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s |", r.name(), r.wall(), resident)
		for _, p := range peers {
			x, _ := r.ratio(p)
			fmt.Fprintf(&b, " %s | %s |", r.peerMS(p), num(x))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func positive(rows []*row, f func(*row) float64) []float64 {
	var xs []float64
	for _, r := range rows {
		if x := f(r); x > 0 {
			xs = append(xs, x)
		}
	}
	return xs
}

func ratios(rows []*row, peer string) []float64 {
	var xs []float64
	for _, r := range rows {
		if x, ok := r.ratio(peer); ok && x > 0 {
			xs = append(xs, x)
		}
	}
	return xs
}

// pageOf is the page of every case: each side by side with the peers,
// then the parts of runs that have them, then the per-op overhead. It
// links back to the markdown file back.
func pageOf(res *results, back string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# vkops on %s\n\n", res.meta.deviceName())
	fmt.Fprintf(&b, "Written by `make bench-report` (bench/report) from the JSON beside this page; [%s](%s) says what is measured and how.\n\n", back, back)
	b.WriteString(res.metaLine() + "\n\n")
	b.WriteString("| case | vkops gpu ms | vkops wall ms | GB/s | of copy |")
	for _, p := range res.peers {
		fmt.Fprintf(&b, " %s ms | %s / vkops |", p, p)
	}
	b.WriteString("\n|---|---:|---:|---:|---:|" + strings.Repeat("---:|---:|", len(res.peers)) + "\n")
	for _, r := range res.rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |", r.name(),
			dash(r.figure(func(s sample) float64 { return s.MedianMS }).med), r.wall(),
			num(r.figure(func(s sample) float64 { return s.GBps }).med),
			dash(r.figure(func(s sample) float64 { return s.FractionOfCopy }).med))
		for _, p := range res.peers {
			x, ok := r.ratio(p)
			if !ok {
				b.WriteString(" – | – |")
				continue
			}
			fmt.Fprintf(&b, " %s | %s |", r.peerMS(p), num(x))
		}
		b.WriteString("\n")
	}
	if t := ceilingTable(res); t != "" {
		b.WriteString("\n" + t)
	}
	for _, op := range res.ops() {
		b.WriteString(partsTable(res, op))
	}
	b.WriteString(overheadTable(res.overhead))
	return b.String()
}

func dash(x float64) string {
	if x <= 0 {
		return "–"
	}
	return num(x)
}

// partsTable lists the timed parts of op's runs, vkops's and each
// peer's, medians over the runs; "" when op's results have none.
func partsTable(res *results, op string) string {
	type line struct {
		name, who string
		ss        []sample
	}
	var lines []line
	var names []string
	for _, r := range res.rows {
		if r.key.op != op {
			continue
		}
		lines = append(lines, line{r.name(), "vkops", r.vk})
		for _, p := range res.peers {
			lines = append(lines, line{r.name(), p, r.peers[p]})
		}
	}
	for _, l := range lines {
		for _, s := range l.ss {
			for _, p := range s.parts {
				if !slices.Contains(names, p.name) {
					names = append(names, p.name)
				}
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s, the parts of a run, ms (medians):\n\n| case | by | %s |\n|---|---|%s\n",
		op, strings.Join(names, " | "), strings.Repeat("---:|", len(names)))
	for _, l := range lines {
		cells := make([]string, len(names))
		found := false
		for i, n := range names {
			xs := partMS(l.ss, n)
			cells[i] = spreadOf(xs).String()
			found = found || len(xs) > 0
		}
		if found {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", l.name, l.who, strings.Join(cells, " | "))
		}
	}
	return b.String()
}

func partMS(ss []sample, name string) []float64 {
	var xs []float64
	for _, s := range ss {
		for _, p := range s.parts {
			if p.name == name {
				xs = append(xs, p.ms)
			}
		}
	}
	return xs
}

// overheadTable is the per-op cost and the first calls, medians over the
// runs that measured them; "" when none did.
func overheadTable(ovs []overhead) string {
	if len(ovs) == 0 {
		return ""
	}
	type figure struct {
		label string
		get   func(overhead) []float64
	}
	one := func(f func(bench.PerOp) float64) func(overhead) []float64 {
		return func(o overhead) []float64 { return []float64{f(o.PerOp)} }
	}
	figs := []figure{
		{"batched, µs an op", one(func(p bench.PerOp) float64 { return p.BatchedUS })},
		{"a submit and wait each, µs an op", one(func(p bench.PerOp) float64 { return p.SubmitEachUS })},
		{"the driver's floor, µs a dispatch", one(func(p bench.PerOp) float64 { return p.FloorUS })},
		{"the same, chained by barriers", one(func(p bench.PerOp) float64 { return p.FloorChainedUS })},
		{"batched over the floor", one(func(p bench.PerOp) float64 { return p.Ratio })},
	}
	for i, fc := range ovs[0].FirstCalls {
		at := func(f func(bench.FirstCall) float64) func(overhead) []float64 {
			return func(o overhead) []float64 {
				if i < len(o.FirstCalls) && o.FirstCalls[i].Case == fc.Case {
					return []float64{f(o.FirstCalls[i])}
				}
				return nil
			}
		}
		figs = append(figs,
			figure{"first call of " + fc.Case + ", ms, empty vkops cache dir", at(func(c bench.FirstCall) float64 { return c.ColdMS })},
			figure{"the same, the dir that call filled", at(func(c bench.FirstCall) float64 { return c.WarmMS })})
	}
	var b strings.Builder
	p := ovs[0].PerOp
	fmt.Fprintf(&b, "\nPer-op cost (%d × %s) and first calls on a fresh device:\n\n| | |\n|---|---:|\n", p.Ops, p.Op)
	for _, f := range figs {
		var xs []float64
		for _, o := range ovs {
			xs = append(xs, f.get(o)...)
		}
		fmt.Fprintf(&b, "| %s | %s |\n", f.label, spreadOf(xs))
	}
	return b.String()
}
