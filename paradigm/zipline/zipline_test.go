package zipline

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// checkRealizes fails unless idx is a valid choice whose span is want.
func checkRealizes(t *testing.T, name string, times [][]float64, idx []int, want float64) {
	t.Helper()
	if len(idx) != len(times) {
		t.Fatalf("%s: len(idx) = %d, want %d", name, len(idx), len(times))
	}
	for p, i := range idx {
		if i < 0 || i >= len(times[p]) {
			t.Fatalf("%s: idx[%d] = %d out of range [0,%d) for %v", name, p, i, len(times[p]), times)
		}
	}
	if got := span(times, idx); got != want {
		t.Fatalf("%s: idx %v realizes span %v, reported %v (times %v)", name, idx, got, want, times)
	}
}

// PARADIGMS.md §5: "ZipLine returns the global optimum ... ZipLine must
// equal brute force on random inputs." Spans are compared exactly: both are
// a difference of two input times, and rounding is monotone, so the smallest
// computed difference is the same whichever exact method finds it.
func TestZipLineEqualsBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for k := range 5000 {
		times := randomTimes(rng, 5, 6)
		idx, got := ZipLine(times)
		_, want := BruteForce(times)
		if got != want {
			t.Fatalf("case %d: ZipLine span %v, brute force %v, times %v", k, got, want, times)
		}
		checkRealizes(t, "ZipLine", times, idx, got)
	}
}

// paperZipLine is Algorithm 2 written out literally, as a slow reference for
// the exact choice (not only the span): sort all (value, worker, index)
// triples, fill Z, then repeatedly drop min(Z) and refill, evicting a
// worker's older element by a linear search of Z.
func paperZipLine(times [][]float64) ([]int, float64) {
	type elem struct {
		v    float64
		p, i int
	}
	var omega []elem
	for p, row := range times {
		for i, v := range row {
			omega = append(omega, elem{v, p, i})
		}
	}
	slices.SortFunc(omega, func(a, b elem) int {
		return cmp.Or(cmp.Compare(a.v, b.v), cmp.Compare(a.p, b.p), cmp.Compare(a.i, b.i))
	})
	n := len(times)
	var z []elem // ascending in merge order
	add := func(w elem) {
		for j, e := range z {
			if e.p == w.p {
				z = slices.Delete(z, j, j+1)
				break
			}
		}
		z = append(z, w)
	}
	fill := func() bool {
		for len(z) < n {
			if len(omega) == 0 {
				return false // the guard: elements ran out
			}
			add(omega[0])
			omega = omega[1:]
		}
		return true
	}
	best := math.Inf(1)
	idx := make([]int, n)
	keep := func() {
		if d := z[len(z)-1].v - z[0].v; d < best {
			best = d
			for _, e := range z {
				idx[e.p] = e.i
			}
		}
	}
	fill()
	keep()
	for len(omega) > 0 {
		z = z[1:]
		if !fill() {
			break
		}
		keep()
	}
	return idx, best
}

// The fast ZipLine (heap merge, linked window, early stop, reconstruction
// by binary search) must make exactly the paper's choice, ties included.
func TestZipLineMatchesPaperAlgorithm(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for k := range 3000 {
		times := randomTimes(rng, 6, 8)
		idx, got := ZipLine(times)
		wantIdx, want := paperZipLine(times)
		if got != want || !slices.Equal(idx, wantIdx) {
			t.Fatalf("case %d: ZipLine %v span %v, paper %v span %v, times %v", k, idx, got, wantIdx, want, times)
		}
	}
}

// PARADIGMS.md §5 and the paper's Figure 3: when two windows tie for the
// minimum, the first one is kept.
func TestZipLineKeepsFirstMinimum(t *testing.T) {
	// Windows: {0,1} d=1, {1,10} d=9, {10,11} d=1 (a tie, not taken).
	times := [][]float64{{0, 10}, {1, 11}}
	idx, d := ZipLine(times)
	if d != 1 || !slices.Equal(idx, []int{0, 0}) {
		t.Fatalf("got idx %v span %v, want [0 0] span 1", idx, d)
	}
	// Equal times merge by worker id, then index; the window keeps each
	// worker's latest element, so worker 0 contributes its second 5.
	idx, d = ZipLine([][]float64{{5, 5}, {5}})
	if d != 0 || !slices.Equal(idx, []int{1, 0}) {
		t.Fatalf("equal times: got idx %v span %v, want [1 0] span 0", idx, d)
	}
	// One worker: its first time, span 0.
	idx, d = ZipLine([][]float64{{2, 3, 4}})
	if d != 0 || !slices.Equal(idx, []int{0}) {
		t.Fatalf("one worker: got idx %v span %v, want [0] span 0", idx, d)
	}
}

// The paper's worked setting: two workers at a 1:2 speed ratio line up
// exactly every second push of the fast one.
func TestZipLineFindsAlignedPushes(t *testing.T) {
	times := Predict(nil, 0, []float64{1.0, 2.0, 1.5}, 6)
	idx, d := ZipLine(times)
	// 1·k, 2·k and 1.5·k first coincide at 6: fast at 6th, slow at 3rd, mid at 4th.
	if d != 0 || !slices.Equal(idx, []int{5, 2, 3}) {
		t.Fatalf("got idx %v span %v, want [5 2 3] span 0", idx, d)
	}
}

// Guard against running out of elements: a worker with a single, early
// time fixes the window's minimum; the answer must still be optimal and the
// scan must not read past any row.
func TestZipLineShortRows(t *testing.T) {
	times := [][]float64{{1}, {0, 0.5, 2, 3, 4, 5, 6}, {1.2, 9}}
	idx, d := ZipLine(times)
	_, want := BruteForce(times)
	if d != want {
		t.Fatalf("span %v, want %v", d, want)
	}
	checkRealizes(t, "ZipLine", times, idx, d)
}

func TestSolversOnInfeasibleInput(t *testing.T) {
	solvers := map[string]func([][]float64) ([]int, float64){
		"ZipLine": ZipLine, "GridScan": GridScan, "FullGridScan": FullGridScan, "BruteForce": BruteForce,
	}
	for name, solve := range solvers {
		for _, times := range [][][]float64{nil, {{1, 2}, {}}} {
			idx, d := solve(times)
			if !math.IsInf(d, 1) || len(idx) != len(times) {
				t.Errorf("%s(%v) = %v, %v; want +Inf span and len %d", name, times, idx, d, len(times))
			}
			for _, i := range idx {
				if i != -1 {
					t.Errorf("%s(%v): idx %v, want all -1", name, times, idx)
				}
			}
		}
		// Invalid values must not panic (the answer is unspecified).
		solve([][]float64{{math.NaN(), 1}, {3, 2}})
	}
}

// The merge keys must order exactly as float comparison does, including
// −0 == +0 (a tie broken by worker id, not a sign-bit order).
func TestOrderKeyMatchesFloatOrder(t *testing.T) {
	negZero := math.Copysign(0, -1)
	vals := []float64{-math.MaxFloat64, -3.5, -1e-300, negZero, 0, 1e-300, 2, 2.0000000000000004, math.MaxFloat64}
	for _, a := range vals {
		for _, b := range vals {
			if (a < b) != (orderKey(a) < orderKey(b)) || (a == b) != (orderKey(a) == orderKey(b)) {
				t.Errorf("orderKey(%v) vs orderKey(%v) disagrees with float order", a, b)
			}
		}
	}
	// Float order: worker 0's two zeros merge first, then worker 1's −0,
	// so the first full window holds worker 0's second element.
	idx, d := ZipLine([][]float64{{0, 0}, {negZero}})
	if d != 0 || !slices.Equal(idx, []int{1, 0}) {
		t.Fatalf("got idx %v span %v, want [1 0] span 0", idx, d)
	}
}
