package live

import (
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/internal/ratelog"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// TestWaitWatch: a wait is reported once it has lasted proto.WaitReportAfter,
// then every proto.WaitReportAfter again, never before.
func TestWaitWatch(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := proto.NewWaitWatch(t0)
	for _, c := range []struct {
		at   time.Duration
		want bool
	}{
		{0, false},
		{proto.WaitReportAfter - time.Millisecond, false},
		{proto.WaitReportAfter, true},
		{proto.WaitReportAfter + time.Second, false},
		{2*proto.WaitReportAfter - time.Millisecond, false},
		{2 * proto.WaitReportAfter, true},
		{5 * proto.WaitReportAfter, true}, // a late report (a busy machine) is made once
		{5*proto.WaitReportAfter + time.Second, false},
	} {
		d, ok := w.Due(t0.Add(c.at))
		if ok != c.want || (ok && d != c.at) {
			t.Errorf("at %s: report %v after %s, want %v", c.at, ok, d, c.want)
		}
	}
}

// TestCoordinatorReportsStall (issue 37): a BSP round that counts no push
// for 10 s is logged with the workers it waits for, the held ones and the
// one that has not pushed, every 10 s while it lasts, never sooner.
func TestCoordinatorReportsStall(t *testing.T) {
	t0 := time.Unix(1000, 0)
	cfg := quickJob(t, "bsp", 3, 1)
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	c, err := newCoordinator(CoordConfig{Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 1000}, ShardAddrs: []string{"s0"},
		Logger: newTestLogger(&logs), StartupGrace: time.Minute}, t0)
	if err != nil {
		t.Fatal(err)
	}
	c.plog = ratelog.New(c.log, ratelog.Limits{})
	var resp wire.Frame
	for p := range 3 {
		if _, _, err := c.hello(t0, &wire.Peer{}, int32(p), proto.WorkerState{Inc: uint64(p + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	// Workers 0 and 1 push round 0 and wait at the gate; worker 2 never
	// pushes (a stopped shard holds its push) but keeps beating.
	for p := range 2 {
		if _, _, err := c.clock(t0, nil, p, clockReport{seq: 1}, &resp); err != nil {
			t.Fatal(err)
		}
	}
	stalls := func() int { return strings.Count(logs.String(), "no push counted") }
	for now := t0; !now.After(t0.Add(25 * time.Second)); now = now.Add(c.every) {
		for p := range 3 {
			c.heartbeat(now, nil, p)
		}
		c.sweep(now)
		if now.Sub(t0) < proto.WaitReportAfter && stalls() > 0 {
			t.Fatalf("a stall reported after %s, before %s", now.Sub(t0), proto.WaitReportAfter)
		}
	}
	if n := stalls(); n != 2 {
		t.Fatalf("%d stall reports in 25 s, want 2 (at 10 s and 20 s):\n%s", n, logs.String())
	}
	line := logs.String()
	if !strings.Contains(line, `"held at the gate (worker@clock)"="0@1 1@1"`) || !strings.Contains(line, `"not held: computing, or waiting on a shard (worker@clock)"=2@0`) {
		t.Errorf("the stall report does not name the held workers 0 and 1 and the pushing worker 2:\n%s", line)
	}
	// A push starts the watch again.
	if _, _, err := c.clock(t0.Add(26*time.Second), nil, 2, clockReport{seq: 1}, &resp); err != nil {
		t.Fatal(err)
	}
	for now := t0.Add(26 * time.Second); now.Before(t0.Add(35 * time.Second)); now = now.Add(c.every) {
		for p := range 3 {
			c.heartbeat(now, nil, p)
		}
		c.sweep(now)
	}
	if n := stalls(); n != 2 {
		t.Errorf("%d stall reports after the round went on, want still 2", n)
	}
}

// TestProbeState: a shard silent for proto.WaitReportAfter is reported, then
// every proto.WaitReportAfter while it stays silent, and its answer afterwards
// is reported once; answers in time report nothing.
func TestProbeState(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := probeState{quietSince: t0}
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	if _, back := s.answered(at(probeEvery)); back {
		t.Error("an answer in time reported a return")
	}
	for _, c := range []struct {
		d    time.Duration
		want bool
	}{
		{probeEvery + proto.WaitReportAfter/2, false},
		{probeEvery + proto.WaitReportAfter, true},
		{probeEvery + proto.WaitReportAfter + probeEvery, false},
		{probeEvery + 2*proto.WaitReportAfter, true},
	} {
		if d, ok := s.silent(at(c.d)); ok != c.want || (ok && d != c.d-probeEvery) {
			t.Errorf("silent at %s: report %v after %s, want %v", c.d, ok, d, c.want)
		}
	}
	if d, back := s.answered(at(probeEvery + 2*proto.WaitReportAfter + time.Second)); !back || d != 2*proto.WaitReportAfter+time.Second {
		t.Errorf("the return: %v after %s", back, d)
	}
	if _, back := s.answered(at(probeEvery + 3*proto.WaitReportAfter)); back {
		t.Error("a second answer reported a return again")
	}
}
