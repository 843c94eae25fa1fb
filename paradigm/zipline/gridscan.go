package zipline

import "math"

// GridScan is the paper's heuristic (Algorithm 1). It designates the worker
// whose first time is earliest (ties: lowest id) and, for every time e of
// that worker, forms Z from e and, in every other row, the time closest to e
// (ties: lowest index); it returns the Z with the smallest span (ties: the
// first e). Because the closest time may lie on the wrong side of e, the span
// can be worse than ZipLine's, never better.
//
// The closest time is found by scanning the whole row, as the paper does, so
// the cost is the paper's O(R²n); it is kept as the baseline Table II timed.
// It assumes Validate(times) == nil.
func GridScan(times [][]float64) (idx []int, span float64) {
	idx = make([]int, len(times))
	if infeasible(times, idx) {
		return idx, math.Inf(1)
	}
	pb := 0
	for p := range times {
		if times[p][0] < times[pb][0] {
			pb = p
		}
	}
	return idx, scanRow(times, pb, make([]int, len(times)), idx, math.Inf(1))
}

// FullGridScan is the paper's FullGridScan: GridScan repeated with every
// worker in turn as the designated row (Algorithm 1 without line 6), so it
// tries Rn candidate sets in O(R²n²). Rows are tried in id order and only a
// strictly smaller span replaces the best, so ties keep the first row and the
// first point. Like GridScan it can miss the optimum (a candidate built
// around one point takes the nearest time of each row, which may fall on the
// other side of it); its span is never below ZipLine's.
// It assumes Validate(times) == nil.
func FullGridScan(times [][]float64) (idx []int, span float64) {
	idx = make([]int, len(times))
	if infeasible(times, idx) {
		return idx, math.Inf(1)
	}
	z := make([]int, len(times))
	best := math.Inf(1)
	for pb := range times {
		best = scanRow(times, pb, z, idx, best)
	}
	return idx, best
}

// scanRow runs Algorithm 1's loop with pb as the designated row. z is
// scratch for the candidate; idx receives a candidate whose span is strictly
// below best, and the new best is returned.
func scanRow(times [][]float64, pb int, z, idx []int, best float64) float64 {
	for i, e := range times[pb] {
		lo, hi := e, e
		for p, row := range times {
			if p == pb {
				z[p] = i
				continue
			}
			// Closest time to e; strict < keeps the lowest index on ties.
			c, dc := 0, math.Abs(row[0]-e)
			for j := 1; j < len(row); j++ {
				if d := math.Abs(row[j] - e); d < dc {
					c, dc = j, d
				}
			}
			z[p] = c
			lo = min(lo, row[c])
			hi = max(hi, row[c])
		}
		if d := hi - lo; d < best {
			best = d
			copy(idx, z)
		}
	}
	return best
}

// BruteForce tries every one of the ∏_p len(times[p]) choices, in
// lexicographic order of idx (worker 0's index most significant), and keeps
// the first with the smallest span. It exists to check the other solvers and
// is exponential in n: use it only for small inputs.
// It assumes Validate(times) == nil.
func BruteForce(times [][]float64) (idx []int, span float64) {
	n := len(times)
	idx = make([]int, n)
	if infeasible(times, idx) {
		return idx, math.Inf(1)
	}
	z := make([]int, n)
	best := math.Inf(1)
	for {
		lo, hi := math.Inf(1), math.Inf(-1)
		for p, i := range z {
			lo = min(lo, times[p][i])
			hi = max(hi, times[p][i])
		}
		if d := hi - lo; d < best {
			best = d
			copy(idx, z)
		}
		// Odometer step: the last worker's index turns fastest.
		p := n - 1
		for ; p >= 0; p-- {
			z[p]++
			if z[p] < len(times[p]) {
				break
			}
			z[p] = 0
		}
		if p < 0 {
			return idx, best
		}
	}
}
