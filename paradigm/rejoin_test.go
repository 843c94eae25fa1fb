package paradigm

import (
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
