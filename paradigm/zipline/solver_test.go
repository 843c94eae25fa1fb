package zipline

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// One Solver reused across inputs of changing n and R (growing and
// shrinking) must answer exactly as a fresh ZipLine does: no state leaks
// from one barrier to the next.
func TestSolverReuseMatchesZipLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 4))
	var s Solver
	for k := range 2000 {
		times := randomTimes(rng, 9, 7)
		want, wantSpan := ZipLine(times)
		idx := make([]int, len(times))
		for j := range idx {
			idx[j] = 99 // must be overwritten
		}
		got := s.ZipLine(times, idx)
		if got != wantSpan || !slices.Equal(idx, want) {
			t.Fatalf("case %d: Solver %v span %v, ZipLine %v span %v", k, idx, got, want, wantSpan)
		}
	}
}

// The ElasticBSP gate runs the solver at every barrier: after warm-up,
// Predict into the same rows plus Solver.ZipLine must allocate nothing,
// also when n shrinks below the warm-up size.
func TestSolverAllocatesNothingAfterWarmUp(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	intervals := make([]float64, 100)
	for p := range intervals {
		intervals[p] = 0.5 + rng.Float64()
	}
	var s Solver
	times := Predict(nil, 0, intervals, 150)
	idx := make([]int, len(times))
	s.ZipLine(times, idx)
	tb := 0.0
	allocs := testing.AllocsPerRun(50, func() {
		tb += 1.7
		times = Predict(times, tb, intervals, 150)
		s.ZipLine(times, idx)
	})
	if allocs != 0 {
		t.Fatalf("Predict+Solver.ZipLine allocated %v times per barrier, want 0", allocs)
	}
	small := times[:10]
	allocs = testing.AllocsPerRun(50, func() { s.ZipLine(small, idx[:10]) })
	if allocs != 0 {
		t.Fatalf("smaller n after warm-up allocated %v times, want 0", allocs)
	}
}

func TestSolverPanicsOnWrongIdxLength(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("len(idx) != len(times) did not panic")
		}
	}()
	var s Solver
	s.ZipLine([][]float64{{1}, {2}}, make([]int, 1))
}
