package live

import (
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// TestShardSwitchAppliesWhatItHolds: a switch applies the gradients the
// old rule holds (1-softsync, which applies every three gradients, with two) before the new rule
// takes over at the base version, drops none, and a resent regime changes
// nothing. With the flush left out the two are dropped and counted.
func TestShardSwitchAppliesWhatItHolds(t *testing.T) {
	cfg := quickJob(t, "auto:among=softsync:n=1|bsp", 3, 1)
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	s, err := newShard(ShardConfig{Index: 0, Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 100}, Init: make([]float32, 8)})
	if err != nil {
		t.Fatal(err)
	}
	var resp wire.Frame
	for w := int32(0); w < 2; w++ {
		g := []float32{1, 1, 1, 1, 1, 1, 1, 1}
		if err := s.push(nil, &wire.Frame{Type: wire.MsgPush, Worker: w, Floats: g}, &resp); err != nil {
			t.Fatal(err)
		}
	}
	if st := s.Stats(); st.Held != 2 || st.Updates != 0 {
		t.Fatalf("before the switch: held %d updates %d, want 2 and 0", st.Held, st.Updates)
	}
	r := proto.Regime{Gen: 1, Paradigm: "bsp", Base: 7}
	for range 2 { // the second: a resend after a reconnect
		if err := s.switchTo(r); err != nil {
			t.Fatal(err)
		}
	}
	st := s.Stats()
	if st.Applied != 2 || st.Held != 0 || st.SwitchDropped != 0 || st.Switches != 1 || st.Version != 7 {
		t.Fatalf("after the switch: applied %d held %d dropped by it %d switches %d version %d; want 2, 0, 0, 1, 7",
			st.Applied, st.Held, st.SwitchDropped, st.Switches, st.Version)
	}
	w, _ := s.Weights()
	if w[0] == 0 {
		t.Fatalf("weights %v: the held gradients were not applied", w)
	}
	// BSP from version 7: a round of all three closes it.
	for p := int32(0); p < 3; p++ {
		if err := s.push(nil, &wire.Frame{Type: wire.MsgPush, Worker: p, Tag: 7, Extra: 7, Floats: make([]float32, 8)}, &resp); err != nil {
			t.Fatal(err)
		}
	}
	if st := s.Stats(); st.Version != 8 || st.Pushes != st.Applied+st.Dropped+st.Held {
		t.Fatalf("after a BSP round: version %d, pushes %d applied %d dropped %d held %d", st.Version, st.Pushes, st.Applied, st.Dropped, st.Held)
	}
	// A rule the job does not switch among is refused by name.
	err = s.switchTo(proto.Regime{Gen: 2, Paradigm: "asp", Base: 9})
	if err == nil || !strings.Contains(err.Error(), "candidates") {
		t.Fatalf("switch to asp: %v, want a refusal naming the candidates", err)
	}
}

// TestRestartedShardWaitsForTheRegime: a restarted shard of an auto job
// takes no push (unavailable: the worker offers it again) until the
// coordinator's view has come, and the view carries the regime in force,
// which the shard takes before the push. Without the wait a shard
// restarted after a switch applied pushes under the first candidate's
// rule until the regime's own message came, numbered its versions one
// ahead of the gate's, and the job hung (`pacer chaos`, seed 2 run 11:
// every worker waiting on shard 1).
func TestRestartedShardWaitsForTheRegime(t *testing.T) {
	cfg := quickJob(t, "auto:among=asp|bsp", 3, 2)
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	s, err := newShard(ShardConfig{Index: 1, Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 100}, Init: make([]float32, 8), Restarted: true})
	if err != nil {
		t.Fatal(err)
	}
	var resp wire.Frame
	push := func() error {
		return s.push(nil, &wire.Frame{Type: wire.MsgPush, Shard: 1, Worker: 0, Tag: 5, Extra: 0, Floats: make([]float32, s.hi-s.lo)}, &resp)
	}
	if err := push(); wire.CodeOf(err) != wire.CodeUnavailable {
		t.Fatalf("push before the coordinator's view: %v, want unavailable", err)
	}
	if st := s.Stats(); st.Pushes != 0 || st.Rule != "asp" {
		t.Fatalf("a refused push counted (%d pushes), or rule %q before the view: want 0, asp", st.Pushes, st.Rule)
	}
	sv := &Server{shard: s, cfg: ServerConfig{Params: s.params}}
	var req wire.Frame
	if err := req.SetJSON(wire.MsgControl, proto.Control{Op: proto.OpMembers, Live: []int{0, 1, 2},
		Regime: &proto.Regime{Gen: 1, Paradigm: "bsp", Base: 4}}); err != nil {
		t.Fatal(err)
	}
	if err := sv.coordinatorControl(nil, &req, &resp); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Rule != "bsp" || st.Version != 4 {
		t.Fatalf("after the view: rule %q version %d, want bsp 4", st.Rule, st.Version)
	}
	if err := push(); err != nil {
		t.Fatalf("push after the view: %v", err)
	}
}
