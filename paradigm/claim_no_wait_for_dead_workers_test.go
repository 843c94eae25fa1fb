// Claim (PARADIGMS.md, common rules): a worker that leaves or dies is
// removed from every "all workers" and "slowest worker" computation; no
// paradigm waits forever for a dead worker.

package paradigm

import (
	"slices"
	"testing"
	"time"
)

// Common rules: a dead worker is removed and nobody waits for it.
func TestLeaveReleasesWaiters(t *testing.T) {
	g := newSSPGate(3, 0)
	g.Pushed(0, 0, nil)
	g.Pushed(0, 1, nil)
	if rel := g.Leave(0, 2, nil); !slices.Equal(rel, []int{0, 1}) {
		t.Fatalf("leave released %v", rel)
	}
	// A newcomer starts at the minimum clock and is released at once.
	if rel := g.Join(0, 5, nil); !slices.Equal(rel, []int{5}) || g.Clock(5) != g.Min() {
		t.Fatalf("join: %v clock %d min %d", rel, g.Clock(5), g.Min())
	}
	g.Pushed(0, 0, nil)
	g.Pushed(0, 1, nil)
	if rel := g.Pushed(0, 5, nil); !slices.Equal(rel, []int{0, 1, 5}) {
		t.Fatalf("barrier with the newcomer released %v", rel)
	}
}

func TestSyncLeaveApplies(t *testing.T) {
	a := newSyncAgg(3, true)
	push(t, a, 0, Grad{ID: 1, Worker: 0})
	push(t, a, 0, Grad{ID: 2, Worker: 1})
	applied, ap := a.Leave(0, 2)
	if !applied || len(ap.Grads) != 2 || ap.Grads[0].Weight != 1 {
		t.Fatalf("leave: %v %+v", applied, ap)
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
