package report

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/runstats"
)

// timeAxis names the clock the runs' seconds are on.
func timeAxis(runs []runstats.Run) string {
	for i := range runs {
		if runs[i].Mode.Live() {
			return "wall-clock time (s)"
		}
	}
	return "virtual time (s)"
}

// series picks one curve of a run: x and y at each of its evaluations,
// nil where the run does not record it.
type series func(r *runstats.Run) (x, y []float64)

// timeAccuracy is test accuracy against time, what every trained run has.
func timeAccuracy(r *runstats.Run) (x, y []float64) {
	for _, p := range r.Curve {
		x, y = append(x, p[0]), append(y, p[1])
	}
	return x, y
}

// epochAccuracy is test accuracy against epochs, where the run records the
// epoch of each evaluation (CurveEpochs).
func epochAccuracy(r *runstats.Run) (x, y []float64) {
	if len(r.CurveEpochs) != len(r.Curve) {
		return nil, nil
	}
	for k, p := range r.Curve {
		x, y = append(x, r.CurveEpochs[k]), append(y, p[1])
	}
	return x, y
}

// timeLoss is the training loss against time, where the run records it.
func timeLoss(r *runstats.Run) (x, y []float64) {
	if len(r.TrainLoss) != len(r.Curve) {
		return nil, nil
	}
	for k, p := range r.Curve {
		x, y = append(x, p[0]), append(y, r.TrainLoss[k])
	}
	return x, y
}

// timeBatchLoss is the workers' mean mini-batch loss since the previous
// evaluation against time, at the evaluations that have one.
func timeBatchLoss(r *runstats.Run) (x, y []float64) {
	if len(r.BatchLoss) != len(r.Curve) {
		return nil, nil
	}
	for k, p := range r.Curve {
		if l := r.BatchLoss[k]; l != nil {
			x, y = append(x, p[0]), append(y, *l)
		}
	}
	return x, y
}

// recorded is whether any run of s has the series.
func recorded(s *compare.Summary, f series) bool {
	for i := range s.Runs {
		if x, _ := f(&s.Runs[i]); len(x) > 0 {
			return true
		}
	}
	return false
}

// medianCurve is a paradigm's series f over seeds, evaluation by
// evaluation: the median x and y of the k-th evaluation, and the interval
// of its y (the band). Seeds evaluate after the same numbers of samples,
// so their k-th evaluations belong together; the last point is every
// seed's last evaluation (at the horizon). Runs without the series are
// left out.
func medianCurve(g pgroup, f series) (mid, lo, hi plotter.XYs) {
	var xs, ys [][]float64
	n := -1
	for i := range g.runs {
		x, y := f(&g.runs[i])
		if len(x) == 0 {
			continue
		}
		xs, ys = append(xs, x), append(ys, y)
		if n < 0 || len(x) < n {
			n = len(x)
		}
	}
	if n <= 0 {
		return nil, nil, nil
	}
	point := func(pick func(len int) int) {
		var px, py []float64
		for j := range xs {
			k := pick(len(xs[j]))
			px, py = append(px, xs[j][k]), append(py, ys[j][k])
		}
		t, a := compare.MedianInterval(px), compare.MedianInterval(py)
		// A bound MedianInterval leaves out is infinite (a diverged
		// run's loss, divergedHigh): finiteCurve drops or caps it.
		mid = append(mid, plotter.XY{X: *t.Median, Y: orInf(a.Median)})
		lo = append(lo, plotter.XY{X: *t.Median, Y: orInf(a.Lo)})
		hi = append(hi, plotter.XY{X: *t.Median, Y: orInf(a.Hi)})
	}
	for k := 0; k < n-1; k++ {
		point(func(int) int { return k })
	}
	point(func(l int) int { return l - 1 })
	return mid, lo, hi
}

// accuracyAxis is what an accuracy plot draws against: time
// (accuracy_vs_time.png) or epochs (accuracy_vs_epoch.png).
type accuracyAxis struct {
	file, title, heading, xLabel string
	series                       series
	xmax                         float64 // the least right end of the axis (the horizon)
	// toTarget is a paradigm's median x at the summary's target: nil when
	// most of its seeds never reached it; known false when its runs do not
	// say.
	toTarget func(g pgroup) (median *float64, known bool)
	value    func(float64) string // a legend's x value
	// marker is the caption's sentence on the target's markers, given the
	// target in words.
	marker func(tgt string) string
}

func timeAxisOf(s *compare.Summary) accuracyAxis {
	return accuracyAxis{file: FileAccuracy, title: "Accuracy vs time", heading: "Test accuracy over time",
		xLabel: timeAxis(s.Runs), series: timeAccuracy, xmax: s.HorizonSeconds,
		toTarget: func(g pgroup) (*float64, bool) {
			if g.st.TimeToTarget == nil {
				return nil, false
			}
			return g.st.TimeToTarget.Median, true
		},
		value: secs,
		marker: func(tgt string) string {
			return fmt.Sprintf(" The large marker is the median time to the dashed %s target (in the legend) — further left is faster.", tgt)
		}}
}

func epochAxisOf(s *compare.Summary) accuracyAxis {
	return accuracyAxis{file: FileEpochs, title: "Accuracy vs epochs", heading: "Test accuracy over epochs",
		xLabel: "epochs (all workers' samples over the training set)", series: epochAccuracy,
		toTarget: func(g pgroup) (*float64, bool) {
			// Epochs to the target per seed, as the statistics take times
			// to it: a seed that never reached it counts as +Inf.
			var es []float64
			for i := range g.runs {
				r := &g.runs[i]
				if len(r.CurveEpochs) != len(r.Curve) || len(r.Curve) == 0 {
					return nil, false
				}
				e, ok := r.EpochTo(s.Target)
				if !ok {
					e = math.Inf(1)
				}
				es = append(es, e)
			}
			if len(es) == 0 {
				return nil, false
			}
			return compare.MedianInterval(es).Median, true
		},
		value: func(v float64) string { return "epoch " + trimZero(fmt.Sprintf("%.2f", v)) },
		marker: func(tgt string) string {
			return fmt.Sprintf(" The large marker is the median epoch at which the dashed %s target was reached (in the legend) — further left needs fewer passes over the data.", tgt)
		}}
}

// accuracyPlot draws each paradigm's median test accuracy over seeds
// against ax with a band for its interval and a marker at every
// evaluation; the y axis is zoomed to where the paradigms differ (past the
// first rise), a dashed line marks the target and a large marker each
// median x at the target.
func accuracyPlot(s *compare.Summary, gs []pgroup, ax accuracyAxis) (figure, *plot.Plot, error) {
	heading := ax.heading + " (median over seeds)"
	if len(gs) <= maxBands && len(s.Seeds) > 1 {
		heading = ax.heading + " (median over seeds, band: interval)"
	}
	p := newPlot(heading, ax.xLabel, "test accuracy")
	p.Y.Tick.Marker = percentTicks{scale: 100}
	p.Add(grid(true, true))
	tgt := s.Target
	xmax := ax.xmax
	type curve struct{ mid, lo, hi plotter.XYs }
	cs := make([]curve, len(gs))
	for i, g := range gs {
		cs[i].mid, cs[i].lo, cs[i].hi = medianCurve(g, ax.series)
		for _, q := range cs[i].mid {
			xmax = max(xmax, q.X)
		}
	}
	// Zoom to where the race is decided: from below the lower of the
	// target and the worst final median (by three quarters of the span
	// above it, so the last climb shows) to the top of the bands. The early
	// climb, common to all, is cut off.
	lo, ymax := 1.0, 0.0
	for _, c := range cs {
		if n := len(c.mid); n > 0 {
			lo = min(lo, c.mid[n-1].Y)
		}
		for _, q := range c.hi {
			ymax = max(ymax, q.Y)
		}
	}
	if tgt > 0 {
		lo, ymax = min(lo, tgt), max(ymax, tgt)
	}
	if lo > ymax {
		lo, ymax = 0, 1
	}
	ymin := lo - math.Max(0.02, 0.75*(ymax-lo))
	var marks []plot.Plotter // drawn last, so no later line hides them
	for i, g := range gs {
		c := cs[i]
		if len(c.mid) == 0 {
			continue
		}
		l, dots, err := addCurve(p, c.mid, c.lo, c.hi, i, len(g.runs) > 1 && len(gs) <= maxBands)
		if err != nil {
			return figure{}, nil, fmt.Errorf("report: accuracy curve of %s: %w", g.name, err)
		}
		label := g.name
		if m, known := ax.toTarget(g); tgt > 0 && known {
			if m != nil {
				sc, err := plotter.NewScatter(plotter.XYs{{X: *m, Y: tgt}})
				if err != nil {
					return figure{}, nil, err
				}
				sc.GlyphStyle = runGlyph(i)
				sc.GlyphStyle.Radius = vg.Points(5)
				marks = append(marks, sc)
				label += " (" + ax.value(*m) + ")"
			} else {
				label += " (not reached)"
			}
		}
		p.Legend.Add(label, l, dots)
	}
	if tgt > 0 {
		tl, err := plotter.NewLine(plotter.XYs{{X: 0, Y: tgt}, {X: math.Max(xmax, 1), Y: tgt}})
		if err != nil {
			return figure{}, nil, err
		}
		tl.LineStyle = draw.LineStyle{Color: color.Gray{0x40}, Width: vg.Points(1.2),
			Dashes: []vg.Length{vg.Points(6), vg.Points(4)}}
		p.Add(tl)
		p.Legend.Add("target "+pct(tgt), tl)
	}
	p.Add(marks...)
	p.X.Min, p.X.Max = 0, math.Max(xmax, 1)
	pad := math.Max(0.003, (ymax-ymin)*0.04)
	p.Y.Min, p.Y.Max = math.Max(0, ymin), math.Min(1, ymax+pad)
	// Top left: the zoom cuts off the early climb, which leaves that
	// corner empty, while the curves end high on the right.
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(10), -vg.Points(6)
	png, err := renderPNG(p, 5.2*vg.Inch)
	band := "the shaded band is the interval over seeds"
	if len(gs) > maxBands {
		band = "each paradigm's band (the interval over seeds) is in the next figure, where bands do not hide each other"
		if ax.file != FileAccuracy {
			band = "the bands over seeds are left out past " + fmt.Sprint(maxBands) + " paradigms, where they hide each other"
		}
	}
	caption := fmt.Sprintf("Each line is one paradigm's median test accuracy over %s, a dot at every evaluation; %s. "+
		"The accuracy axis starts at %s, past the first climb that all paradigms share, to show where they differ.", seedWord(len(s.Seeds)), band, pct(p.Y.Min))
	if tgt > 0 {
		caption += ax.marker(pct(tgt))
	}
	return figure{name: ax.file, title: ax.title, caption: caption, png: png}, p, err
}

// addCurve draws one paradigm's median line (in its colour and dashes) with
// a dot at every evaluation and, with band, the interval between lo and hi
// shaded; the line and dots are the legend's.
func addCurve(p *plot.Plot, mid, lo, hi plotter.XYs, i int, band bool) (*plotter.Line, *plotter.Scatter, error) {
	if band {
		poly, err := bandPolygon(lo, hi, i)
		if err != nil {
			return nil, nil, fmt.Errorf("band: %w", err)
		}
		p.Add(poly)
	}
	l, err := plotter.NewLine(mid)
	if err != nil {
		return nil, nil, err
	}
	l.LineStyle = runLine(i)
	p.Add(l)
	dots, err := plotter.NewScatter(mid)
	if err != nil {
		return nil, nil, err
	}
	dots.GlyphStyle = runGlyph(i)
	dots.GlyphStyle.Radius = vg.Points(2.2)
	p.Add(dots)
	return l, dots, nil
}

// maxBands is the most bands one plot shows; past it they hide each other
// and every paradigm gets its own panel (bandsPlot).
const maxBands = 3

func bandPolygon(lo, hi plotter.XYs, i int) (*plotter.Polygon, error) {
	band := make(plotter.XYs, 0, 2*len(lo))
	band = append(band, lo...)
	for k := len(hi) - 1; k >= 0; k-- {
		band = append(band, hi[k])
	}
	poly, err := plotter.NewPolygon(band)
	if err != nil {
		return nil, err
	}
	col := color.RGBAModel.Convert(runColor(i)).(color.RGBA)
	poly.Color = color.NRGBA{R: col.R, G: col.G, B: col.B, A: 0x40}
	poly.LineStyle.Width = 0
	return poly, nil
}

// bandsPlot is one small panel per paradigm: its median curve and band in
// its colour over the other paradigms' medians in grey, on shared axes, so
// the spread over seeds of each reads without the others in the way.
func bandsPlot(s *compare.Summary, gs []pgroup, ref *plot.Plot) (figure, error) {
	cols := 4
	rows := (len(gs) + cols - 1) / cols
	mids := make([]plotter.XYs, len(gs))
	los := make([]plotter.XYs, len(gs))
	his := make([]plotter.XYs, len(gs))
	for i, g := range gs {
		mids[i], los[i], his[i] = medianCurve(g, timeAccuracy)
	}
	panels := make([][]*plot.Plot, rows)
	for r := range panels {
		panels[r] = make([]*plot.Plot, cols)
	}
	for i, g := range gs {
		p := newPlot(g.name, "", "")
		p.Title.TextStyle.Font.Size = vg.Points(11)
		p.Y.Tick.Marker = percentTicks{scale: 100}
		p.Add(grid(true, true))
		for k := range gs {
			if k == i || len(mids[k]) == 0 {
				continue
			}
			l, err := plotter.NewLine(mids[k])
			if err != nil {
				return figure{}, err
			}
			l.LineStyle = draw.LineStyle{Color: color.Gray{0xc8}, Width: vg.Points(1)}
			p.Add(l)
		}
		if len(mids[i]) > 0 {
			poly, err := bandPolygon(los[i], his[i], i)
			if err != nil {
				return figure{}, fmt.Errorf("report: accuracy band of %s: %w", g.name, err)
			}
			l, err := plotter.NewLine(mids[i])
			if err != nil {
				return figure{}, err
			}
			l.LineStyle = runLine(i)
			dots, err := plotter.NewScatter(mids[i])
			if err != nil {
				return figure{}, err
			}
			dots.GlyphStyle = runGlyph(i)
			dots.GlyphStyle.Radius = vg.Points(1.8)
			p.Add(poly, l, dots)
		}
		if s.Target > 0 {
			tl, err := plotter.NewLine(plotter.XYs{{X: ref.X.Min, Y: s.Target}, {X: ref.X.Max, Y: s.Target}})
			if err != nil {
				return figure{}, err
			}
			tl.LineStyle = draw.LineStyle{Color: color.Gray{0x40}, Width: vg.Points(0.8),
				Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
			p.Add(tl)
		}
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = ref.X.Min, ref.X.Max, ref.Y.Min, ref.Y.Max
		p.X.Tick.Marker = sparseTicks{niceTicks{format: plainNumber}}
		for _, a := range []*plot.Axis{&p.X, &p.Y} {
			a.Tick.Label.Font.Size = vg.Points(8.5)
		}
		panels[i/cols][i%cols] = p
	}
	h := vg.Length(rows) * 2.1 * vg.Inch
	png, err := renderTiles(panels, h, "accuracy bands")
	caption := fmt.Sprintf("One panel per paradigm: its median test accuracy (line, a dot at every evaluation) and the "+
		"interval over %s (band), over the other paradigms' medians in grey; same axes as above.", seedWord(len(s.Seeds)))
	return figure{name: FileBands, title: "Accuracy over seeds, per paradigm", caption: caption, png: png}, err
}

// orInf is *v, or +Inf where MedianInterval gave no finite value.
func orInf(v *float64) float64 {
	if v == nil {
		return math.Inf(1)
	}
	return *v
}
