// Package check holds pacer's prediction against a live run (issue 12):
// one comparison run twice with the same job, seeds and timing model,
// once in virtual time (the prediction) and once on the live runtime,
// whose workers stretch their real iterations to the same model (the
// measurement), and the two set side by side per paradigm.
package check

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/launch"
	"github.com/pacer-ps/pacer/nsnet"
	"github.com/pacer-ps/pacer/runstats"
)

// DefaultBase is the iteration time unit of a check that names none: the
// prediction needs an absolute one, and the live workers' stretch must
// exceed their real step (about a millisecond for the MLP here) for the
// model's times to be the ones they run at.
const DefaultBase = 20 * time.Millisecond

// Metrics are one paradigm's figures on one side: medians over seeds,
// but StalenessMax, the largest of any seed.
type Metrics struct {
	// Throughput is pushes per second: virtual; live, the workers' steady
	// rate (SteadyThroughput), where the runs report it, else wall.
	Throughput float64 `json:"throughput"`
	// WallThroughput is, live, the job's pushes over its wall time from
	// the first worker's join: it also counts every worker process's
	// start-up (its data set loading), which the prediction has none of.
	WallThroughput float64  `json:"wall_throughput,omitempty"`
	WaitFraction   float64  `json:"wait_fraction"`  // share of worker time held
	StalenessMean  float64  `json:"staleness_mean"` // updates between a gradient's read and its apply
	StalenessMax   int64    `json:"staleness_max"`
	TimeToTarget   *float64 `json:"time_to_target,omitempty"` // seconds; nil: not reached (or no target)
}

// Paradigm is one paradigm's prediction and measurement.
type Paradigm struct {
	Paradigm  string  `json:"paradigm"`
	Predicted Metrics `json:"predicted"`
	Measured  Metrics `json:"measured"`
	// ThroughputRatio is measured over predicted throughput.
	ThroughputRatio float64 `json:"throughput_ratio"`
	// WaitGap is the measured waiting share minus the predicted, in
	// points of worker time.
	WaitGap float64 `json:"wait_gap_points"`
	// ExtraPerIteration is how much longer a live worker's iteration
	// took than the prediction's, on average (seconds; negative: shorter).
	ExtraPerIteration float64 `json:"extra_per_iteration_seconds"`
}

// Result is a check: per paradigm, and the throughput ranking each side
// gives.
type Result struct {
	Live runstats.Mode `json:"live"` // inproc | tcp
	Base string        `json:"base"`
	// Links are the emulated links both sides ran on ("" : loopback, and
	// no network in the prediction).
	Links string `json:"links,omitempty"`
	// LinkNotes say where the live links differ from what the prediction
	// charges: a latency left to the veth, or one this kernel cannot add.
	LinkNotes        []string   `json:"link_notes,omitempty"`
	Seeds            []uint64   `json:"seeds"`
	Paradigms        []Paradigm `json:"paradigms"`
	PredictedRanking []string   `json:"predicted_ranking"` // by throughput, highest first
	MeasuredRanking  []string   `json:"measured_ranking"`
	// SameRanking: no two paradigms the prediction separates (by more
	// than RankTolerance) change places in the measurement; paradigms it
	// predicts within that of each other are a tie either way round.
	SameRanking bool `json:"same_ranking"`
	// Inversions are the pairs that did change places, "a over b".
	Inversions []string `json:"inversions,omitempty"`
	// Why says, in sentences, where the two differ and what the
	// prediction leaves out.
	Why []string `json:"why"`
	// Refit is the prediction again with what the live runs measured
	// charged (nil: nothing to charge, or a single-paradigm check fits
	// and checks the same figure).
	Refit *Refit `json:"refit,omitempty"`
	// The two comparisons in full (their own reports).
	Predicted *compare.Summary `json:"-"`
	Measured  *compare.Summary `json:"-"`
}

// Validate refuses a check that cannot run as asked.
func Validate(c compare.Config, live runstats.Mode) error {
	if !live.Live() {
		return fmt.Errorf("check: live mode %q: want inproc or tcp", live)
	}
	if c.Job.Network != nil && live != runstats.TCP {
		return fmt.Errorf("%w: links in %s mode (tcp mode emulates them, each process on a host of its own); leave them out or measure with tcp", ErrNotEmulated, live)
	}
	if c.Job.Network != nil && c.Job.Network.Changes() {
		return fmt.Errorf("check: %w", launch.ErrWindowNotEmulated)
	}
	if c.Job.Network != nil {
		// Here, not after minutes of prediction.
		if err := nsnet.Check(); err != nil {
			return fmt.Errorf("check: the links are emulated live on hosts of their own: %w", err)
		}
	}
	return nil
}

// Run predicts c in virtual time and measures it live (live: inproc or
// tcp), the same paradigms, job and seeds. c.Mode is ignored; a zero
// timing base becomes DefaultBase for both.
func Run(ctx context.Context, c compare.Config, live runstats.Mode) (*Result, error) {
	if err := Validate(c, live); err != nil {
		return nil, err
	}
	j := &c.Job
	if j.Timing.Base == 0 {
		j.Timing.Base = DefaultBase
	}
	var notes []string
	if j.Network != nil {
		// Both sides on the cluster the live side can make: a latency this
		// kernel cannot add is predicted as the veth's, and said.
		j.Network, notes = launch.Emulated(j.Network, nsnet.Netem() == nil)
	}
	pc, lc := c, c
	pc.Mode, lc.Mode = runstats.Virtual, live
	if t := &lc.Job.Timing; len(t.Speeds) == 0 && t.Jitter == 0 && t.Straggler.IsZero() {
		// A live job without speeds, jitter or stragglers has no timing
		// model (live/worker/pace.go) and runs at its real step, where the
		// prediction charges the base: every worker at speed 1 is the
		// same model, and holds them to it.
		t.Speeds = []float64{1}
	}
	// Each run for the job's epochs, as the live runs: the same
	// iterations, and so the same draws, on both sides.
	pc.Horizon, pc.EpochsEach = 0, true
	// Both sides are checked before either runs: a live side that would
	// refuse the comparison (a horizon, auto) must not cost the
	// prediction's minutes first.
	if err := pc.Validate(); err != nil {
		return nil, fmt.Errorf("check: the prediction: %w", err)
	}
	if err := lc.Validate(); err != nil {
		return nil, fmt.Errorf("check: the live runs: %w", err)
	}
	say := c.Progress
	if say != nil {
		say(fmt.Sprintf("check: predicting %d paradigm(s) × %d seed(s) in virtual time", len(c.Specs), c.Seeds))
	}
	pred, err := compare.Run(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("check: the prediction: %w", err)
	}
	if say != nil {
		say(fmt.Sprintf("check: measuring the same on the live runtime (%s mode)", live))
	}
	meas, err := compare.Run(ctx, lc)
	if err != nil {
		return nil, fmt.Errorf("check: the live runs: %w", err)
	}
	r := Join(pred, meas, live, j.Timing.Base, j.Workers)
	if j.Network != nil {
		r.Links, r.LinkNotes = j.Network.String(), notes
	}
	if r.Refit, err = refit(ctx, pc, r, meas, say); err != nil {
		return nil, err
	}
	r.Why = why(r)
	return r, nil
}

// Join sets two comparisons of the same paradigms side by side.
func Join(pred, meas *compare.Summary, live runstats.Mode, base time.Duration, workers int) *Result {
	r := &Result{Live: live, Base: base.String(), Seeds: pred.Seeds, Predicted: pred, Measured: meas}
	for _, ps := range pred.Paradigms {
		i := slices.IndexFunc(meas.Paradigms, func(m compare.ParadigmStats) bool { return m.Paradigm == ps.Paradigm })
		if i < 0 {
			continue
		}
		p := Paradigm{Paradigm: ps.Paradigm, Predicted: metrics(pred, ps), Measured: metrics(meas, meas.Paradigms[i])}
		if p.Predicted.Throughput > 0 {
			p.ThroughputRatio = p.Measured.Throughput / p.Predicted.Throughput
		}
		p.WaitGap = 100 * (p.Measured.WaitFraction - p.Predicted.WaitFraction)
		if p.Predicted.Throughput > 0 && p.Measured.Throughput > 0 {
			// Each worker's iteration time is workers / (pushes per second).
			k := float64(workers)
			p.ExtraPerIteration = k/p.Measured.Throughput - k/p.Predicted.Throughput
		}
		r.Paradigms = append(r.Paradigms, p)
	}
	r.PredictedRanking = ranking(r.Paradigms, func(p Paradigm) float64 { return p.Predicted.Throughput })
	r.MeasuredRanking = ranking(r.Paradigms, func(p Paradigm) float64 { return p.Measured.Throughput })
	for _, a := range r.Paradigms {
		for _, b := range r.Paradigms {
			if a.Predicted.Throughput > b.Predicted.Throughput*(1+RankTolerance) && a.Measured.Throughput < b.Measured.Throughput {
				r.Inversions = append(r.Inversions, b.Paradigm+" over "+a.Paradigm)
			}
		}
	}
	r.SameRanking = len(r.Inversions) == 0
	r.Why = why(r)
	return r
}

func metrics(s *compare.Summary, ps compare.ParadigmStats) Metrics {
	m := Metrics{Throughput: med(ps.Throughput), WaitFraction: med(ps.WaitFraction), StalenessMean: med(ps.StalenessMean)}
	var steady []float64
	for i := range s.Runs {
		if s.Runs[i].Paradigm == ps.Paradigm {
			m.StalenessMax = max(m.StalenessMax, s.Runs[i].StalenessMax)
			if v, ok := SteadyThroughput(&s.Runs[i]); ok {
				steady = append(steady, v)
			}
		}
	}
	if len(steady) > 0 && len(steady) == ps.Runs {
		m.WallThroughput, m.Throughput = m.Throughput, med(compare.MedianInterval(steady))
	}
	if ps.TimeToTarget != nil && ps.TimeToTarget.Median != nil {
		v := *ps.TimeToTarget.Median
		m.TimeToTarget = &v
	}
	return m
}

// SteadyThroughput is a live run's pushes per second in steady state: per
// worker, one push per cycle of computing and waiting (its mean iteration
// over the share of its time not held, both from the coordinator's
// clock reports), summed over the workers. Unlike the wall rate it leaves
// out each worker process's start-up before its first iteration. ok is
// false where the run has no per-worker figures (virtual time).
func SteadyThroughput(r *runstats.Run) (float64, bool) {
	if len(r.WorkerIterations) == 0 || len(r.WorkerIterations) != len(r.WorkerWait) {
		return 0, false
	}
	var sum float64
	for p, it := range r.WorkerIterations {
		if it.N == 0 || !(it.Mean > 0) {
			continue
		}
		sum += (1 - r.WorkerWait[p]) / it.Mean
	}
	return sum, sum > 0
}

func med(iv compare.Interval) float64 {
	if iv.Median == nil {
		return 0
	}
	return *iv.Median
}

// ranking orders the paradigms by f, highest first; ties keep the
// comparison's order.
func ranking(ps []Paradigm, f func(Paradigm) float64) []string {
	order := slices.Clone(ps)
	slices.SortStableFunc(order, func(a, b Paradigm) int {
		switch {
		case f(a) > f(b):
			return -1
		case f(a) < f(b):
			return 1
		}
		return 0
	})
	out := make([]string, len(order))
	for i, p := range order {
		out[i] = p.Paradigm
	}
	return out
}

// Tolerances of the acceptance: throughput within 10%, waiting
// within 5 points; predictions within 5% of each other rank as a tie.
const (
	ThroughputTolerance = 0.10
	WaitTolerance       = 5.0
	RankTolerance       = 0.05
)

func why(r *Result) []string {
	var out []string
	off := 0
	for _, p := range r.Paradigms {
		var parts []string
		if p.ThroughputRatio < 1-ThroughputTolerance || p.ThroughputRatio > 1+ThroughputTolerance {
			off++
			parts = append(parts, fmt.Sprintf("live throughput %.0f%% of the prediction (an iteration %.1f ms longer)", 100*p.ThroughputRatio, 1e3*p.ExtraPerIteration))
		}
		if p.WaitGap > WaitTolerance || p.WaitGap < -WaitTolerance {
			parts = append(parts, fmt.Sprintf("waiting %.1f points %s", math.Abs(p.WaitGap), moreLess(p.WaitGap)))
		}
		if len(parts) > 0 {
			out = append(out, p.Paradigm+": "+strings.Join(parts, "; ")+".")
		}
	}
	switch {
	case off > 0 && r.Links != "":
		out = append(out, fmt.Sprintf("The prediction charges the timing model's compute (in units of %s) and the links (%s), each "+
			"direction of each link shared max-min fairly among its transfers; the live runs move the same bytes by TCP through the kernel's "+
			"shapers (with its headers, 4–5%% more bytes, and its acknowledgements), and also pay their applies, acknowledgements and coordination, and any real step longer than the base.", r.Base, r.Links))
	case off > 0:
		out = append(out, fmt.Sprintf("The prediction charges only the timing model's compute (in units of %s); the live runs also pay their real "+
			"pushes, pulls, applies and coordination, and any real step longer than the base.", r.Base))
	}
	if f := r.Refit; f != nil {
		lo, hi, worst := math.Inf(1), math.Inf(-1), 0.0
		for _, p := range f.Paradigms {
			lo, hi = min(lo, p.ThroughputRatio), max(hi, p.ThroughputRatio)
			worst = max(worst, math.Abs(p.WaitGap))
		}
		rank := "the same ranking"
		if !f.SameRanking {
			rank = "rankings that differ: " + strings.Join(f.Inversions, ", ")
		}
		out = append(out, fmt.Sprintf("Refit: charging that overhead as %s of latency on every message (one parameter, fitted so that the median paradigm's iteration matches), "+
			"the prediction gives live throughput %.0f–%.0f%% of it, waiting within %.1f points, and %s.", f.Latency, 100*lo, 100*hi, worst, rank))
	}
	if !r.SameRanking {
		out = append(out, fmt.Sprintf("The throughput rankings differ: the prediction separated, and the measurement reversed, %s.", strings.Join(r.Inversions, ", ")))
	}
	if len(out) == 0 {
		out = append(out, fmt.Sprintf("Every paradigm's live throughput is within %.0f%% of the prediction and its waiting within %.0f points, and the rankings agree.",
			100*ThroughputTolerance, WaitTolerance))
	}
	return out
}

func moreLess(x float64) string {
	if x > 0 {
		return "more"
	}
	return "less"
}

// Markdown is the check as a table, the two rankings and the reasons.
func (r *Result) Markdown() string {
	var b []byte
	add := func(format string, a ...any) { b = fmt.Appendf(b, format, a...) }
	add("| paradigm | pushes/s predicted | measured | ratio | wait predicted | measured | staleness mean predicted | measured | max predicted | measured | time to target predicted | measured |\n")
	add("| :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, p := range r.Paradigms {
		add("| %s | %.1f | %.1f | %.2f | %.1f%% | %.1f%% | %.2f | %.2f | %d | %d | %s | %s |\n", p.Paradigm,
			p.Predicted.Throughput, p.Measured.Throughput, p.ThroughputRatio, 100*p.Predicted.WaitFraction, 100*p.Measured.WaitFraction,
			p.Predicted.StalenessMean, p.Measured.StalenessMean, p.Predicted.StalenessMax, p.Measured.StalenessMax,
			secs(p.Predicted.TimeToTarget), secs(p.Measured.TimeToTarget))
	}
	add("\nMedians over seeds %v (staleness max: the largest of any seed); predicted in virtual seconds, measured in wall seconds on the live runtime (%s mode), iterations in units of %s.\n\n",
		r.Seeds, r.Live, r.Base)
	var walls []string
	for _, p := range r.Paradigms {
		if p.Measured.WallThroughput > 0 {
			walls = append(walls, fmt.Sprintf("%s %.1f", p.Paradigm, p.Measured.WallThroughput))
		}
	}
	if len(walls) > 0 {
		add("Measured throughput is the workers' steady rate (per worker one push per cycle of computing and waiting, summed); the wall rate, which also counts every worker process's start-up, was %s pushes/s.\n\n", strings.Join(walls, ", "))
	}
	if r.Links != "" {
		add("Both sides on the links %s: charged by the prediction, emulated live (each process on a host of its own, its link rate-limited and shared fairly by the kernel's tc htb).\n\n", r.Links)
		for _, n := range r.LinkNotes {
			add("- %s\n", n)
		}
		if len(r.LinkNotes) > 0 {
			add("\n")
		}
	}
	agree := "they agree, ties (within 5%) either way round"
	if !r.SameRanking {
		agree = "they differ: " + strings.Join(r.Inversions, ", ")
	}
	add("Throughput ranking: predicted %v, measured %v (%s).\n\n", r.PredictedRanking, r.MeasuredRanking, agree)
	if f := r.Refit; f != nil {
		add("Refit (the measured overhead charged as %s a message):\n\n", f.Latency)
		add("| paradigm | pushes/s refit | measured | ratio | wait refit | measured |\n| :--- | ---: | ---: | ---: | ---: | ---: |\n")
		for _, p := range f.Paradigms {
			add("| %s | %.1f | %.1f | %.2f | %.1f%% | %.1f%% |\n", p.Paradigm, p.Predicted.Throughput, p.Measured.Throughput, p.ThroughputRatio,
				100*p.Predicted.WaitFraction, 100*p.Measured.WaitFraction)
		}
		add("\n")
	}
	for _, w := range r.Why {
		add("- %s\n", w)
	}
	return string(b)
}

func secs(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.2f s", *v)
}
