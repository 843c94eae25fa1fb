package timing

import (
	"math/rand/v2"
	"testing"
	"time"
)

var sinkDur time.Duration
var sinkF float64

// refNsPerDraw times one NormFloat64 from a PCG-backed *rand.Rand: the
// cheapest draw a model with noise can make, measured in the same run so the
// reported ratio does not depend on the machine.
func refNsPerDraw(n int) float64 {
	r := rand.New(rand.NewPCG(1, 2))
	start := time.Now()
	var s float64
	for range n {
		s += r.NormFloat64()
	}
	sinkF = s
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}

// BenchmarkNext reports ns/op, allocs and x_normdraw (Next's cost in units of
// one NormFloat64 draw). Next is on the simulator's hot path.
func BenchmarkNext(b *testing.B) {
	for _, tc := range []struct {
		name string
		spec WorkerSpec
	}{
		{"none", WorkerSpec{}},
		{"jitter", WorkerSpec{Jitter: 0.1}},
		{"shiftexp", WorkerSpec{Straggler: MustStraggler("shiftexp")}},
		{"heavytail", WorkerSpec{Straggler: MustStraggler("heavytail")}},
		{"heavytail+jitter+slow", WorkerSpec{Jitter: 0.1, Straggler: MustStraggler("heavytail+slow:worker=3,factor=2")}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			const n = 100
			w, err := NewWorkers(tc.spec, n, 1)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			var s time.Duration
			p := 0
			for range b.N {
				s += w.NextAt(p, 0)
				if p++; p == n {
					p = 0
				}
			}
			b.StopTimer()
			sinkDur = s
			per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(per/refNsPerDraw(max(b.N, 1000)), "x_normdraw")
		})
	}
}

func BenchmarkPullDelay(b *testing.B) {
	s, err := NewServers(MustServerDelay("const:delay=1ms+spike"), 8, 1, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var d time.Duration
	for i := range b.N {
		d += s.PullDelay(i & 7)
	}
	sinkDur = d
}
