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

// accuracyPlot draws test accuracy against time, one line per run with a
// curve, a dashed line at the target and a marker where each run crosses it.
func accuracyPlot(sc Scenario, runs []runstats.Run) (figure, error) {
	p := newPlot("Test accuracy over time", timeAxis(runs), "test accuracy")
	p.Y.Tick.Marker = percentTicks{scale: 100}
	p.Add(grid(true, true))
	tgt := target(sc, runs)
	xmax, ymin, ymax := 0.0, 1.0, 0.0
	for i := range runs {
		for _, pt := range runs[i].Curve {
			xmax, ymin, ymax = max(xmax, pt[0]), min(ymin, pt[1]), max(ymax, pt[1])
		}
	}
	if tgt > 0 {
		ymin, ymax = min(ymin, tgt), max(ymax, tgt)
	}
	var marks []plot.Plotter // drawn last, so no later line hides them
	for i := range runs {
		r := &runs[i]
		if len(r.Curve) == 0 {
			continue
		}
		xys := make(plotter.XYs, len(r.Curve))
		for k, pt := range r.Curve {
			xys[k] = plotter.XY{X: pt[0], Y: pt[1]}
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return figure{}, fmt.Errorf("report: accuracy curve of %s: %w", r.Paradigm, err)
		}
		l.LineStyle = runLine(i)
		p.Add(l)
		label := r.Paradigm
		if tgt > 0 {
			if t, ok := r.TimeTo(tgt); ok {
				s, err := plotter.NewScatter(plotter.XYs{{X: t, Y: tgt}})
				if err != nil {
					return figure{}, err
				}
				s.GlyphStyle = runGlyph(i)
				s.GlyphStyle.Radius = vg.Points(4.5)
				marks = append(marks, s)
				label += " (" + secs(t) + ")"
			} else {
				label += " (not reached)"
			}
		}
		p.Legend.Add(label, l)
	}
	if tgt > 0 {
		tl, err := plotter.NewLine(plotter.XYs{{X: 0, Y: tgt}, {X: math.Max(xmax, 1), Y: tgt}})
		if err != nil {
			return figure{}, err
		}
		tl.LineStyle = draw.LineStyle{Color: color.Gray{0x40}, Width: vg.Points(1.2),
			Dashes: []vg.Length{vg.Points(6), vg.Points(4)}}
		p.Add(tl)
		p.Legend.Add("target "+pct(tgt), tl)
	}
	p.Add(marks...)
	p.X.Min, p.X.Max = 0, math.Max(xmax, 1)
	pad := math.Max(0.02, (ymax-ymin)*0.05)
	p.Y.Min, p.Y.Max = math.Max(0, ymin-pad), math.Min(1, ymax+pad)
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(6), vg.Points(6)
	png, err := renderPNG(p, 4.8*vg.Inch)
	caption := "Each line is one paradigm's test accuracy as training goes on; further left is faster."
	if tgt > 0 {
		caption = fmt.Sprintf("Each line is one paradigm's test accuracy as training goes on; the marker is where it "+
			"first reaches the dashed %s target (time in the legend) — further left is faster.", pct(tgt))
	}
	return figure{name: FileAccuracy, title: "Accuracy vs time", caption: caption, png: png}, err
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
