package runstats

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

// DESIGN.md: summary.json has at least paradigm and final_accuracy for
// training runs, even when the accuracy is 0; sim runs have no accuracy.
func TestAccuracyFieldsPresentForTrainingRuns(t *testing.T) {
	var r Run
	r.Paradigm = "bsp"
	r.SetCurve([][2]float64{{0, 0}, {1, 0}}, 0.5)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{`"final_accuracy":0`, `"best_accuracy":0`, `"paradigm":"bsp"`, `"curve":[[0,0],[1,0]]`} {
		if !strings.Contains(string(b), f) {
			t.Errorf("%s missing from %s", f, b)
		}
	}
	var back Run
	if err := json.Unmarshal(b, &back); err != nil || back.FinalAccuracy != 0 || len(back.Curve) != 2 || back.Target != 0.5 {
		t.Fatalf("round trip %+v, %v", back, err)
	}
	sim, _ := json.Marshal(Run{Paradigm: "asp", Mode: "sim"})
	if strings.Contains(string(sim), "accuracy") {
		t.Errorf("a sim run reports an accuracy: %s", sim)
	}
	// The same run marshals to the same bytes (summary.json determinism).
	again, _ := json.Marshal(r)
	if string(again) != string(b) {
		t.Error("two marshals differ")
	}
	r.SetCurve([][2]float64{{0, 0.1}, {2, 0.7}}, 0.5)
	b, _ = json.Marshal(r)
	if !strings.Contains(string(b), `"final_accuracy":0.7`) || !strings.Contains(string(b), `"time_to_target":1.333333333333333`) {
		t.Errorf("%s", b)
	}
}

// IterAcc gives a sample's count, mean and log-moments.
func TestIterAcc(t *testing.T) {
	var a IterAcc
	for _, d := range []float64{0.01, 0.02, 0.04, 0, -1} {
		a.Add(d)
	}
	st := a.Stats()
	if st.N != 3 || math.Abs(st.Mean-0.07/3) > 1e-12 || math.Abs(st.LogMean-math.Log(0.02)) > 1e-12 || math.Abs(st.LogSD-math.Ln2) > 1e-12 {
		t.Errorf("stats %+v: want n 3, mean 0.0233, log mean ln 0.02, log sd ln 2", st)
	}
	if !reflect.DeepEqual((IterAcc{}).Stats(), IterStats{}) {
		t.Error("an empty accumulator has stats")
	}
	// The histogram: 10, 20 and 40 ms an octave apart, 16 buckets each
	// (the bucket's low edge at most the time, the next one's above it).
	want := []int{IterBucket(0.01), IterBucket(0.01) + IterBucketsPerOctave, IterBucket(0.01) + 2*IterBucketsPerOctave}
	if len(st.Hist) != 3 {
		t.Fatalf("hist %v: want 3 buckets", st.Hist)
	}
	for i, bc := range st.Hist {
		d := []float64{0.01, 0.02, 0.04}[i]
		if int(bc[0]) != want[i] || bc[1] != 1 || IterBucketLow(int(bc[0])) > d*(1+1e-9) || IterBucketLow(int(bc[0])+1) <= d {
			t.Errorf("bucket %v for %g s: want [%d 1] holding it", bc, d, want[i])
		}
	}
	if IterBucket(1e-9) != 0 || IterBucket(1e9) != IterBuckets-1 {
		t.Errorf("the end buckets: %d, %d", IterBucket(1e-9), IterBucket(1e9))
	}
}

// SetTargets: each target's first crossing, interpolated in time and in
// epochs as TimeTo does; a target never reached is null.
func TestSetTargets(t *testing.T) {
	r := Run{Curve: [][2]float64{{0, 0.1}, {10, 0.5}, {20, 0.7}, {30, 0.65}}, CurveEpochs: []float64{0, 1, 2, 3}}
	r.SetTargets([]float64{0.6, 0.7, 0.9, 0.05})
	want := []struct{ t, e float64 }{{15, 1.5}, {20, 2}, {-1, -1}, {0, 0}}
	for i, w := range want {
		tt, ee := r.TimesToTargets[i], r.EpochsToTargets[i]
		if w.t < 0 {
			if tt != nil || ee != nil {
				t.Errorf("target %g: reached at %v, epoch %v; want never", r.Targets[i], *tt, *ee)
			}
			continue
		}
		if tt == nil || ee == nil || math.Abs(*tt-w.t) > 1e-9 || math.Abs(*ee-w.e) > 1e-9 {
			t.Errorf("target %g: %v, %v; want %g s, epoch %g", r.Targets[i], tt, ee, w.t, w.e)
		}
	}
	live := Run{Curve: r.Curve}
	live.SetTargets([]float64{0.6})
	if live.TimesToTargets[0] == nil || *live.TimesToTargets[0] != 15 || live.EpochsToTargets != nil {
		t.Errorf("without epochs: %v, %v", live.TimesToTargets, live.EpochsToTargets)
	}
}
