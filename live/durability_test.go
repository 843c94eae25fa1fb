package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/pacer-ps/pacer/ckpt"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/optim"
	"github.com/pacer-ps/pacer/wal"
	"github.com/pacer-ps/pacer/wire"
)

const logBlock = 64

// logShard starts shard 0 of a one-shard job under --durability log in
// dir, restoring from dir's checkpoint and log when restore is set.
func logShard(t *testing.T, dir, spec string, k int, momentum float64, restore bool) *Shard {
	t.Helper()
	return logShardRule(t, dir, spec, k, momentum, "sgd", restore)
}

// logShardRule is logShard with the update rule an --optimizer spec names.
func logShardRule(t *testing.T, dir, spec string, k int, momentum float64, rule string, restore bool) *Shard {
	t.Helper()
	cfg := quickJob(t, spec, k, 1)
	cfg.Momentum = momentum
	var err error
	if cfg.Optimizer, err = optim.ParseRule(rule); err != nil {
		t.Fatal(err)
	}
	if cfg.Optimizer.Kind == optim.AdamW {
		cfg.WeightDecay = 0.01 // without one AdamW is Adam, bit for bit
	}
	return logShardOf(t, dir, cfg, restore)
}

// logShardOf is logShard for a one-shard job cfg.
func logShardOf(t *testing.T, dir string, cfg job.Config, restore bool) *Shard {
	t.Helper()
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	init := make([]float32, logBlock)
	for i := range init {
		init[i] = float32(i) / logBlock
	}
	sc := ShardConfig{Index: 0, Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 100}, Init: init, Restarted: restore}
	if restore {
		st, err := ckpt.Read(ckpt.Path(dir, 0), ckpt.Want{Shard: 0, Shards: 1, Lo: 0, Hi: logBlock, NumParams: logBlock, Model: cfg.Model})
		switch {
		case err == nil:
			sc.Restore = st
		case !errors.Is(err, os.ErrNotExist):
			t.Fatal(err)
		}
	}
	s, err := newShard(sc)
	if err != nil {
		t.Fatal(err)
	}
	s.logged = true
	var from uint64
	if sc.Restore != nil {
		from = sc.Restore.LogSegment
	}
	if err := s.openLog(walDir(dir, 0), restore, from, sc.Restore != nil); err != nil {
		t.Fatal(err)
	}
	return s
}

// logStep is one event of a scripted run: a push by worker w (w ≥ 0), a
// checkpoint (ckpt), or worker leave's removal (leave ≥ 0).
type logStep struct {
	w     int
	ckpt  bool
	leave int
	join  int  // a removed worker back (≥ 0)
	tick  bool // wait for a deadline (PSP's τ1) to apply
	// barrier: the gate's next barrier reaches the shard (elastic apply=local)
	barrier bool
}

func logPush(w int) logStep   { return logStep{w: w, leave: -1, join: -1} }
func logRemove(p int) logStep { return logStep{w: -1, leave: p, join: -1} }
func logJoin(p int) logStep   { return logStep{w: -1, leave: -1, join: p} }

var (
	checkpointStep = logStep{w: -1, leave: -1, join: -1, ckpt: true}
	tickStep       = logStep{w: -1, leave: -1, join: -1, tick: true}
	barrierStep    = logStep{w: -1, leave: -1, join: -1, barrier: true}
)

// runSteps drives s through the script; clocks are the workers' push
// counts, gradients come from rng. It returns the version the last push
// acknowledged.
func runSteps(t *testing.T, s *Shard, dir string, steps []logStep, clocks map[int]uint64, rng *rand.Rand) uint64 {
	t.Helper()
	var acked uint64
	for _, st := range steps {
		switch {
		case st.ckpt:
			if err := s.checkpoint(dir, true); err != nil {
				t.Fatal(err)
			}
		case st.barrier:
			if err := s.barrier(s.Stats().Version + 1); err != nil {
				t.Fatal(err)
			}
		case st.tick:
			v := s.Stats().Version
			if !waitUntil(func() bool { return s.Stats().Version != v }) {
				t.Fatalf("no deadline applied (version %d)", v)
			}
		case st.leave >= 0 || st.join >= 0:
			var live, removed []int
			s.mu.Lock()
			for p, l := range s.members {
				if (l || p == st.join) && p != st.leave {
					live = append(live, p)
				} else {
					removed = append(removed, p)
				}
			}
			s.mu.Unlock()
			s.setMembers(live, removed, "test")
		default:
			g := make([]float32, logBlock)
			for i := range g {
				g[i] = float32(rng.NormFloat64())
			}
			var resp wire.Frame
			req := wire.Frame{Type: wire.MsgPush, Worker: int32(st.w), Tag: clocks[st.w], Extra: s.Stats().Version, Floats: g}
			if err := s.push(nil, &req, &resp); err != nil {
				t.Fatal(err)
			}
			clocks[st.w]++
			acked = resp.Tag
		}
	}
	return acked
}

// TestLogRestoresAcknowledged: a shard abandoned without a clean close (a
// kill -9: no final checkpoint, nothing written after the last
// acknowledgement) and restored from its checkpoint and log reaches the
// version it last acknowledged, with the weights of a shard that never
// died, bit for bit; a synchronous round left half-filled is rebuilt and
// completes with the missing gradients. The script checkpoints mid-round
// (the buffered gradients are carried into the new segment) and removes a
// worker (which closes a round). RMSProp's (centered: its mean gradient
// too), Adam's and AdamW's state (and the step count) is restored and
// replayed as the momentum buffer is: the restored shard's optimizer
// state equals the other's bit for bit.
func TestLogRestoresAcknowledged(t *testing.T) {
	script := []logStep{logPush(0), logPush(1), logPush(2), logPush(0), logPush(1), checkpointStep, logPush(2), logPush(0),
		logPush(1), logRemove(2), logPush(0), logPush(1), logPush(0), checkpointStep, logPush(1), logPush(0)}
	for _, tc := range []struct {
		spec     string
		momentum float64
		tail     []logStep // after the restore, on both shards
		rule     string
	}{
		{"bsp", -1, []logStep{logPush(1)}, "sgd"},
		{"bsp", 0.9, []logStep{logPush(1), logPush(0)}, "sgd"},
		{"asp", -1, []logStep{logPush(1)}, "sgd"},
		{"ssp:s=2", 0.5, []logStep{logPush(0)}, "sgd"},
		{"backup:b=1", -1, []logStep{logPush(1), logPush(0)}, "sgd"},
		{"psp:c=2", -1, []logStep{logPush(1)}, "sgd"},
		{"softsync:n=1", -1, []logStep{logPush(1), logPush(0), logPush(1)}, "sgd"},
		{"delay:d=2", 0.9, []logStep{logPush(1), logPush(0), logPush(1)}, "sgd"},
		{"bsp", 0.9, []logStep{logPush(1), logPush(0)}, "rmsprop"},
		{"asp", -1, []logStep{logPush(1)}, "adam"},
		{"ssp:s=2", -1, []logStep{logPush(0)}, "adam:b1=0.5,b2=0.9,eps=1e-6"},
		{"bsp", 0.5, []logStep{logPush(1), logPush(0)}, "rmsprop:alpha=0.9,centered=true"},
		{"asp", -1, []logStep{logPush(1)}, "adamw"},
	} {
		t.Run(tc.spec+"/"+tc.rule, func(t *testing.T) {
			logShard := func(t *testing.T, dir, spec string, k int, momentum float64, restore bool) *Shard {
				return logShardRule(t, dir, spec, k, momentum, tc.rule, restore)
			}
			dirRef, dir := t.TempDir(), t.TempDir()
			rs := logShard(t, dirRef, tc.spec, 3, tc.momentum, false)
			defer rs.closeLog()
			s := logShard(t, dir, tc.spec, 3, tc.momentum, false)
			rngRef, rng := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
			clocksRef, clocks := map[int]uint64{}, map[int]uint64{}
			runSteps(t, rs, dirRef, script, clocksRef, rngRef)
			acked := runSteps(t, s, dir, script, clocks, rng)
			// kill -9: s is abandoned as it stands.
			r := logShard(t, dir, tc.spec, 3, tc.momentum, true)
			defer r.closeLog()
			w, v := r.Weights()
			wRef, vRef := rs.Weights()
			if v != acked || v != vRef {
				t.Fatalf("restored version %d; last acknowledged %d, the shard that never died is at %d", v, acked, vRef)
			}
			if WeightsCRC(w) != WeightsCRC(wRef) {
				t.Fatalf("restored weights differ from the shard that never died (CRC %08x, want %08x)", WeightsCRC(w), WeightsCRC(wRef))
			}
			if a, b := r.opt.State(), rs.opt.State(); !sameState(a, b) {
				t.Fatalf("restored optimizer state differs from the shard that never died (step %d, want %d)", a.Step, b.Step)
			}
			if st := r.Stats(); st.Replayed == 0 || st.Pushes != rs.Stats().Pushes {
				t.Errorf("restored shard: %d records replayed, %d pushes counted; want > 0 and %d", st.Replayed, st.Pushes, rs.Stats().Pushes)
			}
			runSteps(t, rs, dirRef, tc.tail, clocksRef, rngRef)
			runSteps(t, r, dir, tc.tail, clocks, rng)
			w, v = r.Weights()
			wRef, vRef = rs.Weights()
			if v != vRef || WeightsCRC(w) != WeightsCRC(wRef) || v <= acked && tc.spec != "backup:b=1" {
				t.Fatalf("after the tail: version %d (CRC %08x), the shard that never died %d (CRC %08x); acknowledged before %d",
					v, WeightsCRC(w), vRef, WeightsCRC(wRef), acked)
			}
			// A second crash: the replay now crosses the segment the first
			// restore began (its base must agree, its carried gradients
			// were replayed already).
			r2 := logShard(t, dir, tc.spec, 3, tc.momentum, true)
			defer r2.closeLog()
			if w, v := r2.Weights(); v != vRef || WeightsCRC(w) != WeightsCRC(wRef) {
				t.Fatalf("after a second crash: version %d (CRC %08x), the shard that never died %d (CRC %08x)",
					v, WeightsCRC(w), vRef, WeightsCRC(wRef))
			}
			runSteps(t, rs, dirRef, script[:4], clocksRef, rngRef)
			runSteps(t, r2, dir, script[:4], clocks, rng)
			if w, v := r2.Weights(); v != rs.Stats().Version || WeightsCRC(w) != WeightsCRC(rs.cur.buf) {
				t.Fatalf("after a second crash and 4 pushes: version %d, the shard that never died %d", v, rs.Stats().Version)
			}
			if !sameState(r2.opt.State(), rs.opt.State()) {
				t.Fatal("after a second crash and 4 pushes: the optimizer state differs")
			}
		})
	}
}

// TestLogTruncatedAtCheckpoint: a checkpoint records the segment it
// starts, and the segments before it are deleted once it is written.
func TestLogTruncatedAtCheckpoint(t *testing.T) {
	dir := t.TempDir()
	s := logShard(t, dir, "bsp", 2, -1, false)
	defer s.closeLog()
	clocks, rng := map[int]uint64{}, rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 3; i++ {
		runSteps(t, s, dir, []logStep{logPush(0), logPush(1), logPush(0), checkpointStep}, clocks, rng)
		st, err := ckpt.Read(ckpt.Path(dir, 0), ckpt.Want{Shard: 0, Shards: 1, Lo: 0, Hi: logBlock, NumParams: logBlock})
		if err != nil {
			t.Fatal(err)
		}
		segs, _ := wal.Segments(walDir(dir, 0))
		if st.LogSegment != uint64(i+2) || len(segs) != 1 || segs[0] != st.LogSegment {
			t.Fatalf("checkpoint %d: covers the log up to segment %d, segments on disk %v; want %d alone", i, st.LogSegment, segs, i+2)
		}
	}
}

// TestLogTornTailAndCorruption: a torn tail after the last acknowledged
// push restores as if it were not there; a damaged record that a crash
// cannot have torn stops the restore with an error that says where.
func TestLogTornTailAndCorruption(t *testing.T) {
	dir := t.TempDir()
	s := logShard(t, dir, "asp", 2, -1, false)
	clocks, rng := map[int]uint64{}, rand.New(rand.NewPCG(5, 6))
	acked := runSteps(t, s, dir, []logStep{logPush(0), logPush(1), logPush(0)}, clocks, rng)
	segs, _ := wal.Segments(walDir(dir, 0))
	path := wal.SegmentPath(walDir(dir, 0), segs[len(segs)-1])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0x40, 1, 0, 0, 9, 9, 9, 9, 1, 0}) // a record cut short
	f.Close()
	r := logShard(t, dir, "asp", 2, -1, true)
	if _, v := r.Weights(); v != acked {
		t.Fatalf("restored past a torn tail at version %d, last acknowledged %d", v, acked)
	}
	runSteps(t, r, dir, []logStep{logPush(1), logPush(0), logPush(1), logPush(0), logPush(1), logPush(0)}, clocks, rng)
	r.closeLog()

	// Damage the first push of the first segment: later segments follow it.
	f, err = os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	off := int64(44 + 8 + 40 + 4*2 + 100) // the header, the base (2 ids), into the first push
	f.ReadAt(b, off)
	b[0] ^= 1
	f.WriteAt(b, off)
	f.Close()
	cfg := quickJob(t, "asp", 2, 1)
	cfg.Fill()
	x, _ := newShard(ShardConfig{Index: 0, Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 100}, Init: make([]float32, logBlock), Restarted: true})
	x.logged = true
	err = x.openLog(walDir(dir, 0), true, 0, false)
	if !errors.Is(err, wal.ErrCorrupt) || !strings.Contains(err.Error(), "record 1 at offset") {
		t.Fatalf("damaged push in an earlier segment: err %v, want ErrCorrupt naming record 1 and its offset", err)
	}
}

// restoreErr is the error of restoring shard 0 of an asp job of k
// workers from dir's log alone.
func restoreErr(t *testing.T, dir string, k int) error {
	t.Helper()
	cfg := quickJob(t, "asp", k, 1)
	cfg.Fill()
	x, err := newShard(ShardConfig{Index: 0, Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 100}, Init: make([]float32, logBlock), Restarted: true})
	if err != nil {
		t.Fatal(err)
	}
	x.logged = true
	err = x.openLog(walDir(dir, 0), true, 0, false)
	if err == nil {
		x.closeLog()
	}
	return err
}

// TestLogDamageAcknowledgedRefused is issue 37's point 1: 20 pushes
// acknowledged, the shard killed, then one bit flipped in the second
// record of the last segment (or the segment deleted): the restore must
// refuse, name the segment and the offset, and leave the files as they
// were, never come back at an older version as if the pushes had been a
// torn tail.
func TestLogDamageAcknowledgedRefused(t *testing.T) {
	run := func(t *testing.T) (dir, path string) {
		dir = t.TempDir()
		s := logShard(t, dir, "asp", 2, -1, false)
		clocks, rng := map[int]uint64{}, rand.New(rand.NewPCG(9, 10))
		var steps []logStep
		for i := range 20 {
			steps = append(steps, logPush(i%2))
		}
		if acked := runSteps(t, s, dir, steps, clocks, rng); acked != 20 {
			t.Fatalf("acknowledged version %d, want 20", acked)
		}
		segs, _ := wal.Segments(walDir(dir, 0))
		return dir, wal.SegmentPath(walDir(dir, 0), segs[len(segs)-1]) // killed: no close
	}
	t.Run("bit flip", func(t *testing.T) {
		dir, path := run(t)
		// The base (2 ids) is record 0; record 1 is the first push.
		off := int64(44 + 8 + 40 + 4*2)
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 1)
		f.ReadAt(b, off+8+40+20)
		b[0] ^= 4
		f.WriteAt(b, off+8+40+20)
		f.Close()
		before, _ := os.ReadFile(path)
		err = restoreErr(t, dir, 2)
		want := fmt.Sprintf("%s: record 1 at offset %d", filepath.Base(path), off)
		if !errors.Is(err, wal.ErrCorrupt) || !strings.Contains(err.Error(), want) {
			t.Fatalf("restore after a flip in an acknowledged push: err %v, want ErrCorrupt naming %q", err, want)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
			t.Error("the refused restore changed the segment")
		}
	})
	t.Run("segment deleted", func(t *testing.T) {
		dir, path := run(t)
		os.Remove(path)
		if err := restoreErr(t, dir, 2); !errors.Is(err, wal.ErrCorrupt) || !strings.Contains(err.Error(), "no log segments") {
			t.Fatalf("restore after the only segment was deleted: err %v, want ErrCorrupt", err)
		}
	})
}

// TestLogRetryAcknowledgedOnce: a push that repeats one already logged
// (its acknowledgement was lost with the shard) is acknowledged without
// being applied twice.
func TestLogRetryAcknowledgedOnce(t *testing.T) {
	dir := t.TempDir()
	s := logShard(t, dir, "asp", 2, -1, false)
	clocks, rng := map[int]uint64{}, rand.New(rand.NewPCG(7, 8))
	runSteps(t, s, dir, []logStep{logPush(0), logPush(1)}, clocks, rng)
	r := logShard(t, dir, "asp", 2, -1, true)
	defer r.closeLog()
	var resp wire.Frame
	again := wire.Frame{Type: wire.MsgPush, Worker: 1, Tag: 0, Extra: 1, Floats: make([]float32, logBlock)}
	if err := r.push(nil, &again, &resp); err != nil {
		t.Fatal(err)
	}
	if st := r.Stats(); resp.Tag != 2 || st.Version != 2 || st.Retries != 1 {
		t.Fatalf("a retried push: acknowledged version %d, shard at %d with %d retries; want 2, 2, 1", resp.Tag, st.Version, st.Retries)
	}
	if err := CheckDurability("log", ""); err == nil {
		t.Error("--durability log without a checkpoint directory accepted")
	}
	if err := CheckDurability("fsync", "d"); err == nil || !strings.Contains(err.Error(), "fsync") {
		t.Errorf("--durability fsync: err %v", err)
	}
}

// TestLogServerMetricsAndRestart: a server under --durability log exports
// the log's counters, stops cleanly (a final checkpoint that the log's
// head follows), and a restart with --restore comes back at the version
// it stopped at, with nothing left to replay but the new segment's head.
func TestLogServerMetricsAndRestart(t *testing.T) {
	dir := t.TempDir()
	sc, _ := restoreConfig(t, dir)
	sc.Restore = false
	sc.Durability = DurabilityLog
	sc.MetricsAddr = "127.0.0.1:0"
	sc.Listen = "127.0.0.1:0"
	sv, err := NewServer(sc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sv.Run(ctx) }()
	addr := waitMetrics(t, sv)
	s := sv.Shard()
	for i := uint64(0); i < 3; i++ { // one worker: every push completes a BSP round
		var resp wire.Frame
		req := wire.Frame{Type: wire.MsgPush, Shard: 1, Worker: 0, Tag: i, Extra: i, Floats: make([]float32, s.hi-s.lo)}
		if err := s.push(nil, &req, &resp); err != nil || resp.Tag != i+1 {
			cancel()
			t.Fatalf("push %d: acknowledged version %d, %v", i, resp.Tag, err)
		}
	}
	page := scrape(t, addr)
	for _, m := range []string{"records", "fsyncs"} {
		if v := metric(page, `pacer_shard_wal_`+m+`_total{shard="1"}`); v == "" || v == "0" {
			t.Errorf("pacer_shard_wal_%s_total = %q after 3 pushes", m, v)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	sc.Restore = true
	sv2, err := NewServer(sc)
	if err != nil {
		t.Fatal(err)
	}
	defer sv2.Shard().closeLog()
	if st := sv2.Shard().Stats(); st.Version != 3 || st.RestoredVersion != 3 || st.Replayed != 1 {
		t.Errorf("restarted after a clean stop: version %d (checkpoint %d), %d records replayed; want 3, 3, 1 (the head)", st.Version, st.RestoredVersion, st.Replayed)
	}
	segs, _ := wal.Segments(walDir(dir, 1))
	if len(segs) != 2 {
		t.Errorf("segments %v: want the stopped run's last and the new one", segs)
	}
}

// TestLogReplaysDeadlinesAndJoins: a PSP round closed by its τ1 deadline
// (a Tick, not a push), a worker that left and came back, and a round
// whose deadline was armed when the shard died are replayed too: the
// restored shard comes back at the acknowledged version, its pending
// deadline then closes that round, and it matches the shard that never
// died, bit for bit.
func TestLogReplaysDeadlinesAndJoins(t *testing.T) {
	// τ1 is long enough that the last round's deadline usually has not
	// passed when the shard dies, so its replay is exercised; on a machine
	// so busy that it has, the round closed before the death and every
	// check below still holds (no outcome here depends on the load).
	const spec = "psp:c=2,t1=200ms"
	// Version 1 by the deadline (without its record the next push of
	// worker 0 would replay as a duplicate); 2 when worker 2's removal
	// completes a quorum; worker 2 rejoins behind (its clock is old:
	// dropped), and workers 0 and 1 fill the next round's quorum, armed
	// when the shard dies.
	// The checkpoint comes first, so all of this is replayed (worker 0's
	// first gradient carried into the checkpoint's segment).
	script := []logStep{logPush(0), checkpointStep, logPush(1), tickStep, logPush(0), logPush(1), logRemove(2), logJoin(2),
		logPush(2), logPush(0), logPush(1), logPush(2), logPush(0)}
	dirRef, dir := t.TempDir(), t.TempDir()
	rs := logShard(t, dirRef, spec, 3, -1, false)
	defer rs.closeLog()
	s := logShard(t, dir, spec, 3, -1, false)
	rngRef, rng := rand.New(rand.NewPCG(9, 10)), rand.New(rand.NewPCG(9, 10))
	clocksRef, clocks := map[int]uint64{}, map[int]uint64{}
	runSteps(t, rs, dirRef, script, clocksRef, rngRef)
	acked := runSteps(t, s, dir, script, clocks, rng)
	// The shard dies here: its lock is taken and never given back, as a
	// kill -9 freezes it. A deadline timer that fired already (on a busy
	// machine, while the steps ran) and waits for the lock never logs
	// its round; stopping the timer alone let such a one close the round
	// after vDead was read (restored 3, dead at 2).
	s.mu.Lock()
	s.tick.Stop()
	vDead := s.agg.Version()
	r := logShard(t, dir, spec, 3, -1, true)
	defer r.closeLog()
	_, v := r.Weights()
	if v != acked && v != vDead {
		t.Fatalf("restored version %d; acknowledged %d, the dead shard was at %d", v, acked, vDead)
	}
	if vDead == acked && v != acked {
		t.Fatalf("restored version %d, acknowledged %d", v, acked)
	}
	// The restored shard keeps the logged deadline (on its clock, which
	// goes on from the last logged time) and closes the round with it.
	waitVersion(t, r, 3)
	waitVersion(t, rs, 3)
	w, v := r.Weights()
	wRef, vRef := rs.Weights()
	if v != vRef || WeightsCRC(w) != WeightsCRC(wRef) {
		t.Fatalf("after the pending deadline: version %d (CRC %08x), the shard that never died %d (CRC %08x)", v, WeightsCRC(w), vRef, WeightsCRC(wRef))
	}
	tail := []logStep{logPush(0), logPush(1)}
	runSteps(t, rs, dirRef, tail, clocksRef, rngRef)
	runSteps(t, r, dir, tail, clocks, rng)
	waitVersion(t, r, 4)
	waitVersion(t, rs, 4)
	w, v = r.Weights()
	wRef, vRef = rs.Weights()
	if v != vRef || WeightsCRC(w) != WeightsCRC(wRef) {
		t.Fatalf("after the next deadline: version %d (CRC %08x), the shard that never died %d (CRC %08x)", v, WeightsCRC(w), vRef, WeightsCRC(wRef))
	}
}

// waitVersion waits for s to reach version v.
func waitVersion(t *testing.T, s *Shard, v uint64) {
	t.Helper()
	waitUntil(func() bool { return s.Stats().Version >= v })
	if got := s.Stats().Version; got != v {
		t.Fatalf("version %d, want %d", got, v)
	}
}

// TestLogReplayRefusesImplausibleRecords: a log whose records pass their
// checksums but cannot be this shard's (written by hand, or by another
// job) stops the restore with an error that names the record, and
// panics nowhere.
func TestLogReplayRefusesImplausibleRecords(t *testing.T) {
	base := wal.Record{Kind: wal.KindBase, Ints: []int32{0, 1}}
	for _, tc := range []struct {
		name string
		recs []wal.Record
		want string
	}{
		{"no base", []wal.Record{{Kind: wal.KindTick}}, "not its base"},
		{"base at another version", []wal.Record{{Kind: wal.KindBase, Read: 7}}, "begins at version 7"},
		{"base naming an unknown worker", []wal.Record{{Kind: wal.KindBase, Ints: []int32{-1 - 1000}}}, "worker 1000"},
		{"push of a wrong length", []wal.Record{base, {Kind: wal.KindPush, Worker: 0, Floats: make([]float32, 3)}}, "3 floats"},
		{"push of an unknown worker", []wal.Record{base, {Kind: wal.KindPush, Worker: 999}}, "worker 999"},
		{"skip beyond any version", []wal.Record{base, {Kind: wal.KindSkip, Read: 1 << 60}}, "beyond any job's"},
		{"deadline that applies nothing", []wal.Record{base, {Kind: wal.KindTick, Now: 5}}, "does not now"},
		{"leave of an unknown worker", []wal.Record{base, {Kind: wal.KindLeave, Ints: []int32{-4}}}, "worker -4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			l, err := wal.Start(walDir(dir, 0), wal.Options{MaxFloats: logBlock, MaxInts: 2*2 + 64})
			if err != nil {
				t.Fatal(err)
			}
			var lsn wal.LSN
			for i := range tc.recs {
				if lsn, err = l.Append(&tc.recs[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.Sync(lsn); err != nil {
				t.Fatal(err)
			}
			l.Close()
			cfg := quickJob(t, "asp", 2, 1)
			cfg.Fill()
			x, err := newShard(ShardConfig{Index: 0, Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 100}, Init: make([]float32, logBlock), Restarted: true})
			if err != nil {
				t.Fatal(err)
			}
			x.logged = true
			err = x.openLog(walDir(dir, 0), true, 0, false)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "record") {
				t.Fatalf("err %v, want one naming the record and %q", err, tc.want)
			}
		})
	}
}

// sameState: the optimizer states are equal bit for bit.
func sameState(a, b optim.State) bool {
	same := func(x, y []float32) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
				return false
			}
		}
		return true
	}
	return a.Step == b.Step && same(a.Velocity, b.Velocity) && same(a.Square, b.Square) && same(a.Mean, b.Mean)
}

// failingDisk opens segments whose writes (and, with syncs, fsyncs) fail
// with ENOSPC while full is set (a write then takes half its bytes, as a
// disk that fills mid-write does).
type failingDisk struct {
	full  atomic.Bool
	syncs bool
}

type failingFile struct {
	*os.File
	d *failingDisk
}

func (d *failingDisk) open(name string, flag int, perm os.FileMode) (wal.File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return failingFile{f, d}, nil
}

func (f failingFile) WriteAt(b []byte, off int64) (int, error) {
	if f.d.full.Load() {
		n, _ := f.File.WriteAt(b[:len(b)/2], off)
		return n, syscall.ENOSPC
	}
	return f.File.WriteAt(b, off)
}

func (f failingFile) Sync() error {
	if f.d.full.Load() && f.d.syncs {
		return syscall.ENOSPC
	}
	return f.File.Sync()
}

// TestLogFullDiskRefusesAndRecovers is issue 37's point 2: while the log's
// disk takes no writes, every push is refused and changes nothing (the
// version and the weights stay those of the last acknowledged push, and
// a restore from the files agrees); the outage is counted; once the disk
// takes writes again pushes are accepted, pulls and checkpoints work, and
// a restore comes back at the version last acknowledged.
func TestLogFullDiskRefusesAndRecovers(t *testing.T) {
	t.Run("writes fail", func(t *testing.T) { testFullDisk(t, false) })
	t.Run("writes and fsyncs fail", func(t *testing.T) { testFullDisk(t, true) })
}

func testFullDisk(t *testing.T, syncs bool) {
	dir := t.TempDir()
	cfg := quickJob(t, "asp", 2, 1)
	cfg.Momentum = 0.9
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	init := make([]float32, logBlock)
	for i := range init {
		init[i] = float32(i) / logBlock
	}
	s, err := newShard(ShardConfig{Index: 0, Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 100}, Init: init})
	if err != nil {
		t.Fatal(err)
	}
	disk := &failingDisk{syncs: syncs}
	s.logged, s.dur.openFile, s.dur.retryMin = true, disk.open, -1 // probe at every push
	if err := s.openLog(walDir(dir, 0), false, 0, false); err != nil {
		t.Fatal(err)
	}
	clocks, rng := map[int]uint64{}, rand.New(rand.NewPCG(11, 12))
	push := func(w int) error {
		g := make([]float32, logBlock)
		for i := range g {
			g[i] = float32(rng.NormFloat64())
		}
		var resp wire.Frame
		req := wire.Frame{Type: wire.MsgPush, Worker: int32(w), Tag: clocks[w], Extra: s.Stats().Version, Floats: g}
		err := s.push(nil, &req, &resp)
		if err == nil {
			clocks[w]++
		}
		return err
	}
	for i := range 8 {
		if err := push(i % 2); err != nil {
			t.Fatal(err)
		}
	}
	w8, v8 := s.Weights()
	disk.full.Store(true)
	for i := range 5 {
		err := push(i % 2)
		if wire.CodeOf(err) != wire.CodeUnavailable {
			t.Fatalf("push %d on a full disk: err %v, want unavailable", 9+i, err)
		}
		if w, v := s.Weights(); v != v8 || !slices.Equal(w, w8) {
			t.Fatalf("push %d refused, yet the shard moved from version %d to %d (or its weights changed)", 9+i, v8, v)
		}
	}
	if st := s.Stats(); st.LogFailures != 1 {
		t.Errorf("one outage counted %d times", st.LogFailures)
	}
	var during wire.Frame
	if err := s.pull(nil, &wire.Frame{Type: wire.MsgPull, Worker: 1}, &during); err != nil || during.Tag != v8 || !slices.Equal(during.Floats, w8) {
		t.Fatalf("pull during the outage: version %d, %v; want the acknowledged %d", during.Tag, err, v8)
	}
	if err := s.checkpoint(dir, true); err == nil {
		t.Error("a checkpoint on a full disk succeeded")
	}
	disk.full.Store(false)
	for i := range 4 {
		if err := push(i % 2); err != nil {
			t.Fatalf("push %d after the disk has room again: %v", i, err)
		}
	}
	if _, v := s.Weights(); v != v8+4 {
		t.Fatalf("after the outage the shard is at version %d, want %d", v, v8+4)
	}
	var resp wire.Frame
	if err := s.pull(nil, &wire.Frame{Type: wire.MsgPull, Worker: 0}, &resp); err != nil || resp.Tag != v8+4 {
		t.Fatalf("pull after the outage: version %d, %v", resp.Tag, err)
	}
	if err := s.checkpoint(dir, true); err != nil {
		t.Fatalf("checkpoint after the outage: %v", err)
	}
	if err := push(0); err != nil {
		t.Fatal(err)
	}
	want, wantV := s.Weights()
	r := logShard(t, dir, "asp", 2, 0.9, true) // the files agree: nothing refused was logged
	defer r.closeLog()
	if got, v := r.Weights(); v != wantV || !slices.Equal(got, want) {
		t.Fatalf("restored at version %d (weights equal: %v), the shard was at %d", v, slices.Equal(got, want), wantV)
	}
	if st := s.Stats(); st.LogFailures != 1 {
		t.Errorf("outages counted: %d, want 1", st.LogFailures)
	}
}
