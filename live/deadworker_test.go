package live

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/live/worker"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/wire"
)

// This file: issue 11's first hang ("BSP hung once: the dead worker was
// never removed; pushes stuck at 1,877 of 6,000"), never reproduced. These
// tests pin the interleavings a reading of the code found most plausible
// for a BSP worker that dies for good on a 2-shard job (docs/chaos.md):
// each must end with the dead worker removed from the gate and from both
// shards' rounds and the job finished. They passed before any change: no
// cause of the hang was found.

// victimStep is how far the victim, worker 2, gets before it dies.
type victimStep int

const (
	vHello      victimStep = iota // its control Hello, nothing more (no push: the starting worker's allowance)
	vRejoined                     // removed while silent, then back with a Hello of the same process (a rejoin), then dead
	vPulled                       // it pulled version 0 from both shards
	vPushed0                      // it pushed round 0 to shard 0 only: shard 1's round waits for it
	vPushedBoth                   // it pushed round 0 to both shards; its clock report never sent
	vReported                     // its report counted (round 0 complete at the gate), then dead before round 1
)

func (s victimStep) String() string {
	return [...]string{"hello", "rejoined", "pulled", "pushed-shard-0", "pushed-both", "reported"}[s]
}

// TestBSPKilledWorkerRemoved: a BSP job of 3 workers on 2 shards over the
// in-process transport, workers 0 and 1 real, worker 2 driven frame by
// frame and killed at each step of its round: its connections closed (the
// kernel's doing after kill -9), or, half-open, left open and silent (the
// coordinator removes by silence, not by a connection's error). The
// surviving workers must finish the job, and worker 2 must be removed
// from the gate and from both shards.
func TestBSPKilledWorkerRemoved(t *testing.T) {
	for _, step := range []victimStep{vHello, vRejoined, vPulled, vPushed0, vPushedBoth, vReported} {
		for _, halfOpen := range []bool{false, true} {
			name := step.String()
			if halfOpen {
				name += "/half-open"
			}
			t.Run(name, func(t *testing.T) { deadWorkerJob(t, step, halfOpen) })
		}
	}
}

// gateWatch is a coordinator's gate that signals each push, leave and
// join, the changes a test waits for.
type gateWatch struct {
	paradigm.Gate
	changed chan struct{}
}

// watchGate puts a gateWatch in c's gate's place.
func watchGate(c *Coordinator) *gateWatch {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := &gateWatch{Gate: c.gate, changed: make(chan struct{}, 1)}
	c.gate = w
	return w
}

func (g *gateWatch) signal() {
	select {
	case g.changed <- struct{}{}:
	default: // a signal is pending: the waiter checks the latest state
	}
}

func (g *gateWatch) Pushed(now time.Duration, p int, out []int) []int {
	defer g.signal()
	return g.Gate.Pushed(now, p, out)
}

func (g *gateWatch) Leave(now time.Duration, p int, out []int) []int {
	defer g.signal()
	return g.Gate.Leave(now, p, out)
}

func (g *gateWatch) Join(now time.Duration, p int, out []int) []int {
	defer g.signal()
	return g.Gate.Join(now, p, out)
}

func deadWorkerJob(t *testing.T, step victimStep, halfOpen bool) {
	// The victim beats every 50 ms until it dies, so only its death, not
	// a busy machine's late beat, removes it (a 300 ms timeout with a
	// silent victim removed it before its step at load 15–21).
	const victim, hb = 2, 500 * time.Millisecond
	cfg := quickJob(t, "bsp", 3, 2)
	cfg.HeartbeatTimeout, cfg.TrainLimit, cfg.TestLimit = hb, 480, 10
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	ds, err := job.Data(cfg)
	if err != nil {
		t.Fatal(err)
	}
	desc := &job.Description{Version: job.Version, Job: cfg, TrainN: ds.Train.N} // 30 pushes
	tr := &wire.Inproc{}
	addrs := []string{"s0", "s1"}
	var sv [2]*Server
	for i, a := range addrs {
		ln, err := tr.Listen(a)
		if err != nil {
			t.Fatal(err)
		}
		sv[i] = runServer(t, ServerConfig{Index: i, Params: desc, Listener: ln, Transport: tr, Token: "secret",
			ControlToken: "control-secret", ShardAddrs: addrs})
	}
	coord := sv[0].coord
	state := func() int { return coord.state(victim) }
	watch := watchGate(coord)
	// waitFor waits for cond, checked at each change of the gate (a push
	// counted, a worker removed or joined); the minute is a guard only.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		guard := time.NewTimer(time.Minute)
		defer guard.Stop()
		for !cond() {
			select {
			case <-watch.changed:
			case <-guard.C:
				t.Fatalf("%s: not within a minute (victim at %s); coordinator %+v", what, step, coord.Stats())
			}
		}
	}

	// The victim's control connection: one process (Inc) throughout.
	var conns []*wire.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	hello := func() *wire.Conn {
		t.Helper()
		meta, _ := json.Marshal(proto.HelloMeta{WorkerState: proto.WorkerState{Inc: 0x2a1}})
		c, err := dialHello(tr, "s0", "secret", wire.Hello{Role: proto.RoleControl, Worker: victim, Meta: meta})
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		return c
	}
	ctl := hello()
	if step == vRejoined {
		// Silent from the start (no push: 4 timeouts), removed, back.
		waitFor("the silent victim's removal", func() bool { return state() == removed })
		ctl = hello()
		var info proto.JobInfo
		if err := ctl.HelloOK().JSON(&info); err != nil || !info.Rejoined {
			t.Fatalf("the victim's second Hello: %+v, %v: want a rejoin", info, err)
		}
	}

	// The victim's heartbeats, until its death.
	dead := make(chan struct{})
	beating := make(chan struct{})
	go func() {
		defer close(beating)
		tick := time.NewTicker(50 * time.Millisecond) // the victim's beat, as a worker's (a test's own clock)
		defer tick.Stop()
		for {
			select {
			case <-dead:
				return
			case <-tick.C:
				f := wire.Frame{Type: wire.MsgHeartbeat, Worker: victim}
				ctl.Send(context.Background(), &f)
			}
		}
	}()
	die := func() { close(dead); <-beating }
	// earlyRemoval skips a run in which the machine starved the victim's
	// beats for a whole timeout before its death: the interleaving this
	// case pins did not happen (the membership traces cover it at any
	// load).
	earlyRemoval := func() {
		if st := coord.Stats(); st.Removed > 0 && step != vRejoined || st.Removed > 1 {
			die()
			t.Skipf("the victim was removed before its death (beats starved for %s on a loaded machine): coordinator %+v", hb, st)
		}
	}

	// The surviving workers push round 0 and wait at the gate for the victim.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	type result struct {
		res worker.Result
		err error
	}
	results := make(chan result, 2)
	for p := 0; p < 2; p++ {
		go func() {
			res, err := worker.Run(ctx, worker.Config{Coordinator: "s0", Transport: tr, Token: "secret", ID: p, Data: ds, ConnectTimeout: 5 * time.Second})
			results <- result{res, err}
		}()
	}
	waitFor("the survivors' first pushes", func() bool { return coord.Stats().Pushes >= 2 })

	// The victim's round, as far as step.
	var data [2]*wire.Conn
	if step >= vPulled {
		for i, a := range addrs {
			c, err := dialHello(tr, a, "secret", wire.Hello{Role: proto.RoleWorker, Worker: victim})
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
			data[i] = c
		}
	}
	var blocks [2][]float32
	for i, c := range data {
		if c == nil {
			break
		}
		var req, resp wire.Frame
		req.Type, req.Shard, req.Worker = wire.MsgPull, uint32(i), victim
		if err := c.Call(ctx, &req, &resp); err != nil || resp.Flags&proto.FlagPending != 0 || resp.Tag != 0 {
			earlyRemoval()
			t.Fatalf("the victim's pull of shard %d: version %d flags %#x, %v: want version 0", i, resp.Tag, resp.Flags, err)
		}
		blocks[i] = append([]float32(nil), resp.Floats...)
	}
	push := func(i int) {
		t.Helper()
		var req, resp wire.Frame
		req.Type, req.Shard, req.Worker, req.Floats = wire.MsgPush, uint32(i), victim, make([]float32, len(blocks[i]))
		if err := data[i].Call(ctx, &req, &resp); err != nil || resp.Flags&proto.FlagDropped != 0 {
			earlyRemoval()
			t.Fatalf("the victim's push to shard %d: flags %#x, %v", i, resp.Flags, err)
		}
	}
	switch step {
	case vPushed0:
		push(0)
	case vPushedBoth, vReported:
		push(0)
		push(1)
	}
	if step == vReported {
		var req, resp wire.Frame
		req.Type, req.Worker, req.Tag = wire.MsgClock, victim, 1
		if err := ctl.Call(ctx, &req, &resp); err != nil {
			earlyRemoval()
			t.Fatalf("the victim's clock report: %v", err)
		}
		// Counted: 3 with the survivors' two. The report closes round 0
		// and releases the survivors, whose round-1 pushes may already
		// be counted too (one each at most: round 1 waits for the victim).
		if st := coord.Stats(); st.Pushes < 3 || st.Pushes > 5 {
			earlyRemoval()
			t.Fatalf("coordinator counted %d pushes after the victim's report, want 3 (5 with the survivors' next)", st.Pushes)
		}
	}
	if step == vPushed0 {
		// Shard 0 has closed round 0 (every worker's gradient), shard 1
		// waits for the victim's.
		if v0, v1 := sv[0].Shard().Stats().Version, sv[1].Shard().Stats().Version; v0 != 1 || v1 != 0 {
			earlyRemoval()
			t.Fatalf("shard versions %d and %d after the victim's push to shard 0 alone, want 1 and 0", v0, v1)
		}
	}

	// kill -9: the beats stop, the connections close (or, half-open, go
	// silent).
	earlyRemoval()
	die()
	killed := time.Now()
	if !halfOpen {
		for _, c := range conns {
			c.Close()
		}
	}
	for p := 0; p < 2; p++ {
		select {
		case r := <-results:
			if r.err != nil {
				t.Fatalf("worker %d: %v", r.res.ID, r.err)
			}
		case <-time.After(time.Minute): // a guard against a hang: the event is the survivor's result
			t.Fatalf("the survivors did not finish within a minute of the kill: coordinator %+v; victim state %d; shard versions %d, %d",
				coord.Stats(), state(), sv[0].Shard().Stats().Version, sv[1].Shard().Stats().Version)
		}
	}
	st := coord.Stats()
	t.Logf("%s: finished %v after the kill; pushes %d of %d, removed %d, joined %d, live %d; shard versions %d, %d",
		step, time.Since(killed).Round(time.Millisecond), st.Pushes, st.Target, st.Removed, st.Joined, st.Live,
		sv[0].Shard().Stats().Version, sv[1].Shard().Stats().Version)
	if !st.Done || st.Pushes < st.Target {
		t.Errorf("job not done: pushes %d of %d", st.Pushes, st.Target)
	}
	if state() != removed || st.Removed < 1 {
		t.Errorf("victim state %d, %d removed: want the victim removed", state(), st.Removed)
	}
	for i := range sv {
		sh := sv[i].Shard()
		sh.mu.Lock()
		in := sh.members[victim]
		sh.mu.Unlock()
		if in {
			t.Errorf("shard %d still counts the victim a member", i)
		}
	}
}
