package sim

import (
	"testing"

	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/timing"
)

func TestSmokeAll(t *testing.T) {
	for _, s := range []string{"bsp", "asp", "ssp:s=3", "dssp:sl=3,su=15", "elastic:r=15", "backup:b=1", "psp:c=3,b=0.5", "softsync:n=2"} {
		sp, err := paradigm.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(Config{Spec: sp, Workers: 4, Shards: 2, Timing: timing.WorkerSpec{Speeds: []float64{1, 2}, Jitter: 0.1}, Iterations: 50, Seed: 1})
		if err != nil {
			t.Fatal(s, err)
		}
		t.Logf("%-20s pushes=%d upd=%d drop=%d vs=%.1f thr=%.2f wait=%.3f gap=%d st=%.2f/%d", s, r.Pushes, r.Updates, r.Dropped, r.VirtualSeconds, r.Throughput, r.WaitFraction, r.MaxGap, r.StalenessMean, r.StalenessMax)
	}
}
