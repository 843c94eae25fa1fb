package launch

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestTCPWorkerKilled: workers SIGKILLed mid-run are removed after the
// heartbeat timeout and the job still finishes (PARADIGMS.md, common rules:
// no paradigm waits forever for a dead worker). BSP cannot finish without
// removing the dead worker, so finishing is the behaviour under test, not
// how long the run lasts. One paradigm: the chaos suite's short form
// (scripts/test) kills a worker under each of the others, and the
// membership traces cover the removal's timing.
func TestTCPWorkerKilled(t *testing.T) {
	skipUnderRace(t)
	for _, tc := range []struct {
		spec    string
		victims []int
	}{{"bsp", []int{2}}} {
		t.Run(tc.spec, func(t *testing.T) {
			cfg := fmnistJob(t, tc.spec, 4, 2, 9600, 1)
			// 5 s: a starting worker's allowance is four timeouts (20 s),
			// so the victim, loading its data on a busy machine, is in
			// the job when the fault waits for its first push (at 500 ms
			// it was removed first at load 24, never pushed, and the
			// fault never fired); the kill's removal takes 5 s more.
			cfg.HeartbeatTimeout = 5 * time.Second
			opt := tcpOpts(t)
			for _, v := range tc.victims {
				opt.Faults = append(opt.Faults, Fault{Role: "worker", Index: v, AtPushes: 12})
			}
			res, err := TrainResult(context.Background(), cfg, opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			r, n := res.Run, int64(len(tc.victims))
			t.Logf("%s: pushes %d updates %d removed %d seconds %.2f worker pushes %v", tc.spec, r.Pushes, r.Updates, res.Coord.Removed, r.Seconds, r.WorkerPushes)
			// On a loaded machine a live worker may miss the short timeout,
			// be removed and rejoin (or be out still when the job ends):
			// the killed ones never come back.
			if len(res.Faults) != len(tc.victims) || res.Coord.Removed-res.Coord.Joined < n || res.Coord.Live > 4-len(tc.victims) {
				t.Errorf("faults %+v, removed %d, joined %d, live %d: want the killed workers removed",
					res.Faults, res.Coord.Removed, res.Coord.Joined, res.Coord.Live)
			}
			if r.Pushes < res.Coord.Target {
				t.Errorf("pushes %d below the target %d", r.Pushes, res.Coord.Target)
			}
			for _, v := range tc.victims {
				if r.WorkerPushes[v] >= r.Pushes/4 {
					t.Errorf("killed worker %d pushed %d of %d", v, r.WorkerPushes[v], r.Pushes)
				}
			}
		})
	}
}

// TestTCPShardRestored: a shard SIGKILLed mid-run and restarted with
// --restore comes back with exactly its checkpoint's weights, and the job
// finishes.
func TestTCPShardRestored(t *testing.T) {
	skipUnderRace(t)
	// 300 pushes: on a fast machine a shorter job can end before the
	// shard's first checkpoint, and the fault waits for one.
	cfg := fmnistJob(t, "bsp", 4, 2, 9600, 1)
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
	if r.Pushes < res.Coord.Target {
		t.Errorf("pushes %d of %d", r.Pushes, res.Coord.Target)
	}
}

// TestTCPShardRestartedWithoutCheckpoint: a shard killed before it wrote
// any checkpoint is still restarted (from w⁰, skipping forward to the
// versions the workers hold) and the job finishes; it used to be left
// down, and BSP waited for it until the timeout.
func TestTCPShardRestartedWithoutCheckpoint(t *testing.T) {
	skipUnderRace(t)
	cfg := fmnistJob(t, "bsp", 4, 2, 9600, 1) // 300 pushes: the fault fires mid-run on a fast machine too
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

// TestTCPShardLogRestored: under --durability log a shard SIGKILLed
// mid-run and restarted with --restore replays its log past the
// checkpoint: it comes back at a version no worker had gone beyond (it
// skips nothing forward: no acknowledged update was lost), ends at the
// other shard's version (ASP: one update per push on every shard, so a
// push applied twice or lost would show), and the job finishes; under
// elastic apply=local, one per barrier, its buffered superstep replayed.
// Under --durability checkpoint a BSP run skips (TestTCPShardRestored).
// The chaos suite's short form restarts a shard under --durability log for
// every paradigm (BSP's one update per round is ASP's rule per round);
// here the two ways a shard applies, per push and per barrier.
func TestTCPShardLogRestored(t *testing.T) {
	skipUnderRace(t)
	for _, spec := range []string{"asp", "elastic:r=4,apply=local"} {
		t.Run(spec, func(t *testing.T) {
			cfg := fmnistJob(t, spec, 4, 2, 9600, 1)
			opt := tcpOpts(t)
			opt.CheckpointDir = t.TempDir()
			opt.CheckpointInterval = 100 * time.Millisecond
			opt.Durability = "log"
			opt.Faults = []Fault{{Role: "shard", Index: 1, AtPushes: 40, Restart: true, RestartAfter: 300 * time.Millisecond, AfterCheckpoint: true}}
			res, err := TrainResult(context.Background(), cfg, opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Faults) != 1 || !res.Faults[0].Restarted {
				t.Fatalf("faults %+v", res.Faults)
			}
			f, s0, s1 := res.Faults[0], res.Shards[0], res.Shards[1]
			t.Logf("pushes %d; fault at %d pushes: checkpoint v%d, restored v%d; shard 1 replayed %d records, retries %d, skipped %d, version %d (shard 0: %d)",
				res.Run.Pushes, f.FiredAt, f.CheckpointVersion, f.RestoredVersion, s1.Replayed, s1.Retries, s1.Skipped, s1.Version, s0.Version)
			if s1.Replayed == 0 || s1.Skipped != 0 {
				t.Errorf("shard 1 replayed %d records and skipped %d versions: want its log replayed and nothing skipped", s1.Replayed, s1.Skipped)
			}
			if s1.Version != s0.Version {
				t.Errorf("the shards end at versions %d and %d", s0.Version, s1.Version)
			}
			if res.Run.Pushes < res.Coord.Target {
				t.Errorf("pushes %d of %d", res.Run.Pushes, res.Coord.Target)
			}
		})
	}
}

// TestTCPWorkerReturns: a worker SIGKILLed mid-run and started again
// under its old id, before its removal (early) or after it (late), is
// admitted, pushes again, and the job finishes with every push counted
// once. Before the coordinator told a new process where its old one's
// count stood, the new process's clock reports (numbered from 1 again)
// were taken for retries of pushes already counted: the gate never moved
// its clock and BSP hung with the shards one round ahead of the others.
//
// What holds at any load: on a busy machine any worker, the returned one
// too, may miss heartbeats, be removed and be admitted again (or still be
// out when the job ends), and the early return may come after a removal
// after all; none of that is a fault. One paradigm, BSP, whose gate waits
// for the returned id: the chaos suite's short form returns a worker
// under each paradigm, and the membership traces cover the timing cases
// (back before or after the removal, removed again).
func TestTCPWorkerReturns(t *testing.T) {
	skipUnderRace(t)
	const k = 3
	for _, when := range []string{"early", "late"} {
		t.Run(when+"/bsp", func(t *testing.T) {
			f := Fault{Role: "worker", Index: 1, AtPushes: 30, Restart: true}
			cfg := fmnistJob(t, "bsp", k, 2, 9600, 3) // 900 pushes: the job outlasts the return
			if when == "early" {
				cfg.HeartbeatTimeout = 3 * time.Second // back long before its removal on an idle machine
				f.RestartAfter = 100 * time.Millisecond
			} else {
				// Back right after its removal, whenever that comes
				// (the launcher waits for the coordinator's count).
				cfg.HeartbeatTimeout = 300 * time.Millisecond
				f.AfterRemoval = true
			}
			opt := tcpOpts(t)
			opt.Faults = []Fault{f}
			res, err := TrainResult(context.Background(), cfg, opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			r, cs := res.Run, res.Coord
			t.Logf("%s: pushes %d of %d, removed %d joined %d live %d, worker pushes %v", when, r.Pushes, cs.Target, cs.Removed, cs.Joined, cs.Live, r.WorkerPushes)
			if len(res.Faults) != 1 || !res.Faults[0].Restarted {
				t.Fatalf("faults %+v", res.Faults)
			}
			// Finished, overrun at most by the pushes that raced the end
			// (one per worker).
			if r.Pushes < cs.Target || r.Pushes > cs.Target+k {
				t.Errorf("pushes %d for a job of %d", r.Pushes, cs.Target)
			}
			var sum int64
			for _, n := range r.WorkerPushes {
				sum += n
			}
			if sum != r.Pushes {
				t.Errorf("worker pushes %v add up to %d, the job counted %d", r.WorkerPushes, sum, r.Pushes)
			}
			// The old process had pushed at most the pushes counted when it
			// was killed, and one in flight: more is the new process's.
			if fired := res.Faults[0].FiredAt; r.WorkerPushes[1] <= fired+1 {
				t.Errorf("worker 1 pushed %d, %d counted at its kill: the returned process was not admitted", r.WorkerPushes[1], fired)
			}
			if when == "late" && (cs.Removed < 1 || cs.Joined < 1) {
				t.Errorf("removed %d joined %d: want the worker removed, then admitted again", cs.Removed, cs.Joined)
			}
		})
	}
}

// TestTCPCoordinatorRestarted: shard 0, which hosts the coordinator,
// SIGKILLed mid-run and restarted with --restore finishes the job for
// every paradigm, with the job's length unchanged: the coordinator's
// counts, membership and clocks come back from its state file, and what
// it counted after the file was written from the workers as they
// reconnect. Before, the restarted coordinator counted from zero (ASP ran
// half a job more) and BSP hung. Two paradigms, for the two counts the
// state must carry: ASP's pushes (every one an update on every shard) and
// elastic apply=local's barriers; the chaos suite's short form restarts
// the coordinator under each paradigm, and
// TestTCPCoordinatorRestartedWithoutState runs BSP.
func TestTCPCoordinatorRestarted(t *testing.T) {
	skipUnderRace(t)
	const k = 3
	for _, spec := range []string{"asp", "elastic:r=4,apply=local"} {
		t.Run(spec, func(t *testing.T) {
			cfg := fmnistJob(t, spec, k, 2, 9600, 2) // 600 pushes
			cfg.HeartbeatTimeout = 2 * time.Second
			opt := tcpOpts(t)
			opt.CheckpointDir = t.TempDir()
			opt.CheckpointInterval = 100 * time.Millisecond
			opt.Faults = []Fault{{Role: "shard", Index: 0, AtPushes: 150, Restart: true, RestartAfter: 300 * time.Millisecond, AfterCheckpoint: true}}
			res, err := TrainResult(context.Background(), cfg, opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			r, cs := res.Run, res.Coord
			t.Logf("%s: pushes %d of %d, restarts %d, removed %d, live %d; shard updates %d, %d; worker pushes %v",
				spec, r.Pushes, cs.Target, cs.Restarts, cs.Removed, cs.Live, res.Shards[0].Updates, res.Shards[1].Updates, r.WorkerPushes)
			if len(res.Faults) != 1 || !res.Faults[0].Restarted || cs.Restarts != 1 {
				t.Fatalf("faults %+v, coordinator restarts %d: want shard 0 restarted from its state", res.Faults, cs.Restarts)
			}
			// The last pushes may race the end: one per worker at most.
			if r.Pushes < cs.Target || r.Pushes > cs.Target+k {
				t.Errorf("pushes %d for a job of %d", r.Pushes, cs.Target)
			}
			var sum int64
			for _, n := range r.WorkerPushes {
				sum += n
			}
			if sum != r.Pushes {
				t.Errorf("worker pushes %v add up to %d, the job counted %d", r.WorkerPushes, sum, r.Pushes)
			}
			// ASP applies every push on every shard: shard 1, which never
			// died, applied as many updates as the job had pushes (a push
			// in flight at the kill may be pushed again).
			// Under elastic apply=local the restarted coordinator counts its
			// barriers on from its state file and the workers: every shard
			// ends at the job's last barrier (shard 0 skipping what it lost).
			if strings.HasSuffix(spec, "apply=local") && (res.Shards[0].Version != cs.Barriers || res.Shards[1].Version != cs.Barriers) {
				t.Errorf("shard versions %d and %d; the coordinator's last barrier is %d", res.Shards[0].Version, res.Shards[1].Version, cs.Barriers)
			}
			if spec == "asp" && (res.Shards[1].Updates < cs.Target || res.Shards[1].Updates > r.Pushes+k) {
				t.Errorf("shard 1 applied %d updates for %d pushes", res.Shards[1].Updates, r.Pushes)
			}
		})
	}
}

// TestTCPCoordinatorRestartedWithoutState: shard 0 killed before it wrote
// any checkpoint (and so any coordinator state) and restarted with
// --restore: the coordinator takes each redialling worker at its word
// (the reports it had answered, the clock it had named), so the job still
// finishes at its length; without this the workers' next reports were
// refused and the job failed. BSP: its gate needs every worker's clock.
func TestTCPCoordinatorRestartedWithoutState(t *testing.T) {
	skipUnderRace(t)
	const k = 3
	for _, spec := range []string{"bsp"} {
		t.Run(spec, func(t *testing.T) {
			cfg := fmnistJob(t, spec, k, 2, 9600, 1) // 300 pushes
			cfg.HeartbeatTimeout = 2 * time.Second
			opt := tcpOpts(t)
			opt.CheckpointDir = t.TempDir()
			opt.CheckpointInterval = time.Hour // nothing on disk before the kill
			opt.Faults = []Fault{{Role: "shard", Index: 0, AtPushes: 40, Restart: true}}
			res, err := TrainResult(context.Background(), cfg, opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			r, cs := res.Run, res.Coord
			t.Logf("%s: pushes %d of %d, restarts %d, removed %d; worker pushes %v", spec, r.Pushes, cs.Target, cs.Restarts, cs.Removed, r.WorkerPushes)
			if len(res.Faults) != 1 || !res.Faults[0].Restarted || cs.Restarts != 1 {
				t.Fatalf("faults %+v, restarts %d", res.Faults, cs.Restarts)
			}
			if r.Pushes < cs.Target || r.Pushes > cs.Target+k {
				t.Errorf("pushes %d for a job of %d", r.Pushes, cs.Target)
			}
		})
	}
}
