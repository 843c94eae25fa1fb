// Claim: the DSSP paper's Theorem 2 bound, honoured by mode=bounded
// (PARADIGMS.md §4): the controller's search is restricted to r ≤ s_U − gap.
// (sim's TestDSSPLiteralGapIsUnbounded shows the gap over a whole run.)

package paradigm

import "testing"

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
