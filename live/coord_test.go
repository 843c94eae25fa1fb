package live

import (
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/internal/ratelog"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/membership"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// sweepCoord is a coordinator started at t0 with k live workers, each
// with a connection and the given pushes (an ASP job, so none waits),
// all made and last heard at t0, and swept at t0.
func sweepCoord(t *testing.T, k int, pushes int64, t0 time.Time) *Coordinator {
	t.Helper()
	c := sweepCoordOf(t, k, t0)
	var resp wire.Frame
	for p := range k {
		if _, _, err := c.hello(t0, &wire.Peer{}, int32(p), proto.WorkerState{Inc: uint64(p + 1)}); err != nil {
			t.Fatal(err)
		}
		for seq := range uint64(pushes) {
			if _, _, err := c.clock(t0, nil, p, clockReport{seq: seq + 1}, &resp); err != nil {
				t.Fatal(err)
			}
		}
	}
	c.sweep(t0)
	return c
}

// sweepCoordOf is sweepCoord's coordinator before any worker has said Hello.
func sweepCoordOf(t *testing.T, k int, t0 time.Time) *Coordinator {
	t.Helper()
	cfg := quickJob(t, "asp", k, 1)
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	c, err := newCoordinator(CoordConfig{Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 1000}, ShardAddrs: []string{"s0"},
		StartupGrace: 10 * time.Second}, t0)
	if err != nil {
		t.Fatal(err)
	}
	c.plog = ratelog.New(c.log, ratelog.Limits{})
	return c
}

// state is worker p's membership state.
func (c *Coordinator) state(p int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return int(c.ms.Member(p).State)
}

// removedN is the count of removals.
func (c *Coordinator) removedN() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, _, _ := c.ms.Counts()
	return n
}

// step sweeps every period from..to (a coordinator that keeps running).
func step(c *Coordinator, from, to time.Time) {
	for now := from; !now.After(to); now = now.Add(c.every) {
		c.sweep(now)
	}
}

func TestSweepRemovesSilentWorker(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := sweepCoord(t, 3, 5, t0)
	// Workers 0 and 2 keep beating; worker 1 falls silent.
	for now := t0; now.Before(t0.Add(2 * c.timeout)); now = now.Add(c.every) {
		c.heartbeat(now, nil, 0)
		c.heartbeat(now, nil, 2)
		c.sweep(now)
		if now.Sub(t0) <= c.timeout && c.removedN() != 0 {
			t.Fatalf("worker removed %v after its last beat, within the %v timeout", now.Sub(t0), c.timeout)
		}
	}
	if c.removedN() != 1 || c.state(1) != removed || c.state(0) != live || c.state(2) != live {
		t.Fatalf("removed %d, states %d %d %d: want worker 1 alone removed", c.removedN(), c.state(0), c.state(1), c.state(2))
	}
}

func TestSweepStartingWorkerGetsGrace(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := sweepCoord(t, 2, 0, t0) // connected, not pushed yet: loading data
	step(c, t0, t0.Add(membership.StartupTimeouts*c.timeout))
	if c.removedN() != 0 {
		t.Fatalf("%d starting workers removed within %d timeouts", c.removedN(), membership.StartupTimeouts)
	}
	step(c, t0.Add(membership.StartupTimeouts*c.timeout), t0.Add((membership.StartupTimeouts+1)*c.timeout))
	if c.removedN() != 2 {
		t.Fatalf("removed %d after %d timeouts, want 2", c.removedN(), membership.StartupTimeouts+1)
	}
}

func TestSweepCoordinatorStallNotSilence(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := sweepCoord(t, 2, 5, t0)
	// The coordinator itself does not run for three timeouts: the late
	// sweep blames no one, and the heartbeats queued meanwhile are read
	// before the next one.
	stall := t0.Add(3 * c.timeout)
	c.sweep(stall)
	if c.removedN() != 0 {
		t.Fatalf("%d workers removed for the coordinator's own stall", c.removedN())
	}
	c.heartbeat(stall, nil, 0)
	c.heartbeat(stall, nil, 1)
	step(c, stall.Add(c.every), stall.Add(c.timeout))
	if c.removedN() != 0 {
		t.Fatalf("%d workers removed within the timeout after the stall", c.removedN())
	}
	// Silence after the stall still counts.
	step(c, stall.Add(c.timeout), stall.Add(2*c.timeout))
	if c.removedN() != 2 {
		t.Fatalf("removed %d after real silence, want 2", c.removedN())
	}
}

// TestSweepAlwaysLate: a coordinator whose every sweep comes late still
// removes a dead worker, at most a period later.
func TestSweepAlwaysLate(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := sweepCoord(t, 2, 5, t0)
	period := 3 * c.every
	var removedAt time.Duration
	for now := t0; now.Before(t0.Add(3 * c.timeout)); now = now.Add(period) {
		c.heartbeat(now, nil, 0) // worker 0 beats, worker 1 is dead
		c.sweep(now)
		if c.removedN() == 1 && removedAt == 0 {
			removedAt = now.Sub(t0)
		}
	}
	if c.removedN() != 1 || c.state(1) != removed || removedAt > c.timeout+2*period {
		t.Fatalf("removed %d (worker 1 %d) at %v: want worker 1 removed by %v", c.removedN(), c.state(1), removedAt, c.timeout+2*period)
	}
}

// TestSweepAfterFinishRemovesNoOne: workers that stop beating because the
// job has ended are not counted as removed (on a loaded machine the last
// sweeps run while the workers exit).
func TestSweepAfterFinishRemovesNoOne(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := sweepCoord(t, 3, 5, t0)
	c.finish(t0)
	step(c, t0, t0.Add(5*c.timeout))
	if c.removedN() != 0 {
		t.Fatalf("%d finished workers counted as removed", c.removedN())
	}
	for p := range 3 {
		if c.state(p) != live {
			t.Fatalf("worker %d state %d after the job ended, want live", p, c.state(p))
		}
	}
}

// TestSweepNeverConnected: an id no worker ever connected under is removed
// once the startup grace has passed and reported as never connected, not
// as silent since the zero time (it used to log "silent 2562047h").
func TestSweepNeverConnected(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := sweepCoordOf(t, 2, t0)
	var buf syncBuffer
	c.log = newTestLogger(&buf)
	if _, _, err := c.hello(t0, &wire.Peer{}, 0, proto.WorkerState{Inc: 1}); err != nil { // worker 1 never connects
		t.Fatal(err)
	}
	for now := t0; !now.After(t0.Add(c.graceD + 2*c.every)); now = now.Add(c.every) {
		c.heartbeat(now, nil, 0)
		c.sweep(now)
	}
	st := c.statsAt(t0)
	if c.state(1) != removed || st.Removed != 1 || st.NeverConnected != 1 {
		t.Fatalf("worker 1 state %d, removed %d, never connected %d: want it removed as never connected", c.state(1), st.Removed, st.NeverConnected)
	}
	out := buf.String()
	if !strings.Contains(out, "never connected") || strings.Contains(out, "silent") {
		t.Fatalf("the removal's log line should say the worker never connected, and give no silence:\n%s", out)
	}
}

// TestSweepCutsRemovedConnection: the sweep hands back the connection of
// each worker it removes, for the server to close: a removed worker that
// is alive (late beats on a loaded machine) and waits for a release it
// would never get redials, and its Hello admits it again.
func TestSweepCutsRemovedConnection(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := sweepCoord(t, 2, 5, t0)
	var cut []*wire.Peer
	for now := t0; now.Before(t0.Add(2 * c.timeout)); now = now.Add(c.every) {
		c.heartbeat(now, nil, 0)
		_, k := c.sweep(now)
		cut = append(cut, k...)
	}
	if len(cut) != 1 || cut[0] != c.members[1].peer || c.members[1].peer == c.members[0].peer {
		t.Fatalf("cut %d connections, want worker 1's alone", len(cut))
	}
	// Its redial (the same process, worker 1's inc 2, a report
	// outstanding) admits it again: released by the Hello itself, the
	// report counted once.
	info, _, err := c.hello(t0.Add(2*c.timeout), nil, 1, proto.WorkerState{Inc: 2, Seq: 6, Acked: 5})
	if m := c.ms.Member(1); err != nil || !info.Rejoined || c.state(1) != live || m.Seq != 6 || m.Pushes != 6 {
		t.Fatalf("rejoin: %+v err %v; state %d seq %d pushes %d", info, err, c.state(1), m.Seq, m.Pushes)
	}
}

// TestDuplicateIDNewerWins: a second process under a live id (another
// worker started with the same --id) takes the id; what the displaced
// process still sends on its connection (a report, a beat) is refused or
// ignored, and its redial is refused naming the id, so it stops instead of
// taking the id back (issue 37 point 4: BSP hung).
func TestDuplicateIDNewerWins(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := sweepCoordOf(t, 2, t0)
	// b, the newer process's connection, is nil: a returning worker's
	// connection is logged, and the test's have no address.
	a, x := &wire.Peer{}, &wire.Peer{}
	var b *wire.Peer
	var resp wire.Frame
	must := func(_ []*wire.Peer, _ bool, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := c.hello(t0, a, 0, proto.WorkerState{Inc: 1}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.hello(t0, x, 1, proto.WorkerState{Inc: 2}); err != nil {
		t.Fatal(err)
	}
	must(c.clock(t0, a, 0, clockReport{seq: 1}, &resp))
	must(c.clock(t0, x, 1, clockReport{seq: 1}, &resp))
	must(c.clock(t0, a, 0, clockReport{seq: 2}, &resp))

	t1 := t0.Add(time.Second)
	if _, _, err := c.hello(t1, b, 0, proto.WorkerState{Inc: 9}); err != nil {
		t.Fatal(err)
	}
	// The displaced process's report of push 3, sent before its
	// connection was closed.
	_, _, err := c.clock(t1, a, 0, clockReport{seq: 1}, &resp)
	if err == nil || !strings.Contains(err.Error(), "worker id 0 was taken over by a newer process") {
		t.Fatalf("a report on the displaced connection: %v, want it refused naming the id", err)
	}
	c.heartbeat(t1.Add(time.Second), a, 0)
	if seen := c.ms.Member(0).LastSeen; !seen.Equal(t1) {
		t.Errorf("a beat on the displaced connection moved the id's last beat to %v", seen)
	}
	if _, _, err := c.hello(t1, nil, 0, proto.WorkerState{Inc: 1, Seq: 3, Acked: 2}); err == nil || !strings.Contains(err.Error(), "worker id 0 was taken over") {
		t.Fatalf("the displaced process's redial: %v, want it refused naming the id", err)
	}
	// The newer process's reports count from 1; nothing of the older one
	// was counted twice or lost.
	must(c.clock(t1, b, 0, clockReport{seq: 1}, &resp))
	if st := c.statsAt(t1); st.Pushes != 4 || st.WorkerPushes[0] != 3 || st.Refused != 2 || st.Live != 2 {
		t.Fatalf("pushes %d (worker 0: %d), refused %d, live %d: want 4 (3), 2, 2", st.Pushes, st.WorkerPushes[0], st.Refused, st.Live)
	}
}
