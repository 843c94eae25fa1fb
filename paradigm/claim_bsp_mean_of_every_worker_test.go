// Claim: BSP (PARADIGMS.md §1) applies the mean of one gradient from every
// live worker once per version and releases everybody after the apply, so
// all workers start each iteration from identical weights.

package paradigm

import (
	"slices"
	"testing"
)

// §1: BSP (SSP with s = 0) releases everybody after the last push, in order.
func TestBSPBarrier(t *testing.T) {
	g := newSSPGate(3, 0)
	for _, p := range []int{2, 0} {
		if rel := g.Pushed(0, p, nil); len(rel) != 0 {
			t.Fatalf("push of %d released %v", p, rel)
		}
	}
	if rel := g.Pushed(0, 1, nil); !slices.Equal(rel, []int{0, 2, 1}) {
		t.Fatalf("barrier released %v, want [0 2 1]", rel)
	}
}

func TestSyncMeanSortedByWorker(t *testing.T) {
	a := newSyncAgg(3, false)
	push(t, a, 0, Grad{ID: 30, Worker: 2})
	push(t, a, 0, Grad{ID: 10, Worker: 0})
	if ok, _, _ := push(t, a, 0, Grad{ID: 11, Worker: 0}); ok {
		t.Fatal("a second gradient from worker 0 for the same version was accepted")
	}
	ok, applied, ap := push(t, a, 0, Grad{ID: 20, Worker: 1})
	if !ok || !applied || ap.Version != 1 || len(ap.Grads) != 3 {
		t.Fatalf("apply %+v", ap)
	}
	for i, c := range ap.Grads {
		if c.Worker != i || c.Weight != 1.0/3 || c.Staleness != 0 {
			t.Errorf("contribution %d: %+v", i, c)
		}
	}
	if ok, _, _ := push(t, a, 0, Grad{ID: 40, Worker: 1, Read: 0}); ok {
		t.Error("a gradient read at an old version was accepted")
	}
	if a.Dropped() != 2 {
		t.Errorf("dropped %d", a.Dropped())
	}
}
