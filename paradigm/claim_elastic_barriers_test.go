// Claim: ElasticBSP (PARADIGMS.md §5, the ElasticBSP paper): after a first
// BSP superstep each worker is held at its own count-based barrier, chosen
// by ZipLine from predicted push times; under apply=local the shards apply
// the superstep's gradients at the barrier, the mean of the workers' local
// models. (ZipLine against brute force: package zipline.)

package paradigm

import (
	"slices"
	"testing"
	"time"
)

// §5: the first superstep is one BSP step; afterwards each worker is held at
// its own barrier, chosen so the predicted barrier pushes line up.
func TestElasticBarriersFollowPrediction(t *testing.T) {
	g := newElasticGate(2, Spec{Kind: Elastic, R: 6}, new(uint64))
	g.Pushed(1*sec, 0, nil) // fast worker: 1 s per iteration
	rel := g.Pushed(2*sec, 1, nil)
	if !slices.Equal(rel, []int{0, 1}) {
		t.Fatalf("first barrier released %v", rel)
	}
	// Predictions from T_b = 2 s: worker 0 at 3,4,5,...; worker 1 (2 s) at 4,6,...
	// The span is 0 first at 4 s: worker 0's 2nd push and worker 1's 1st.
	if g.barrier[0] != 1+2 || g.barrier[1] != 1+1 {
		t.Fatalf("barriers %v, want [3 2]", g.barrier)
	}
	if rel := g.Pushed(3*sec, 0, nil); !slices.Equal(rel, []int{0}) {
		t.Fatalf("inside the superstep: %v", rel)
	}
	if rel := g.Pushed(4*sec, 1, nil); len(rel) != 0 {
		t.Fatalf("worker 1 at its barrier should be held: %v", rel)
	}
	if rel := g.Pushed(4*sec, 0, nil); !slices.Equal(rel, []int{0, 1}) {
		t.Fatalf("second barrier released %v", rel)
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
