package report

import (
	"math"
	"slices"

	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/runstats"
)

// Synthetic runs shaped like real ones: a 1:2 heterogeneous pair trained in
// virtual time (DSSP paper), and a 32-worker simulated mixed cluster.

// curve is a deterministic learning curve: accuracy rises towards top with
// time constant tau, plus a small wobble so lines are not perfectly smooth.
func curve(top, tau, end, step float64) [][2]float64 {
	var c [][2]float64
	for t := 0.0; t <= end+1e-9; t += step {
		a := 0.1 + (top-0.1)*(1-math.Exp(-t/tau)) + 0.004*math.Sin(t/7)
		c = append(c, [2]float64{t, math.Round(a*1e4) / 1e4})
	}
	return c
}

// summarize is what pacer compare builds from runs: the statistics over
// seeds and the verdict.
func summarize(runs []runstats.Run, target, horizon float64) *compare.Summary {
	var names []string
	var seeds []uint64
	for _, r := range runs {
		if !slices.Contains(names, r.Paradigm) {
			names = append(names, r.Paradigm)
		}
		if !slices.Contains(seeds, r.Seed) {
			seeds = append(seeds, r.Seed)
		}
	}
	slices.Sort(seeds)
	st, v := compare.Analyze(runs, names, seeds, target)
	var mode runstats.Mode
	if len(runs) > 0 {
		mode = runs[0].Mode
	}
	s := &compare.Summary{Version: "(devel)", Commit: "unknown", Mode: mode, Seeds: seeds, HorizonSeconds: horizon,
		Target: target, IntervalMethod: compare.IntervalMethod, Runs: runs, Paradigms: st, Verdict: v}
	if v.Metric != compare.MetricNone {
		s.TestMethod = compare.TestMethod
		if target > 0 {
			s.TimeToTargetMethod = runstats.TimeToMethod
		}
	}
	return s
}

// virtualSummary is the pair's runs over seeds 1…n: each seed's curves are
// a little faster or slower (a fixed wobble per seed and paradigm).
func virtualSummary(target float64, n int) *compare.Summary {
	var runs []runstats.Run
	base := virtualRuns(target)
	for i := range base {
		for s := 1; s <= n; s++ {
			r := virtualRunsScaled(target, 1+0.06*math.Sin(float64(3*s+5*i)))[i]
			r.Seed = uint64(s)
			runs = append(runs, r)
		}
	}
	return summarize(runs, target, 600)
}

func simSummary(n int) *compare.Summary {
	var runs []runstats.Run
	base := simRuns()
	for i := range base {
		for s := 1; s <= n; s++ {
			r := simRuns()[i]
			r.Seed = uint64(s)
			r.Throughput *= 1 + 0.02*math.Sin(float64(s+i))
			runs = append(runs, r)
		}
	}
	return summarize(runs, 0, 100)
}

func virtualRuns(target float64) []runstats.Run { return virtualRunsScaled(target, 1) }

func virtualRunsScaled(target, scale float64) []runstats.Run {
	specs := []struct {
		name      string
		tau, top  float64
		thru      float64
		wait      []float64
		hist      []int64
		gap       int64
		dropped   int64
		stale     float64
		stalemax  int64
		finalFrom float64
	}{
		{"bsp", 160, 0.875, 10.2, []float64{0.49, 0.0}, []int64{3000}, 0, 0, 0, 0, 0},
		{"asp", 80, 0.872, 15.1, []float64{0, 0}, []int64{1500, 1900, 980, 120, 31, 9, 2}, 0, 0, 0.9, 6, 0},
		{"ssp:s=3", 115, 0.874, 13.0, []float64{0.28, 0}, []int64{1700, 1400, 700, 180}, 3, 0, 0.72, 3, 0},
		{"ssp:s=15", 100, 0.873, 14.1, []float64{0.1, 0}, []int64{1600, 1600, 900, 300, 100, 50, 20, 8, 4, 2, 1, 1}, 15, 0, 0.85, 11, 0},
		{"dssp:sl=3,su=15", 85, 0.872, 14.9, []float64{0.02, 0}, []int64{1500, 1800, 1000, 150, 40, 10, 3, 1}, 14, 0, 0.88, 7, 0},
		{"backup:b=1", 400, 0.80, 9.0, []float64{0.3, 0.2}, []int64{2500}, 1, 120, 0, 0, 0},
	}
	var runs []runstats.Run
	for i, s := range specs {
		c := curve(s.top, s.tau*scale, 600, 10)
		r := runstats.Run{
			Paradigm: s.name, Mode: "virtual", Scenario: "hetero-pair", Model: "mlp",
			Workers: 2, Shards: 1, Seed: 1,
			Pushes: int64(s.thru * 600), Updates: int64(s.thru * 600 * 0.9), Dropped: s.dropped, Releases: int64(s.thru * 600),
			Seconds: 600, VirtualSeconds: 600, Throughput: s.thru,
			WaitFraction: (s.wait[0] + s.wait[1]) / 2, WorkerWait: s.wait, WorkerPushes: []int64{int64(s.thru * 200), int64(s.thru * 400)},
			MaxGap: s.gap, StalenessMean: s.stale, StalenessMax: s.stalemax, StalenessHist: s.hist,
			FinalAccuracy: c[len(c)-1][1], BestAccuracy: c[len(c)-1][1], Curve: c, Target: target,
			ControllerCalls: int64(i),
		}
		if t, ok := r.TimeTo(target); ok && target > 0 {
			r.TimeToTarget = &t
		}
		runs = append(runs, r)
	}
	return runs
}

func simRuns() []runstats.Run {
	names := []string{"bsp", "asp", "ssp:s=3", "dssp:sl=3,su=15", "elastic:r=15", "backup:b=4", "psp:c=28,b=0.9", "softsync:n=4"}
	var runs []runstats.Run
	for i, n := range names {
		k := 32
		wait := make([]float64, k)
		for w := range wait {
			wait[w] = math.Max(0, math.Min(1, 0.5/float64(i+1)*(1+0.6*math.Sin(float64(w*(i+3))))))
		}
		mean := 0.0
		for _, v := range wait {
			mean += v / float64(k)
		}
		hist := make([]int64, 2+i*5)
		for s := range hist {
			hist[s] = int64(1e5 * math.Exp(-float64(s)/float64(i+1)))
		}
		runs = append(runs, runstats.Run{
			Paradigm: n, Mode: "sim", Scenario: "mixed-32", Workers: k, Shards: 4, Seed: 7,
			Pushes: int64(1000 * (i + 1)), Updates: int64(4000 * (i + 1)), Dropped: int64(i * 13),
			Seconds: 100, VirtualSeconds: 100, Throughput: 100 + 37*float64(i%5) + float64(i),
			WaitFraction: mean, WorkerWait: wait, MaxGap: int64(i * 4),
			StalenessMean: float64(i) * 0.8, StalenessMax: int64(len(hist) - 1), StalenessHist: hist,
		})
	}
	return runs
}
