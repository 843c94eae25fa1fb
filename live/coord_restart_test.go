package live

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/live/worker"
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
	c, err := newCoordinator(CoordConfig{Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 320}, ShardAddrs: []string{"sh"}}, stateT0)
	if err != nil {
		t.Fatal(err)
	}
	var resp wire.Frame
	for p := range k {
		if _, _, err := c.hello(stateT0, &wire.Peer{}, int32(p), proto.WorkerState{Inc: uint64(p + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	for seq := uint64(1); seq <= 3; seq++ {
		for p := range k {
			if _, _, err := c.clock(stateT0, nil, p, clockReport{seq: seq}, &resp); err != nil {
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
	pollShard(t, "shard 0's restored barrier count", func() bool { v = sv.Shard().Stats().Version; return v >= b })
	if v != b {
		t.Fatalf("shard 0 at version %d; the restored coordinator has passed %d barriers", v, b)
	}
}

// pollShard waits until cond, a shard's state, holds. A shard gives no
// notice of its changes, so checking it every 5 ms is the wait (not a
// guessed duration); the two minutes are a guard against a hang only.
func pollShard(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within the 2-minute guard", what)
		}
		time.Sleep(5 * time.Millisecond) // the interval between checks of a state with no notice
	}
}

// heldTransport is an in-process transport whose dials to one address
// fail while held: the coordinator's membership link to that shard, so
// that shard does not hear of a barrier.
type heldTransport struct {
	*wire.Inproc
	addr string
	held atomic.Bool
}

func (h *heldTransport) Dial(ctx context.Context, addr string) (net.Conn, error) {
	if addr == h.addr && h.held.Load() {
		return nil, errors.New("test: link held")
	}
	return h.Inproc.Dial(ctx, addr)
}

// TestWorkerRedialsWhilePulling: shard 0 dies while every worker waits
// for a pull, and comes back with a coordinator state file that predates
// the barrier they were released at. The workers redial the coordinator
// from the pull (not at their next report, which never comes), say which
// barrier they were released at, and the job finishes with no one
// removed. Before, their heartbeats went to the dead connection, the
// restored coordinator did not learn the barrier (nor did shard 1, whose
// version they wait for), and every worker was removed as silent: the
// stall of TestTCPCoordinatorRestarted under load.
//
// The interleaving is made, not raced for: the coordinator's link to
// shard 1 is held, so shard 1 never hears of the first barrier and both
// workers wait at it, and the file is rewritten one barrier back (as if
// it were written just before that barrier, which is what the kill under
// load found).
//
// late: the workers cannot reach shard 0 until the restored coordinator
// has removed them (silent for its allowance); they are then admitted
// again from the pull, at the gate's minimum, and finish the job.
func TestWorkerRedialsWhilePulling(t *testing.T) {
	for _, late := range []bool{false, true} {
		name := "prompt"
		if late {
			name = "late"
		}
		t.Run(name, func(t *testing.T) { redialWhilePulling(t, late) })
	}
}

func redialWhilePulling(t *testing.T, late bool) {
	const spec, k = "elastic:r=4,apply=local", 2
	// late waits for the workers' removal by the restored coordinator
	// (after its startup allowance, four timeouts); prompt wants them
	// kept, so its allowance (12 s) is far beyond how long a busy
	// machine takes the workers to redial.
	hb := 3 * time.Second
	if late {
		hb = 400 * time.Millisecond
	}
	cfg := quickJob(t, spec, k, 2)
	cfg.HeartbeatTimeout, cfg.TrainLimit, cfg.TestLimit, cfg.Epochs = hb, 512, 10, 1
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	ds, err := job.Data(cfg)
	if err != nil {
		t.Fatal(err)
	}
	desc := &job.Description{Version: job.Version, Job: cfg, TrainN: ds.Train.N}
	dir := t.TempDir()
	tr := &wire.Inproc{}
	ht := &heldTransport{Inproc: tr, addr: "s1"}
	ht.held.Store(true)
	wt := &heldTransport{Inproc: tr, addr: "s0"} // the workers'
	addrs := []string{"s0", "s1"}
	sc := func(i int) ServerConfig {
		ln, err := tr.Listen(addrs[i])
		if err != nil {
			t.Fatal(err)
		}
		return ServerConfig{Index: i, Params: desc, Listener: ln, Transport: ht, Token: "secret", ControlToken: "control-secret",
			ShardAddrs: addrs, CheckpointDir: dir, CheckpointInterval: time.Hour}
	}
	s1 := runServer(t, sc(1))
	s0, err := NewServer(sc(0))
	if err != nil {
		t.Fatal(err)
	}
	ctx0, kill := context.WithCancel(context.Background())
	defer kill()
	done0 := make(chan error, 1)
	go func() { done0 <- s0.Run(ctx0) }()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	type result struct {
		res worker.Result
		err error
	}
	results := make(chan result, k)
	for p := range k {
		go func() {
			res, err := worker.Run(ctx, worker.Config{Coordinator: "s0", Transport: wt, Token: "secret", ID: p, Data: ds, ConnectTimeout: 5 * time.Second})
			results <- result{res, err}
		}()
	}
	waiting := func() int {
		s1.shard.mu.Lock()
		defer s1.shard.mu.Unlock()
		return len(s1.shard.waiters)
	}
	pollShard(t, "both workers waiting for shard 1's first barrier", func() bool {
		return s0.coord.Stats().Barriers >= 1 && waiting() == k
	})
	b := s0.coord.Stats().Barriers
	if v := s1.Shard().Stats().Version; v != 0 || b != 1 {
		t.Fatalf("shard 1 at version %d, the coordinator at %d barriers: want 0 and 1", v, b)
	}

	// Shard 0 dies (in process: it stops, writing its state), and its
	// coordinator's file is made to predate the barrier.
	wt.held.Store(late)
	kill()
	if err := <-done0; err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(coordFile(dir))
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	if st["barriers"] != float64(b) {
		t.Fatalf("the file holds %v barriers, the coordinator passed %d", st["barriers"], b)
	}
	delete(st, "barriers")
	delete(st, "barrier_pushes")
	if raw, err = json.Marshal(st); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(coordFile(dir), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	ht.held.Store(false)
	r := sc(0)
	r.Restore = true
	s0 = runServer(t, r)
	// Each removal is the gate's Leave: watched, it is seen as it happens.
	watch := watchGate(s0.coord)
	if late {
		for s0.coord.removedN() < k {
			select {
			case <-watch.changed:
			case <-ctx.Done():
				t.Fatalf("the silent workers were not removed within the minute's guard: coordinator %+v", s0.coord.Stats())
			}
		}
		wt.held.Store(false)
	}

	for n := 0; n < k; {
		select {
		case res := <-results:
			if res.err != nil {
				t.Fatalf("worker %d: %v", res.res.ID, res.err)
			}
			n++
		case <-watch.changed:
			if cs := s0.coord.Stats(); cs.Removed > 0 && !late {
				t.Fatalf("the restored coordinator removed %d workers (pushes %d of %d, barriers %d)", cs.Removed, cs.Pushes, cs.Target, cs.Barriers)
			}
		case <-ctx.Done():
			t.Fatalf("the job did not finish after shard 0's restart: coordinator %+v", s0.coord.Stats())
		}
	}
	cs := s0.coord.Stats()
	t.Logf("pushes %d of %d, barriers %d, removed %d, joined %d, restarts %d", cs.Pushes, cs.Target, cs.Barriers, cs.Removed, cs.Joined, cs.Restarts)
	switch {
	case cs.Restarts != 1:
		t.Errorf("restarts %d, want 1", cs.Restarts)
	case !late && cs.Removed != 0:
		t.Errorf("removed %d: want the restored coordinator to keep both workers", cs.Removed)
	case late && (cs.Removed != k || cs.Joined != k):
		t.Errorf("removed %d, joined %d: want both workers removed and admitted again", cs.Removed, cs.Joined)
	}
	if cs.Pushes < cs.Target || cs.Barriers <= b {
		t.Errorf("pushes %d of %d, barriers %d: want the job finished past barrier %d", cs.Pushes, cs.Target, cs.Barriers, b)
	}
}
