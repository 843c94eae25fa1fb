package timing

import (
	"math"
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
	iter, cv := w.Read([]int{0, 1, 2}, 10*time.Second)
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
	// The reading starts the next window; a worker not asked for is not read.
	w.Add(5, time.Second)
	iter, cv = w.Read([]int{0}, 0)
	if len(iter) != 1 || iter[0] != 1 || cv != 0 {
		t.Fatalf("next window: iter %v cv %v, want [1ns] 0 (nothing counted, an empty span)", iter, cv)
	}
}
