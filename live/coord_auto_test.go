package live

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacer-ps/pacer/internal/ratelog"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/wire"
)

// autoCoord3 is an auto coordinator (among ssp:s=1 and asp, deciding
// every 2 rounds) of 3 workers that have said Hello at t0, whose planner
// asks to switch to asp at every call, counting the calls.
func autoCoord3(t *testing.T, t0 time.Time, calls *int) (*Coordinator, []*wire.Peer) {
	t.Helper()
	cfg := quickJob(t, "auto:every=2,among=ssp:s=1|asp", 3, 2)
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	asp, err := paradigm.Parse("asp")
	if err != nil {
		t.Fatal(err)
	}
	plan := func(now time.Duration, iter []time.Duration, cv float64, _ []float64, noise float64, cur paradigm.Spec) (paradigm.Spec, bool, float64, error) {
		*calls++
		if len(iter) != 3 || iter[2] != 30*time.Millisecond {
			t.Errorf("planner given %v: want 3 workers, worker 2's iterations 30 ms", iter)
		}
		return asp, true, 0.5, nil
	}
	c, err := newCoordinator(CoordConfig{Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 1000}, ShardAddrs: []string{"s0", "s1"},
		StartupGrace: 10 * time.Second, Replan: plan}, t0)
	if err != nil {
		t.Fatal(err)
	}
	c.plog = ratelog.New(c.log, ratelog.Limits{})
	peers := []*wire.Peer{{}, {}, {}}
	for p := range 3 {
		if _, _, err := c.hello(t0, peers[p], int32(p), proto.WorkerState{Inc: uint64(p + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	return c, peers
}

// TestCoordAutoSwitchTrace (issue 36): the live coordinator's switch as a
// trace on an injected clock. A decision comes after every 2 rounds;
// from it no release is sent, each worker parks at its next report, and
// once all three are parked the shards are told the regime (base: the
// pushes so far + 1). Only when both shards have acknowledged does the
// gate take asp's rule with every clock at the base, and the three are
// released into it. A coordinator restored from its state file carries
// on under that regime.
func TestCoordAutoSwitchTrace(t *testing.T) {
	t0 := time.Unix(1000, 0)
	calls := 0
	c, peers := autoCoord3(t, t0, &calls)
	var told []proto.Regime
	c.onSwitch = func(r proto.Regime, _ int64) { told = append(told, r) }
	seq := make([]uint64, 3)
	now := t0
	report := func(p int) []*wire.Peer {
		t.Helper()
		seq[p]++
		now = now.Add(time.Millisecond)
		var resp wire.Frame
		notify, _, err := c.clock(now, peers[p], p, clockReport{seq: seq[p], iterUS: uint32(10000 * (p + 1))}, &resp)
		if err != nil {
			t.Fatal(err)
		}
		return notify
	}
	// Two rounds in lockstep: 6 pushes, then the decision is due.
	for range 2 {
		for p := range 3 {
			report(p)
		}
	}
	if !c.due(now) {
		t.Fatal("no decision due after 2 rounds of 3 workers")
	}
	c.decide(now)
	if calls != 1 || !c.auto.draining {
		t.Fatalf("planner called %d times, draining %v: want 1, true", calls, c.auto.draining)
	}
	// Draining: reports release nobody, and the shards hear nothing
	// until the last worker has parked.
	for p := range 3 {
		if n := report(p); len(n) != 0 {
			t.Fatalf("worker %d's report released %d workers during the drain", p, len(n))
		}
		if p < 2 && len(told) != 0 {
			t.Fatalf("shards told %v with worker %d not parked", told, p+1)
		}
	}
	if len(told) != 1 || told[0] != (proto.Regime{Gen: 1, Paradigm: "asp", Base: 10}) {
		t.Fatalf("shards told %v: want one regime {1 asp 10} (9 pushes + 1)", told)
	}
	if c.due(now) {
		t.Fatal("a decision due while a switch is under way")
	}
	// One shard's acknowledgement is not enough; a resend changes nothing.
	if ps, _ := c.switched(now, 0, 1); len(ps) != 0 {
		t.Fatalf("released %d workers on one shard's acknowledgement", len(ps))
	}
	ps, r := c.switched(now, 1, 1)
	if len(ps) != 3 || r.Gen != 1 || c.auto.cur.String() != "asp" || c.regime() == nil {
		t.Fatalf("after both acknowledgements: %d released, regime %+v, in force %s", len(ps), r, c.auto.cur)
	}
	for p := range 3 {
		if got := c.gate.Clock(p); got != 10 {
			t.Errorf("worker %d's gate clock %d, want the base 10", p, got)
		}
	}
	if ps, _ := c.switched(now, 1, 1); len(ps) != 0 {
		t.Fatalf("a resent acknowledgement released %d workers again", len(ps))
	}
	// asp's gate releases at once.
	if n := report(0); len(n) != 1 {
		t.Fatalf("under asp a report released %d workers, want 1", len(n))
	}
	// The state file keeps the regime.
	st := c.snapshotState()
	c2, _ := autoCoord3(t, t0, new(int))
	if err := c2.restore(now, st); err != nil {
		t.Fatal(err)
	}
	if r := c2.regime(); r == nil || *r != told[0] || c2.auto.cur.String() != "asp" || c2.auto.regPushes != 9 {
		t.Fatalf("restored regime %+v, in force %s, began at push %d: want %+v, asp, 9", r, c2.auto.cur, c2.auto.regPushes, told[0])
	}
}

// TestAutoServerSetup: an auto job's shard 0 needs its planner and
// refuses --durability log, each by name, before anything starts; with a
// planner its metrics carry auto's decisions and the shard's switches.
func TestAutoServerSetup(t *testing.T) {
	cfg := quickJob(t, "auto:among=bsp|asp", 2, 1)
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	base := ServerConfig{Index: 0, Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 100}, Listen: "s0",
		Transport: &wire.Inproc{}, Token: "secret", ControlToken: "control-secret", ShardAddrs: []string{"s0"}}
	if _, err := NewServer(base); err == nil || !strings.Contains(err.Error(), "planner") {
		t.Fatalf("auto without a planner: %v, want a refusal naming it", err)
	}
	base.Replan = func(time.Duration, []time.Duration, float64, []float64, float64, paradigm.Spec) (paradigm.Spec, bool, float64, error) {
		return paradigm.Spec{}, false, 0, nil
	}
	logged := base
	logged.Durability, logged.CheckpointDir = DurabilityLog, t.TempDir()
	if _, err := NewServer(logged); err == nil || !strings.Contains(err.Error(), "--durability log with --paradigm auto") {
		t.Fatalf("auto under --durability log: %v, want a refusal naming both", err)
	}
	sv, err := NewServer(base)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan prometheus.Metric, 256)
	collector{sv}.Collect(ch)
	close(ch)
	seen := map[string]bool{}
	for m := range ch {
		seen[m.Desc().String()] = true
	}
	for _, d := range []*prometheus.Desc{mDecisions, mSwitches} {
		if !seen[d.String()] {
			t.Errorf("the metrics lack %s", d)
		}
	}
}
