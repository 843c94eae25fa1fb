package live

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/internal/ratelog"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/membership"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

func stateCoord(t *testing.T, spec string, k int) *Coordinator {
	t.Helper()
	cfg := quickJob(t, spec, k, 1)
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	c, err := newCoordinator(CoordConfig{Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 1000}, ShardAddrs: []string{"s0"}}, stateT0)
	if err != nil {
		t.Fatal(err)
	}
	c.plog = ratelog.New(c.log, ratelog.Limits{})
	return c
}

// stateT0 is when stateCoord's coordinators start.
var stateT0 = time.Unix(1000, 0)

// setTarget makes a test coordinator's job n pushes long (before any
// worker has said Hello).
func (c *Coordinator) setTarget(n int64) {
	c.target = n
	c.ms = membership.New(membership.Config{Workers: c.k, IDCap: c.idCap, Timeout: c.timeout, Grace: c.graceD, Every: c.every, Target: n}, c.start)
}

// TestCoordinatorStateRestored: a coordinator restored from its file has
// the counts the file holds, and takes from each reconnecting worker the
// reports it answered after writing the file and the clock it named: the
// job's count is exact and BSP's gate releases on the learned clocks.
func TestCoordinatorStateRestored(t *testing.T) {
	dir := t.TempDir()
	c := stateCoord(t, "bsp", 2)
	inc := []uint64{11, 13}
	var resp wire.Frame
	for p := range 2 {
		if _, _, err := c.hello(stateT0, &wire.Peer{}, int32(p), proto.WorkerState{Inc: inc[p]}); err != nil {
			t.Fatal(err)
		}
	}
	push := func(c *Coordinator, p int, seq uint64) {
		t.Helper()
		if _, _, err := c.clock(stateT0, nil, p, clockReport{seq: seq}, &resp); err != nil {
			t.Fatal(err)
		}
	}
	for seq := uint64(1); seq <= 3; seq++ {
		push(c, 0, seq)
		push(c, 1, seq)
	}
	if err := c.saveState(dir); err != nil {
		t.Fatal(err)
	}
	// After the file: worker 0 pushes twice more (its answers name clocks
	// 4 and 5), worker 1 once (clock 4), so worker 0 waits at 5.
	push(c, 0, 4)
	push(c, 1, 4)
	push(c, 0, 5)
	if !c.gate.Held(0) || c.ms.Pushes() != 9 {
		t.Fatalf("setup: worker 0 held %v, pushes %d", c.gate.Held(0), c.ms.Pushes())
	}

	r := stateCoord(t, "bsp", 2)
	st, err := readCoordState(dir)
	if err != nil || st == nil {
		t.Fatalf("read: %v %v", st, err)
	}
	if err := r.restore(stateT0, st); err != nil {
		t.Fatal(err)
	}
	if r.ms.Pushes() != 6 || r.gate.Clock(0) != 3 || r.restarts != 1 {
		t.Fatalf("restored pushes %d clock %d restarts %d, want 6, 3, 1", r.ms.Pushes(), r.gate.Clock(0), r.restarts)
	}
	// Worker 0 waits for its release after the report answered at 5.
	if _, notify, err := r.hello(stateT0, &wire.Peer{}, 0, proto.WorkerState{Inc: 11, Seq: 5, Acked: 5, Clock: 5, Held: true}); err != nil || len(notify) != 0 {
		t.Fatalf("worker 0's hello: notify %d, err %v: want it held", len(notify), err)
	}
	// Worker 1 computes after its answer at 4, then reports push 5.
	if _, _, err := r.hello(stateT0, &wire.Peer{}, 1, proto.WorkerState{Inc: 13, Seq: 5, Acked: 4, Clock: 4}); err != nil {
		t.Fatal(err)
	}
	if r.ms.Pushes() != 9 || r.gate.Clock(0) != 5 || r.gate.Clock(1) != 4 || !r.gate.Held(0) {
		t.Fatalf("after the hellos: pushes %d, clocks %d %d, worker 0 held %v; want 9, 5, 4, held", r.ms.Pushes(), r.gate.Clock(0), r.gate.Clock(1), r.gate.Held(0))
	}
	notify, _, err := r.clock(stateT0, nil, 1, clockReport{seq: 5}, &resp)
	if err != nil || r.ms.Pushes() != 10 || len(notify) != 2 {
		t.Fatalf("worker 1's report: pushes %d, released %d, err %v: want 10 and both released", r.ms.Pushes(), len(notify), err)
	}

	// A file of another job is refused, naming what differs.
	other := stateCoord(t, "asp", 2)
	if err := other.restore(stateT0, st); err == nil || !strings.Contains(err.Error(), "another job") {
		t.Fatalf("restoring a bsp job's state into an asp job: %v", err)
	}
	os.WriteFile(coordFile(dir), []byte("{"), 0o644)
	if _, err := readCoordState(dir); err == nil {
		t.Fatal("a damaged state file was read")
	}
}

// The coordinator's state may be written before shard 0's first
// checkpoint has made the directory (a hand-started job whose
// --checkpoint-dir does not exist yet): it makes it, as a checkpoint does.
func TestCoordinatorStateMakesItsDirectory(t *testing.T) {
	dir := t.TempDir() + "/not/yet"
	c := stateCoord(t, "asp", 1)
	if err := c.saveState(dir); err != nil {
		t.Fatalf("saving into a directory not made yet: %v", err)
	}
	if _, err := readCoordState(dir); err != nil {
		t.Fatal(err)
	}
}

// TestRestoredWorkerThatNeverReturnsRemoved: a worker live in the state
// file that died before shard 0 came back never redials; the restored
// coordinator removes it after the starting worker's allowance, so BSP
// does not wait for it forever (chaos seed 2, run 24: worker 2 killed,
// then shard 0 killed and restored before the file recorded the removal;
// the job hung at 682 of 1000 pushes).
func TestRestoredWorkerThatNeverReturnsRemoved(t *testing.T) {
	dir := t.TempDir()
	c := stateCoord(t, "bsp", 2)
	for p := range 2 {
		if _, _, err := c.hello(stateT0, &wire.Peer{}, int32(p), proto.WorkerState{Inc: uint64(11 + p)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.saveState(dir); err != nil {
		t.Fatal(err)
	}
	r := stateCoord(t, "bsp", 2)
	st, err := readCoordState(dir)
	if err != nil || st == nil {
		t.Fatalf("read: %v %v", st, err)
	}
	if err := r.restore(stateT0, st); err != nil {
		t.Fatal(err)
	}
	// Worker 0 comes back and beats; worker 1 never does.
	if _, _, err := r.hello(stateT0, &wire.Peer{}, 0, proto.WorkerState{Inc: 11}); err != nil {
		t.Fatal(err)
	}
	t0 := stateT0
	limit := max(r.timeout, min(r.graceD, membership.StartupTimeouts*r.timeout))
	for now := t0; !now.After(t0.Add(limit + 4*r.every)); now = now.Add(r.every) {
		r.heartbeat(now, nil, 0)
		r.sweep(now)
	}
	if r.state(1) != removed || r.state(0) != live {
		t.Fatalf("states after %s: worker 0 %d, worker 1 %d: want worker 1 removed (%d), worker 0 live (%d)",
			limit, r.state(0), r.state(1), removed, live)
	}
}

// TestRestoredCoordinatorTakesAReturnedProcess: a worker killed and
// started again after the state file was written, then counted by the
// coordinator before its restart, redials the restored one as a process
// the file does not know. Its reports count from its own first push, not
// refused as beyond the file's (chaos seed 1, run 29: "clock report 10 of
// worker 2: the last one counted is 0", the worker exited 1).
func TestRestoredCoordinatorTakesAReturnedProcess(t *testing.T) {
	dir := t.TempDir()
	c := stateCoord(t, "asp", 2)
	var resp wire.Frame
	for p := range 2 {
		if _, _, err := c.hello(stateT0, &wire.Peer{}, int32(p), proto.WorkerState{Inc: uint64(11 + p)}); err != nil {
			t.Fatal(err)
		}
	}
	push := func(c *Coordinator, p int, seq uint64) {
		t.Helper()
		if _, _, err := c.clock(stateT0, nil, p, clockReport{seq: seq}, &resp); err != nil {
			t.Fatal(err)
		}
	}
	for seq := uint64(1); seq <= 3; seq++ {
		push(c, 0, seq)
		push(c, 1, seq)
	}
	if err := c.saveState(dir); err != nil {
		t.Fatal(err)
	}
	// Worker 1's process dies; a new one (inc 99) returns and pushes 4
	// times before the coordinator dies too.
	if _, _, err := c.hello(stateT0, nil, 1, proto.WorkerState{Inc: 99}); err != nil { // nil: logged without an address
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 4; seq++ {
		push(c, 1, seq)
	}
	r := stateCoord(t, "asp", 2)
	st, err := readCoordState(dir)
	if err != nil || st == nil {
		t.Fatalf("read: %v %v", st, err)
	}
	if err := r.restore(stateT0, st); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.hello(stateT0, nil, 1, proto.WorkerState{Inc: 99, Seq: 4, Acked: 4, Clock: int64(c.gate.Clock(1))}); err != nil {
		t.Fatal(err)
	}
	push(r, 1, 5) // refused before: "the last one counted is 0"
	if r.ms.Pushes() != 6+4+1 {
		t.Errorf("pushes %d, want the file's 6, the returned process's 4 answered before the restart and 1 since", r.ms.Pushes())
	}
}

// Under elastic apply=local the coordinator counts the gate's barriers for
// the shards (each new count handed to the links) and the job's end adds
// one; the count is in its state file, and a restarted coordinator counts
// on from the file, or from a worker that was released at a later
// barrier than the file knows (a count beyond the job is not believed).
func TestCoordinatorBarrierCount(t *testing.T) {
	// apply=arrival's gate passes barriers too, but its shards have none
	// to apply: nothing is counted or sent.
	a := stateCoord(t, "elastic:r=4", 2)
	a.onBarrier = func(b uint64) { t.Errorf("apply=arrival: barrier %d sent to the shards", b) }
	var ar wire.Frame
	for seq := uint64(1); seq <= 3; seq++ {
		for p := range 2 {
			if _, _, err := a.clock(stateT0, nil, p, clockReport{seq: seq}, &ar); err != nil {
				t.Fatal(err)
			}
		}
	}
	if a.finish(stateT0); a.Stats().Barriers != 0 {
		t.Errorf("apply=arrival counts %d barriers for the shards", a.Stats().Barriers)
	}
	dir := t.TempDir()
	c := stateCoord(t, "elastic:r=4,apply=local", 2)
	var told []uint64
	c.onBarrier = func(b uint64) { told = append(told, b) }
	var resp wire.Frame
	for p := range 2 {
		if _, _, err := c.hello(stateT0, &wire.Peer{}, int32(p), proto.WorkerState{Inc: uint64(p + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	for seq := uint64(1); seq <= 3; seq++ {
		for p := range 2 {
			if _, _, err := c.clock(stateT0, nil, p, clockReport{seq: seq}, &resp); err != nil {
				t.Fatal(err)
			}
		}
	}
	b := c.Stats().Barriers
	if b == 0 || len(told) != int(b) || told[len(told)-1] != b || c.barPushes == 0 {
		t.Fatalf("%d barriers; the links were told %v (pushes at the latest %d)", b, told, c.barPushes)
	}
	if err := c.saveState(dir); err != nil {
		t.Fatal(err)
	}
	c.finish(stateT0)
	if got := c.Stats().Barriers; got != b+1 || told[len(told)-1] != b+1 {
		t.Fatalf("the job's end: %d barriers (told %v), want one more than %d", got, told, b)
	}
	st, err := readCoordState(dir)
	if err != nil || st.Barriers != b {
		t.Fatalf("state file: %v, %d barriers, want %d", err, st.Barriers, b)
	}
	r := stateCoord(t, "elastic:r=4,apply=local", 2)
	told = nil
	r.onBarrier = func(b uint64) { told = append(told, b) }
	if err := r.restore(stateT0, st); err != nil {
		t.Fatal(err)
	}
	if got := r.Stats().Barriers; got != b {
		t.Fatalf("restored: %d barriers, want the file's %d", got, b)
	}
	if _, _, err := r.hello(stateT0, &wire.Peer{}, 0, proto.WorkerState{Inc: 1, Seq: 3, Acked: 3, Clock: 3, Barriers: 1 << 40}); err != nil {
		t.Fatal(err)
	}
	if got := r.Stats().Barriers; got != b {
		t.Fatalf("a worker claiming barrier 2⁴⁰ moved the count to %d", got)
	}
	info, _, err := r.hello(stateT0, &wire.Peer{}, 1, proto.WorkerState{Inc: 2, Seq: 3, Acked: 3, Clock: 3, Barriers: b + 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Stats().Barriers; got != b+2 || info.Barriers != b+2 || len(told) == 0 || told[len(told)-1] != b+2 {
		t.Fatalf("a worker released at barrier %d: count %d, hello says %d, links told %v", b+2, got, info.Barriers, told)
	}
}
