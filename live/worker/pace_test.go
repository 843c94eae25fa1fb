package worker

import (
	"context"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/timing"
)

// A job without a timing model has no pace: its workers run at their
// real speed and pay nothing for the emulation.
func TestNoPaceWithoutATimingModel(t *testing.T) {
	if pc, err := newPace(timing.WorkerSpec{Base: time.Second}, 3, 1, 1); pc != nil || err != nil {
		t.Errorf("pace %+v, %v for a job without speeds, jitter or stragglers", pc, err)
	}
	if _, err := newPace(timing.WorkerSpec{Straggler: timing.MustStraggler("slow:worker=5")}, 3, 1, 1); err == nil {
		t.Error("a straggler model of a worker the job does not have was accepted")
	}
}

// Without --base a worker's first computes set it (all but the last
// unstretched), and then a speed-2 worker's iteration lasts twice its real
// step; with --base the draw is in units of it from the first iteration.
// The ends are a trace of made-up instants: no clock is read.
func TestPaceStretches(t *testing.T) {
	pc, err := newPace(timing.WorkerSpec{Speeds: []float64{2}}, 1, 0, 1)
	if err != nil || pc == nil {
		t.Fatal(pc, err)
	}
	t0 := time.Unix(1000, 0)
	const step = 3 * time.Millisecond
	for i := range measureSteps - 1 {
		// A measuring step never waits.
		if end := pc.end(t0, step); !end.IsZero() || pc.base != 0 {
			t.Fatalf("measuring step %d: end %v, base %s", i, end, pc.base)
		}
	}
	// The last measured step sets the base and is itself stretched.
	if end := pc.end(t0, step); end != t0.Add(2*step) || pc.base != step {
		t.Fatalf("after measuring: base %s, end %s after the start; want %s, %s", pc.base, end.Sub(t0), step, 2*step)
	}
	// From then on every iteration: a compute longer than the draw ends
	// when it ends (end before now: no hold).
	if end := pc.end(t0, 10*step); end != t0.Add(2*step) {
		t.Errorf("the iteration after measuring ends %s after its start, want %s", end.Sub(t0), 2*step)
	}
	given, err := newPace(timing.WorkerSpec{Base: 4 * time.Millisecond, Speeds: []float64{1, 2}}, 2, 3, 1) // id 3: stream 1, speed 2
	if err != nil {
		t.Fatal(err)
	}
	if end := given.end(t0, 0); end != t0.Add(8*time.Millisecond) {
		t.Errorf("--base 4ms, speed 2: the iteration ends %s after its start, want 8ms", end.Sub(t0))
	}
}

// A cluster that changes reaches a live worker: its model time counts from
// its first iteration in units of its base, so a window from 10 to 20
// units at a 2 ms base slows the iterations that start from 20 ms to 40 ms
// after it, and no other.
func TestPaceFollowsAWindow(t *testing.T) {
	pc, err := newPace(timing.WorkerSpec{Base: time.Second, Straggler: timing.MustStraggler("slow:worker=1,factor=4,from=10,to=20")}, 2, 1, 1)
	if err != nil || pc == nil {
		t.Fatal(pc, err)
	}
	pc.base = 2 * time.Millisecond // as --base 2ms would set it, the model's unit a second
	t0 := time.Unix(1000, 0)
	for _, tc := range []struct{ at, want time.Duration }{
		{0, 2 * time.Millisecond},
		{19 * time.Millisecond, 2 * time.Millisecond},
		{20 * time.Millisecond, 8 * time.Millisecond},
		{39 * time.Millisecond, 8 * time.Millisecond},
		{40 * time.Millisecond, 2 * time.Millisecond},
	} {
		start := t0.Add(tc.at)
		if got := pc.end(start, 0).Sub(start); got != tc.want {
			t.Errorf("an iteration %s after the first lasts %s, want %s", tc.at, got, tc.want)
		}
	}
}

// hold waits only for what end chose: an iteration whose end has passed
// returns at once, without a timer, and a stop ends a long hold.
func TestPaceHold(t *testing.T) {
	ctx := context.Background()
	pc, err := newPace(timing.WorkerSpec{Base: time.Hour, Speeds: []float64{1}}, 1, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1000, 0)
	if err := pc.hold(ctx, t0.Add(2*time.Hour), t0, 0); err != nil || pc.timer != nil {
		t.Errorf("an iteration past its end: %v, timer %v", err, pc.timer != nil)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := pc.hold(cctx, t0, t0, 0); err == nil {
		t.Error("a cancelled hour-long hold returned nil")
	}
}
