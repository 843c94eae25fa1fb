package compare

import (
	"math"
	"testing"

	"github.com/pacer-ps/pacer/runstats"
)

// The verdict ranks and tests by SmoothedTime, not by the first crossing: a
// paradigm whose accuracy touches the target once, early, in a spike,
// but climbs half as fast does not lead one that climbs steadily to it.
// The first crossing stays in the statistics (the report's time to
// target).
func TestAnalyzeRanksBySmoothedTime(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5}
	var runs []runstats.Run
	for _, name := range []string{"spiky", "steady"} {
		for _, s := range seeds {
			tau := 200 * (1 + 0.02*float64(s))
			if name == "spiky" {
				tau *= 2
			}
			r := runstats.Run{Paradigm: name, Mode: "virtual", Seed: s, Seconds: 1920}
			var c [][2]float64
			for k := 0; k <= 48; k++ {
				x := 40 * float64(k)
				a := 0.86 - 0.76*math.Exp(-x/tau)
				if name == "spiky" && k == 8 {
					a = 0.85 // one evaluation at 320 s
				}
				c = append(c, [2]float64{x, a})
			}
			r.SetCurve(c, 0.84)
			runs = append(runs, r)
		}
	}
	st, v := Analyze(runs, []string{"spiky", "steady"}, seeds, 0.84)
	if v.Leader != "steady" || v.Winner == nil || v.Metric != MetricTime {
		t.Errorf("verdict %+v: want steady to win on smoothed time", v)
	}
	if !(*st[0].TimeToTarget.Median < *st[1].TimeToTarget.Median) {
		t.Errorf("first crossings: spiky %v, steady %v: the fixture's spike should come first", *st[0].TimeToTarget.Median, *st[1].TimeToTarget.Median)
	}
	if st[0].SmoothedTime == nil || st[1].SmoothedTime == nil || !(*st[1].SmoothedTime.Median < *st[0].SmoothedTime.Median) {
		t.Errorf("smoothed times: spiky %+v, steady %+v", st[0].SmoothedTime, st[1].SmoothedTime)
	}
}
