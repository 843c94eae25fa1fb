package paradigm

import (
	"slices"
	"testing"
	"time"
)

const sec = time.Second

func TestControllerNoIntervalGrantsNothing(t *testing.T) {
	if r := Controller(10*sec, 9*sec, 5*sec, 5*sec, 12); r != 0 {
		t.Errorf("zero slowest interval: r = %d", r)
	}
	if r := Controller(10*sec, 9*sec, 5*sec, 6*sec, 12); r != 0 {
		t.Errorf("negative slowest interval: r = %d", r)
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
