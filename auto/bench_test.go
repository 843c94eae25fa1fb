package auto

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/network"
	"github.com/pacer-ps/pacer/paradigm"
)

// BenchmarkDecide16 is one decision of the default rule at 16 workers,
// one slowed 2×, with the default network: the seven candidates, each
// predicted over `every` (20) rounds of the slowest worker. Its
// "overhead" metric is the decision's time over the job time between two
// decisions (20 rounds) at a 100 ms base iteration: the share of the
// coordinator's time spent deciding (goal ≤ 2%, issue 36). The job's
// time is the reference, set by the rule; the decision's is measured.
func BenchmarkDecide16(b *testing.B) {
	const workers, every = 16, paradigm.AutoEvery
	base := 100 * time.Millisecond
	m := Measured{Iter: make([]time.Duration, workers), CV: 0.05, Shards: 2, Network: &network.Spec{Default: network.DefaultLink, ApplyRate: network.DefaultApplyRate}, Params: 1_000_000}
	for p := range m.Iter {
		m.Iter[p] = base
	}
	m.Iter[workers-1] = 2 * base
	// A window's measured multiples, as the coordinator hands them in:
	// every rounds of every worker, a spread of about 5%.
	for i := range every * workers {
		m.Draws = append(m.Draws, 1+0.07*math.Sin(float64(i)))
	}
	sp, err := paradigm.Parse("auto")
	if err != nil {
		b.Fatal(err)
	}
	r := Rule{Among: sp.Among(), Horizon: every * m.Iter[workers-1], Threshold: paradigm.AutoThreshold, Lambda: paradigm.AutoLambda}
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		r.Seed = uint64(i)
		if _, err := Decide(context.Background(), time.Duration(i)*r.Horizon, m, r.Among[0], r); err != nil {
			b.Fatal(err)
		}
	}
	per := time.Since(start) / time.Duration(b.N)
	b.ReportMetric(float64(per)/float64(r.Horizon), "overhead")
}
