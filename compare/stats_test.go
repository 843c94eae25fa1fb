package compare

import (
	"math"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/runstats"
)

func TestMedianIntervalExact(t *testing.T) {
	// 5 values: no pair reaches 95%, so the range, with coverage 1 − 2/32.
	iv := MedianInterval([]float64{5, 1, 4, 2, 3})
	if *iv.Median != 3 || *iv.Lo != 1 || *iv.Hi != 5 || iv.Coverage != 0.9375 {
		t.Errorf("n=5: %v %v %v %v", *iv.Median, *iv.Lo, *iv.Hi, iv.Coverage)
	}
	// 9 values: [x(2), x(8)] covers 1 − 2·10/512 = 96.1%; [x(3), x(7)] only 82%.
	iv = MedianInterval([]float64{9, 8, 7, 6, 5, 4, 3, 2, 1})
	if *iv.Median != 5 || *iv.Lo != 2 || *iv.Hi != 8 || math.Abs(iv.Coverage-0.960938) > 1e-6 {
		t.Errorf("n=9: %v %v %v %v", *iv.Median, *iv.Lo, *iv.Hi, iv.Coverage)
	}
	// Not reached (+Inf) in most seeds: the median and the upper bound are nil.
	iv = MedianInterval([]float64{math.Inf(1), 2, math.Inf(1), math.Inf(1), 1})
	if iv.Median != nil || iv.Hi != nil || *iv.Lo != 1 {
		t.Errorf("censored: %+v", iv)
	}
	iv = MedianInterval([]float64{4, 2})
	if *iv.Median != 3 {
		t.Errorf("even n median %v", *iv.Median)
	}
}

func TestPairedT(t *testing.T) {
	if p := PairedT([]float64{0, 0, 0, 0, 0}); p != 1 {
		t.Errorf("identical runs: p = %v, want 1", p)
	}
	if p := PairedT([]float64{0.3}); p != 1 {
		t.Errorf("one seed: p = %v, want 1", p)
	}
	if p := PairedT([]float64{0.2, 0.2, 0.2}); p != 0 {
		t.Errorf("constant difference: p = %v, want 0", p)
	}
	// mean 1, sd 1, n 5: t = √5 = 2.236, two-sided p with 4 df = 0.0890.
	if p := PairedT([]float64{0, 1, 2, 0, 2}); math.Abs(p-0.0890) > 5e-4 {
		t.Errorf("p = %v, want 0.0890", p)
	}
}

// curveRun is a run whose accuracy rises linearly at rate per second to 1.
func curveRun(name string, seed uint64, rate, horizon float64) runstats.Run {
	r := runstats.Run{Paradigm: name, Seed: seed, Seconds: horizon, Throughput: 1}
	var c [][2]float64
	for t := 0.0; t <= horizon; t += horizon / 10 {
		c = append(c, [2]float64{t, math.Min(1, rate*t)})
	}
	r.SetCurve(c, 0)
	return r
}

func analyze(rates map[string][]float64, target float64) ([]ParadigmStats, Verdict) {
	names := []string{"a", "b", "c"}
	seeds := []uint64{1, 2, 3, 4, 5}
	var runs []runstats.Run
	for _, n := range names {
		for k, s := range seeds {
			runs = append(runs, curveRun(n, s, rates[n][k], 100))
		}
	}
	return Analyze(runs, names, seeds, target)
}

func TestAnalyzeClearWin(t *testing.T) {
	st, v := analyze(map[string][]float64{
		"a": {0.010, 0.011, 0.012, 0.010, 0.011},
		"b": {0.020, 0.021, 0.019, 0.022, 0.020}, // twice as fast on every seed
		"c": {0.009, 0.012, 0.010, 0.011, 0.010},
	}, 0.5)
	if v.Winner == nil || *v.Winner != "b" || len(v.Tied) != 0 || v.Metric != MetricTime || v.Target != 0.5 {
		t.Fatalf("verdict %+v", v)
	}
	if st[1].Wins != 5 || st[0].Wins != 0 || *st[1].Reached != 5 || *st[1].TimeToTarget.Median != 25 {
		t.Errorf("stats of b: %+v, wins a %d", st[1], st[0].Wins)
	}
	if v.P == nil || *v.P >= 0.05 {
		t.Errorf("p = %v", v.P)
	}
}

func TestAnalyzeTie(t *testing.T) {
	// a and b trade places from seed to seed; c is clearly slower.
	_, v := analyze(map[string][]float64{
		"a": {0.020, 0.010, 0.020, 0.010, 0.015},
		"b": {0.010, 0.020, 0.010, 0.020, 0.016},
		"c": {0.005, 0.005, 0.006, 0.005, 0.005},
	}, 0.5)
	if v.Winner != nil || len(v.Tied) != 2 || v.Tied[0] != "b" || v.Tied[1] != "a" {
		t.Fatalf("verdict %+v", v)
	}
}

func TestAnalyzeIdenticalRunsTie(t *testing.T) {
	same := []float64{0.010, 0.013, 0.011, 0.012, 0.010}
	_, v := analyze(map[string][]float64{"a": same, "b": same, "c": same}, 0.5)
	if v.Winner != nil || len(v.Tied) != 3 || *v.P != 1 {
		t.Fatalf("identical runs: %+v", v)
	}
	// Without a target, accuracy at the horizon ranks them: still a tie.
	_, v = analyze(map[string][]float64{"a": same, "b": same, "c": same}, 0)
	if v.Winner != nil || len(v.Tied) != 3 || v.Metric != MetricAccuracy {
		t.Fatalf("identical runs, no target: %+v", v)
	}
}

func TestAnalyzeUnreachedFallsBackToAccuracy(t *testing.T) {
	// Nobody reaches 0.99 within 100 s in most seeds: accuracy at the horizon decides.
	_, v := analyze(map[string][]float64{
		"a": {0.005, 0.005, 0.005, 0.005, 0.005},
		"b": {0.008, 0.0081, 0.0082, 0.0079, 0.008},
		"c": {0.003, 0.003, 0.003, 0.003, 0.003},
	}, 0.99)
	if v.Metric != MetricAccuracy || v.Winner == nil || *v.Winner != "b" {
		t.Fatalf("verdict %+v", v)
	}
}

func TestAnalyzeSimHasNoVerdict(t *testing.T) {
	runs := []runstats.Run{{Paradigm: "asp", Seed: 1, Throughput: 3}, {Paradigm: "bsp", Seed: 1, Throughput: 1}}
	st, v := Analyze(runs, []string{"asp", "bsp"}, []uint64{1}, 0)
	if v.Winner != nil || v.Metric != MetricNone || len(v.Tied) != 0 || st[0].AccuracyAtHorizon != nil || *st[0].Throughput.Median != 3 {
		t.Fatalf("sim: %+v %+v", v, st[0])
	}
}

// timed is a run that reaches 0.5 at time tt (tt ≤ 0: never) and ends at
// seconds.
func timed(name string, seed uint64, tt, seconds float64) runstats.Run {
	r := runstats.Run{Paradigm: name, Seed: seed, Seconds: seconds, Throughput: 1}
	c := [][2]float64{{0, 0}, {seconds, 0.4}}
	if tt > 0 {
		c = [][2]float64{{0, 0}, {tt, 0.5}, {seconds, 0.6}}
	}
	r.SetCurve(c, 0.5)
	return r
}

// times builds runs of each paradigm from their times to 0.5 by seed
// (seeds 1, 2, ...; 0: never reached; NaN: the seed did not run).
func times(seconds float64, order []string, tt map[string][]float64) ([]runstats.Run, []uint64) {
	var runs []runstats.Run
	var seeds []uint64
	for _, name := range order {
		for k, t := range tt[name] {
			if len(seeds) <= k {
				seeds = append(seeds, uint64(k+1))
			}
			if !math.IsNaN(t) {
				runs = append(runs, timed(name, uint64(k+1), t, seconds))
			}
		}
	}
	return runs, seeds
}

// The live modes: each run ends at its own wall time. A run that never
// reached the target must not be scored at its own (shorter) time, which
// made it look faster than the one that reached the target.
func TestCensoredLiveRunRanksLast(t *testing.T) {
	var runs []runstats.Run
	for s := uint64(1); s <= 5; s++ {
		runs = append(runs, timed("a", s, 80+float64(s), 100), timed("b", s, 0, 50)) // b: done in 50 s, never at 0.5
	}
	st, v := Analyze(runs, []string{"a", "b"}, []uint64{1, 2, 3, 4, 5}, 0.5)
	if v.Winner == nil || *v.Winner != "a" || v.Metric != MetricTime {
		t.Fatalf("verdict %+v, want a: b never reached the target", v)
	}
	if e := st[1].LeaderAdvantage; e == nil || e.Ratio <= 1 || st[0].Wins != 5 || st[1].Wins != 0 {
		t.Errorf("a's advantage over b %+v, wins %d and %d", e, st[0].Wins, st[1].Wins)
	}
}

// The leader by median missed the target on one seed where the runner-up
// reached it: its time there is unknown (beyond the horizon), so scoring
// it at the horizon understates how far behind it was. No winner.
func TestCensoredLeaderIsNotSeparated(t *testing.T) {
	runs, seeds := times(100, []string{"a", "b"}, map[string][]float64{
		"a": {20, 21, 19, 20, 0},
		"b": {30, 31, 30, 29, 95},
	})
	_, v := Analyze(runs, []string{"a", "b"}, seeds, 0.5)
	if v.Winner != nil || v.Leader != "a" || len(v.Tied) != 2 || !strings.Contains(v.Reason, "did not reach the target on seed 5, where b did") {
		t.Fatalf("verdict %+v, want a tie: a missed the target on seed 5", v)
	}
}

// The median favours a, the mean of the log ratios favours b: a tie that
// says so.
func TestMedianAndMeanDisagree(t *testing.T) {
	runs, seeds := times(100, []string{"a", "b"}, map[string][]float64{
		"a": {50, 50, 50, 50, 50},
		"b": {50.5, 50.5, 50.5, 18.4, 18.4},
	})
	st, v := Analyze(runs, []string{"a", "b"}, seeds, 0.5)
	if v.Winner != nil || v.Leader != "a" || len(v.Tied) != 2 || !strings.Contains(v.Reason, "median and mean disagree") {
		t.Fatalf("verdict %+v", v)
	}
	if st[1].LeaderAdvantage.Ratio >= 1 {
		t.Errorf("advantage %+v: the mean favours b", st[1].LeaderAdvantage)
	}
}

// A constant 1% gap is significant (p = 0) but below the minimum effect:
// a tie. A constant 50% gap over 3 seeds is a win.
func TestMinimumEffect(t *testing.T) {
	runs, seeds := times(100, []string{"a", "b"}, map[string][]float64{
		"a": {20, 30, 40, 25, 35},
		"b": {20.2, 30.3, 40.4, 25.25, 35.35},
	})
	st, v := Analyze(runs, []string{"a", "b"}, seeds, 0.5)
	if v.Winner != nil || *v.P != 0 || !strings.Contains(v.Reason, "below the 2% minimum effect") {
		t.Fatalf("1%% gap: verdict %+v", v)
	}
	if e := st[1].LeaderAdvantage; math.Abs(e.Ratio-1.01) > 1e-6 || *e.Lo != e.Ratio || *e.Hi != e.Ratio || e.Pairs != 5 {
		t.Errorf("advantage %+v, want 1.01 with a point interval", e)
	}
	runs, seeds = times(100, []string{"a", "b"}, map[string][]float64{"a": {20, 30, 40}, "b": {30, 45, 60}})
	st, v = Analyze(runs, []string{"a", "b"}, seeds, 0.5)
	if v.Winner == nil || *v.Winner != "a" || math.Abs(st[1].LeaderAdvantage.Ratio-1.5) > 1e-6 {
		t.Fatalf("50%% gap over 3 seeds: verdict %+v, advantage %+v", v, st[1].LeaderAdvantage)
	}
	if !strings.Contains(v.Reason, "from the runner-up b by 1.5×, 95% interval 1.5–1.5× (p < 0.001)") {
		t.Errorf("reason %q", v.Reason)
	}
}

// Runs pair by seed value: b did not run seed 2, so its seeds 1, 3, 4, 5
// meet a's seeds 1, 3, 4, 5 (b is 10% slower on each), not a's first four.
func TestPairsBySeed(t *testing.T) {
	runs, seeds := times(100, []string{"a", "b"}, map[string][]float64{
		"a": {20, 40, 20, 40, 20},
		"b": {22, math.NaN(), 22, 44, 22},
	})
	st, v := Analyze(runs, []string{"a", "b"}, seeds, 0.5)
	if v.Winner == nil || *v.Winner != "a" || st[1].LeaderAdvantage.Pairs != 4 || st[1].Runs != 4 {
		t.Fatalf("verdict %+v, advantage %+v", v, st[1].LeaderAdvantage)
	}
	if math.Abs(st[1].LeaderAdvantage.Ratio-1.1) > 1e-6 {
		t.Errorf("advantage %v, want 1.1", st[1].LeaderAdvantage.Ratio)
	}
}
