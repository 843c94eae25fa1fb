package runstats

import (
	"math"
	"testing"
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
func curveRun(name string, seed uint64, rate, horizon float64) Run {
	r := Run{Paradigm: name, Seed: seed, Seconds: horizon, Throughput: 1}
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
	var runs []Run
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
	runs := []Run{{Paradigm: "asp", Seed: 1, Throughput: 3}, {Paradigm: "bsp", Seed: 1, Throughput: 1}}
	st, v := Analyze(runs, []string{"asp", "bsp"}, []uint64{1}, 0)
	if v.Winner != nil || v.Metric != MetricNone || len(v.Tied) != 0 || st[0].AccuracyAtHorizon != nil || *st[0].Throughput.Median != 3 {
		t.Fatalf("sim: %+v %+v", v, st[0])
	}
}
