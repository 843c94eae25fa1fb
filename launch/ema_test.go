package launch

import (
	"context"
	"math"
	"testing"

	"github.com/pacer-ps/pacer/ckpt"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/nn"
	"github.com/pacer-ps/pacer/runstats"
)

// --ema in the live modes: the shards keep the weights' moving average and
// the job's evaluations read it. The final accuracy is exactly the
// average's in the shards' final checkpoints (not the weights'), and a
// decay of 0.9999 over a short run keeps it at the initial weights'
// accuracy while the weights themselves learn.
func TestEMALive(t *testing.T) {
	skipUnderRace(t)
	for _, mode := range []runstats.Mode{runstats.Inproc, runstats.TCP} {
		t.Run(string(mode), func(t *testing.T) {
			cfg := fmnistJob(t, "bsp", 2, 2, 1280, 2)
			cfg.EMA, cfg.Seed, cfg.LR = 0.9999, 4, 0.1
			dir := t.TempDir()
			o := Options{Mode: mode, CheckpointDir: dir}
			if mode == runstats.TCP {
				o = tcpOpts(t)
				o.CheckpointDir = dir
			}
			res, err := TrainResult(context.Background(), cfg, o, nil)
			if err != nil {
				t.Fatal(err)
			}
			j, err := ckpt.ReadJob(dir)
			if err != nil {
				t.Fatal(err)
			}
			if j.EMA == nil {
				t.Fatal("the final checkpoints hold no moving average")
			}
			if err := cfg.Fill(); err != nil {
				t.Fatal(err)
			}
			ds, err := job.Data(cfg)
			if err != nil {
				t.Fatal(err)
			}
			m, _ := nn.New("mlp", nn.Image28)
			w0 := make([]float32, m.NumParams())
			m.Init(w0, cfg.Seed)
			acc := func(w []float32) float64 { return nn.Accuracy(m, w, ds.Test.X, ds.Test.Y, 500) }
			a0, avg, weights := acc(w0), acc(j.EMA), acc(j.Weights)
			r := res.Run
			t.Logf("%s: %d updates; accuracy of w⁰ %.3f, of the average %.3f, of the weights %.3f; the job's final %.3f, curve %v",
				mode, r.Updates, a0, avg, weights, r.FinalAccuracy, r.Curve)
			if r.FinalAccuracy != avg {
				t.Errorf("the job evaluated %.4f at its end; the final average scores %.4f (the weights %.4f)", r.FinalAccuracy, avg, weights)
			}
			// θ̄ − w⁰ = (1−D)·Σ D^(n−k)·(θ_k − w⁰) over a shard's n updates:
			// it moved, by at most about (1−D)·n times the weights' move.
			var dAvg, dW float64
			for i := range w0 {
				dAvg += math.Pow(float64(j.EMA[i]-w0[i]), 2)
				dW += math.Pow(float64(j.Weights[i]-w0[i]), 2)
			}
			dAvg, dW = math.Sqrt(dAvg), math.Sqrt(dW)
			n := float64(r.Updates) / float64(cfg.Shards)
			t.Logf("the average moved %.3g from w⁰, the weights %.3g (bound %.3g)", dAvg, dW, 2*(1-cfg.EMA)*n*dW)
			if !(dAvg > 0) || dAvg > 2*(1-cfg.EMA)*n*dW {
				t.Errorf("the average moved %.3g from w⁰ over %.0f updates a shard, the weights %.3g: want (0, %.3g]", dAvg, n, dW, 2*(1-cfg.EMA)*n*dW)
			}
			if math.Abs(avg-a0) > 0.03 || !(weights > a0+0.1) {
				t.Errorf("a 0.9999 average of %d updates should stay at w⁰'s accuracy %.3f (got %.3f) while the weights learn (got %.3f)",
					r.Updates, a0, avg, weights)
			}
		})
	}
}
