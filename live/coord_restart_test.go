package live

import (
	"testing"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/wire"
)

// This file: ElasticBSP apply=local across a restart of shard 0, the
// coordinator's host. The workers released at a barrier pull its version,
// which a shard reaches only when the coordinator tells it the barrier;
// a restarted coordinator must tell the shards what it knows, and learn
// from the workers what it does not. TestTCPCoordinatorRestarted (package
// launch) stalled once on this: every worker waited for such a pull, none
// redialled the coordinator, and all were removed.

// TestRestoredBarrierCountApplied: a coordinator restored from a state
// file that counts b barriers hands b to the shards as it starts serving:
// shard 0, restored from an older checkpoint (here none: w⁰ at version 0),
// reaches version b without any worker's help. Before, the restored count
// was sent only with the next barrier, which cannot pass while the
// workers released at the b-th wait for its version.
func TestRestoredBarrierCountApplied(t *testing.T) {
	const spec, k = "elastic:r=4,apply=local", 2
	dir := t.TempDir()
	cfg := quickJob(t, spec, k, 1)
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	// ctrlShard's job (TrainN 320), so the file is of the same job.
	c, err := newCoordinator(CoordConfig{Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 320}, ShardAddrs: []string{"sh"}})
	if err != nil {
		t.Fatal(err)
	}
	var resp wire.Frame
	for p := range k {
		if _, _, err := c.hello(&wire.Peer{}, int32(p), workerState{Inc: uint64(p + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	for seq := uint64(1); seq <= 3; seq++ {
		for p := range k {
			if _, _, err := c.clock(p, seq, 0, 0, 0, &resp); err != nil {
				t.Fatal(err)
			}
		}
	}
	b := c.Stats().Barriers
	if b == 0 {
		t.Fatal("no barrier passed in 3 rounds")
	}
	if err := c.saveState(dir); err != nil {
		t.Fatal(err)
	}
	sv, _ := ctrlShard(t, spec, k, 1, 0, true, func(sc *ServerConfig) { sc.CheckpointDir = dir })
	if got := sv.coord.Stats().Barriers; got != b {
		t.Fatalf("restored coordinator at %d barriers, the file's %d", got, b)
	}
	var v uint64
	for i := 0; i < 500; i++ { // 5 s
		if v = sv.Shard().Stats().Version; v >= b {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if v != b {
		t.Fatalf("shard 0 at version %d; the restored coordinator has passed %d barriers", v, b)
	}
}
