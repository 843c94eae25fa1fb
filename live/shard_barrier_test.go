package live

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// Under elastic apply=local a shard buffers a superstep's pushes (its
// version and weights stay), a pull of the next version waits, and the
// gate's barrier applies the superstep once: each gradient weighted by
// 1/(workers that contributed), checked by hand. A repeated count changes
// nothing; a count two ahead (the shard lost a barrier to a restart)
// skips one version and applies the buffer as the latest. A shard of a
// paradigm without barriers refuses one.
func TestShardBarrierAppliesSuperstep(t *testing.T) {
	cfg := quickJob(t, "elastic:r=4,apply=local", 3, 1)
	cfg.LR = 0.5
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	w0 := []float32{1, 2, 3, 4}
	d := &job.Description{Version: job.Version, Job: cfg, TrainN: 1 << 20}
	s, err := newShard(ShardConfig{Index: 0, Params: d, Init: w0})
	if err != nil {
		t.Fatal(err)
	}
	push := func(w int32, clock uint64, g ...float32) {
		t.Helper()
		var resp wire.Frame
		if err := s.push(nil, &wire.Frame{Type: wire.MsgPush, Worker: w, Tag: clock, Extra: s.Stats().Version, Floats: g}, &resp); err != nil {
			t.Fatal(err)
		}
		if resp.Flags&proto.FlagDropped != 0 {
			t.Fatalf("worker %d's push dropped", w)
		}
	}
	// Worker 0 pushes twice in the superstep, worker 2 once: two workers.
	push(0, 0, 1, 0, 0, 2)
	push(2, 0, 0, 4, 0, 2)
	push(0, 1, 1, 0, 2, 0)
	if w, v := s.Weights(); v != 0 || w[0] != 1 || w[3] != 4 {
		t.Fatalf("before the barrier: version %d, weights %v: want 0 and w⁰", v, w)
	}
	var resp wire.Frame
	if err := s.pull(nil, &wire.Frame{Type: wire.MsgPull, Extra: 1}, &resp); err != nil || resp.Flags&proto.FlagPending == 0 {
		t.Fatalf("a pull of version 1 before the barrier: %v, flags %#x: want pending", err, resp.Flags)
	}
	if err := s.barrier(1); err != nil {
		t.Fatal(err)
	}
	// w ← w − η·Σg/2 over the three gradients (Σg = 2, 4, 2, 4).
	want := []float64{1 - 0.5*2/2, 2 - 0.5*4/2, 3 - 0.5*2/2, 4 - 0.5*4/2}
	w, v := s.Weights()
	for i := range want {
		if math.Abs(float64(w[i])-want[i]) > 1e-6 {
			t.Fatalf("after the barrier: version %d, weights %v, want %v", v, w, want)
		}
	}
	if v != 1 || s.Stats().Updates != 1 {
		t.Fatalf("after the barrier: version %d, %d updates: want 1, 1", v, s.Stats().Updates)
	}
	if err := s.barrier(1); err != nil || s.Stats().Updates != 1 {
		t.Fatalf("a repeated barrier: %v, %d updates", err, s.Stats().Updates)
	}
	push(1, 0, 2, 2, 2, 2)
	if err := s.barrier(3); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	// The skip dropped the buffered push: barrier 3 had nothing to apply.
	if w, v := s.Weights(); v != 3 || st.Skipped != 1 || st.Dropped != 1 || st.Updates != 1 || w[0] != float32(want[0]) {
		t.Fatalf("barrier 3 at version 1: version %d, skipped %d, dropped %d, weights %v", v, st.Skipped, st.Dropped, w)
	}
	// An empty superstep (the job ending at a gate barrier) applies
	// nothing, as Policy.Finish does; the version counts it.
	if err := s.barrier(4); err != nil {
		t.Fatal(err)
	}
	if st, v := s.Stats(), s.Stats().Version; v != 4 || st.Updates != 1 {
		t.Fatalf("an empty barrier: version %d, %d updates: want 4 and still 1", v, st.Updates)
	}
	if err := s.barrier(1 << 62); wire.CodeOf(err) != wire.CodeBadRequest {
		t.Errorf("a barrier beyond the job: %v, want bad_request", err)
	}
	bsp := quickJob(t, "bsp", 2, 1)
	if err := bsp.Fill(); err != nil {
		t.Fatal(err)
	}
	b, err := newShard(ShardConfig{Index: 0, Params: &job.Description{Version: job.Version, Job: bsp, TrainN: 100}, Init: w0})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.barrier(1); wire.CodeOf(err) != wire.CodeBadRequest || b.Stats().Refused != 1 {
		t.Errorf("a barrier to a bsp shard: %v, want a counted bad_request", err)
	}
}

// Under --durability log a barrier is a record: a shard killed without a
// final checkpoint replays its pushes and barriers (and the superstep
// still open, carried over a checkpoint) and comes back bit for bit where
// the shard that never died is; the next barrier applies the same buffer.
func TestLogReplaysBarriers(t *testing.T) {
	cfg := quickJob(t, "elastic:r=4,apply=local", 3, 1)
	cfg.Momentum = 0.9
	script := []logStep{logPush(0), logPush(1), logPush(2), barrierStep, logPush(0), logPush(0), logPush(2), checkpointStep,
		logPush(1), barrierStep, logPush(1), logRemove(2), logPush(0)}
	dirRef, dir := t.TempDir(), t.TempDir()
	rs := logShardOf(t, dirRef, cfg, false)
	defer rs.closeLog()
	s := logShardOf(t, dir, cfg, false)
	runSteps(t, rs, dirRef, script, map[int]uint64{}, rand.New(rand.NewPCG(9, 9)))
	runSteps(t, s, dir, script, map[int]uint64{}, rand.New(rand.NewPCG(9, 9)))
	r := logShardOf(t, dir, cfg, true) // s abandoned: kill -9
	defer r.closeLog()
	check := func(when string) {
		t.Helper()
		w, v := r.Weights()
		wRef, vRef := rs.Weights()
		if v != vRef || WeightsCRC(w) != WeightsCRC(wRef) {
			t.Fatalf("%s: version %d (CRC %08x), the shard that never died %d (CRC %08x)", when, v, WeightsCRC(w), vRef, WeightsCRC(wRef))
		}
	}
	check("restored")
	if v := r.Stats().Version; v != 2 {
		t.Fatalf("restored at version %d, want the 2 barriers", v)
	}
	for _, sh := range []*Shard{rs, r} {
		if err := sh.barrier(3); err != nil {
			t.Fatal(err)
		}
	}
	check("after the next barrier")
	// Barrier 2 came after the checkpoint: replayed, then barrier 3.
	if st := r.Stats(); st.Updates != 2 || st.Replayed == 0 {
		t.Errorf("restored shard: %d updates (want barrier 2 replayed and 3), %d records replayed", st.Updates, st.Replayed)
	}
}
