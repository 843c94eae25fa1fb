// Claim: PARADIGMS.md §4's worked check of the DSSP controller (I_p = 1.0,
// I_s = 2.2, the slowest pushed 0.8 before now, r_max = 12 → r* = 8), and
// how many releases a grant gives: r*+1 in the literal algorithm, r* under
// exact-figure.

package paradigm

import (
	"testing"
	"time"
)

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
