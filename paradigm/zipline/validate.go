package zipline

import (
	"errors"
	"fmt"
	"math"
)

// Sentinel errors returned (wrapped, with the worker and index) by Validate.
var (
	// ErrNoWorkers: times has no rows, so there is nothing to synchronize.
	ErrNoWorkers = errors.New("zipline: no workers")
	// ErrEmptyList: a worker has no predicted push time, so no barrier can include it.
	ErrEmptyList = errors.New("zipline: worker has no predicted times")
	// ErrNotFinite: a time is NaN or ±Inf; spans of such times are meaningless.
	ErrNotFinite = errors.New("zipline: time is not finite")
	// ErrUnsorted: a worker's times decrease; every solver relies on ascending rows.
	ErrUnsorted = errors.New("zipline: times not ascending")
)

// Validate reports whether times is a valid input for the solvers: at least
// one worker, every worker with at least one time, every time finite, and each
// worker's times non-decreasing (equal neighbours are allowed). The error wraps
// one of the sentinel errors and names the first offending worker and index.
//
// The solvers do not call Validate (the ElasticBSP gate builds its input with
// Predict and calls the solver at every barrier); they assume valid input.
// On invalid input they never panic, but their answer is only defined for the
// structural cases: with no workers or an empty list they return span +Inf
// and idx filled with -1.
func Validate(times [][]float64) error {
	if len(times) == 0 {
		return ErrNoWorkers
	}
	for p, row := range times {
		if len(row) == 0 {
			return fmt.Errorf("%w: worker %d", ErrEmptyList, p)
		}
		for i, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: worker %d index %d value %v", ErrNotFinite, p, i, v)
			}
			if i > 0 && v < row[i-1] {
				return fmt.Errorf("%w: worker %d index %d value %v after %v", ErrUnsorted, p, i, v, row[i-1])
			}
		}
	}
	return nil
}

// Predict fills the paper's predictions e_i^p = tb + i·I_p, i = 1..R, for every
// worker p with interval intervals[p], and returns the rows (one per interval,
// R times each). Each time is computed from i directly rather than by repeated
// addition, so rounding does not accumulate along a row.
//
// dst is reused when it has room: its backing array when cap(dst) >= len(intervals),
// and each row's backing array when its capacity is at least R, so a gate that
// calls Predict at every barrier with the same n and R allocates nothing.
//
// Intervals should be finite and non-negative (a zero interval gives equal
// times, which is valid); R < 1 gives empty rows. Validate rejects what these
// preconditions exclude.
func Predict(dst [][]float64, tb float64, intervals []float64, R int) [][]float64 {
	n := len(intervals)
	if cap(dst) >= n {
		dst = dst[:n]
	} else {
		grown := make([][]float64, n)
		copy(grown, dst[:cap(dst)])
		dst = grown
	}
	if R < 0 {
		R = 0
	}
	for p, ip := range intervals {
		row := dst[p]
		if cap(row) >= R {
			row = row[:R]
		} else {
			row = make([]float64, R)
		}
		for i := range row {
			row[i] = tb + float64(i+1)*ip
		}
		dst[p] = row
	}
	return dst
}

// span returns max − min of the chosen times, the quantity every solver minimizes.
func span(times [][]float64, idx []int) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for p, i := range idx {
		v := times[p][i]
		lo = min(lo, v)
		hi = max(hi, v)
	}
	return hi - lo
}

// infeasible reports whether no choice exists (no workers or an empty list);
// it then fills idx with -1 so a caller that ignores the +Inf span still
// cannot index with a stale value.
func infeasible(times [][]float64, idx []int) bool {
	bad := len(times) == 0
	for _, row := range times {
		if len(row) == 0 {
			bad = true
		}
	}
	if bad {
		for p := range idx {
			idx[p] = -1
		}
	}
	return bad
}
