package launch

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/timing"
)

// TestInprocAutoSwitches (issue 36): a live inproc job under --paradigm
// auto whose worker 3 becomes six times as slow after its 30th iteration
// (the pace's window, in its own model time) leaves BSP for backup
// workers, which stop waiting for it, and finishes with nothing lost:
// every shard's pushes are applied, dropped by the rule or held for a
// round, and the switch itself dropped none. Nothing here waits for a
// guessed duration: the job ends by its pushes; the deadline only guards
// against a hang.
func TestInprocAutoSwitches(t *testing.T) {
	autoSwitches(t, Options{Data: synth(t)})
}

// TestTCPAutoSwitches is the same job as processes over TCP: the servers
// are pacer server processes, which hand auto's planner to shard 0.
func TestTCPAutoSwitches(t *testing.T) {
	skipUnderRace(t)
	autoSwitches(t, tcpOpts(t))
}

func autoSwitches(t *testing.T, opt Options) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := quickJob(t, "auto:every=4,among=bsp|backup:b=1", 4, 2)
	cfg.Epochs = 3
	cfg.Timing = timing.WorkerSpec{Base: 10 * time.Millisecond}
	var err error
	if cfg.Timing.Straggler, err = timing.ParseStraggler("slow:worker=3,factor=6,from=30"); err != nil {
		t.Fatal(err)
	}
	if testing.Verbose() {
		opt.Log = os.Stderr
	}
	res, err := TrainResult(ctx, cfg, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, cs := res.Run, res.Coord
	t.Logf("paradigm %s, %d decisions: %+v", cs.Paradigm, len(cs.Decisions), cs.Decisions)
	switched := false
	for _, d := range r.Decisions {
		switched = switched || (d.Switch && d.Current == "bsp" && d.Best == "backup:b=1")
	}
	if !switched || cs.Paradigm != "backup:b=1" {
		t.Errorf("in force at the end: %s; decisions %+v: want a switch from bsp to backup:b=1", cs.Paradigm, r.Decisions)
	}
	var sum int64
	for _, w := range r.WorkerPushes {
		sum += w
	}
	if sum != r.Pushes {
		t.Errorf("pushes %d, per worker %v (sum %d)", r.Pushes, r.WorkerPushes, sum)
	}
	for _, st := range res.Shards {
		t.Logf("shard %d: pushes %d applied %d dropped %d held %d switches %d (dropped by them %d) version %d",
			st.Shard, st.Pushes, st.Applied, st.Dropped, st.Held, st.Switches, st.SwitchDropped, st.Version)
		if st.Switches < 1 || st.SwitchDropped != 0 || st.Pushes != st.Applied+st.Dropped+st.Held {
			t.Errorf("shard %d: %d pushes = %d applied + %d dropped + %d held? %d switches dropped %d",
				st.Shard, st.Pushes, st.Applied, st.Dropped, st.Held, st.Switches, st.SwitchDropped)
		}
		// Every push a worker made reached every shard once.
		if st.Pushes < r.Pushes {
			t.Errorf("shard %d took %d pushes, the coordinator counted %d", st.Shard, st.Pushes, r.Pushes)
		}
	}
}
