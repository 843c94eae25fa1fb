package report

import (
	"fmt"
	"image/color"
	"math"

	"github.com/pacer-ps/pacer/runstats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// timeAxis names the clock the runs' seconds are on.
func timeAxis(runs []runstats.Run) string {
	for i := range runs {
		if m := runs[i].Mode; m == "inproc" || m == "tcp" {
			return "wall-clock time (s)"
		}
	}
	return "virtual time (s)"
}

// medianCurve is a paradigm's accuracy over seeds, evaluation by
// evaluation: the median time and accuracy of the k-th evaluation, and the
// interval of its accuracy (the band). Seeds evaluate after the same
// numbers of samples, so their k-th evaluations belong together; the last
// point is every seed's last evaluation (at the horizon).
func medianCurve(g pgroup) (mid, lo, hi plotter.XYs) {
	n := -1
	for _, r := range g.runs {
		if len(r.Curve) > 0 && (n < 0 || len(r.Curve) < n) {
			n = len(r.Curve)
		}
	}
	if n <= 0 {
		return nil, nil, nil
	}
	point := func(pick func(c [][2]float64) [2]float64) {
		var ts, as []float64
		for _, r := range g.runs {
			if len(r.Curve) > 0 {
				p := pick(r.Curve)
				ts, as = append(ts, p[0]), append(as, p[1])
			}
		}
		t, a := runstats.MedianInterval(ts), runstats.MedianInterval(as)
		mid = append(mid, plotter.XY{X: *t.Median, Y: *a.Median})
		lo = append(lo, plotter.XY{X: *t.Median, Y: *a.Lo})
		hi = append(hi, plotter.XY{X: *t.Median, Y: *a.Hi})
	}
	for k := 0; k < n-1; k++ {
		point(func(c [][2]float64) [2]float64 { return c[k] })
	}
	point(func(c [][2]float64) [2]float64 { return c[len(c)-1] })
	return mid, lo, hi
}

// accuracyPlot draws each paradigm's median test accuracy over seeds with
// a band for its interval and a marker at every evaluation; the y axis is
// zoomed to where the paradigms differ (past the first rise), a dashed
// line marks the target and a large marker each median time to target.
func accuracyPlot(s *runstats.Summary, gs []pgroup) (figure, *plot.Plot, error) {
	heading := "Test accuracy over time (median over seeds)"
	if len(gs) <= maxBands && len(s.Seeds) > 1 {
		heading = "Test accuracy over time (median over seeds, band: interval)"
	}
	p := newPlot(heading, timeAxis(s.Runs), "test accuracy")
	p.Y.Tick.Marker = percentTicks{scale: 100}
	p.Add(grid(true, true))
	tgt := s.Target
	xmax := s.HorizonSeconds
	type curve struct{ mid, lo, hi plotter.XYs }
	cs := make([]curve, len(gs))
	for i, g := range gs {
		cs[i].mid, cs[i].lo, cs[i].hi = medianCurve(g)
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
		if len(g.runs) > 1 && len(gs) <= maxBands {
			poly, err := bandPolygon(c.lo, c.hi, i)
			if err != nil {
				return figure{}, nil, fmt.Errorf("report: accuracy band of %s: %w", g.name, err)
			}
			p.Add(poly)
		}
		l, err := plotter.NewLine(c.mid)
		if err != nil {
			return figure{}, nil, fmt.Errorf("report: accuracy curve of %s: %w", g.name, err)
		}
		l.LineStyle = runLine(i)
		p.Add(l)
		dots, err := plotter.NewScatter(c.mid)
		if err != nil {
			return figure{}, nil, err
		}
		dots.GlyphStyle = runGlyph(i)
		dots.GlyphStyle.Radius = vg.Points(2.2)
		p.Add(dots)
		label := g.name
		if tgt > 0 && g.st.TimeToTarget != nil {
			if m := g.st.TimeToTarget.Median; m != nil {
				sc, err := plotter.NewScatter(plotter.XYs{{X: *m, Y: tgt}})
				if err != nil {
					return figure{}, nil, err
				}
				sc.GlyphStyle = runGlyph(i)
				sc.GlyphStyle.Radius = vg.Points(5)
				marks = append(marks, sc)
				label += " (" + secs(*m) + ")"
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
	}
	caption := fmt.Sprintf("Each line is one paradigm's median test accuracy over %s, a dot at every evaluation; %s. "+
		"The accuracy axis starts at %s, past the first climb that all paradigms share, to show where they differ.", seedWord(len(s.Seeds)), band, pct(p.Y.Min))
	if tgt > 0 {
		caption += fmt.Sprintf(" The large marker is the median time to the dashed %s target (in the legend) — further left is faster.", pct(tgt))
	}
	return figure{name: FileAccuracy, title: "Accuracy vs time", caption: caption, png: png}, p, err
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
func bandsPlot(s *runstats.Summary, gs []pgroup, ref *plot.Plot) (figure, error) {
	cols := 4
	rows := (len(gs) + cols - 1) / cols
	mids := make([]plotter.XYs, len(gs))
	los := make([]plotter.XYs, len(gs))
	his := make([]plotter.XYs, len(gs))
	for i, g := range gs {
		mids[i], los[i], his[i] = medianCurve(g)
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

// stalenessPlot draws, per run, the share of applied gradients at each
// staleness. Shares (not counts) make runs of different lengths comparable;
// the y axis turns logarithmic when rare large staleness would otherwise be
// invisible next to the common small one. Zero bins are left out (a log
// axis cannot show them), which splits a run's line into segments.
func stalenessPlot(runs []runstats.Run) (figure, error) {
	p := newPlot("Staleness of applied gradients", "staleness (versions behind when applied)", "share of gradients")
	p.X.Tick.Marker = intTicks{}
	lo, hi, smax := 1.0, 0.0, 0
	for i := range runs {
		var tot int64
		for _, n := range runs[i].StalenessHist {
			tot += n
		}
		for s, n := range runs[i].StalenessHist {
			if n > 0 {
				sh := float64(n) / float64(tot)
				lo, hi, smax = min(lo, sh), max(hi, sh), max(smax, s)
			}
		}
	}
	// The log axis is drawn as log10 values on a linear axis with ticks
	// labelled in percent: gonum's LogScale places a rotated axis label by
	// the arithmetic midpoint, which leaves a gap above the plot.
	logY := hi > 0 && hi/lo > 50
	yv := func(share float64) float64 { return share }
	if logY {
		yv = math.Log10
		p.Y.Tick.Marker = percentTicks{scale: 100, log: true}
		p.Y.Min, p.Y.Max = math.Floor(math.Log10(lo)+1e-9), 0
		p.Y.Label.Text += " (log scale)"
	} else {
		p.Y.Tick.Marker = percentTicks{scale: 100}
		p.Y.Min, p.Y.Max = 0, math.Min(1, math.Max(hi*1.1, 0.05))
	}
	p.Add(grid(false, true))
	for i := range runs {
		r := &runs[i]
		var tot int64
		for _, n := range r.StalenessHist {
			tot += n
		}
		if tot == 0 {
			p.Legend.Add(r.Paradigm + " (no data)")
			continue
		}
		var pts, seg plotter.XYs
		var legendLine *plotter.Line
		flush := func() error {
			if len(seg) > 1 {
				l, err := plotter.NewLine(seg)
				if err != nil {
					return err
				}
				l.LineStyle = runLine(i)
				p.Add(l)
				legendLine = l
			}
			seg = nil
			return nil
		}
		for s, n := range r.StalenessHist {
			if n == 0 {
				if err := flush(); err != nil {
					return figure{}, err
				}
				continue
			}
			xy := plotter.XY{X: float64(s), Y: yv(float64(n) / float64(tot))}
			seg, pts = append(seg, xy), append(pts, xy)
		}
		if err := flush(); err != nil {
			return figure{}, err
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return figure{}, fmt.Errorf("report: staleness of %s: %w", r.Paradigm, err)
		}
		sc.GlyphStyle = runGlyph(i)
		p.Add(sc)
		label := fmt.Sprintf("%s (mean %.2f, max %d)", r.Paradigm, r.StalenessMean, r.StalenessMax)
		if legendLine != nil {
			p.Legend.Add(label, legendLine, sc)
		} else {
			p.Legend.Add(label, sc)
		}
	}
	p.X.Min, p.X.Max = -0.5, float64(max(smax, 1))+0.5
	p.Legend.Top = true
	p.Legend.XOffs = -vg.Points(6)
	png, err := renderPNG(p, 4.8*vg.Inch)
	caption := "For each paradigm, the share of applied gradients that were computed on weights this many " +
		"versions old; mass at 0 means fresh gradients, a long tail to the right means stale ones."
	return figure{name: FileStale, title: "Staleness", caption: caption, png: png}, err
}

// sparseTicks labels every other major tick: a small panel's axis has no
// room for them all.
type sparseTicks struct{ inner plot.Ticker }

func (t sparseTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := t.inner.Ticks(lo, hi)
	k := 0
	for i := range ts {
		if ts[i].Label == "" {
			continue
		}
		if k%2 == 1 {
			ts[i].Label = ""
		}
		k++
	}
	return ts
}
