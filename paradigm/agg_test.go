package paradigm

import (
	"testing"
	"time"
)

func push(t *testing.T, a Aggregator, now time.Duration, g Grad) (bool, bool, Apply) {
	t.Helper()
	ok, applied, ap := a.Push(now, g)
	if applied {
		ap.Grads = append([]Contribution(nil), ap.Grads...)
	}
	return ok, applied, ap
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

func TestSyncLeaveApplies(t *testing.T) {
	a := newSyncAgg(3, true)
	push(t, a, 0, Grad{ID: 1, Worker: 0})
	push(t, a, 0, Grad{ID: 2, Worker: 1})
	applied, ap := a.Leave(0, 2)
	if !applied || len(ap.Grads) != 2 || ap.Grads[0].Weight != 1 {
		t.Fatalf("leave: %v %+v", applied, ap)
	}
}

// §6: first N per version, the rest dropped; a dead worker never blocks.
func TestBackupFirstN(t *testing.T) {
	a := newBackupAgg(4, 3, nil)
	for w := 0; w < 2; w++ {
		push(t, a, 0, Grad{ID: uint64(w), Worker: w})
	}
	ok, applied, ap := push(t, a, 0, Grad{ID: 2, Worker: 3})
	if !ok || !applied || len(ap.Grads) != 3 || ap.Grads[2].Worker != 3 || ap.Grads[0].Weight != 1.0/3 {
		t.Fatalf("apply %+v", ap)
	}
	if ok, _, _ := push(t, a, 0, Grad{ID: 9, Worker: 2, Read: 0}); ok {
		t.Fatal("the straggler's gradient for version 0 was accepted after the apply")
	}
	a.Leave(0, 0)
	a.Leave(0, 1)
	push(t, a, 0, Grad{ID: 5, Worker: 2, Read: 1})
	if ok, applied, ap := push(t, a, 0, Grad{ID: 6, Worker: 3, Read: 1}); !ok || !applied || len(ap.Grads) != 2 {
		t.Fatalf("with two live workers N shrinks to 2: %v %v %+v", ok, applied, ap)
	}
}

func TestBackupSharedSet(t *testing.T) {
	set := &sharedSet{n: 2}
	a, b := newBackupAgg(3, 2, set), newBackupAgg(3, 2, set)
	push(t, a, 0, Grad{ID: 1, Worker: 0})
	push(t, b, 0, Grad{ID: 2, Worker: 1}) // shard b hears worker 1 first
	if ok, _, _ := push(t, a, 0, Grad{ID: 3, Worker: 2}); ok {
		t.Fatal("shard a took worker 2, outside the shared set {0,1}")
	}
	if _, applied, ap := push(t, a, 0, Grad{ID: 4, Worker: 1}); !applied || ap.Grads[1].Worker != 1 {
		t.Fatalf("shard a should apply {0,1}: %+v", ap)
	}
}

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

// §8: c = ⌊λ/n⌋ gradients per update, weighted by α(τ)/α₀ / c.
func TestSoftsyncWeights(t *testing.T) {
	a := newSoftsyncAgg(4, 2, false)
	push(t, a, 0, Grad{ID: 1, Worker: 0, Read: 0})
	_, applied, ap := push(t, a, 0, Grad{ID: 2, Worker: 0, Read: 0})
	if !applied || ap.Version != 1 || ap.Grads[1].Weight != 0.5 {
		t.Fatalf("first update %+v", ap)
	}
	push(t, a, 0, Grad{ID: 3, Worker: 1, Read: 0}) // τ = 1
	_, _, ap = push(t, a, 0, Grad{ID: 4, Worker: 2, Read: 1})
	if ap.Grads[0].Staleness != 1 || ap.Grads[0].Weight != 0.5 || ap.Grads[1].Weight != 0.5 {
		t.Fatalf("second update %+v", ap)
	}
	if w := StalenessWeight(4, false); w != 0.25 {
		t.Errorf("α(4)/α₀ = %v", w)
	}
	if w := StalenessWeight(4, true); w != 1 {
		t.Errorf("constant α: %v", w)
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

func TestPullerBackupWantsNewerVersion(t *testing.T) {
	pol, _ := New(Spec{Kind: Backup, B: 1}, Config{Workers: 3, Shards: 2})
	pl := pol.Pullers[1]
	pl.Start(0, 4, []uint64{7, 6}, false)
	if pl.MinVersion(0) != 8 || pl.MinVersion(1) != 7 {
		t.Fatalf("min versions %d %d", pl.MinVersion(0), pl.MinVersion(1))
	}
}

// §5 local-only: a shard collects the superstep's gradients and applies
// them only when the gate passes a barrier, each weighted 1/(workers that
// contributed), sorted by worker.
func TestElasticLocalOnlyAppliesAtBarriers(t *testing.T) {
	sp, err := Parse("elastic:r=4,apply=local")
	if err != nil {
		t.Fatal(err)
	}
	pol, err := New(sp, Config{Workers: 2, Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	if sp.AppliesOnArrival() || !sp.LocalSteps() {
		t.Fatal("local-only must not count as apply-on-arrival")
	}
	var applies []Apply
	onApply := func(i int, a Apply) {
		a.Grads = append([]Contribution(nil), a.Grads...)
		applies = append(applies, a)
	}
	id := uint64(0)
	pushBoth := func(now time.Duration, p int) []int {
		id++
		for _, a := range pol.Aggs {
			if ok, applied, _ := a.Push(now, Grad{ID: id, Worker: p, Read: a.Version()}); !ok || applied {
				t.Fatalf("push %d: ok %v applied %v: want buffered", id, ok, applied)
			}
		}
		rd := pol.Pushed(now, p)
		for _, a := range rd.Applies {
			onApply(a.Shard, a.Apply)
		}
		return rd.Released
	}
	start := func(p int, first bool) *Puller {
		pl := pol.Pullers[p]
		pl.Start(0, 0, []uint64{0, 0}, first)
		return pl
	}
	for p := 0; p < 2; p++ {
		if pl := start(p, true); pl.Ready() || pl.MinVersion(1) != 0 {
			t.Fatal("the first pull must ask every shard")
		}
	}
	// The first superstep is one BSP step.
	if rel := pushBoth(time.Second, 1); len(rel) != 0 || len(applies) != 0 {
		t.Fatalf("released %v, applies %d before the barrier", rel, len(applies))
	}
	rel := pushBoth(time.Second, 0)
	if len(rel) != 2 || len(applies) != 2 {
		t.Fatalf("barrier: released %v, %d applies (want both workers, both shards)", rel, len(applies))
	}
	for _, a := range applies {
		if a.Version != 1 || len(a.Grads) != 2 || a.Grads[0].Worker != 0 || a.Grads[1].Worker != 1 || a.Grads[0].Weight != 0.5 {
			t.Fatalf("apply %+v", a)
		}
	}
	// After a barrier the pull waits for the superstep's apply; inside
	// the next superstep a worker computes without pulling.
	pl := start(0, false)
	if pl.Ready() || pl.MinVersion(0) != 1 {
		t.Fatalf("pull after the barrier: ready %v, min version %d", pl.Ready(), pl.MinVersion(0))
	}
	pl.Response(0, 0, 1)
	pl.Response(0, 1, 1)
	if !pl.Ready() {
		t.Fatal("fresh blocks did not make the worker ready")
	}
	if pl = start(0, false); !pl.Ready() || pl.Fresh(0) {
		t.Fatal("a worker inside a superstep must go on from its own copy")
	}
	// Several pushes from one worker and one from another: weights are
	// 1/2 each (two workers contributed), not 1/3.
	a := pol.Aggs[0].(*superstepAgg)
	for _, g := range []Grad{{ID: 9, Worker: 1}, {ID: 7, Worker: 0}, {ID: 8, Worker: 1}} {
		a.Push(0, g)
	}
	ap := a.flush()
	if ap.Version != 2 || len(ap.Grads) != 3 || ap.Grads[0].ID != 7 || ap.Grads[1].ID != 9 || ap.Grads[2].ID != 8 {
		t.Fatalf("flush %+v: want worker order, then arrival", ap)
	}
	for _, c := range ap.Grads {
		if c.Weight != 0.5 {
			t.Fatalf("weight %v, want 1/2", c.Weight)
		}
	}
}
