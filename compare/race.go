package compare

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/race"
	"github.com/pacer-ps/pacer/runstats"
)

// RaceConfig is a race over seeds (--seeds auto): every paradigm runs a
// few seeds, then rounds of more for the ones not yet shown worse than the
// leader, until one remains, the rest are equivalent to the leader within
// the margin, or the budget is spent (package race decides).
type RaceConfig struct {
	// Margin is on the metric's own scale (0: its default): with Unit
	// "%", a ratio in percent (5: within 5%) for times; with "pt",
	// accuracy points.
	Margin float64
	Unit   string
	// Budget is the runs the race may spend (0: DefaultBudget).
	Budget int
}

// Margin units.
const (
	UnitPercent = "%"
	UnitPoints  = "pt"
)

// DefaultBudget is the runs a race may spend by default: what five seeds
// of every paradigm cost in the fixed design, so the README's demo stays
// within its three minutes.
func DefaultBudget(paradigms int) int { return 5 * paradigms }

// raceMetric is the one number per run the race compares: the single place
// that chooses it, so another metric is one change here. Lower is better.
type raceMetric struct {
	key    string     // the verdict's metric (runstats.Metric*)
	scale  race.Scale // Log: compared as ratios; Linear: as differences
	unit   string     // the margin's unit on that scale
	margin float64    // the default margin, in unit
	value  func(r *runstats.Run) float64
}

// metric is the race's metric for c: in sim mode the time per push (the
// fastest iterations, which need not train fastest); with a target the
// time to reach it, a run that did not counting at its horizon (never
// faster than one that did; read as the smoothed time); otherwise the error at the horizon in points.
func (c *Config) metric(horizon float64) raceMetric {
	switch {
	case c.Mode == runstats.Sim:
		return raceMetric{key: MetricIteration, scale: race.Log, unit: UnitPercent, margin: 5,
			value: func(r *runstats.Run) float64 { return 1 / math.Max(r.Throughput, 1e-12) }}
	case c.Job.Target > 0:
		return raceMetric{key: MetricTime, scale: race.Log, unit: UnitPercent, margin: 5,
			value: func(r *runstats.Run) float64 {
				h := horizon
				if h <= 0 {
					h = r.Seconds
				}
				// The smoothed time (runstats.SmoothedTime), not the
				// first crossing: near the plateau the crossing is
				// mostly the curve's wander, and its paired spread over
				// seeds is too wide for any race to decide
				// (docs/compare.md).
				t, _, ok := r.SmoothedTime(c.Job.Target, h)
				if !ok {
					t = h
				}
				return math.Max(t, 1e-6)
			}}
	}
	return accuracyMetric()
}

// accuracyMetric is the error at the horizon in points: the race's metric
// without a target, and its fallback when the target was out of reach.
func accuracyMetric() raceMetric {
	return raceMetric{key: MetricAccuracy, scale: race.Linear, unit: UnitPoints, margin: 0.5,
		value: func(r *runstats.Run) float64 { return 100 * (1 - r.FinalAccuracy) }}
}

// raceConfig is the race's configuration for c.
func (c *Config) raceConfig(m raceMetric) race.Config {
	margin := c.Race.Margin
	if margin == 0 || c.Race.Unit != m.unit {
		// A margin given in the other metric's unit (a time's %, when
		// the race fell back to accuracy) does not carry over.
		margin = m.margin
	}
	if m.scale == race.Log {
		margin /= 100
	}
	budget := c.Race.Budget
	if budget == 0 {
		budget = DefaultBudget(len(c.Names()))
	}
	return race.Config{Scale: m.scale, Margin: margin, Budget: budget, MaxSeeds: c.raceMaxSeeds(budget), SimplicityOrder: SimplicityOrder}
}

// raceMaxSeeds is the most seeds a paradigm can run within budget: the
// first round's for all, the rest shared by the last two. It bounds the
// seeds of the default horizon, so every run of the race gets its epochs.
func (c *Config) raceMaxSeeds(budget int) int {
	k := len(c.Names())
	n := race.DefaultFirst
	if budget > n*k {
		n += (budget - n*k) / 2
	}
	return min(n, job.MaxSeeds)
}

// validateRace checks the race's flags against the comparison.
func (c *Config) validateRace() error {
	if c.Mode != runstats.Virtual && c.Mode != runstats.Sim {
		return fmt.Errorf("seeds=auto: the race runs in the deterministic modes (virtual, sim); the live modes take --seeds N")
	}
	m := c.metric(0)
	if c.Race.Margin < 0 || math.IsNaN(c.Race.Margin) || math.IsInf(c.Race.Margin, 0) {
		return fmt.Errorf("margin=%g: want a positive margin", c.Race.Margin)
	}
	if c.Race.Margin > 0 && c.Race.Unit != m.unit {
		want := "a percentage such as 5% (a ratio of times)"
		if m.unit == UnitPoints {
			want = "accuracy points such as 0.5pt (without a target the race compares accuracy at the horizon)"
		}
		return fmt.Errorf("margin=%g%s: this comparison's metric is %s, so the margin is %s", c.Race.Margin, c.Race.Unit, m.key, want)
	}
	if c.Race.Margin >= 100 && m.unit == UnitPercent {
		return fmt.Errorf("margin=%g%%: want below 100%%", c.Race.Margin)
	}
	if c.Race.Budget < 0 {
		return fmt.Errorf("budget=%d: want a number of runs (0: the default)", c.Race.Budget)
	}
	cfg := c.raceConfig(m)
	return cfg.Validate(len(c.Names()))
}

// simplicity is the order the race recommends in among equivalent
// paradigms with as few stale gradients: the simplest rule first.
var simplicity = []paradigm.Kind{paradigm.BSP, paradigm.ASP, paradigm.SSP, paradigm.Backup, paradigm.Softsync, paradigm.PSP,
	paradigm.Elastic, paradigm.DSSP}

// SimplicityOrder names simplicity, for docs and reports.
const SimplicityOrder = "bsp, asp, ssp, backup, softsync, psp, elastic, dssp"

// simplicityRank is sp's place in simplicity; unlisted kinds come last.
func simplicityRank(sp paradigm.Spec) int {
	if rank := slices.Index(simplicity, sp.Kind); rank >= 0 {
		return rank
	}
	return len(simplicity)
}

// race runs the comparison as a race, one round at a time through the
// parallel engine: the paradigms that left run no more seeds. It returns
// every run made, the race's result and the metric it decided on.
//
// With a target the race compares times, a run that never reaches the
// target counting at the horizon. When the leader reached it in fewer
// than half its seeds, those times are mostly the horizon, equal for every
// paradigm that fell short, and an "equivalent" would say nothing: the
// race is then run again on the accuracy at the horizon (the fixed
// design's fallback too), reusing every run already made.
func (e *engine) race(ctx context.Context, one func(k int) (*runstats.Run, error)) ([]runstats.Run, *race.Result, raceMetric, error) {
	made := map[runKey]runstats.Run{}
	m := e.c.metric(e.horizon.Seconds())
	res, err := e.raceOn(ctx, one, m, made)
	if err == nil && m.key == MetricTime && !e.leaderReached(res, made) {
		m = accuracyMetric()
		res, err = e.raceOn(ctx, one, m, made)
		if err == nil {
			res.Verdict.Why += fmt.Sprintf(" (compared on accuracy at the horizon: on time the race's leader reached %s in fewer than half its seeds, "+
				"so its times were mostly the horizon, the same for every paradigm that fell short)", strconv.FormatFloat(100*e.c.Job.Target, 'g', 4, 64)+"%")
		}
	}
	if err != nil {
		return nil, nil, m, err
	}
	keys := make([]runKey, 0, len(made))
	for k := range made {
		keys = append(keys, k)
	}
	// Paradigm by paradigm, seeds in order, as the fixed design lists them.
	slices.SortFunc(keys, func(a, b runKey) int {
		if a.spec != b.spec {
			return a.spec - b.spec
		}
		return compareSeeds(a.seed, b.seed)
	})
	runs := make([]runstats.Run, len(keys))
	for i, k := range keys {
		runs[i] = made[k]
	}
	return runs, res, m, nil
}

// leaderReached reports whether the race's leader reached the target, on
// its smoothed curve, in at least half the seeds it ran.
func (e *engine) leaderReached(res *race.Result, made map[runKey]runstats.Run) bool {
	h, n, reached := e.horizon.Seconds(), 0, 0
	for k, r := range made {
		if e.name(k.spec) != res.Verdict.Leader {
			continue
		}
		n++
		if _, hit, _ := r.SmoothedTime(e.c.Job.Target, h); hit {
			reached++
		}
	}
	return 2*reached >= n
}

// raceOn races on metric m; made holds every run already made (by an
// earlier race on another metric), which costs nothing again, and gets
// the new ones.
func (e *engine) raceOn(ctx context.Context, one func(k int) (*runstats.Run, error), m raceMetric, made map[runKey]runstats.Run) (*race.Result, error) {
	var cands []race.Candidate
	for _, sp := range e.c.Specs {
		cands = append(cands, race.Candidate{Name: sp.String(), Simplicity: simplicityRank(sp)})
	}
	for _, g := range e.c.Groups {
		// A group is as simple as its most complex member.
		rank := 0
		for _, m := range g.Members {
			rank = max(rank, simplicityRank(m))
		}
		cands = append(cands, race.Candidate{Name: g.String(), Simplicity: rank})
	}
	return race.Run(e.c.raceConfig(m), cands, func(ps []int, from, to int) ([][]race.Outcome, error) {
		e.jobs = e.jobs[:0]
		for _, p := range ps {
			for s := from; s < to; s++ {
				if k := (runKey{p, e.c.Job.Seed + uint64(s)}); !has(made, k) {
					e.jobs = append(e.jobs, k)
				}
			}
		}
		runs, err := e.parallel(ctx, one)
		if err != nil {
			return nil, err
		}
		for i, r := range runs {
			made[e.jobs[i]] = r
		}
		out := make([][]race.Outcome, len(ps))
		for i, p := range ps {
			for s := from; s < to; s++ {
				r := made[runKey{p, e.c.Job.Seed + uint64(s)}]
				out[i] = append(out[i], race.Outcome{Value: m.value(&r), Stale: r.StalenessMean})
			}
		}
		return out, nil
	})
}

func has(m map[runKey]runstats.Run, k runKey) bool {
	_, ok := m[k]
	return ok
}

func compareSeeds(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// raceVerdict turns the race's end into the summary's verdict: the race
// decides the winner or the set; Analyze's per-paradigm figures stay.
func raceVerdict(v *Verdict, res *race.Result, key string) {
	rv := res.Verdict
	v.Kind, v.Metric, v.Leader, v.Recommended, v.Reason = rv.Kind, key, rv.Leader, rv.Recommended, rv.Why
	v.Winner, v.Tied = nil, []string{}
	if rv.Kind == race.Winner {
		w := rv.Leader
		v.Winner = &w
	} else {
		v.Tied = slices.Clone(rv.Set)
	}
	// The runner-up is the closest of the last round's tests: the one
	// least behind the leader.
	last := res.Rounds[len(res.Rounds)-1]
	v.RunnerUp, v.P = "", nil
	for _, t := range last.Tests {
		if v.P == nil || t.Behind < runnerUpBehind(last, v.RunnerUp) {
			p := t.PWorse
			v.RunnerUp, v.P = t.Paradigm, &p
		}
	}
}

func runnerUpBehind(rd race.Round, name string) float64 {
	for _, t := range rd.Tests {
		if t.Paradigm == name {
			return t.Behind
		}
	}
	return math.Inf(1)
}
