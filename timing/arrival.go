package timing

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Arrivals holds, for selected ranks k, the time of the k-th fastest of n
// gradients in each of many iterations where all n workers start together:
// the data behind the backup-workers paper's Figure 3 (CDF per rank) and
// Figure 4 (mean per rank).
type Arrivals struct {
	n     int
	ranks []int
	times [][]time.Duration // times[j] sorted ascending: rank ranks[j] over iterations
}

// SimulateArrivals draws iters synchronous iterations from w (advancing every
// worker's stream iters times; pass a fresh Workers for a reproducible table)
// and records the arrival time of each rank in ranks (1-based, 1 = fastest,
// N() = slowest). Empty ranks means every rank 1..N().
func SimulateArrivals(w *Workers, iters int, ranks []int) (*Arrivals, error) {
	n := w.N()
	if iters < 1 {
		return nil, fmt.Errorf("timing: arrival iterations = %d: want at least 1", iters)
	}
	if len(ranks) == 0 {
		ranks = make([]int, n)
		for i := range ranks {
			ranks[i] = i + 1
		}
	}
	for _, k := range ranks {
		if k < 1 || k > n {
			return nil, fmt.Errorf("timing: arrival rank %d out of range 1..%d (the number of workers)", k, n)
		}
	}
	a := &Arrivals{n: n, ranks: slices.Clone(ranks), times: make([][]time.Duration, len(ranks))}
	for j := range a.times {
		a.times[j] = make([]time.Duration, iters)
	}
	round := make([]time.Duration, n)
	var now time.Duration // every round starts when the last one's slowest ends
	for it := range iters {
		for p := range round {
			round[p] = w.NextAt(p, now)
		}
		slices.Sort(round)
		now += round[n-1]
		for j, k := range a.ranks {
			a.times[j][it] = round[k-1]
		}
	}
	for _, t := range a.times {
		slices.Sort(t)
	}
	return a, nil
}

// ArrivalCDF returns, for each rank in ranks, the fraction of iters
// synchronous iterations in which the rank-th fastest gradient arrived within
// d of the iteration start. It advances w like SimulateArrivals.
func ArrivalCDF(w *Workers, iters int, ranks []int, d time.Duration) ([]float64, error) {
	a, err := SimulateArrivals(w, iters, ranks)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(a.ranks))
	for j := range a.ranks {
		out[j] = a.within(j, d)
	}
	return out, nil
}

// Ranks are the recorded ranks, in the order requested.
func (a *Arrivals) Ranks() []int { return slices.Clone(a.ranks) }

// Iterations is the number of simulated iterations.
func (a *Arrivals) Iterations() int { return len(a.times[0]) }

func (a *Arrivals) index(rank int) int { return slices.Index(a.ranks, rank) }

func (a *Arrivals) within(j int, d time.Duration) float64 {
	t := a.times[j]
	// Count of times ≤ d: first index whose time exceeds d.
	i, _ := slices.BinarySearchFunc(t, d, func(x, d time.Duration) int {
		if x <= d {
			return -1
		}
		return 1
	})
	return float64(i) / float64(len(t))
}

// Within is the fraction of iterations in which the rank-th gradient arrived
// within d: the CDF of that rank at d. It is NaN for a rank not recorded.
func (a *Arrivals) Within(rank int, d time.Duration) float64 {
	j := a.index(rank)
	if j < 0 {
		return math.NaN()
	}
	return a.within(j, d)
}

// Quantile is the q-quantile (0 ≤ q ≤ 1, nearest rank) of the rank-th arrival
// time; -1 for a rank not recorded or q outside [0, 1].
func (a *Arrivals) Quantile(rank int, q float64) time.Duration {
	j := a.index(rank)
	if j < 0 || !(q >= 0 && q <= 1) {
		return -1
	}
	t := a.times[j]
	i := int(math.Ceil(q*float64(len(t)))) - 1
	return t[max(i, 0)]
}

// Mean is the mean rank-th arrival time (Figure 4 of the paper); -1 for a rank not recorded.
func (a *Arrivals) Mean(rank int) time.Duration {
	j := a.index(rank)
	if j < 0 {
		return -1
	}
	var sum float64
	for _, x := range a.times[j] {
		sum += float64(x)
	}
	return toDuration(sum / float64(len(a.times[j])))
}

// WriteTable prints one row per recorded rank: the CDF at each of ds, then the
// mean, median, 99th percentile and maximum arrival time.
func (a *Arrivals) WriteTable(out io.Writer, ds []time.Duration) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"rank"}
	for _, d := range ds {
		head = append(head, "≤"+d.String())
	}
	head = append(head, "mean", "median", "p99", "max")
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for j, k := range a.ranks {
		row := []string{fmt.Sprintf("%d/%d", k, a.n)}
		for _, d := range ds {
			row = append(row, fmt.Sprintf("%.1f%%", 100*a.within(j, d)))
		}
		t := a.times[j]
		row = append(row, roundDur(a.Mean(k)), roundDur(a.Quantile(k, 0.5)), roundDur(a.Quantile(k, 0.99)), roundDur(t[len(t)-1]))
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	return tw.Flush()
}

func roundDur(d time.Duration) string { return d.Round(time.Millisecond).String() }
