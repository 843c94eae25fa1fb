package live

import (
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/internal/ratelog"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/wire"
)

// sweepCoord is a coordinator with k live workers, each with a connection
// and the given pushes, last heard at t0.
func sweepCoord(t *testing.T, k int, pushes int64, t0 time.Time) *Coordinator {
	t.Helper()
	cfg := quickJob(t, "bsp", k, 1)
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	c, err := newCoordinator(CoordConfig{Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 1000}, ShardAddrs: []string{"s0"},
		StartupGrace: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for p := range c.members {
		c.members[p] = member{state: live, peer: &wire.Peer{}, lastSeen: t0, pushes: pushes}
	}
	c.swept = t0
	return c
}

// step sweeps every period from..to (a coordinator that keeps running).
func step(c *Coordinator, from, to time.Time) {
	for now := from; !now.After(to); now = now.Add(c.every) {
		c.sweepAt(now)
	}
}

func TestSweepRemovesSilentWorker(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := sweepCoord(t, 3, 5, t0)
	// Workers 0 and 2 keep beating; worker 1 falls silent.
	for now := t0; now.Before(t0.Add(2 * c.timeout)); now = now.Add(c.every) {
		c.members[0].lastSeen, c.members[2].lastSeen = now, now
		c.sweepAt(now)
		if now.Sub(t0) <= c.timeout && c.nRem != 0 {
			t.Fatalf("worker removed %v after its last beat, within the %v timeout", now.Sub(t0), c.timeout)
		}
	}
	if c.nRem != 1 || c.members[1].state != removed || c.members[0].state != live || c.members[2].state != live {
		t.Fatalf("removed %d, states %d %d %d: want worker 1 alone removed", c.nRem, c.members[0].state, c.members[1].state, c.members[2].state)
	}
}

func TestSweepStartingWorkerGetsGrace(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := sweepCoord(t, 2, 0, t0) // connected, not pushed yet: loading data
	step(c, t0, t0.Add(startupTimeouts*c.timeout))
	if c.nRem != 0 {
		t.Fatalf("%d starting workers removed within %d timeouts", c.nRem, startupTimeouts)
	}
	step(c, t0.Add(startupTimeouts*c.timeout), t0.Add((startupTimeouts+1)*c.timeout))
	if c.nRem != 2 {
		t.Fatalf("removed %d after %d timeouts, want 2", c.nRem, startupTimeouts+1)
	}
}

func TestSweepCoordinatorStallNotSilence(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := sweepCoord(t, 2, 5, t0)
	// The coordinator itself does not run for three timeouts: the late
	// sweep blames no one, and the heartbeats queued meanwhile are read
	// before the next one.
	stall := t0.Add(3 * c.timeout)
	c.sweepAt(stall)
	if c.nRem != 0 {
		t.Fatalf("%d workers removed for the coordinator's own stall", c.nRem)
	}
	c.members[0].lastSeen, c.members[1].lastSeen = stall, stall
	step(c, stall.Add(c.every), stall.Add(c.timeout))
	if c.nRem != 0 {
		t.Fatalf("%d workers removed within the timeout after the stall", c.nRem)
	}
	// Silence after the stall still counts.
	step(c, stall.Add(c.timeout), stall.Add(2*c.timeout))
	if c.nRem != 2 {
		t.Fatalf("removed %d after real silence, want 2", c.nRem)
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
		c.members[0].lastSeen = now // worker 0 beats, worker 1 is dead
		c.sweepAt(now)
		if c.nRem == 1 && removedAt == 0 {
			removedAt = now.Sub(t0)
		}
	}
	if c.nRem != 1 || c.members[1].state != removed || removedAt > c.timeout+2*period {
		t.Fatalf("removed %d (worker 1 %d) at %v: want worker 1 removed by %v", c.nRem, c.members[1].state, removedAt, c.timeout+2*period)
	}
}

// TestSweepAfterFinishRemovesNoOne: workers that stop beating because the
// job has ended are not counted as removed (on a loaded machine the last
// sweeps run while the workers exit).
func TestSweepAfterFinishRemovesNoOne(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := sweepCoord(t, 3, 5, t0)
	c.done = true
	step(c, t0, t0.Add(5*c.timeout))
	if c.nRem != 0 {
		t.Fatalf("%d finished workers counted as removed", c.nRem)
	}
	for p, m := range c.members {
		if m.state != live {
			t.Fatalf("worker %d state %d after the job ended, want live", p, m.state)
		}
	}
}

// TestSweepNeverConnected: an id no worker ever connected under is removed
// once the startup grace has passed and reported as never connected, not
// as silent since the zero time (it used to log "silent 2562047h").
func TestSweepNeverConnected(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := sweepCoord(t, 2, 5, t0)
	var buf syncBuffer
	c.log = newTestLogger(&buf)
	c.members[1] = member{} // never connected
	c.grace = t0.Add(c.graceD)
	for now := t0; !now.After(t0.Add(c.graceD + 2*c.every)); now = now.Add(c.every) {
		c.members[0].lastSeen = now
		c.sweepAt(now)
	}
	st := c.Stats()
	if c.members[1].state != removed || st.Removed != 1 || st.NeverConnected != 1 {
		t.Fatalf("worker 1 state %d, removed %d, never connected %d: want it removed as never connected", c.members[1].state, st.Removed, st.NeverConnected)
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
		c.members[0].lastSeen = now
		_, k := c.sweepAt(now)
		cut = append(cut, k...)
	}
	if len(cut) != 1 || cut[0] != c.members[1].peer {
		t.Fatalf("cut %d connections, want worker 1's alone", len(cut))
	}
	// Its redial (the same process, a report outstanding) admits it
	// again: released by the Hello itself, the report counted once.
	c.plog = ratelog.New(c.log, ratelog.Limits{})
	c.members[1].inc, c.members[1].seq = 7, 5
	info, _, err := c.hello(nil, 1, workerState{Inc: 7, Seq: 6, Acked: 5})
	if err != nil || !info.Rejoined || c.members[1].state != live || c.members[1].seq != 6 || c.members[1].pushes != 6 {
		t.Fatalf("rejoin: %+v err %v; state %d seq %d pushes %d", info, err, c.members[1].state, c.members[1].seq, c.members[1].pushes)
	}
}
