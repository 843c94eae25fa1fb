package report

import (
	"fmt"
	"image/color"
	"slices"

	"github.com/pacer-ps/pacer/runstats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Bar plots are horizontal: paradigm specs such as "dssp:sl=3,su=15" are
// long, and read well down the y axis where they would collide on an x axis.
// The first run is at the top, the order the user listed them.

// maxGroupedBars is the most bars the waiting plot draws one per worker;
// beyond it each paradigm shows its least, median and most waiting worker.
const maxGroupedBars = 40

// barOverhead is the height of the title and x axis around the bars.
const barOverhead = 1.15 * vg.Inch

// barLayout sizes a horizontal bar plot of n categories of k bars each and
// returns its height and the bar thickness that fills 80% of a category.
func barLayout(n, k int) (h, bar vg.Length) {
	slot := max(0.42*vg.Inch, vg.Length(k)*0.14*vg.Inch+0.12*vg.Inch)
	return barOverhead + vg.Length(n)*slot, slot * 0.8 / vg.Length(k)
}

// categories puts run names on the y axis, first run on top.
func categories(p *plot.Plot, runs []runstats.Run, suffix func(*runstats.Run) string) {
	n := len(runs)
	names := make([]string, n)
	for i := range runs {
		names[n-1-i] = runs[i].Paradigm + suffix(&runs[i])
	}
	p.NominalY(names...)
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
}

func pos(n, i int) float64 { return float64(n - 1 - i) }

// waitPlot shows how much of its time each worker spent held by the
// paradigm: one bar per worker when that stays readable, else the spread
// (least, median, most) over a paradigm's workers.
func waitPlot(runs []runstats.Run) (figure, error) {
	n, k := len(runs), 0
	for i := range runs {
		k = max(k, len(runs[i].WorkerWait))
	}
	grouped := k > 0 && k*n <= maxGroupedBars
	var series []string
	var value func(r *runstats.Run, s int) float64
	var shade func(s int) color.Color
	caption := "Each bar is the share of one worker's time spent waiting for the paradigm to release it; " +
		"short bars mean workers were kept busy, uneven bars show who waited for whom."
	if grouped {
		for w := range k {
			series = append(series, fmt.Sprintf("worker %d", w))
		}
		value = func(r *runstats.Run, w int) float64 {
			if w < len(r.WorkerWait) {
				return r.WorkerWait[w]
			}
			return 0
		}
		shade = func(w int) color.Color { return palette[w%len(palette)] }
	} else {
		series = []string{"least-waiting worker", "median worker", "most-waiting worker"}
		value = func(r *runstats.Run, s int) float64 {
			if len(r.WorkerWait) == 0 {
				return 0
			}
			v := slices.Clone(r.WorkerWait)
			slices.Sort(v)
			switch s {
			case 0:
				return v[0]
			case 2:
				return v[len(v)-1]
			}
			if len(v)%2 == 1 {
				return v[len(v)/2]
			}
			return (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		blues := []color.Color{color.RGBA{0xa6, 0xc8, 0xe6, 0xff}, color.RGBA{0x4e, 0x79, 0xa7, 0xff}, color.RGBA{0x1f, 0x3a, 0x5f, 0xff}}
		shade = func(s int) color.Color { return blues[s] }
		caption = fmt.Sprintf("With %d workers, each paradigm shows the spread of the share of time its workers "+
			"spent waiting for release: the least-waiting worker, the median one and the most-waiting one.", k)
	}
	p := newPlot("Time each worker spent waiting", "share of the worker's time spent waiting for release", "")
	p.X.Tick.Marker = percentTicks{scale: 100, upTo: 1}
	p.Add(grid(true, false))
	h, bar := barLayout(n, len(series))
	top := 0.0
	var lxy plotter.XYs
	var ltxt []string
	for s, name := range series {
		vals := make(plotter.Values, n)
		for i := range runs {
			vals[n-1-i] = value(&runs[i], s)
			top = max(top, vals[n-1-i])
			if len(runs[i].WorkerWait) > 0 {
				// Offsets are in page units, labels in data units: a
				// category is 1 data unit per slot, bars are 0.8 of it.
				off := (float64(len(series)-1)/2 - float64(s)) * 0.8 / float64(len(series))
				lxy = append(lxy, plotter.XY{X: vals[n-1-i], Y: pos(n, i) + off})
				ltxt = append(ltxt, pct(vals[n-1-i]))
			}
		}
		b, err := plotter.NewBarChart(vals, bar)
		if err != nil {
			return figure{}, fmt.Errorf("report: waiting bars: %w", err)
		}
		b.Horizontal = true
		b.Color = shade(s)
		b.LineStyle = draw.LineStyle{Color: color.White, Width: vg.Points(0.5)}
		b.Offset = (vg.Length(len(series)-1)/2 - vg.Length(s)) * bar
		p.Add(b)
		p.Legend.Add(name, b)
	}
	if len(series) <= 4 {
		labels, err := valueLabels(lxy, ltxt)
		if err != nil {
			return figure{}, err
		}
		p.Add(labels)
	}
	categories(p, runs, func(r *runstats.Run) string {
		if len(r.WorkerWait) == 0 {
			return " (no per-worker data)"
		}
		return ""
	})
	// Keep the bars in the left two thirds so the legend on the right
	// never covers one.
	p.X.Min, p.X.Max = 0, max(top, 0.05)/0.66
	p.Legend.Top = true
	p.Legend.XOffs = -vg.Points(6)
	png, err := renderPNG(p, h)
	return figure{name: FileWait, title: "Waiting per worker", caption: caption, png: png}, err
}

// throughputPlot draws one bar per paradigm, labelled with its value.
func throughputPlot(runs []runstats.Run) (figure, error) {
	n := len(runs)
	p := newPlot("Throughput", "gradients pushed per second, all workers together", "")
	p.Add(grid(true, false))
	h, bar := barLayout(n, 1)
	top := 0.0
	var lxy plotter.XYs
	var ltxt []string
	for i := range runs {
		v := runs[i].Throughput
		top = max(top, v)
		b, err := plotter.NewBarChart(plotter.Values{v}, bar)
		if err != nil {
			return figure{}, fmt.Errorf("report: throughput bar of %s: %w", runs[i].Paradigm, err)
		}
		b.Horizontal = true
		b.XMin = pos(n, i)
		b.Color = runColor(i)
		b.LineStyle.Width = 0
		p.Add(b)
		lxy = append(lxy, plotter.XY{X: v, Y: pos(n, i)})
		ltxt = append(ltxt, rate(v)+"/s")
	}
	labels, err := valueLabels(lxy, ltxt)
	if err != nil {
		return figure{}, err
	}
	p.Add(labels)
	categories(p, runs, func(*runstats.Run) string { return "" })
	// Room on the right for the value labels.
	p.X.Min, p.X.Max = 0, max(top, 1e-9)*1.18
	png, err := renderPNG(p, h)
	caption := "Each bar is a paradigm's rate of gradient pushes over the whole run (all workers); " +
		"longer means more iterations per second, which is not the same as reaching the target sooner."
	return figure{name: FileThru, title: "Throughput", caption: caption, png: png}, err
}

// timeSplitPlot stacks, per paradigm, where its workers' time went with a
// network (the mean over seeds of each share): computing, pushing,
// held by the gate, pulling, and held at a shard during a pull.
func timeSplitPlot(runs []runstats.Run) (figure, error) {
	n := len(runs)
	p := newPlot("Where the workers' time went", "share of the workers' time (mean over workers and seeds)", "")
	p.X.Tick.Marker = percentTicks{scale: 100, upTo: 1}
	p.Add(grid(true, false))
	h, bar := barLayout(n, 1)
	parts := []struct {
		name string
		get  func(*runstats.TimeSplit) float64
	}{
		{"computing", func(t *runstats.TimeSplit) float64 { return t.Compute }},
		{"pushing", func(t *runstats.TimeSplit) float64 { return t.Push }},
		{"held by the gate", func(t *runstats.TimeSplit) float64 { return t.Gate }},
		{"pulling", func(t *runstats.TimeSplit) float64 { return t.Pull }},
		{"held at a shard", func(t *runstats.TimeSplit) float64 { return t.Server }},
	}
	var below *plotter.BarChart
	for k, part := range parts {
		vals := make(plotter.Values, n)
		for i := range runs {
			if ts := runs[i].TimeSplit; ts != nil {
				vals[n-1-i] = part.get(ts)
			}
		}
		b, err := plotter.NewBarChart(vals, bar)
		if err != nil {
			return figure{}, fmt.Errorf("report: time split bars: %w", err)
		}
		b.Horizontal = true
		b.Color = palette[(k+1)%len(palette)]
		b.LineStyle = draw.LineStyle{Color: color.White, Width: vg.Points(0.5)}
		if below != nil {
			b.StackOn(below)
		}
		below = b
		p.Add(b)
		p.Legend.Add(part.name, b)
	}
	categories(p, runs, func(r *runstats.Run) string {
		if r.TimeSplit == nil {
			return " (no network)"
		}
		return ""
	})
	// Room on the right for the legend.
	p.X.Min, p.X.Max = 0, 1.45
	p.Legend.Top = true
	p.Legend.XOffs = -vg.Points(6)
	png, err := renderPNG(p, h)
	caption := "With a network, each bar splits a paradigm's worker time: computing; pushing (the blocks' " +
		"transfer and queueing at the links, the acknowledgements, the report to the coordinator); held by the " +
		"gate until the release arrives; pulling; and, of the pull, held at a shard for a version or an apply. " +
		"Network: " + runs[0].Network + "."
	return figure{name: FileSplit, title: "Where the time went", caption: caption, png: png}, err
}

// linksPlot shows, per paradigm, how busy the shards' links were: the
// share of the run each spent receiving pushes and sending pulls (the
// mean over shards of the median over seeds).
func linksPlot(runs []runstats.Run) (figure, error) {
	n := len(runs)
	p := newPlot("How busy the shards' links were", "share of the run a shard's link spent moving data (mean over shards)", "")
	p.X.Tick.Marker = percentTicks{scale: 100, upTo: 1}
	p.Add(grid(true, false))
	series := []struct {
		name string
		get  func(*runstats.Run) []float64
	}{
		{"receiving pushes", func(r *runstats.Run) []float64 { return r.ShardLinkIn }},
		{"sending pulls", func(r *runstats.Run) []float64 { return r.ShardLinkOut }},
	}
	h, bar := barLayout(n, len(series))
	var lxy plotter.XYs
	var ltxt []string
	for s, se := range series {
		vals := make(plotter.Values, n)
		for i := range runs {
			if v := se.get(&runs[i]); len(v) > 0 {
				sum := 0.0
				for _, x := range v {
					sum += x
				}
				vals[n-1-i] = sum / float64(len(v))
				off := (float64(len(series)-1)/2 - float64(s)) * 0.8 / float64(len(series))
				lxy = append(lxy, plotter.XY{X: vals[n-1-i], Y: pos(n, i) + off})
				ltxt = append(ltxt, pct(vals[n-1-i]))
			}
		}
		b, err := plotter.NewBarChart(vals, bar)
		if err != nil {
			return figure{}, fmt.Errorf("report: link bars: %w", err)
		}
		b.Horizontal = true
		b.Color = palette[(s+5)%len(palette)]
		b.LineStyle = draw.LineStyle{Color: color.White, Width: vg.Points(0.5)}
		b.Offset = (vg.Length(len(series)-1)/2 - vg.Length(s)) * bar
		p.Add(b)
		p.Legend.Add(se.name, b)
	}
	labels, err := valueLabels(lxy, ltxt)
	if err != nil {
		return figure{}, err
	}
	p.Add(labels)
	categories(p, runs, func(r *runstats.Run) string {
		if len(r.ShardLinkIn) == 0 {
			return " (no network)"
		}
		return ""
	})
	p.X.Min, p.X.Max = 0, 1.5
	p.Legend.Top = true
	p.Legend.XOffs = -vg.Points(6)
	png, err := renderPNG(p, h)
	caption := "With a network, each pair of bars is a paradigm's shard links: the share of the run they spent " +
		"receiving pushes and sending pulls. Near 100% the links, not the workers, set the pace."
	return figure{name: FileLinks, title: "Shard links", caption: caption, png: png}, err
}
