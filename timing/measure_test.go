package timing

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestWindowMeansAndPooledCV(t *testing.T) {
	var w Window
	// Worker 0: 1 s and 3 s (mean 2, deviations ±0.5 of it); worker 2:
	// 4 s twice (no deviation); worker 1: nothing counted.
	w.Add(0, time.Second)
	w.Add(0, 3*time.Second)
	w.Add(2, 4*time.Second)
	w.Add(2, 4*time.Second)
	iter, cv, draws := w.Read([]int{0, 1, 2}, 10*time.Second)
	want := []time.Duration{2 * time.Second, 10 * time.Second, 4 * time.Second}
	for i := range want {
		if iter[i] != want[i] {
			t.Fatalf("iter = %v, want %v", iter, want)
		}
	}
	// Σ(d/mean − 1)² = 0.25 + 0.25 over 4 iterations: √(0.5/4).
	if math.Abs(cv-math.Sqrt(0.125)) > 1e-12 {
		t.Fatalf("cv = %v, want %v", cv, math.Sqrt(0.125))
	}
	if wd := []float64{0.5, 1.5, 1, 1}; len(draws) != 4 || draws[0] != wd[0] || draws[1] != wd[1] || draws[2] != wd[2] || draws[3] != wd[3] {
		t.Fatalf("draws = %v, want %v (each over its worker's mean)", draws, wd)
	}
	// The reading starts the next window; a worker not asked for is not read.
	w.Add(5, time.Second)
	iter, cv, draws = w.Read([]int{0}, 0)
	if len(iter) != 1 || iter[0] != 1 || cv != 0 || len(draws) != 0 {
		t.Fatalf("next window: iter %v cv %v draws %v, want [1ns] 0 [] (nothing counted, an empty span)", iter, cv, draws)
	}
}

// TestWorkersDrawMeasuredMultipliers: a worker model given measured
// draws takes every iteration's multiplier from them, uniformly (a rare
// 50× delay appears at its rate, which no log-normal of the same CV
// gives), and refuses draws out of range or beside a jitter by name.
func TestWorkersDrawMeasuredMultipliers(t *testing.T) {
	draws := make([]float64, 100)
	for i := range draws {
		draws[i] = 1
	}
	draws[0] = 50
	w, err := NewWorkers(WorkerSpec{Base: time.Second, Draws: draws}, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	long := 0
	const n = 100_000
	for range n {
		switch d := w.NextAt(0, 0); d {
		case 50 * time.Second:
			long++
		case time.Second:
		default:
			t.Fatalf("an iteration of %v: want 1 s or 50 s", d)
		}
	}
	if long < 900 || long > 1100 {
		t.Fatalf("%d of %d iterations 50× long, want about 1%%", long, n)
	}
	for _, bad := range []WorkerSpec{{Draws: []float64{1, 0}}, {Draws: []float64{math.NaN()}}, {Draws: []float64{1}, Jitter: 0.1},
		{Draws: make([]float64, MaxDraws+1)}} {
		if err := bad.Check(1); err == nil || !strings.Contains(err.Error(), "draws") && !strings.Contains(err.Error(), "Draws") {
			t.Errorf("spec %+v: err %v, want a refusal naming the draws", bad.Draws[:min(len(bad.Draws), 2)], err)
		}
	}
}
