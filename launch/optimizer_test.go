package launch

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/ckpt"
	"github.com/pacer-ps/pacer/live"
	"github.com/pacer-ps/pacer/optim"
)

// TestAdamLive: a job with --optimizer adam on two in-process shards
// trains (from w⁰, near chance, 0.1, to at least 0.6 in one epoch), and
// its checkpoints hold Adam's state: both moments and one step count per
// BSP update. Restored (--restore), each shard comes back with exactly
// its checkpoint's weights, and the job goes on for a second epoch.
func TestAdamLive(t *testing.T) {
	skipUnderRace(t)
	cfg := fmnistJob(t, "bsp", 2, 2, 3200, 1)
	rule, err := optim.ParseRule("adam")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Optimizer, cfg.LR, cfg.EvalEvery, cfg.Seed = rule, 2e-3, 0.5, 3
	dir := t.TempDir()
	// Evaluations fire when a poll of the coordinator finds their push
	// count passed: at the default 100 ms a quiet machine ends this job
	// between two polls and the curve has its final point only.
	res, err := TrainResult(context.Background(), cfg, Options{Mode: "inproc", CheckpointDir: dir, Poll: 2 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Run
	if len(r.Curve) < 2 {
		t.Fatalf("curve %v", r.Curve)
	}
	first := r.Curve[0][1]
	t.Logf("adam: %d updates, accuracy %.3f at the first evaluation, %.3f at the end (one run, seed %d)", r.Updates, first, r.FinalAccuracy, cfg.Seed)
	if r.FinalAccuracy < 0.6 {
		t.Errorf("adam did not train: accuracy %.3f first, %.3f final", first, r.FinalAccuracy)
	}
	m0, err := ckpt.ReadMeta(ckpt.Path(dir, 0))
	if err != nil {
		t.Fatal(err)
	}
	crcs := map[int]uint32{}
	for i := range cfg.Shards {
		m, err := ckpt.ReadMeta(ckpt.Path(dir, i))
		if err != nil {
			t.Fatal(err)
		}
		st, err := ckpt.Read(ckpt.Path(dir, i), ckpt.Want{Shard: i, Shards: m.Shards, Lo: m.Lo, Hi: m.Hi, NumParams: m0.NumParams, Model: m.Model})
		if err != nil {
			t.Fatal(err)
		}
		var sq float64
		for _, v := range st.Square {
			sq += float64(v)
		}
		if st.Optimizer != "adam" || st.Step != int64(st.Version) || st.Version == 0 || len(st.Velocity) != len(st.Weights) || !(sq > 0) || math.IsInf(sq, 0) {
			t.Errorf("shard %d's checkpoint: optimizer %q, step %d at version %d, %d first moments for %d weights, squared gradients summing to %g",
				i, st.Optimizer, st.Step, st.Version, len(st.Velocity), len(st.Weights), sq)
		}
		crcs[i] = live.WeightsCRC(st.Weights)
	}
	// A second epoch: a fresh coordinator (its state file names the first
	// job's length) over the restored shards.
	cfg.Epochs = 2
	if err := os.Remove(filepath.Join(dir, "coordinator.json")); err != nil {
		t.Fatal(err)
	}
	again, err := TrainResult(context.Background(), cfg, Options{Mode: "inproc", CheckpointDir: dir, Restore: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range again.Shards {
		if !s.Restored || s.RestoredCRC != crcs[i] {
			t.Errorf("shard %d restored %v with CRC %08x, its checkpoint's %08x", i, s.Restored, s.RestoredCRC, crcs[i])
		}
	}
	if again.Run.FinalAccuracy < 0.6 {
		t.Errorf("after the restore: accuracy %.3f", again.Run.FinalAccuracy)
	}
}
