package zipline

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Sizes of the paper's Table II (n workers × R predictions each).
var (
	benchN = []int{10, 100, 1000}
	benchR = []int{15, 150}
)

// paperInput builds predictions as the paper does (e_i^p = T_b + i·I_p) from
// random intervals: I_p uniform in [lo, hi) seconds, T_b = 0, fixed seed so
// every run and every algorithm sees the same input.
func paperInput(n, R int, lo, hi float64) [][]float64 {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(R)))
	intervals := make([]float64, n)
	for p := range intervals {
		intervals[p] = lo + (hi-lo)*rng.Float64()
	}
	return Predict(nil, 0, intervals, R)
}

var sinkSpan float64

func benchSolve(b *testing.B, solve func([][]float64) ([]int, float64), lo, hi float64, keep func(n, R int) bool) {
	for _, n := range benchN {
		for _, R := range benchR {
			if !keep(n, R) {
				continue
			}
			times := paperInput(n, R, lo, hi)
			b.Run(fmt.Sprintf("n=%d/R=%d", n, R), func(b *testing.B) {
				for b.Loop() {
					_, sinkSpan = solve(times)
				}
			})
		}
	}
}

func all(int, int) bool { return true }

// Heterogeneous workers, speeds within a factor of two (the paper's GTX 1060
// vs 1080 Ti pair): intervals in [1, 2) s.
func BenchmarkZipLine(b *testing.B) { benchSolve(b, ZipLine, 1, 2, all) }

// The same-run reference: the paper's GridScan at the same sizes and input.
func BenchmarkGridScan(b *testing.B) { benchSolve(b, GridScan, 1, 2, all) }

// FullGridScan is O(R²n²): only the sizes that finish in well under a second.
func BenchmarkFullGridScan(b *testing.B) {
	benchSolve(b, FullGridScan, 1, 2, func(n, R int) bool { return n*R <= 1500 })
}

// Nearly homogeneous workers (intervals in [1, 1.05) s): the early stop
// saves little, so almost all nR times are merged. This is ZipLine's
// near-worst case for a given size.
func BenchmarkZipLineDense(b *testing.B) { benchSolve(b, ZipLine, 1, 1.05, all) }

// The gate's path: Predict into reused rows and a reused Solver, allocation free.
func BenchmarkSolver(b *testing.B) {
	for _, n := range benchN {
		for _, R := range benchR {
			rng := rand.New(rand.NewPCG(uint64(n), uint64(R)))
			intervals := make([]float64, n)
			for p := range intervals {
				intervals[p] = 1 + rng.Float64()
			}
			var s Solver
			times := Predict(nil, 0, intervals, R)
			idx := make([]int, n)
			b.Run(fmt.Sprintf("n=%d/R=%d", n, R), func(b *testing.B) {
				b.ReportAllocs()
				tb := 0.0
				for b.Loop() {
					tb += 1
					times = Predict(times, tb, intervals, R)
					sinkSpan = s.ZipLine(times, idx)
				}
			})
		}
	}
}
