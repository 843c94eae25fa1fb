package paradigm

import (
	"slices"
	"testing"
)

// §3: only the too-fast worker waits, and it is released as soon as the
// slowest's push brings the gap back to s.
func TestSSPHoldsOnlyTheFastWorker(t *testing.T) {
	g := newSSPGate(3, 1)
	if rel := g.Pushed(0, 0, nil); !slices.Equal(rel, []int{0}) { // t=(1,0,0): gap 1
		t.Fatalf("first push: %v", rel)
	}
	if rel := g.Pushed(0, 0, nil); len(rel) != 0 || !g.Held(0) { // gap 2 > 1
		t.Fatalf("second push should hold worker 0, got %v", rel)
	}
	if rel := g.Pushed(0, 1, nil); !slices.Equal(rel, []int{1}) { // min still 0
		t.Fatalf("worker 1: %v", rel)
	}
	if rel := g.Pushed(0, 2, nil); !slices.Equal(rel, []int{0, 2}) { // min → 1, releases 0
		t.Fatalf("worker 2's push should release 0 then 2, got %v", rel)
	}
	if st := g.Stats(); st.MaxGap != 1 || st.Releases != 4 {
		t.Errorf("stats %+v", st)
	}
}

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

func TestClocksMinAcrossLeaveAndJoin(t *testing.T) {
	c := newClocks(3)
	for i := 0; i < 5; i++ {
		c.push(0)
	}
	c.push(1)
	if c.min != 0 || c.max != 5 {
		t.Fatalf("min %d max %d", c.min, c.max)
	}
	c.leave(2) // min jumps past the empty clock values
	if c.min != 1 {
		t.Fatalf("after leave min = %d", c.min)
	}
	c.leave(0)
	if c.max != 1 {
		t.Fatalf("after the fastest left max = %d", c.max)
	}
	c.leave(1)
	c.join(2)
	if c.nLive != 1 || c.min != c.t[2] {
		t.Fatalf("rejoin into an empty job: %+v", c)
	}
}

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
