package launch

import (
	"context"
	"testing"
	"time"
)

// TestInprocBatchLoss: a live job's summary has, at every evaluation, the
// mean mini-batch loss its workers reported since the previous one, and
// it falls as the model learns.
func TestInprocBatchLoss(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := quickJob(t, "bsp", 2, 1)
	cfg.Epochs = 3
	// Polled often: the job takes a fraction of a second, and the
	// evaluations wait for a poll.
	r, err := Train(ctx, cfg, Options{Data: synth(t), Poll: 2 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.BatchLoss) != len(r.Curve) || len(r.Curve) < 3 {
		t.Fatalf("%d batch losses for %d evaluations, want one each (at least 3)", len(r.BatchLoss), len(r.Curve))
	}
	var losses []float64
	for k, l := range r.BatchLoss {
		// Every evaluation but the final one follows an eval-every's
		// pushes; the final one may come right after the last.
		if l == nil {
			if k < len(r.BatchLoss)-1 {
				t.Fatalf("evaluation %d of %d has no batch loss", k+1, len(r.BatchLoss))
			}
			continue
		}
		if !(*l > 0) {
			t.Fatalf("evaluation %d: batch loss %g", k+1, *l)
		}
		losses = append(losses, *l)
	}
	t.Logf("batch losses %.4f, accuracy %.3f", losses, r.FinalAccuracy)
	if first, last := losses[0], losses[len(losses)-1]; !(last < 0.8*first) {
		t.Errorf("batch loss %.4f at the first evaluation, %.4f at the last: want it to fall by a fifth", first, last)
	}
}
