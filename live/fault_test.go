package live

import (
	"context"
	"testing"
	"time"
)

// TestTCPWorkerKilled: a worker SIGKILLed mid-run is removed after the
// heartbeat timeout and the job still finishes (PARADIGMS.md, common rules:
// no paradigm waits forever for a dead worker).
func TestTCPWorkerKilled(t *testing.T) {
	for _, spec := range []string{"bsp", "backup:b=1", "psp:c=4,b=1", "ssp:s=1", "dssp:sl=1,su=4"} {
		t.Run(spec, func(t *testing.T) {
			cfg := fmnistJob(t, spec, 4, 2, 9600, 1)      // 300 pushes: the run outlasts the removal
			cfg.HeartbeatTimeout = 500 * time.Millisecond // removal well before a paradigm that does not wait (backup) finishes
			opt := tcpOpts(t)
			opt.Faults = []Fault{{Role: "worker", Index: 2, AtPushes: 12}}
			res, err := TrainResult(context.Background(), cfg, opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			r := res.Run
			t.Logf("%s: pushes %d updates %d removed %d seconds %.2f worker pushes %v", spec, r.Pushes, r.Updates, res.Coord.Removed, r.Seconds, r.WorkerPushes)
			// On a loaded machine a live worker may miss the short timeout,
			// be removed and rejoin; the killed one alone stays out.
			if len(res.Faults) != 1 || res.Coord.Removed-res.Coord.Joined != 1 || res.Coord.Live != 3 {
				t.Errorf("faults %+v, removed %d, joined %d, live %d: want the killed worker removed",
					res.Faults, res.Coord.Removed, res.Coord.Joined, res.Coord.Live)
			}
			if r.Pushes < res.Coord.Target {
				t.Errorf("pushes %d below the target %d", r.Pushes, res.Coord.Target)
			}
			if r.WorkerPushes[2] >= r.Pushes/4 {
				t.Errorf("the killed worker pushed %d of %d", r.WorkerPushes[2], r.Pushes)
			}
		})
	}
}

// TestTCPShardRestored: a shard SIGKILLed mid-run and restarted with
// --restore comes back with exactly its checkpoint's weights, and the job
// finishes.
func TestTCPShardRestored(t *testing.T) {
	cfg := fmnistJob(t, "bsp", 4, 2, 2400, 1.5)
	opt := tcpOpts(t)
	opt.CheckpointDir = t.TempDir()
	opt.CheckpointInterval = 100 * time.Millisecond
	opt.Faults = []Fault{{Role: "shard", Index: 1, AtPushes: 40, Restart: true, RestartAfter: 300 * time.Millisecond, AfterCheckpoint: true}}
	res, err := TrainResult(context.Background(), cfg, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Run
	if len(res.Faults) != 1 {
		t.Fatalf("faults %+v", res.Faults)
	}
	f := res.Faults[0]
	t.Logf("pushes %d updates %d; checkpoint v%d crc %08x, restored v%d crc %08x; shard 1 skipped %d",
		r.Pushes, r.Updates, f.CheckpointVersion, f.CheckpointCRC, f.RestoredVersion, f.RestoredCRC, res.Shards[1].Skipped)
	if !f.Restarted || !f.FromCheckpoint || f.CheckpointVersion == 0 {
		t.Fatalf("shard not restarted from a checkpoint: %+v", f)
	}
	if f.RestoredVersion != f.CheckpointVersion || f.RestoredCRC != f.CheckpointCRC {
		t.Errorf("restored v%d crc %08x, checkpoint v%d crc %08x", f.RestoredVersion, f.RestoredCRC, f.CheckpointVersion, f.CheckpointCRC)
	}
	if r.Pushes < res.Coord.Target || res.Coord.Removed != 0 {
		t.Errorf("pushes %d of %d, removed %d", r.Pushes, res.Coord.Target, res.Coord.Removed)
	}
}

// TestTCPShardRestartedWithoutCheckpoint: a shard killed before it wrote
// any checkpoint is still restarted (from w⁰, skipping forward to the
// versions the workers hold) and the job finishes; it used to be left
// down, and BSP waited for it until the timeout.
func TestTCPShardRestartedWithoutCheckpoint(t *testing.T) {
	cfg := fmnistJob(t, "bsp", 4, 2, 2400, 1)
	opt := tcpOpts(t)
	opt.CheckpointDir = t.TempDir()
	opt.CheckpointInterval = time.Hour // no checkpoint before the kill
	opt.Faults = []Fault{{Role: "shard", Index: 1, AtPushes: 8, Restart: true}}
	res, err := TrainResult(context.Background(), cfg, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Faults) != 1 {
		t.Fatalf("faults %+v", res.Faults)
	}
	f, sh := res.Faults[0], res.Shards[1]
	t.Logf("pushes %d; fault %+v; shard 1 skipped %d", res.Run.Pushes, f, sh.Skipped)
	if !f.Restarted || f.FromCheckpoint || sh.Restored {
		t.Errorf("want a restart from w⁰: fault %+v, shard restored %v", f, sh.Restored)
	}
	if sh.Skipped == 0 {
		t.Errorf("the shard started from w⁰ at version 0 but never skipped forward")
	}
	if res.Run.Pushes < res.Coord.Target {
		t.Errorf("pushes %d of %d", res.Run.Pushes, res.Coord.Target)
	}
}
