package launch

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkThroughput trains the MLP on synthetic data in process with
// 1, 2, 4, 8 and 16 workers and 2 shards, and reports pushes per second
// of wall time (on a machine with few cores the compute saturates early;
// the figure shows what the coordination costs on top).
//
//	go test ./launch -run '^$' -bench Throughput -benchtime 1x
func BenchmarkThroughput(b *testing.B) {
	ds := synth(b)
	for _, spec := range []string{"bsp", "asp"} {
		for _, k := range []int{1, 2, 4, 8, 16} {
			b.Run(fmt.Sprintf("%s/workers=%d", spec, k), func(b *testing.B) {
				var pushes int64
				var secs float64
				for range b.N {
					cfg := quickJob(b, spec, k, 2)
					cfg.Epochs = 4 // 250 pushes: long enough to see the steady state
					r, err := Train(context.Background(), cfg, Options{Data: ds}, nil)
					if err != nil {
						b.Fatal(err)
					}
					pushes += r.Pushes
					secs += r.Seconds
				}
				b.ReportMetric(float64(pushes)/secs, "pushes/s")
				b.ReportMetric(float64(pushes)*32/secs, "samples/s")
			})
		}
	}
}
