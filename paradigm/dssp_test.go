package paradigm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

const sec = time.Second

// PARADIGMS.md §4 worked check: I_p = 1.0, I_s = 2.2, the slowest pushed
// 0.8 before now, r_max = 12 → r* = 8.
func TestControllerWorkedCheck(t *testing.T) {
	now := 100 * sec
	as0 := now - 800*time.Millisecond
	got := Controller(now, now-sec, as0, as0-2200*time.Millisecond, 12)
	if got != 8 {
		t.Fatalf("r* = %d, want 8", got)
	}
}

// controllerQuadratic is the specification read literally: O(r_max²).
func controllerQuadratic(ap0, ap1, as0, as1 time.Duration, rmax int) int {
	ip, is := ap0-ap1, as0-as1
	if rmax <= 0 || ip <= 0 || is <= 0 {
		return 0
	}
	best, bestR := time.Duration(1<<62), 0
	for r := 0; r <= rmax; r++ {
		for k := 0; k <= rmax; k++ {
			d := absDur(as0 + time.Duration(k+1)*is - (ap0 + time.Duration(r)*ip))
			if d < best {
				best, bestR = d, r
			}
		}
	}
	return bestR
}

func TestControllerMatchesQuadraticDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		rmax := rng.IntN(20)
		// Coarse grids make exact ties common, which is where tie rules break.
		unit := time.Duration(1+rng.IntN(3)) * 100 * time.Millisecond
		ap0 := time.Duration(rng.IntN(50)) * unit
		ap1 := ap0 - time.Duration(rng.IntN(6))*unit
		as0 := ap0 - time.Duration(rng.IntN(30))*unit
		as1 := as0 - time.Duration(rng.IntN(12))*unit
		got := Controller(ap0, ap1, as0, as1, rmax)
		want := controllerQuadratic(ap0, ap1, as0, as1, rmax)
		if got != want {
			t.Fatalf("Controller(%v,%v,%v,%v,%d) = %d, want %d", ap0, ap1, as0, as1, rmax, got, want)
		}
	}
}

func TestControllerNoIntervalGrantsNothing(t *testing.T) {
	if r := Controller(10*sec, 9*sec, 5*sec, 5*sec, 12); r != 0 {
		t.Errorf("zero slowest interval: r = %d", r)
	}
	if r := Controller(10*sec, 9*sec, 5*sec, 6*sec, 12); r != 0 {
		t.Errorf("negative slowest interval: r = %d", r)
	}
}

// Homogeneous intervals: r = 0 already reaches the unconstrained optimum
// whenever the slowest is at least half an interval behind, so DSSP grants
// nothing and behaves as SSP(s_L).
func TestControllerHomogeneousGrantsNothing(t *testing.T) {
	for lag := 500 * time.Millisecond; lag < 5*sec; lag += 100 * time.Millisecond {
		now := 20 * sec
		if r := Controller(now, now-sec, now-lag, now-lag-sec, 12); r != 0 {
			t.Errorf("lag %v: r = %d, want 0", lag, r)
		}
	}
}

// workedCheckState puts a two-worker gate in the worked check's situation
// just before worker 0's push at the returned time: clocks (3, 2), I_p = 1 s,
// I_s = 2.2 s, the slowest pushed 0.8 s before now.
func workedCheckState(g *dsspGate) time.Duration {
	now := 10 * sec
	for i := 0; i < 3; i++ {
		g.c.push(0)
	}
	g.c.push(1)
	g.c.push(1)
	g.a0[0], g.relAt[0], g.seen[0] = now-sec, now-sec, 2
	g.a0[1], g.ival[1], g.seen[1] = now-800*time.Millisecond, 2200*time.Millisecond, 2
	return now
}

// §4 step 5 on the worked check: literal mode grants r* further releases
// (r*+1 in all), exact-figure r*−1 further (r* in all).
func TestDSSPGrantOnWorkedCheck(t *testing.T) {
	for _, tc := range []struct {
		mode DSSPMode
		want int
	}{{DSSPLiteral, 8}, {DSSPExactFigure, 7}} {
		g := newDSSPGate(2, Spec{Kind: DSSP, SL: 1, SU: 13, Mode: tc.mode})
		now := workedCheckState(g)
		rel := g.Pushed(now, 0, nil) // t = (4, 2): gap 2 > s_L, worker 0 fastest
		if len(rel) != 1 || rel[0] != 0 {
			t.Fatalf("mode %d: released %v, want [0]", tc.mode, rel)
		}
		if g.r[0] != tc.want {
			t.Errorf("mode %d: r_p = %d, want %d", tc.mode, g.r[0], tc.want)
		}
		if st := g.Stats(); st.ControllerCalls != 1 || st.MaxGap != 2 {
			t.Errorf("stats %+v", st)
		}
		// Step 3: the grant is spent one release per push, with no controller call.
		for i := 1; i <= tc.want; i++ {
			if rel := g.Pushed(now+time.Duration(i)*sec, 0, nil); len(rel) != 1 {
				t.Fatalf("push %d under the grant was held", i)
			}
		}
		if g.r[0] != 0 || g.Stats().ControllerCalls != 1 {
			t.Errorf("after the grant r_p = %d, calls %d", g.r[0], g.Stats().ControllerCalls)
		}
	}
}

// Bounded mode restricts the search to r ≤ s_U − gap (Theorem 2): with
// s_U = 9 and gap 2 the search stops at r = 7 and picks r = 6 (now+6 against
// the slowest's now+5.8), where literal mode reaches r = 8 (an exact hit).
func TestDSSPBoundedCapsTheGrant(t *testing.T) {
	for _, tc := range []struct {
		mode DSSPMode
		want int
	}{{DSSPLiteral, 8}, {DSSPBounded, 6}} {
		g := newDSSPGate(2, Spec{Kind: DSSP, SL: 1, SU: 9, Mode: tc.mode})
		now := workedCheckState(g)
		g.Pushed(now, 0, nil)
		if g.r[0] != tc.want {
			t.Errorf("mode %d: r_p = %d, want %d", tc.mode, g.r[0], tc.want)
		}
	}
}

// BenchmarkController shows the O(r_max) cost: ns/op grows tenfold per
// tenfold r_max, against the quadratic definition in the same run.
func BenchmarkController(b *testing.B) {
	for _, rmax := range []int{12, 120, 1200} {
		now := 100 * sec
		as0, as1 := now-800*time.Millisecond, now-3*sec
		b.Run(fmt.Sprintf("rmax=%d", rmax), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				sink += Controller(now, now-sec, as0, as1, rmax)
			}
		})
		b.Run(fmt.Sprintf("quadratic/rmax=%d", rmax), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				sink += controllerQuadratic(now, now-sec, as0, as1, rmax)
			}
		})
	}
}

var sink int

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

// wait=next: a worker held for the slowest's next push is not left waiting
// for a worker that leaves; it decides again against the others at once.
func TestDSSPWaitNextSlowestLeaves(t *testing.T) {
	g := newDSSPGate(3, Spec{Kind: DSSP, SL: 1, SU: 4})
	ms := time.Millisecond
	g.Pushed(10*ms, 2, nil) // t = (0, 0, 1)
	for i := 1; i <= 2; i++ {
		g.Pushed(time.Duration(i)*10*ms, 0, nil)
	}
	// t = (2, 0, 1): worker 0 is at gap 2 with fewer than two pushes from
	// the slowest, so the controller grants nothing: it waits for the
	// slowest, worker 1 (no interval yet counts as latest).
	if !g.Held(0) || g.slowest() != 1 {
		t.Fatalf("worker 0 held=%v, slowest %d", g.Held(0), g.slowest())
	}
	// Worker 1 dies: min becomes 1 and worker 0 (gap 1) goes on.
	if rel := g.Leave(40*ms, 1, nil); !slices.Equal(rel, []int{0}) {
		t.Fatalf("the slowest leaving released %v, want [0]", rel)
	}
	if g.relAt[0] != 40*ms {
		t.Errorf("release time %v, want 40ms", g.relAt[0])
	}
}

// §4 interval option: release (default) measures from the release to the
// push, so a hold does not inflate it; push measures between push arrivals
// (worker 0 pushes at 10 ms, is held until 25 ms, pushes again at 35 ms).
func TestDSSPIntervalOptions(t *testing.T) {
	for _, tc := range []struct {
		iv   DSSPInterval
		want time.Duration
	}{{DSSPIntervalRelease, 10 * time.Millisecond}, {DSSPIntervalPush, 25 * time.Millisecond}} {
		g := newDSSPGate(2, Spec{Kind: DSSP, SL: 0, SU: 0, Interval: tc.iv})
		ms := time.Millisecond
		g.Pushed(10*ms, 0, nil)                                              // gap 1 > 0: held until worker 1 pushes
		if rel := g.Pushed(25*ms, 1, nil); !slices.Equal(rel, []int{0, 1}) { // releases 0 at 25 ms
			t.Fatalf("released %v", rel)
		}
		g.Pushed(35*ms, 0, nil)
		if g.ival[0] != tc.want {
			t.Errorf("interval %d: I_p = %v, want %v", tc.iv, g.ival[0], tc.want)
		}
	}
}
