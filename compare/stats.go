package compare

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// The statistics of a comparison over seeds live here, once: pacer compare
// computes them, summary.json records them and the report prints them.

// Level is the confidence level of every interval and the significance
// level (1 − Level) of every paired test.
const Level = 0.95

// Alpha is the significance level of the paired tests: 1 − Level, written
// out (1 − 0.95 in floating point is 0.05000000000000004).
const Alpha = 0.05

// IntervalMethod names how Interval bounds a median, for reports.
const IntervalMethod = "exact order-statistic interval for the median (distribution-free): the narrowest " +
	"[x(k), x(n+1−k)] with binomial coverage ≥ 95%; with 5 or fewer seeds no such pair exists and the " +
	"interval is the range [min, max], whose coverage (1 − 2^(1−n), 93.75% for 5 seeds) is stated"

// TestMethod names the paired comparison that decides a verdict.
const TestMethod = "paired t-test over seeds, runs paired by seed value (same seed: same data order, initial weights " +
	"and timing draws), two-sided at the 5% level, on the log ratio of smoothed times to target (not reached " +
	"counts at the horizon, the longest run's time, so a run never looks faster than one that did reach it) or of " +
	"accuracies at the horizon"

// Interval is a median over seeds with its interval. A nil bound is +∞: a
// time to target that was not reached within the horizon.
type Interval struct {
	Median *float64 `json:"median"`
	Lo     *float64 `json:"lo"`
	Hi     *float64 `json:"hi"`
	// Coverage is the interval's exact coverage probability for the median.
	Coverage float64 `json:"coverage"`
}

// MedianInterval returns the median of xs (+Inf allowed) and its exact
// order-statistic interval (IntervalMethod). xs is not modified.
func MedianInterval(xs []float64) Interval {
	n := len(xs)
	if n == 0 {
		return Interval{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2 // +Inf stays +Inf
	}
	k := 1 // 1-based: [x(k), x(n+1−k)]
	for c := 2; c <= n/2; c++ {
		if coverage(n, c) < Level {
			break
		}
		k = c
	}
	return Interval{Median: fin(med), Lo: fin(s[k-1]), Hi: fin(s[n-k]), Coverage: round6(coverage(n, k))}
}

// coverage is P(x(k) ≤ median ≤ x(n+1−k)) for n draws of a continuous
// distribution: 1 − 2·P(B ≤ k−1), B ~ Binomial(n, ½).
func coverage(n, k int) float64 {
	tail := 0.0
	for j := 0; j < k; j++ {
		tail += binom(n, j) * math.Pow(0.5, float64(n))
	}
	return 1 - 2*tail
}

func binom(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

func fin(v float64) *float64 {
	if math.IsInf(v, 1) {
		return nil
	}
	return &v
}

// round6 keeps a derived probability short and identical across platforms
// in summary.json.
func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// PairedT is a two-sided paired t-test of the mean of d against 0. It
// returns the p-value: 1 when every difference is 0 (identical runs give
// no evidence either way), 0 when all differences are equal and non-zero,
// and 1 with fewer than two pairs (one seed cannot separate anything).
func PairedT(d []float64) float64 {
	n := len(d)
	if n < 2 {
		return 1
	}
	var mean float64
	for _, v := range d {
		mean += v
	}
	mean /= float64(n)
	var ss float64
	for _, v := range d {
		ss += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	switch {
	case mean == 0:
		return 1
	case sd == 0 || sd < 1e-12*math.Abs(mean):
		return 0
	}
	t := math.Abs(mean) / (sd / math.Sqrt(float64(n)))
	return round6(2 * (1 - distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.CDF(t)))
}
