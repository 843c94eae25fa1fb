// Claim: PSP's partial push and partial pull (PARADIGMS.md §7, the PSP
// paper): a shard updates once c gradients and the τ1 grace are in (or every
// live worker answered), scaled by d; a worker computes once ⌈b·S⌉ blocks are
// fresh and τ2 has passed, and a worker behind jumps its clock.

package paradigm

import (
	"testing"
	"time"
)

// §7: c gradients start the τ1 window; all live workers end it early; the
// step uses the linear scaling rule in d.
func TestPSPWindow(t *testing.T) {
	a := newPSPAgg(4, 2, 100*time.Millisecond)
	push(t, a, 0, Grad{ID: 1, Worker: 0})
	if _, applied, _ := push(t, a, 10*time.Millisecond, Grad{ID: 2, Worker: 1}); applied {
		t.Fatal("applied before τ1 ended")
	}
	if d, ok := a.Deadline(); !ok || d != 110*time.Millisecond {
		t.Fatalf("deadline %v %v", d, ok)
	}
	push(t, a, 20*time.Millisecond, Grad{ID: 3, Worker: 2})
	applied, ap := a.Tick(110 * time.Millisecond)
	if !applied || len(ap.Grads) != 3 || ap.LRScale != 0.75 || ap.Grads[0].Weight != 1.0/3 {
		t.Fatalf("tick apply %+v", ap)
	}
	if ok, _, _ := push(t, a, 120*time.Millisecond, Grad{ID: 4, Worker: 3, Clock: 0}); ok {
		t.Fatal("a gradient tagged below the version was accepted")
	}
	// Every live worker answering ends the window at once.
	b := newPSPAgg(2, 1, time.Hour)
	push(t, b, 0, Grad{ID: 1, Worker: 0})
	if _, applied, ap := push(t, b, 0, Grad{ID: 2, Worker: 1}); !applied || ap.LRScale != 1 {
		t.Fatalf("all answered: %v %+v", applied, ap)
	}
}

func TestPullerPSPPartialWithGrace(t *testing.T) {
	pol, err := New(Spec{Kind: PSP, C: 2, BFrac: 0.5, T2: 50 * time.Millisecond}, Config{Workers: 2, Shards: 4})
	if err != nil {
		t.Fatal(err)
	}
	pl := pol.Pullers[0]
	read := make([]uint64, 4)
	pl.Start(0, 0, read, true)
	for i := 0; i < 3; i++ {
		if pl.Response(0, i, 0) {
			t.Fatal("the first pull is full")
		}
	}
	if !pl.Response(0, 3, 0) {
		t.Fatal("full first pull not ready")
	}
	pl.Start(time.Second, 3, read, false)
	if pl.MinVersion(0) != 3 || pl.Need() != 2 {
		t.Fatalf("min %d need %d", pl.MinVersion(0), pl.Need())
	}
	pl.Response(time.Second, 0, 3)
	if pl.Response(time.Second, 1, 5) {
		t.Fatal("ready before τ2")
	}
	if d, ok := pl.Deadline(); !ok || d != time.Second+50*time.Millisecond {
		t.Fatalf("deadline %v", d)
	}
	if !pl.Tick(time.Second + 50*time.Millisecond) {
		t.Fatal("not ready after τ2")
	}
	if c := pl.NextClock(3); c != 5 {
		t.Errorf("a worker behind jumps to the largest version seen: %d", c)
	}
}
