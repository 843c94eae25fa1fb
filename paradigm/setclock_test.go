package paradigm

import (
	"slices"
	"testing"
)

// SetClock (a restarted live coordinator learning its workers' clocks
// again): the rule of each gate holds on the clocks it is given, and a
// hold the new minimum meets is released.
func TestSetClockRestoresTheRule(t *testing.T) {
	g := newSSPGate(3, 1)
	for p := range 3 {
		g.SetClock(0, p, 10, nil)
	}
	if g.Min() != 10 || g.Clock(2) != 10 {
		t.Fatalf("min %d clock %d, want 10", g.Min(), g.Clock(2))
	}
	// Worker 0 comes back from a report the old gate had answered at 12:
	// one ahead of the rule, so it is held until min ≥ 11.
	g.SetClock(0, 0, 11, nil)
	if rel := g.Pushed(0, 0, nil); len(rel) != 0 || !g.Held(0) {
		t.Fatalf("worker 0 at gap %d released %v, want held", g.Clock(0)-g.Min(), rel)
	}
	g.SetClock(0, 1, 11, nil)
	if rel := g.SetClock(0, 2, 11, nil); !slices.Equal(rel, []int{0}) {
		t.Fatalf("min 11 released %v, want [0]", rel)
	}
	// BSP and ElasticBSP: equal clocks, everyone pushes once and is
	// released together.
	for _, spec := range []Spec{{Kind: BSP}, {Kind: Elastic, R: 4}} {
		g, _ := NewGate(spec, Config{Workers: 2, Shards: 1})
		g.SetClock(0, 0, 40, nil)
		g.SetClock(0, 1, 40, nil)
		if rel := g.Pushed(0, 0, nil); len(rel) != 0 {
			t.Fatalf("%v: first push released %v", spec.Kind, rel)
		}
		if rel := g.Pushed(0, 1, nil); !slices.Equal(rel, []int{0, 1}) {
			t.Fatalf("%v: second push released %v, want [0 1]", spec.Kind, rel)
		}
	}
}
