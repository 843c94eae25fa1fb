package runstats

import (
	"math"
	"slices"

	"github.com/pacer-ps/pacer/scenario"
)

// Summary is a comparison's summary.json: one object with what ran (the
// scenario as applied, the flags given, the seeds), every run, the statistics
// over seeds per paradigm and the verdict. Apart from Version and Commit
// the same flags give the same bytes, whatever the parallelism.
type Summary struct {
	Version  string            `json:"version"`
	Commit   string            `json:"commit"` // "unknown" when the build did not record it
	Mode     string            `json:"mode"`
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

	Runs      []Run           `json:"runs"` // paradigm by paradigm, seeds in order within each
	Paradigms []ParadigmStats `json:"paradigms"`
	Verdict   Verdict         `json:"verdict"`
}

// ParadigmStats are one paradigm's figures over its seeds.
type ParadigmStats struct {
	Paradigm string `json:"paradigm"`
	Runs     int    `json:"runs"`
	// Reached counts the seeds that reached the target (with a target).
	Reached *int `json:"reached,omitempty"`
	// TimeToTarget: a nil median or bound is "not reached within the horizon".
	TimeToTarget      *Interval `json:"time_to_target,omitempty"`
	AccuracyAtHorizon *Interval `json:"accuracy_at_horizon,omitempty"`
	Throughput        Interval  `json:"throughput"`
	WaitFraction      Interval  `json:"wait_fraction"`
	StalenessMean     Interval  `json:"staleness_mean"`
	// Wins counts the seeds on which this paradigm did best on the
	// verdict's metric (a shared best counts for each).
	Wins int `json:"wins"`
	// PVsLeader is the paired test's p-value against the leader.
	PVsLeader *float64 `json:"p_vs_leader,omitempty"`
}

// Verdict says which paradigm won, or which are tied.
type Verdict struct {
	// Winner is named only when the paired test separates the leader from
	// every other paradigm; otherwise null and Tied lists the paradigms the
	// evidence does not tell apart from the leader (the leader first).
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
}

// The verdict's metrics.
const (
	MetricTime     = "time_to_target"
	MetricAccuracy = "accuracy_at_horizon"
	MetricNone     = "none"
)

// Analyze computes the per-paradigm statistics and the verdict of runs
// (each paradigm of names run once per seed of seeds) against target (0:
// none). It reads only the runs, so it is the same for any parallelism.
func Analyze(runs []Run, names []string, seeds []uint64, target float64) ([]ParadigmStats, Verdict) {
	type cell struct{ time, capped, acc float64 }
	trainedAny := false
	for i := range runs {
		trainedAny = trainedAny || len(runs[i].Curve) > 0
	}
	grid := make([][]cell, len(names))
	stats := make([]ParadigmStats, len(names))
	for p, name := range names {
		var thr, wait, stale, times, accs []float64
		for _, s := range seeds {
			i := slices.IndexFunc(runs, func(r Run) bool { return r.Paradigm == name && r.Seed == s })
			if i < 0 {
				continue
			}
			r := &runs[i]
			thr, wait, stale = append(thr, r.Throughput), append(wait, r.WaitFraction), append(stale, r.StalenessMean)
			c := cell{time: math.Inf(1), capped: r.Seconds, acc: r.FinalAccuracy}
			if target > 0 {
				if t, ok := r.TimeTo(target); ok {
					c.time, c.capped = t, t
				}
			}
			times, accs = append(times, c.time), append(accs, c.acc)
			grid[p] = append(grid[p], c)
		}
		st := ParadigmStats{Paradigm: name, Runs: len(grid[p]), Throughput: MedianInterval(thr),
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
				ti := MedianInterval(times)
				st.Reached, st.TimeToTarget = &n, &ti
			}
		}
		stats[p] = st
	}
	v := Verdict{Tied: []string{}, Metric: MetricNone, Target: target}
	if !trainedAny || len(names) == 0 {
		return stats, v
	}
	// score: lower is better; paired differences: positive favours the leader.
	v.Metric = MetricAccuracy
	score := func(c cell) float64 { return -c.acc }
	diff := func(lead, other cell) float64 { return lead.acc - other.acc }
	if target > 0 {
		v.Metric = MetricTime
		score = func(c cell) float64 { return c.time }
		diff = func(lead, other cell) float64 {
			return math.Log(math.Max(other.capped, 1e-6)) - math.Log(math.Max(lead.capped, 1e-6))
		}
	}
	order := rank(grid, score)
	if v.Metric == MetricTime && math.IsInf(median(grid[order[0]], score), 1) {
		// The leader did not reach the target in most seeds: time to
		// target cannot rank them; accuracy at the horizon can.
		v.Metric = MetricAccuracy
		score = func(c cell) float64 { return -c.acc }
		diff = func(lead, other cell) float64 { return lead.acc - other.acc }
		order = rank(grid, score)
	}
	for k := range seeds {
		best := math.Inf(1)
		for p := range grid {
			if k < len(grid[p]) {
				best = min(best, score(grid[p][k]))
			}
		}
		for p := range grid {
			if k < len(grid[p]) && !math.IsInf(best, 1) && score(grid[p][k]) == best {
				stats[p].Wins++
			}
		}
	}
	lead := order[0]
	v.Leader = names[lead]
	v.Tied = append(v.Tied, names[lead])
	for k, p := range order[1:] {
		var d []float64
		for s := range min(len(grid[lead]), len(grid[p])) {
			d = append(d, diff(grid[lead][s], grid[p][s]))
		}
		pv := PairedT(d)
		stats[p].PVsLeader = &pv
		if k == 0 {
			v.RunnerUp, v.P = names[p], &pv
		}
		if !(pv < Alpha && mean(d) > 0) {
			v.Tied = append(v.Tied, names[p])
		}
	}
	if len(v.Tied) == 1 && len(names) > 1 {
		v.Winner = &v.Leader
		v.Tied = []string{}
	}
	return stats, v
}

// rank orders the paradigms by median score (lower first), then by mean,
// then as listed.
func rank[C any](grid [][]C, score func(C) float64) []int {
	order := make([]int, len(grid))
	for i := range order {
		order[i] = i
	}
	key := func(p int) (float64, float64) {
		xs := make([]float64, len(grid[p]))
		for i, c := range grid[p] {
			xs[i] = score(c)
		}
		return median(grid[p], score), mean(xs)
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

func median[C any](cs []C, score func(C) float64) float64 {
	if len(cs) == 0 {
		return math.Inf(1)
	}
	xs := make([]float64, len(cs))
	for i, c := range cs {
		xs[i] = score(c)
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
