package live

import (
	"testing"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/wire"
)

// TestShardLearnsHeldVersion: a restarted shard skips forward to the
// version a worker announces holding (its one-way Heartbeat), even before
// any push or pull, and never back. Without it a BSP job deadlocked: the
// workers that held the lost version were waiting at the gate for one that
// waited for this shard.
func TestShardLearnsHeldVersion(t *testing.T) {
	cfg := quickJob(t, "bsp", 2, 1)
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	s, err := newShard(ShardConfig{Index: 0, Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 100}, Init: make([]float32, 8), Restarted: true})
	if err != nil {
		t.Fatal(err)
	}
	// Worker 1's gradient for version 0 is buffered, then worker 0
	// announces version 5: the round is gone with the lost updates.
	var resp wire.Frame
	if err := s.push(nil, &wire.Frame{Type: wire.MsgPush, Worker: 1, Floats: make([]float32, 8)}, &resp); err != nil {
		t.Fatal(err)
	}
	if err := s.done(nil, &wire.Frame{Type: wire.MsgHeartbeat, Tag: 5}); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	if st.Version != 5 || st.Skipped != 5 || st.Dropped != 1 {
		t.Fatalf("version %d skipped %d dropped %d: want 5, 5, 1", st.Version, st.Skipped, st.Dropped)
	}
	s.done(nil, &wire.Frame{Type: wire.MsgHeartbeat, Tag: 3}) // an older version held: nothing moves
	s.done(nil, &wire.Frame{Type: wire.MsgHeartbeat})         // a plain acknowledgement
	if st := s.Stats(); st.Version != 5 || st.Skipped != 5 {
		t.Fatalf("version %d skipped %d after older announcements: want 5, 5", st.Version, st.Skipped)
	}
	// The round at version 5 completes with both workers' gradients.
	for w := int32(0); w < 2; w++ {
		if err := s.push(nil, &wire.Frame{Type: wire.MsgPush, Worker: w, Extra: 5, Floats: make([]float32, 8)}, &resp); err != nil {
			t.Fatal(err)
		}
	}
	if st := s.Stats(); st.Version != 6 || st.Updates != 1 {
		t.Fatalf("version %d updates %d: want 6, 1", st.Version, st.Updates)
	}
}
