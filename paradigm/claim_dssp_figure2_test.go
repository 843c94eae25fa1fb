// Claim: the DSSP paper's Figure 2 (PARADIGMS.md §4). The controller picks
// r* = 3 in R = [0, 4] for the figure's fastest and slowest workers, the r
// that minimises the fastest worker's wait for the slowest's next push (the
// dashed line), and a worker stopped at Sim_p[r*] waits exactly that long
// under wait=next, where wait=sl (line 17 as printed) keeps it held.

package paradigm

import (
	"slices"
	"testing"
	"time"
)

// waitNext is the wait=next cost of stopping p at Sim_p[r]: the time until
// the slowest worker's first simulated push at or after it (Figure 2's
// dashed line).
func waitNext(ap0, ip, as0, is time.Duration, r int) time.Duration {
	stop := ap0 + time.Duration(r)*ip
	next := as0 + is
	for next < stop {
		next += is
	}
	return next - stop
}

// figure2State is the DSSP paper's Figure 2 as a two-worker gate: worker 0
// (worker₁, the fastest) takes 1 s per iteration, worker 1 (worker_n, the
// slowest) 3.3 s and pushed 0.2 s before worker 0's push at the returned
// time; s_L = 3, s_U = 7, so R = [0, 4]. Clocks are (4, 1): the push makes
// the gap 4 > s_L, the red line where SSP(s_L) would stop worker 0.
func figure2State(g *dsspGate) time.Duration {
	now := 10 * sec
	for i := 0; i < 4; i++ {
		g.c.push(0)
	}
	g.c.push(1)
	g.a0[0], g.relAt[0], g.seen[0] = now-sec, now-sec, 2
	g.a0[1], g.relAt[1], g.ival[1], g.seen[1] = now-200*time.Millisecond, now-200*time.Millisecond, 3300*time.Millisecond, 2
	return now
}

// The DSSP paper's Figure 2: r* = 3 in R = [0, 4]. The slowest's next
// pushes are predicted at now+3.1 s and now+6.4 s; stopping at now+r s costs
// 3.1, 2.1, 1.1, 0.1 and 2.4 s of waiting under wait=next, and the
// controller's r* is the minimum. Run as the figure draws it (exact-figure:
// worker 0 stops at Sim_p[r*], the green line), worker 0 is held at now+3 s
// and released at the slowest's push at now+3.1 s (the dashed line), where
// the controller grants again. Under wait=sl (line 17 as printed) the same
// push leaves it held: it must hand back its lead until the gap is s_L.
func TestDSSPFigure2(t *testing.T) {
	ip, is := sec, 3300*time.Millisecond
	now := 10 * sec
	as0 := now - 200*time.Millisecond
	want := []time.Duration{3100, 2100, 1100, 100, 2400}
	for r, w := range want {
		if got := waitNext(now, ip, as0, is, r); got != w*time.Millisecond {
			t.Errorf("wait at r=%d: %v, want %v", r, got, w*time.Millisecond)
		}
	}
	if r := Controller(now, now-ip, as0, as0-is, 4); r != 3 {
		t.Fatalf("r* = %d, want 3 (Figure 2)", r)
	}

	for _, tc := range []struct {
		wait DSSPWait
		rel  []int // released by the slowest's push at now+3.1 s
	}{{DSSPWaitNext, []int{0, 1}}, {DSSPWaitSL, []int{1}}} {
		g := newDSSPGate(2, Spec{Kind: DSSP, SL: 3, SU: 7, Mode: DSSPExactFigure, Wait: tc.wait})
		now := figure2State(g)
		if rel := g.Pushed(now, 0, nil); !slices.Equal(rel, []int{0}) || g.r[0] != 2 {
			t.Fatalf("wait %d: the red line released %v with r_p = %d, want [0] and r*−1 = 2", tc.wait, rel, g.r[0])
		}
		for i := 1; i <= 2; i++ {
			if rel := g.Pushed(now+time.Duration(i)*sec, 0, nil); !slices.Equal(rel, []int{0}) {
				t.Fatalf("wait %d: push %d under the grant released %v", tc.wait, i, rel)
			}
		}
		// The green line: r = 0 is now best (0.1 s to the slowest's push).
		if rel := g.Pushed(now+3*sec, 0, nil); len(rel) != 0 || !g.Held(0) {
			t.Fatalf("wait %d: at the green line released %v", tc.wait, rel)
		}
		rel := g.Pushed(now+3100*time.Millisecond, 1, nil)
		if !slices.Equal(rel, tc.rel) {
			t.Fatalf("wait %d: the slowest's push released %v, want %v", tc.wait, rel, tc.rel)
		}
		if tc.wait == DSSPWaitNext {
			// Worker 0 decided again from now+3.1 s: Sim_p = 3.1, 4.1, …;
			// the slowest's next push is predicted at now+6.4 s, nearest to
			// now+6.1 s: r* = 3 again (r_p = 2 in exact-figure mode).
			if g.r[0] != 2 || g.Stats().ControllerCalls != 3 {
				t.Errorf("after the wait r_p = %d, controller calls %d; want 2 and 3", g.r[0], g.Stats().ControllerCalls)
			}
			if g.relAt[0] != now+3100*time.Millisecond {
				t.Errorf("worker 0's interval starts at %v, want the release at now+3.1 s", g.relAt[0])
			}
		} else if !g.Held(0) || g.Clock(0)-g.Min() <= 3 {
			t.Errorf("wait=sl: worker 0 held=%v at gap %d", g.Held(0), g.Clock(0)-g.Min())
		}
	}
}
