package paradigm

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// Issue 9 (a): a worker that leaves while held leaves its hold entry behind;
// after it rejoins (the live coordinator re-admits a removed worker under its
// old id) that entry must not release it. Worker 0 takes 10 ms per
// iteration, worker 1 30 ms; s_L = 1. Worker 0 is held at clock 6 (released
// once min ≥ 5), leaves, rejoins at clock 3, runs ahead again under a grant
// and is held at clock 8 (min ≥ 7). Worker 1's push to clock 5 meets the old
// entry's need, not the new one: releasing worker 0 there would let it start
// an iteration at gap 3 > s_L.
func TestRejoinedWorkerIgnoresItsOldHold(t *testing.T) {
	g := newDSSPGate(2, Spec{Kind: DSSP, SL: 1, SU: 13, Wait: DSSPWaitSL, Interval: DSSPIntervalPush})
	ms := time.Millisecond
	push := func(at, p int) []int { return g.Pushed(time.Duration(at)*ms, p, nil) }
	for _, ev := range [][2]int{{10, 0}, {20, 0}, {30, 1}, {40, 0}, {60, 1}, {70, 0}, {80, 0}, {90, 0}} {
		push(ev[0], ev[1])
	}
	if !g.Held(0) || g.Clock(0) != 6 || g.Min() != 2 {
		t.Fatalf("setup: worker 0 held=%v at clock %d, min %d; want held at 6, min 2", g.Held(0), g.Clock(0), g.Min())
	}
	g.Leave(90*ms, 0, nil)
	push(90, 1)
	if rel := g.Join(95*ms, 0, nil); !slices.Equal(rel, []int{0}) || g.Clock(0) != 3 {
		t.Fatalf("rejoin released %v at clock %d, want [0] at 3", rel, g.Clock(0))
	}
	for _, ev := range [][2]int{{105, 0}, {115, 0}, {120, 1}, {130, 0}, {140, 0}, {150, 0}} {
		push(ev[0], ev[1])
	}
	if !g.Held(0) || g.Clock(0) != 8 || g.Min() != 4 {
		t.Fatalf("worker 0 held=%v at clock %d, min %d; want held at 8, min 4", g.Held(0), g.Clock(0), g.Min())
	}
	if rel := push(150, 1); !slices.Equal(rel, []int{1}) || !g.Held(0) {
		t.Fatalf("worker 1's push to clock %d released %v: the old hold entry freed worker 0 at gap %d > s_L",
			g.Clock(1), rel, g.Clock(0)-g.Min())
	}
}

// DSSP's default wait rule (wait=next) with workers that leave and rejoin
// (issue 9 (a) covers wait=sl above): a held worker is released only at the
// push, or the leave, of the worker it waits for, which is the slowest
// worker right after the hold; a worker that leaves while others wait for
// it does not leave them waiting (no stall). Random pushes with each
// worker's own iteration time, and now and then a leave or a rejoin.
func TestDSSPWaitNextReleasesOnlyAtTheAwaitedPush(t *testing.T) {
	modes := []DSSPMode{DSSPLiteral, DSSPBounded, DSSPExactFigure}
	ms := time.Millisecond
	wakes := 0
	for seed := uint64(1); seed <= 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 9))
		k := 3 + int(seed%3)
		g := newDSSPGate(k, Spec{Kind: DSSP, SL: 1, SU: 1 + int(seed%6), Mode: modes[seed%3]})
		ival := make([]time.Duration, k) // each worker's iteration time
		next := make([]time.Duration, k) // its next push (running workers)
		waitOn := make([]int, k)         // whom a held worker waits for
		running, live := make([]bool, k), make([]bool, k)
		for p := range ival {
			ival[p] = time.Duration(5+rng.IntN(40)) * ms
			next[p], running[p], live[p], waitOn[p] = ival[p], true, true, -1
		}
		now := time.Duration(0)
		for step := 0; step < 600; step++ {
			// The next event: the earliest push, or now and then a leave
			// or a rejoin.
			src, kind := -1, "push"
			for p := range next {
				if running[p] && (src < 0 || next[p] < next[src]) {
					src = p
				}
			}
			if c := rng.IntN(40); c == 0 {
				src, kind = rng.IntN(k), "leave"
				if !live[src] {
					kind = "join"
				}
			}
			if src < 0 {
				t.Fatalf("seed %d step %d: no worker runs (stall)", seed, step)
			}
			var rel []int
			switch kind {
			case "push":
				now = next[src]
				running[src] = false
				rel = g.Pushed(now, src, nil)
			case "leave":
				nLive := 0
				for _, l := range live {
					if l {
						nLive++
					}
				}
				if nLive == 1 {
					continue // the last worker stays
				}
				live[src], running[src], waitOn[src] = false, false, -1
				rel = g.Leave(now, src, nil)
			case "join":
				live[src] = true
				rel = g.Join(now, src, nil)
			}
			for _, q := range rel {
				if q != src && waitOn[q] != src {
					t.Fatalf("seed %d step %d: worker %d released at the %s of worker %d, but it waits for worker %d",
						seed, step, q, kind, src, waitOn[q])
				}
				if q != src {
					wakes++
				}
				running[q], waitOn[q] = true, -1
				next[q] = now + ival[q]
			}
			// Holds made by this event (the pusher's own, and re-holds of
			// the workers it woke) wait for the slowest worker now.
			for q := range waitOn {
				if live[q] && !running[q] && g.Held(q) && (waitOn[q] < 0 || waitOn[q] == src) {
					waitOn[q] = g.slowest()
				}
			}
		}
	}
	if wakes == 0 {
		t.Fatal("no held worker was ever released by another's push: the test exercised nothing")
	}
}
