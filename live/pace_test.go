package live

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
// unstretched), and then
// a speed-2 worker's iteration lasts twice its real step; with --base the
// draw is in units of it from the first iteration.
func TestPaceStretches(t *testing.T) {
	ctx := context.Background()
	pc, err := newPace(timing.WorkerSpec{Speeds: []float64{2}}, 1, 0, 1)
	if err != nil || pc == nil {
		t.Fatal(pc, err)
	}
	const step = 3 * time.Millisecond
	for i := range measureSteps - 1 {
		// A measuring step never waits: no timer exists yet (checked by
		// state, not by the clock, which a loaded machine stretches).
		if err := pc.hold(ctx, time.Now(), step); err != nil || pc.timer != nil || pc.base != 0 {
			t.Fatalf("measuring step %d: timer %v, base %s (%v)", i, pc.timer != nil, pc.base, err)
		}
	}
	// The last measured step sets the base and is itself stretched.
	start := time.Now()
	if err := pc.hold(ctx, start, step); err != nil {
		t.Fatal(err)
	}
	if pc.base != step {
		t.Fatalf("measured base %s, want %s", pc.base, step)
	}
	// A timer never fires early: the lower bound is exact.
	if got := time.Since(start); got < 2*step {
		t.Errorf("a speed-2 iteration lasted %s, want at least %s", got, 2*step)
	}
	given, err := newPace(timing.WorkerSpec{Base: 4 * time.Millisecond, Speeds: []float64{1, 2}}, 2, 3, 1) // id 3: stream 1, speed 2
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if err := given.hold(ctx, start, 0); err != nil {
		t.Fatal(err)
	}
	if got := time.Since(start); got < 8*time.Millisecond {
		t.Errorf("--base 4ms, speed 2: the iteration lasted %s, want at least 8ms", got)
	}
	// A stop ends the hold at once.
	slow, _ := newPace(timing.WorkerSpec{Base: time.Hour, Speeds: []float64{1}}, 1, 0, 1)
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(10*time.Millisecond, cancel)
	start = time.Now()
	if err := slow.hold(cctx, start, 0); err == nil || time.Since(start) > 10*time.Second {
		t.Errorf("a cancelled hold returned %v after %s", err, time.Since(start))
	}
}
