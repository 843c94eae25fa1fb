package report

import (
	"fmt"

	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/runstats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// This file: --paradigm auto's paradigm in force over time.

// FileAuto is the plot of the paradigm each auto run had in force.
const FileAuto = "auto_paradigm_vs_time.png"

// autoSpan is one stretch of a run under one paradigm.
type autoSpan struct {
	paradigm string
	from, to float64 // seconds of the run's time
}

// autoSpans reads a run's decisions as the stretches between switches:
// the first decision's current paradigm from the start, each switch's best
// from its decision on (the switch itself ends a drain later: at most the
// slowest worker's iteration, not drawn), to the run's end.
func autoSpans(r *runstats.Run) []autoSpan {
	if len(r.Decisions) == 0 {
		return nil
	}
	end := max(r.VirtualSeconds, r.Seconds)
	cur := autoSpan{paradigm: r.Decisions[0].Current}
	var out []autoSpan
	for _, d := range r.Decisions {
		if !d.Switch || d.Best == cur.paradigm {
			continue
		}
		cur.to = d.AtSeconds
		out = append(out, cur)
		cur = autoSpan{paradigm: d.Best, from: d.AtSeconds}
	}
	cur.to = max(end, cur.from)
	return append(out, cur)
}

// autoRuns are the runs that made decisions, in the summary's order.
func autoRuns(s *compare.Summary) []*runstats.Run {
	var out []*runstats.Run
	for i := range s.Runs {
		if len(s.Runs[i].Decisions) > 0 {
			out = append(out, &s.Runs[i])
		}
	}
	return out
}

// autoPlot draws one row per auto run (its paradigm and seed), coloured by
// the paradigm in force: where the planner moved the job, and when.
func autoPlot(runs []*runstats.Run) (figure, error) {
	p := newPlot("auto: the paradigm in force", "time (s)", "")
	p.Add(grid(true, false))
	colors := map[string]int{} // paradigm → palette index, in order of first use
	var names []string
	for k, r := range runs {
		for _, sp := range autoSpans(r) {
			c, ok := colors[sp.paradigm]
			if !ok {
				c = len(colors)
				colors[sp.paradigm] = c
			}
			l, err := plotter.NewLine(plotter.XYs{{X: sp.from, Y: float64(k)}, {X: sp.to, Y: float64(k)}})
			if err != nil {
				return figure{}, err
			}
			l.LineStyle.Color, l.LineStyle.Width = runColor(c), vg.Points(12)
			p.Add(l)
			if !ok {
				p.Legend.Add(sp.paradigm, l)
			}
		}
		names = append(names, fmt.Sprintf("%s, seed %d", r.Paradigm, r.Seed))
	}
	p.Y.Min, p.Y.Max = -0.75, float64(len(runs))-0.25
	ticks := make([]plot.Tick, len(names))
	for k, n := range names {
		ticks[k] = plot.Tick{Value: float64(k), Label: n}
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	h := vg.Length(120+36*len(runs)) * vg.Points(1)
	png, err := renderPNG(p, h)
	if err != nil {
		return figure{}, err
	}
	return figure{name: FileAuto, title: p.Title.Text,
		caption: "Each row one auto run, coloured by the paradigm in force: it starts under its first candidate and changes where a decision switched (drawn at the decision; the switch takes effect after the drain, at most the slowest worker's iteration later).",
		png:     png}, nil
}
