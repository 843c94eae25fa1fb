package paradigm

import (
	"fmt"
	"math/rand/v2"
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
	g.a0[0], g.seen[0] = now-sec, 2
	g.a0[1], g.a1[1], g.seen[1] = now-800*time.Millisecond, now-3*sec, 2
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
