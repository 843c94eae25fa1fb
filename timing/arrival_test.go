package timing

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// Backup-workers paper, Section 3.1 / Figure 3: with 100 workers, 80% of
// iterations see the 98th gradient within 2 s, only 30% the 100th.
func TestHeavyTailCalibrationMatchesPaper(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		w := mustWorkers(t, WorkerSpec{Straggler: MustStraggler("heavytail")}, 100, seed)
		got, err := ArrivalCDF(w, 3000, []int{98, 100}, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got[0]-0.80) > 0.07 {
			t.Errorf("seed %d: 98th of 100 within 2 s in %.1f%% of iterations, want 80 ± 7", seed, 100*got[0])
		}
		if math.Abs(got[1]-0.30) > 0.07 {
			t.Errorf("seed %d: 100th of 100 within 2 s in %.1f%% of iterations, want 30 ± 7", seed, 100*got[1])
		}
	}
}

// The paper's Figure 4: mean times to collect k gradients mostly fall between
// 1.4 s and 1.8 s, except for the final few, which grow sharply.
func TestHeavyTailMeanByRankShape(t *testing.T) {
	a, err := SimulateArrivals(mustWorkers(t, WorkerSpec{Straggler: MustStraggler("heavytail")}, 100, 3), 2000, []int{1, 50, 90, 97, 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{1, 50, 90} {
		if m := a.Mean(k).Seconds(); m < 1.3 || m > 1.9 {
			t.Errorf("mean %d-th arrival %.3f s, want within the 1.3-1.9 s body band", k, m)
		}
	}
	if a.Mean(100) < 3*a.Mean(97) {
		t.Errorf("mean 100th %v not far beyond mean 97th %v", a.Mean(100), a.Mean(97))
	}
}

// Against a deliberately plain recomputation from the same streams.
func TestArrivalsMatchBruteForce(t *testing.T) {
	spec := WorkerSpec{Jitter: 0.3, Straggler: MustStraggler("heavytail:q=0.05")}
	const n, iters = 7, 300
	ranks := []int{7, 1, 4}
	a, err := SimulateArrivals(mustWorkers(t, spec, n, 5), iters, ranks)
	if err != nil {
		t.Fatal(err)
	}
	ref := mustWorkers(t, spec, n, 5)
	kth := map[int][]time.Duration{}
	for range iters {
		round := make([]time.Duration, n)
		for p := range round {
			round[p] = ref.NextAt(p, 0)
		}
		slices.Sort(round)
		for _, k := range ranks {
			kth[k] = append(kth[k], round[k-1])
		}
	}
	for _, k := range ranks {
		var sum float64
		for _, x := range kth[k] {
			sum += float64(x)
		}
		if got, want := a.Mean(k), time.Duration(sum/iters+0.5); got != want {
			t.Errorf("rank %d mean %v, want %v", k, got, want)
		}
		for _, d := range []time.Duration{0, time.Second, 1500 * time.Millisecond, 2 * time.Second, time.Hour, kth[k][17]} {
			c := 0
			for _, x := range kth[k] {
				if x <= d {
					c++
				}
			}
			if got, want := a.Within(k, d), float64(c)/iters; got != want {
				t.Errorf("rank %d within %v: %v, want %v", k, d, got, want)
			}
		}
		sorted := slices.Sorted(slices.Values(kth[k]))
		if a.Quantile(k, 0.5) != sorted[149] || a.Quantile(k, 1) != sorted[iters-1] || a.Quantile(k, 0) != sorted[0] {
			t.Errorf("rank %d quantiles %v %v %v, want %v %v %v", k, a.Quantile(k, 0), a.Quantile(k, 0.5), a.Quantile(k, 1), sorted[0], sorted[149], sorted[iters-1])
		}
	}
	if !slices.Equal(a.Ranks(), ranks) || a.Iterations() != iters {
		t.Errorf("Ranks %v Iterations %d", a.Ranks(), a.Iterations())
	}
	if !math.IsNaN(a.Within(2, time.Second)) || a.Quantile(2, 0.5) != -1 || a.Mean(2) != -1 || a.Quantile(7, 1.5) != -1 {
		t.Error("an unrecorded rank or bad quantile should give NaN / -1")
	}
}

func TestArrivalsAllRanksAndErrors(t *testing.T) {
	w := mustWorkers(t, WorkerSpec{Speeds: []float64{3, 1, 2}}, 3, 1)
	a, err := SimulateArrivals(w, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 3 * time.Second} {
		if a.Mean(k) != want || a.Within(k, want) != 1 || a.Within(k, want-1) != 0 {
			t.Errorf("rank %d: mean %v, want %v", k, a.Mean(k), want)
		}
	}
	for _, tc := range []struct {
		iters int
		ranks []int
		want  string
	}{
		{0, []int{1}, "iterations = 0"},
		{10, []int{0}, "rank 0 out of range 1..3"},
		{10, []int{1, 4}, "rank 4 out of range 1..3"},
	} {
		if _, err := ArrivalCDF(w, tc.iters, tc.ranks, time.Second); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("iters %d ranks %v: error %v, want %q", tc.iters, tc.ranks, err, tc.want)
		}
	}
}

func TestWriteTable(t *testing.T) {
	a, err := SimulateArrivals(mustWorkers(t, WorkerSpec{Straggler: MustStraggler("heavytail")}, 100, 1), 500, []int{90, 98, 100})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if err := a.WriteTable(&sb, []time.Duration{2 * time.Second, 6 * time.Second}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(sb.String()), "\n")
	if len(lines) != 4 || !strings.Contains(lines[0], "≤2s") || !strings.Contains(lines[0], "p99") ||
		!strings.HasPrefix(strings.TrimSpace(lines[3]), "100/100") {
		t.Fatalf("table:\n%s", sb.String())
	}
	t.Logf("\n%s", sb.String())
}
