package bench

import (
	"fmt"
	"image/color"
	"maps"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// PlotFormats are the file extensions Plot writes.
var PlotFormats = []string{".png", ".svg"}

// CheckPlotFile reports whether Plot can write file, by its extension,
// so that a sweep can refuse a bad name before it runs.
func CheckPlotFile(file string) error {
	ext := strings.ToLower(filepath.Ext(file))
	for _, f := range PlotFormats {
		if ext == f {
			return nil
		}
	}
	return fmt.Errorf("plot file %q: want a name ending in %s", file, strings.Join(PlotFormats, " or "))
}

// Plot draws the results of a sweep into file (PNG or SVG, by its
// extension): one panel per op and pattern, one line per element type,
// GB/s against the bytes a run reads plus writes on a log scale, and the
// copy baselines of the same sweep (Runner.Copies) as a dashed reference
// in every panel, the median of those near each size. Results of a peer
// (Result.Peer: numpy, torch) are drawn dotted beside vkops's, for the
// element type of the panel's first line only. The bytes, rather than the elements, put element types
// and the baseline on one axis. title heads the figure.
func Plot(file, title string, results, copies []Result) error {
	if err := CheckPlotFile(file); err != nil {
		return err
	}
	order, panels := plotPanels(results)
	if len(order) == 0 {
		return fmt.Errorf("plot %s: no results to draw", file)
	}
	ref := copyLine(copies)
	cols := min(3, len(order))
	rows := (len(order) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
	}
	for i, key := range order {
		p, err := panelPlot(key, panels[key], ref)
		if err != nil {
			return fmt.Errorf("plot %s: %w", file, err)
		}
		grid[i/cols][i%cols] = p
	}
	return drawGrid(file, title, grid)
}

// A plotLine is one line of a panel: an element type's results, or a
// peer's.
type plotLine struct {
	name string
	peer bool
	xys  plotter.XYs
}

// plotPanels groups results into panels, one per op and pattern (the
// transfers share one), in the order they came: vkops's first, so that
// they make the panels, then the peers' on the element type of each
// panel's first line.
func plotPanels(results []Result) (order []string, panels map[string][]*plotLine) {
	panels = map[string][]*plotLine{}
	ordered := slices.Clone(results)
	slices.SortStableFunc(ordered, func(a, b Result) int { return strings.Compare(a.Peer, b.Peer) })
	for _, r := range ordered {
		key, name := r.Op+"/"+r.Pattern, r.DType
		if transfer := r.Op == "upload" || r.Op == "download" || r.Op == "copy"; transfer || r.Pattern == "" {
			key, name = "transfers", r.Op
			if r.Pattern != "" {
				name += " " + r.Pattern
			}
		}
		if r.Peer != "" {
			if len(panels[key]) == 0 || panels[key][0].name != r.DType {
				continue
			}
			name = r.Peer + " " + r.DType
		}
		if _, ok := panels[key]; !ok {
			order = append(order, key)
		}
		var l *plotLine
		for _, x := range panels[key] {
			if x.name == name {
				l = x
			}
		}
		if l == nil {
			l = &plotLine{name: name, peer: r.Peer != ""}
			panels[key] = append(panels[key], l)
		}
		if r.Bytes > 0 && r.GBps > 0 {
			l.xys = append(l.xys, plotter.XY{X: float64(r.Bytes), Y: r.GBps})
		}
	}
	return order, panels
}

// panelPlot draws the panel titled key: its lines, peers dotted, over
// the copy baseline ref, dashed.
func panelPlot(key string, lines []*plotLine, ref plotter.XYs) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = key
	p.X.Label.Text = "bytes read + written per run"
	p.Y.Label.Text = "GB/s"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.TickerFunc(byteTicks)
	p.Y.Min = 0
	p.Y.Tick.Marker = plot.TickerFunc(gbpsTicks)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Add(plotter.NewGrid())
	if len(ref) > 0 {
		l, err := plotter.NewLine(ref)
		if err != nil {
			return nil, err
		}
		l.Color = color.Gray{Y: 96}
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(l)
		p.Legend.Add("copy", l)
	}
	for j, l := range lines {
		if len(l.xys) == 0 {
			continue
		}
		lp, pts, err := plotter.NewLinePoints(l.xys)
		if err != nil {
			return nil, err
		}
		lp.Color, pts.Color = plotutil.Color(j), plotutil.Color(j)
		pts.Shape = plotutil.Shape(j)
		if l.peer {
			lp.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		}
		p.Add(lp, pts)
		p.Legend.Add(l.name, lp, pts)
	}
	return p, nil
}

// drawGrid writes the panels of grid, headed by title, into file; the
// panels that grid leaves nil stay empty.
func drawGrid(file, title string, grid [][]*plot.Plot) error {
	rows, cols := len(grid), len(grid[0])
	tile := struct{ w, h vg.Length }{4.2 * vg.Inch, 3.2 * vg.Inch}
	head := 0.4 * vg.Inch
	w, h := vg.Length(cols)*tile.w, vg.Length(rows)*tile.h+head
	c, err := draw.NewFormattedCanvas(w, h, strings.TrimPrefix(strings.ToLower(filepath.Ext(file)), "."))
	if err != nil {
		return fmt.Errorf("plot %s: %w", file, err)
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	dc.FillText(text.Style{
		Color:   color.Black,
		Font:    font.From(plot.DefaultFont, vg.Points(13)),
		XAlign:  draw.XCenter,
		YAlign:  draw.YCenter,
		Handler: plot.DefaultTextHandler,
	}, vg.Point{X: w / 2, Y: h - head/2}, title)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(6), PadY: vg.Points(6), PadTop: head}
	canvases := plot.Align(grid, tiles, dc)
	for i := range grid {
		for j, p := range grid[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("plot %s: %w", file, err)
	}
	return f.Close()
}

// copyLine reduces the copy baselines, one per case and each as noisy as
// the machine, to one point per power of two of bytes: the median of the
// bytes and of the bandwidth of the copies nearest it.
func copyLine(copies []Result) plotter.XYs {
	buckets := map[int][]Result{}
	for _, c := range copies {
		if c.Bytes > 0 && c.GBps > 0 {
			k := int(math.Round(math.Log2(float64(c.Bytes))))
			buckets[k] = append(buckets[k], c)
		}
	}
	var line plotter.XYs
	for _, k := range slices.Sorted(maps.Keys(buckets)) {
		var xs, ys []float64
		for _, c := range buckets[k] {
			xs, ys = append(xs, float64(c.Bytes)), append(ys, c.GBps)
		}
		line = append(line, plotter.XY{X: median(xs), Y: median(ys)})
	}
	return line
}

// byteTicks marks powers of two between lo and hi, labelling powers of
// four, or of sixteen when there would be more than five labels, in
// binary units.
func byteTicks(lo, hi float64) []plot.Tick {
	first, last := int(math.Ceil(math.Log2(lo))), int(math.Floor(math.Log2(hi)))
	step := 2
	if (last-first)/step > 4 {
		step = 4
	}
	var ts []plot.Tick
	for e := first; e <= last; e++ {
		t := plot.Tick{Value: math.Ldexp(1, e)}
		if e%step == 0 {
			t.Label = humanBytes(uint64(t.Value))
		}
		ts = append(ts, t)
	}
	return ts
}

// gbpsTicks are the default ticks, labelled without trailing zeros.
func gbpsTicks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', -1, 64)
		}
	}
	return ts
}

// humanBytes writes a power of two in binary units: "4 KiB".
func humanBytes(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	e := bits.TrailingZeros64(n) / 10
	e = min(e, len(units)-1)
	return fmt.Sprintf("%d %s", n>>(10*e), units[e])
}
