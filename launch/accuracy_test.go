package launch

import (
	"context"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/runstats"
)

// TestTCPBSPFashionMNIST: BSP with 4 worker processes and 2 shard
// processes over loopback reaches ≥ 0.85 test accuracy on Fashion-MNIST
// (issue 4's acceptance). Skipped with -short: it trains on all 60,000
// images; docs/benchmarks.md records a measured run.
func TestTCPBSPFashionMNIST(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("trains 5 epochs of Fashion-MNIST; run without -short and -race")
	}
	cfg := fmnistJob(t, "bsp", 4, 2, 0, 5)
	cfg.TestLimit, cfg.Batch, cfg.LR, cfg.Momentum, cfg.EvalEvery = 0, 64, 0.1, 0.9, 1
	cfg.HeartbeatTimeout = 10 * time.Second
	opt := tcpOpts(t)
	opt.Timeout = 5 * time.Minute
	r, err := Train(context.Background(), cfg, opt, func(p runstats.Progress) {
		t.Logf("epoch %.2f accuracy %.4f %.0f pushes/s wait %.2f", p.Epoch, p.Accuracy, p.Throughput, p.WaitFraction)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("final %.4f best %.4f in %.1f s (%d pushes)", r.FinalAccuracy, r.BestAccuracy, r.Seconds, r.Pushes)
	if r.FinalAccuracy < 0.85 {
		t.Errorf("final accuracy %.4f, want ≥ 0.85", r.FinalAccuracy)
	}
}
