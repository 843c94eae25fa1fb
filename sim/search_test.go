package sim

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/timing"
)

// ElasticBSP's barrier search charged to the simulated server (issue 18,
// item 5): the released workers wait SearchWork·SearchCost at every
// barrier, so a larger R lengthens training (the paper's observation), by
// exactly the time charged; with the charge off R costs nothing there.
func TestSearchCostCharged(t *testing.T) {
	run := func(r int, cost time.Duration) (float64, float64, int64) {
		sp, err := paradigm.Parse("elastic:r=" + strconv.Itoa(r))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(Config{Spec: sp, Workers: 4, Timing: timing.WorkerSpec{Base: time.Second, Speeds: []float64{1, 1.3, 1.7, 2}, Jitter: 0.05},
			Iterations: 200, Seed: 3, SearchCost: cost})
		if err != nil {
			t.Fatal(err)
		}
		return res.VirtualSeconds, res.SearchSeconds, res.ControllerCalls
	}
	const cost = time.Millisecond
	for _, r := range []int{15, 150} {
		free, none, calls := run(r, 0)
		paid, charged, calls2 := run(r, cost)
		sp, _ := paradigm.Parse("elastic:r=" + strconv.Itoa(r))
		want := float64(calls2) * SearchWork(sp, 4) * cost.Seconds()
		t.Logf("r=%d: %.1f s free, %.1f s with %s a unit (%d barriers, %.2f s charged, want %.2f)", r, free, paid, cost, calls2, charged, want)
		if none != 0 || charged <= 0 || math.Abs(charged-want) > 1e-6*want || calls == 0 {
			t.Errorf("r=%d: %g s charged free, %g s charged at %s a unit over %d barriers: want 0 and %g", r, none, charged, cost, calls2, want)
		}
		if !(paid > free) {
			t.Errorf("r=%d: %g s with the search charged, %g s free: the charge should lengthen the run", r, paid, free)
		}
	}
	_, small, c15 := run(15, cost)
	_, large, c150 := run(150, cost)
	if !(large/float64(c150) > 5*small/float64(c15)) {
		t.Errorf("a barrier's search: %g s at r=150, %g s at r=15: a larger R should cost about 10 times more", large/float64(c150), small/float64(c15))
	}
}

// Issue 34: ZipLine's work is the paper's O(R·n²) (its window walk of n
// at each of the n·R predictions), not pacer's own n·R·log n: at n = 1,000
// and R = 150 the log count was about 100 times too small.
func TestSearchWorkIsThePapersOrder(t *testing.T) {
	for _, c := range []struct {
		spec string
		n    int
		want float64
	}{
		{"elastic:r=150", 1000, 1000 * 1000 * 150},
		{"elastic:r=15", 10, 10 * 10 * 15},
		{"elastic:r=15,search=gridscan", 10, 10 * 15 * 15},
		{"elastic:r=15,search=fullgridscan", 10, 10 * 10 * 15 * 15},
		{"elastic:r=3,search=brute", 4, 81},
	} {
		sp, err := paradigm.Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := SearchWork(sp, c.n); got != c.want {
			t.Errorf("%s, n=%d: work %g, want %g", c.spec, c.n, got, c.want)
		}
	}
}
