package train

import (
	"slices"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/data"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/timing"
)

// --ema evaluates the weights' moving average: a decay of (nearly) 0
// evaluates the weights themselves (the same curve), and a slow average
// (0.999 over a few dozen updates) stays near the start while the weights
// learn.
func TestEMAEvaluatesTheAverage(t *testing.T) {
	ds := fashion(t, 2048, 500)
	run := func(ema float64) []float64 {
		return accuracies(t, job.Config{Spec: spec("bsp"), Workers: 2, Shards: 2, Epochs: 1, EvalEvery: 0.5, Seed: 2, LR: 0.1, EMA: ema}, ds)
	}
	plain, zero, slow := run(0), run(1e-300), run(0.999)
	t.Logf("accuracy: weights %v, ema≈0 %v, ema 0.999 %v", plain, zero, slow)
	if !slices.Equal(plain, zero) {
		t.Errorf("a decay of (nearly) 0 changed the curve: %v against %v", zero, plain)
	}
	if last := len(plain) - 1; !(plain[last] > slow[last]+0.1) || slow[0] != plain[0] {
		t.Errorf("a 0.999 average of 16 updates should lag the weights: %v against %v", slow, plain)
	}
}

// The curve carries each evaluation's epoch and training loss (falling as
// the model learns), and --targets' crossings in time and epochs.
func TestCurveEpochsLossTargets(t *testing.T) {
	ds := fashion(t, 2048, 500)
	cfg := job.Config{Spec: spec("bsp"), Workers: 2, Shards: 1, Epochs: 1, EvalEvery: 0.25, Seed: 2, LR: 0.1, Targets: []float64{0.3, 0.99}}
	r, err := Virtual(cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("curve %v epochs %v loss %v times %v epochs %v", r.Curve, r.CurveEpochs, r.TrainLoss, r.TimesToTargets, r.EpochsToTargets)
	n := len(r.Curve)
	if len(r.CurveEpochs) != n || len(r.TrainLoss) != n || r.CurveEpochs[0] != 0 || r.CurveEpochs[n-1] < 0.99 {
		t.Fatalf("epochs %v and losses %v for %d evaluations", r.CurveEpochs, r.TrainLoss, n)
	}
	if !(r.TrainLoss[n-1] < r.TrainLoss[0]-0.3) {
		t.Errorf("training loss %v: want it to fall as the model learns", r.TrainLoss)
	}
	if len(r.TimesToTargets) != 2 || r.TimesToTargets[0] == nil || r.EpochsToTargets[0] == nil || r.TimesToTargets[1] != nil ||
		*r.EpochsToTargets[0] <= 0 || *r.EpochsToTargets[0] > 1 {
		t.Errorf("targets 0.3 and 0.99: times %v, epochs %v", r.TimesToTargets, r.EpochsToTargets)
	}
}

// --ema-time fades the average in virtual time: a τ far below an
// iteration evaluates the weights themselves, a τ far above it stays at
// the start, and the average depends on τ against the cluster's time
// alone (twice the iteration time and twice τ: the same curve; twice τ
// alone: another). BSP: one update per shard at a time (under ASP two
// gradients may land at one instant, and the second, dt = 0, moves
// nothing).
func TestEMATimeFadesInVirtualTime(t *testing.T) {
	ds := fashion(t, 2048, 500)
	run := func(base, tau time.Duration) []float64 {
		return accuracies(t, job.Config{Spec: spec("bsp"), Workers: 2, Shards: 2, Epochs: 1, EvalEvery: 0.5, Seed: 2, LR: 0.1, EMATime: tau,
			Timing: timing.WorkerSpec{Base: base, Speeds: []float64{1, 2}}}, ds)
	}
	plain := run(time.Second, 0)
	tiny, huge := run(time.Second, time.Nanosecond), run(time.Second, 1000*time.Hour)
	if !slices.Equal(plain, tiny) {
		t.Errorf("τ = 1 ns changed the curve: %v against %v", tiny, plain)
	}
	if last := len(plain) - 1; !(plain[last] > huge[last]+0.1) {
		t.Errorf("τ = 1000 h should stay at the start: %v against %v", huge, plain)
	}
	a, scaled, other := run(time.Second, 10*time.Second), run(2*time.Second, 20*time.Second), run(time.Second, 20*time.Second)
	if !slices.Equal(a, scaled) || slices.Equal(a, other) {
		t.Errorf("τ = 10 s at 1 s iterations %v; 20 s at 2 s %v (want the same); 20 s at 1 s %v (want another)", a, scaled, other)
	}
}

// accuracies trains cfg on ds in virtual time and returns its curve's
// accuracies, in order.
func accuracies(t *testing.T, cfg job.Config, ds *data.Dataset) []float64 {
	t.Helper()
	r, err := Virtual(cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	var acc []float64
	for _, p := range r.Curve {
		acc = append(acc, p[1])
	}
	return acc
}
