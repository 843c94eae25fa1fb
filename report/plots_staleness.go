package report

import (
	"fmt"
	"math"

	"github.com/pacer-ps/pacer/runstats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// This file: the staleness plot, and the sparse ticks of its axis.

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
