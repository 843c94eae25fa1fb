// Claim: DSSP with homogeneous workers behaves as SSP(s_L) (PARADIGMS.md §4
// and the common rules' reductions): equal intervals tie on every r, so the
// controller grants nothing. (sim's TestDSSPHomogeneousEqualsSSP checks the
// whole run, release for release.)

package paradigm

import (
	"testing"
	"time"
)

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
