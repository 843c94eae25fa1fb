package compare

import (
	"math"
	"slices"

	"github.com/pacer-ps/pacer/runstats"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/pacer-ps/pacer/race"
	"github.com/pacer-ps/pacer/scenario"
)

// Summary is a comparison's summary.json: one object with what ran (the
// scenario as applied, the flags given, the seeds), every run, the statistics
// over seeds per paradigm and the verdict. Apart from Version and Commit
// the same flags give the same bytes, whatever the parallelism.
type Summary struct {
	Version string `json:"version"`
	// Schema is summary.json's own version (Schema): a reader can tell
	// which fields to expect.
	Schema   int               `json:"schema"`
	Commit   string            `json:"commit"` // "unknown" when the build did not record it
	Mode     runstats.Mode     `json:"mode"`
	Scenario scenario.Scenario `json:"scenario"` // with the command line's flags applied
	// Flags are the flags given on the command line and their values
	// (not --out); Scenario has every value the runs used.
	Flags map[string]string `json:"flags"`
	Seeds []uint64          `json:"seeds"`
	// HorizonSeconds is the virtual-time budget every run of a virtual or
	// sim comparison had (equal horizons); 0 for the live modes.
	HorizonSeconds float64 `json:"horizon_seconds"`
	Target         float64 `json:"target"`

	TimeToTargetMethod string `json:"time_to_target_method,omitempty"`
	IntervalMethod     string `json:"interval_method"`
	TestMethod         string `json:"test_method,omitempty"`

	Runs []runstats.Run `json:"runs"` // paradigm by paradigm, seeds in order within each
	// GroupRuns are the member runs of the compared groups (avg(…)),
	// group by group, member by member, seeds in order: each group's run
	// in Runs is, per seed, their runstats.Average.
	GroupRuns []runstats.Run  `json:"group_runs,omitempty"`
	Paradigms []ParadigmStats `json:"paradigms"`
	Verdict   Verdict         `json:"verdict"`
	// Race is the race over seeds (--seeds auto) that chose the runs and
	// decided the verdict: its rounds, each test, the margin and budget;
	// absent in the fixed design (--seeds N).
	Race *race.Result `json:"race,omitempty"`
}

// Schema is summary.json's schema version. 2: the race (`race`), the
// verdict's `kind` and `recommended`, the sim race's metric. 3: the
// verdict's time is `smoothed_time` (SmoothedTime), where 2 had
// `band_time`. A summary without the field is of schema 1.
const Schema = 3

// ParadigmStats are one paradigm's figures over its seeds.
type ParadigmStats struct {
	Paradigm string `json:"paradigm"`
	Runs     int    `json:"runs"`
	// Reached counts the seeds that reached the target (with a target).
	Reached *int `json:"reached,omitempty"`
	// TimeToTarget: a nil median or bound is "not reached within the horizon".
	TimeToTarget *Interval `json:"time_to_target,omitempty"`
	// SmoothedTime is the median SmoothedTime over seeds, the time the
	// verdict ranks and tests (not reached counts at the horizon).
	SmoothedTime      *Interval `json:"smoothed_time,omitempty"`
	AccuracyAtHorizon *Interval `json:"accuracy_at_horizon,omitempty"`
	Throughput        Interval  `json:"throughput"`
	WaitFraction      Interval  `json:"wait_fraction"`
	StalenessMean     Interval  `json:"staleness_mean"`
	// Wins counts the seeds on which this paradigm did best on the
	// verdict's metric (a shared best counts for each; a run that did not
	// reach the target never wins a seed on time).
	Wins int `json:"wins"`
	// PVsLeader is the paired test's p-value against the leader.
	PVsLeader *float64 `json:"p_vs_leader,omitempty"`
	// LeaderAdvantage is the leader's advantage over this paradigm on the
	// verdict's metric, as a ratio over the seeds both ran (> 1 favours
	// the leader).
	LeaderAdvantage *Effect `json:"leader_advantage,omitempty"`
	// TimesToTargets and EpochsToTargets are, per accuracy of the runs'
	// Targets (--targets), the median time and epochs to reach it over the
	// seeds with their intervals (a nil median or bound: not reached).
	TimesToTargets  []Interval `json:"times_to_targets,omitempty"`
	EpochsToTargets []Interval `json:"epochs_to_targets,omitempty"`
}

// Effect is the leader's advantage over another paradigm: the geometric
// mean over paired seeds of the other's time to target over the leader's
// (or of the leader's accuracy over the other's), with its 95% t interval
// (nil bounds: fewer than two pairs).
type Effect struct {
	Ratio float64  `json:"ratio"`
	Lo    *float64 `json:"lo"`
	Hi    *float64 `json:"hi"`
	Pairs int      `json:"pairs"` // seeds both paradigms ran
}

// Verdict says which paradigm won, or which are tied.
type Verdict struct {
	// Kind is how the comparison ended: "winner" or "tied" in the fixed
	// design; in a race "winner", "equivalent" (every paradigm left in is
	// equivalent to the leader within the margin) or "undecided" (the
	// budget ran out first). Empty when nothing was compared.
	Kind string `json:"kind,omitempty"`
	// Recommended (a race's) is the paradigm to use: the winner, or the
	// equivalence set's member with the fewest stale gradients, then the
	// simplest; Reason says why.
	Recommended string `json:"recommended,omitempty"`
	// Winner is named only when the leader is separated from every other
	// paradigm (WinRule); otherwise null and Tied lists the paradigms not
	// separated from the leader (the leader first).
	Winner *string  `json:"winner"`
	Tied   []string `json:"tied"`
	// Metric is time_to_target, accuracy_at_horizon (no target, or the
	// leader did not reach it in most seeds) or none (sim mode).
	Metric string  `json:"metric"`
	Target float64 `json:"target"`
	Leader string  `json:"leader,omitempty"` // best median on Metric
	// RunnerUp is the second best median; P the test between the two.
	RunnerUp string   `json:"runner_up,omitempty"`
	P        *float64 `json:"p_value,omitempty"`
	// Reason says in words why the leader won, or why each tied paradigm
	// is tied with it.
	Reason string `json:"reason,omitempty"`
}

// The verdict's metrics.
const (
	MetricTime     = "time_to_target"
	MetricAccuracy = "accuracy_at_horizon"
	MetricNone     = "none"
	// MetricIteration is a sim race's: the time per push, which says
	// which paradigm iterates fastest, not which trains fastest.
	MetricIteration = "iteration_time"
)

// MinEffect is the smallest advantage that names a winner: 2% less time
// to target, or 2% more accuracy at the horizon (geometric mean over
// seeds). Significance alone is not enough: with steady runs a paired test
// separates a gap too small to matter (a constant difference gives p = 0).
const MinEffect = 0.02

// WinRule says in words when the leader beats another paradigm.
const WinRule = "the leader is separated from another paradigm when, over the seeds both ran, the paired test is significant " +
	"(p < 0.05), the mean favours the leader as its median does, its advantage (geometric mean ratio) is at least 2%, " +
	"and, on time, the leader reached the target on every seed on which the other did; it is named the winner only when " +
	"it is separated from every other paradigm"

// Analyze computes the per-paradigm statistics and the verdict of runs
// (each paradigm of names run once per seed of seeds) against target (0:
// none). Runs are paired by seed value; a seed only one of two paradigms
// ran is left out of their comparison. A run that did not reach the
// target counts at the comparison's horizon (the longest run), so it
// never looks faster than one that did. It reads only the runs, so it is
// the same for any parallelism.
func Analyze(runs []runstats.Run, names []string, seeds []uint64, target float64) ([]ParadigmStats, Verdict) {
	trainedAny := false
	horizon := 0.0 // the longest run: virtual mode's equal horizon, the live modes' longest wall time
	for i := range runs {
		trainedAny = trainedAny || len(runs[i].Curve) > 0
		horizon = max(horizon, runs[i].Seconds)
	}
	grid := make([][]cell, len(names)) // grid[paradigm][seed index]
	stats := make([]ParadigmStats, len(names))
	for p, name := range names {
		grid[p] = make([]cell, len(seeds))
		var thr, wait, stale, times, accs, smooth []float64
		for k, s := range seeds {
			i := slices.IndexFunc(runs, func(r runstats.Run) bool { return r.Paradigm == name && r.Seed == s })
			if i < 0 {
				continue
			}
			r := &runs[i]
			thr, wait, stale = append(thr, r.Throughput), append(wait, r.WaitFraction), append(stale, r.StalenessMean)
			c := cell{ok: true, time: math.Inf(1), acc: r.FinalAccuracy}
			if target > 0 {
				if t, ok := r.TimeTo(target); ok {
					c.time = t
					horizon = max(horizon, t)
				}
				c.smooth, _, _ = r.SmoothedTime(target, horizon)
			}
			times, accs, smooth = append(times, c.time), append(accs, c.acc), append(smooth, c.smooth)
			grid[p][k] = c
		}
		st := ParadigmStats{Paradigm: name, Runs: len(thr), Throughput: MedianInterval(thr),
			WaitFraction: MedianInterval(wait), StalenessMean: MedianInterval(stale)}
		if trainedAny {
			a := MedianInterval(accs)
			st.AccuracyAtHorizon = &a
			if target > 0 {
				n := 0
				for _, t := range times {
					if !math.IsInf(t, 1) {
						n++
					}
				}
				ti, si := MedianInterval(times), MedianInterval(smooth)
				st.Reached, st.TimeToTarget, st.SmoothedTime = &n, &ti, &si
			}
		}
		st.TimesToTargets, st.EpochsToTargets = targetIntervals(runs, name, seeds)
		stats[p] = st
	}
	v := Verdict{Tied: []string{}, Metric: MetricNone, Target: target}
	if !trainedAny || len(names) == 0 {
		return stats, v
	}
	// score ranks (lower is better; +Inf: did not reach the target);
	// logv is what the paired test compares: the leader's advantage on a
	// seed is logv(other) − logv(leader) for time, the reverse for accuracy.
	timeMetric := target > 0
	score := func(c cell) float64 { return c.time }
	if timeMetric && math.IsInf(medianOf(grid, rank(grid, score)[0], score), 1) {
		// The leader did not reach the target in most seeds: time to
		// target cannot rank them; accuracy at the horizon can.
		timeMetric = false
	}
	logv := func(c cell) float64 { return math.Log(math.Max(c.acc, 1e-6)) }
	v.Metric = MetricAccuracy
	if timeMetric {
		// The first crossing decides whether time can rank them at all
		// (above); the smoothed time, far less noisy, ranks and tests them.
		v.Metric = MetricTime
		score = func(c cell) float64 { return c.smooth }
		logv = func(c cell) float64 { return -math.Log(math.Max(math.Min(c.smooth, horizon), 1e-6)) }
	} else {
		score = func(c cell) float64 { return -c.acc }
	}
	order := rank(grid, score)
	for k := range seeds {
		best := math.Inf(1)
		for p := range grid {
			if grid[p][k].ok {
				best = min(best, score(grid[p][k]))
			}
		}
		for p := range grid {
			if grid[p][k].ok && !math.IsInf(best, 1) && score(grid[p][k]) == best {
				stats[p].Wins++
			}
		}
	}
	lead := order[0]
	v.Leader = names[lead]
	v.Tied = append(v.Tied, names[lead])
	var why reasons
	for k, p := range order[1:] {
		var d []float64
		var missed []uint64 // seeds the other reached the target on and the leader did not
		for s := range seeds {
			a, b := grid[lead][s], grid[p][s]
			if !a.ok || !b.ok {
				continue // paired by seed: a seed one of them lacks says nothing about the pair
			}
			d = append(d, logv(a)-logv(b))
			if timeMetric && math.IsInf(a.time, 1) && !math.IsInf(b.time, 1) {
				missed = append(missed, seeds[s])
			}
		}
		pv := PairedT(d)
		m, half := meanHalfWidth(d)
		eff := &Effect{Ratio: round6(math.Exp(m)), Pairs: len(d)}
		if len(d) >= 2 {
			eff.Lo, eff.Hi = ptr(round6(math.Exp(m-half))), ptr(round6(math.Exp(m+half)))
		}
		stats[p].PVsLeader, stats[p].LeaderAdvantage = &pv, eff
		if k == 0 {
			v.RunnerUp, v.P = names[p], &pv
		}
		tie := true
		switch {
		case len(d) < 2:
			why.few = append(why.few, names[p])
		case len(missed) > 0:
			why.missed = append(why.missed, missedSeeds{names[p], missed})
		case m < 0:
			why.disagree = append(why.disagree, withP{names[p], pv, eff})
		case !(pv < Alpha) || m == 0:
			why.unseparated = append(why.unseparated, withP{names[p], pv, eff})
		case m < math.Log1p(MinEffect):
			why.small = append(why.small, withP{names[p], pv, eff})
		default:
			tie = false
		}
		if tie {
			v.Tied = append(v.Tied, names[p])
		}
	}
	if len(names) > 1 {
		v.Kind = "tied"
	}
	if len(v.Tied) == 1 && len(names) > 1 {
		v.Winner = &v.Leader
		v.Tied = []string{}
		v.Kind = "winner"
	}
	if len(names) > 1 {
		v.Reason = why.text(v, stats, names, order)
	}
	return stats, v
}

// cell is one paradigm's run of one seed.
type cell struct {
	ok        bool    // this paradigm ran this seed
	time, acc float64 // time: +Inf when the target was not reached
	smooth    float64 // the verdict's time (SmoothedTime), at most the horizon
}

type withP struct {
	name string
	p    float64
	eff  *Effect
}

type missedSeeds struct {
	name  string
	seeds []uint64
}

func ptr(v float64) *float64 { return &v }

// meanHalfWidth is the mean of d and the half-width of its 95% t
// interval (+Inf with fewer than two values).
func meanHalfWidth(d []float64) (m, half float64) {
	n := len(d)
	m = mean(d)
	if n < 2 {
		return m, math.Inf(1)
	}
	var ss float64
	for _, v := range d {
		ss += (v - m) * (v - m)
	}
	sd := math.Sqrt(ss / float64(n-1))
	return m, distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(1-Alpha/2) * sd / math.Sqrt(float64(n))
}

// rank orders the paradigms by median score (lower first), then by mean,
// then as listed. Seeds a paradigm did not run are left out.
func rank(grid [][]cell, score func(cell) float64) []int {
	order := make([]int, len(grid))
	for i := range order {
		order[i] = i
	}
	key := func(p int) (float64, float64) {
		var xs []float64
		for _, c := range grid[p] {
			if c.ok {
				xs = append(xs, score(c))
			}
		}
		return medianOf(grid, p, score), mean(xs)
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ma, ea := key(a)
		mb, eb := key(b)
		switch {
		case ma < mb:
			return -1
		case ma > mb:
			return 1
		case ea < eb:
			return -1
		case ea > eb:
			return 1
		}
		return 0
	})
	return order
}

// medianOf is paradigm p's median score over the seeds it ran (+Inf: none,
// or not reached in most).
func medianOf(grid [][]cell, p int, score func(cell) float64) float64 {
	var xs []float64
	for _, c := range grid[p] {
		if c.ok {
			xs = append(xs, score(c))
		}
	}
	m := MedianInterval(xs).Median
	if m == nil {
		return math.Inf(1)
	}
	return *m
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// targetIntervals are paradigm name's median times and epochs to each of
// its runs' Targets over seeds (a run that never reached one counts as
// +Inf, so a median over mostly such runs is nil).
func targetIntervals(runs []runstats.Run, name string, seeds []uint64) (times, epochs []Interval) {
	var mine []*runstats.Run
	for _, s := range seeds {
		if i := slices.IndexFunc(runs, func(r runstats.Run) bool { return r.Paradigm == name && r.Seed == s }); i >= 0 {
			mine = append(mine, &runs[i])
		}
	}
	if len(mine) == 0 || len(mine[0].Targets) == 0 {
		return nil, nil
	}
	val := func(v *float64) float64 {
		if v == nil {
			return math.Inf(1)
		}
		return *v
	}
	for j := range mine[0].Targets {
		var ts, es []float64
		withEpochs := true
		for _, r := range mine {
			if j >= len(r.TimesToTargets) {
				return nil, nil // runs with other targets: nothing comparable
			}
			ts = append(ts, val(r.TimesToTargets[j]))
			if j < len(r.EpochsToTargets) {
				es = append(es, val(r.EpochsToTargets[j]))
			} else {
				withEpochs = false
			}
		}
		times = append(times, MedianInterval(ts))
		if withEpochs {
			epochs = append(epochs, MedianInterval(es))
		}
	}
	if len(epochs) != len(times) {
		epochs = nil
	}
	return times, epochs
}
