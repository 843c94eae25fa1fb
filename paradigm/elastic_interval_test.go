package paradigm

import (
	"math"
	"testing"
	"time"
)

// interval=mean:k predicts from the mean of a worker's last k intervals
// (release to push), once it has k of them; fewer, of those it has. A
// worker that joins again starts its history afresh.
func TestElasticMeanOfLastKIntervals(t *testing.T) {
	g := newElasticGate(1, Spec{Kind: Elastic, R: 4, MeanOf: 3}, new(uint64))
	var now time.Duration
	for i, iv := range []float64{1, 2, 6, 4, 8} {
		now += time.Duration(iv * float64(time.Second))
		g.Pushed(now, 0, nil) // one worker: every push ends a superstep and releases it
		want := map[int]float64{0: 1, 1: 1.5, 2: 3, 3: 4, 4: 6}[i]
		if math.Abs(g.ival[0]-want) > 1e-12 {
			t.Fatalf("after interval %d (%gs): predicted %g, want %g", i, iv, g.ival[0], want)
		}
	}
	g.Leave(now, 0, nil)
	g.Join(now, 0, nil)
	g.Pushed(now+10*time.Second, 0, nil)
	if g.ival[0] != 10 {
		t.Fatalf("after a rejoin: predicted %g, want its one new interval 10", g.ival[0])
	}
	last := newElasticGate(1, Spec{Kind: Elastic, R: 4}, new(uint64))
	last.Pushed(time.Second, 0, nil)
	last.Pushed(4*time.Second, 0, nil)
	if last.ival[0] != 3 {
		t.Fatalf("interval=last: predicted %g, want the latest 3", last.ival[0])
	}
}
