package runstats

import (
	"math"
	"testing"
)

// The group's curve is the members' mean at every time either was
// evaluated, each read linearly between its evaluations and flat past its
// last: its time to a target is where that mean crosses, not the mean of
// the members' times.
func TestAverageCurveIsTheMeanCurve(t *testing.T) {
	a := Run{Paradigm: "ssp:s=3", Seed: 2, Pushes: 10, Throughput: 1, StalenessMax: 2, WorkerWait: []float64{0.2, 0}}
	a.SetCurve([][2]float64{{0, 0.1}, {10, 0.5}, {20, 0.7}}, 0)
	b := Run{Paradigm: "ssp:s=4", Seed: 2, Pushes: 13, Throughput: 2, StalenessMax: 5, WorkerWait: []float64{0.4, 0}}
	b.SetCurve([][2]float64{{0, 0.1}, {5, 0.3}, {15, 0.9}}, 0)
	g := Average("avg(ssp:s=3..4)", []Run{a, b}, 0.6, []float64{0.4})
	// a at 5 s is halfway from 0.1 to 0.5; b at 10 s halfway from 0.3 to
	// 0.9; b holds 0.9 past 15 s.
	want := [][2]float64{{0, 0.1}, {5, (0.3 + 0.3) / 2}, {10, (0.5 + 0.6) / 2}, {15, (0.6 + 0.9) / 2}, {20, (0.7 + 0.9) / 2}}
	if len(g.Curve) != len(want) {
		t.Fatalf("curve %v, want %v", g.Curve, want)
	}
	for k := range want {
		if g.Curve[k][0] != want[k][0] || math.Abs(g.Curve[k][1]-want[k][1]) > 1e-12 {
			t.Errorf("point %d: %v, want %v", k, g.Curve[k], want[k])
		}
	}
	// The mean curve crosses 0.6 between 10 s (0.55) and 15 s (0.75);
	// the members' own times are 15 s and 10 s (mean 12.5 s).
	if g.TimeToTarget == nil || math.Abs(*g.TimeToTarget-11.25) > 1e-9 {
		t.Errorf("time to 0.6: %v, want 11.25", g.TimeToTarget)
	}
	if len(g.TimesToTargets) != 1 || g.TimesToTargets[0] == nil || math.Abs(*g.TimesToTargets[0]-7) > 1e-9 {
		t.Errorf("time to 0.4: %v, want 7", g.TimesToTargets)
	}
	if g.FinalAccuracy != 0.8 || g.Paradigm != "avg(ssp:s=3..4)" || g.Seed != 2 {
		t.Errorf("final %g, name %q, seed %d", g.FinalAccuracy, g.Paradigm, g.Seed)
	}
	if g.Pushes != 12 || g.Throughput != 1.5 || g.StalenessMax != 5 || math.Abs(g.WorkerWait[0]-0.3) > 1e-12 {
		t.Errorf("pushes %d, throughput %g, staleness max %d, wait %v", g.Pushes, g.Throughput, g.StalenessMax, g.WorkerWait)
	}
}
