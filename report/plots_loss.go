package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/runstats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// This file: the loss plots (the training loss and the mini-batch loss
// over time), and how they read a run that diverged.

// lossKind is what a loss plot draws: the evaluated weights' training
// loss (loss_vs_time.png) or the workers' mini-batch losses
// (batch_loss_vs_time.png).
type lossKind struct {
	file, title, heading, yLabel string
	series                       series
	// what is the caption's account of the quantity, after "Each line is
	// one paradigm's median".
	what string
}

var (
	trainLossKind = lossKind{file: FileLoss, title: "Training loss vs time", heading: "Training loss over time",
		yLabel: fmt.Sprintf("training loss (first %d samples)", runstats.TrainLossSamples), series: timeLoss,
		what: fmt.Sprintf("training loss (mean cross-entropy of the evaluated weights on the first %d training samples)", runstats.TrainLossSamples)}
	batchLossKind = lossKind{file: FileBatchLoss, title: "Mini-batch loss vs time", heading: "Mini-batch loss over time",
		yLabel: "mean mini-batch loss since the previous evaluation", series: timeBatchLoss,
		what: "mini-batch loss (the mean cross-entropy of the batches its workers computed since the previous evaluation, " +
			"each at the weights that worker had read: noisier than, and lagging, the evaluated weights' loss)"}
)

// lossPlot draws each paradigm's median loss of kind k over seeds against
// time, with a band for its interval. The loss axis is cut at the highest
// loss after the first point: the initial weights' loss, the same for
// every paradigm, would squeeze the differences at the end flat.
func lossPlot(s *compare.Summary, gs []pgroup, k lossKind) (figure, *plot.Plot, error) {
	bands := len(gs) <= maxBands && len(s.Seeds) > 1
	heading := k.heading + " (median over seeds)"
	if bands {
		heading = k.heading + " (median over seeds, band: interval)"
	}
	p := newPlot(heading, timeAxis(s.Runs), k.yLabel)
	p.Add(grid(true, true))
	xmax, ylo, yhi := s.HorizonSeconds, math.Inf(1), math.Inf(-1)
	diverged := false
	for i, g := range gs {
		mid, lo, hi, cut := finiteCurve(medianCurve(g, divergedHigh(k.series)))
		diverged = diverged || cut
		if len(mid) == 0 {
			p.Legend.Add(g.name + " (diverged: no finite loss)")
			continue
		}
		for j := range mid {
			xmax = max(xmax, mid[j].X)
			ylo = min(ylo, lo[j].Y, mid[j].Y)
			if j > 0 || len(mid) == 1 {
				yhi = max(yhi, hi[j].Y, mid[j].Y)
			}
		}
		l, dots, err := addCurve(p, mid, lo, hi, i, bands && len(g.runs) > 1)
		if err != nil {
			return figure{}, nil, fmt.Errorf("report: %s of %s: %w", strings.ToLower(k.title), g.name, err)
		}
		p.Legend.Add(fmt.Sprintf("%s (%.3g at the end)", g.name, mid[len(mid)-1].Y), l, dots)
	}
	if !(yhi > ylo) {
		ylo, yhi = 0, math.Max(1, 2*yhi)
	}
	pad := (yhi - ylo) * 0.08
	p.X.Min, p.X.Max = 0, math.Max(xmax, 1)
	p.Y.Min, p.Y.Max = math.Max(0, ylo-pad), yhi+pad
	p.Legend.Top = true
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(10), -vg.Points(6)
	png, err := renderPNG(p, 5.2*vg.Inch)
	band := ""
	if bands {
		band = ", the shaded band its interval over seeds"
	}
	caption := fmt.Sprintf("Each line is one paradigm's median %s over %s, a dot at every evaluation%s; lower is better. The axis is cut below the "+
		"first point's loss, which every paradigm shares, to show where they differ.", k.what, seedWord(len(s.Seeds)), band)
	if diverged {
		caption += " Where runs diverged (a loss that is not a number), a median they make infinite is left out and a band they open is drawn to the median."
	}
	return figure{name: k.file, title: k.title, caption: caption, png: png}, p, err
}

// divergedHigh is f with a loss that is not finite (a run that diverged:
// NaN or ±Inf) read as +Inf, so that medians over seeds sort it above
// every finite loss instead of failing on it.
func divergedHigh(f series) series {
	return func(r *runstats.Run) (x, y []float64) {
		x, y = f(r)
		if !slices.ContainsFunc(y, notFinite) {
			return x, y
		}
		y = slices.Clone(y)
		for i, v := range y {
			if notFinite(v) {
				y[i] = math.Inf(1)
			}
		}
		return x, y
	}
}

// finiteCurve keeps the points whose median is finite and draws a band
// edge that is not finite at the median; cut reports whether either
// happened (diverged runs).
func finiteCurve(mid, lo, hi plotter.XYs) (m, l, h plotter.XYs, cut bool) {
	for j := range mid {
		if notFinite(mid[j].Y) {
			cut = true
			continue
		}
		lj, hj := lo[j], hi[j]
		if notFinite(lj.Y) {
			lj.Y, cut = mid[j].Y, true
		}
		if notFinite(hj.Y) {
			hj.Y, cut = mid[j].Y, true
		}
		m, l, h = append(m, mid[j]), append(l, lj), append(h, hj)
	}
	return m, l, h, cut
}

// notFinite reports a loss a diverged run leaves: NaN or ±Inf.
func notFinite(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
