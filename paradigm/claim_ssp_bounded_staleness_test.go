// Claim: SSP(s) bounds staleness (PARADIGMS.md §3, the DSSP paper's SSP):
// worker p is released after its push iff t_p − min t ≤ s, only the
// too-fast worker waits, and at every release t_p − min t ≤ s.

package paradigm

import (
	"math/rand/v2"
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

// The invariant, on random schedules: at every release t_p − min t ≤ s; a
// worker is held only when its own push made its gap exceed s; and some
// worker can always run (no stall).
func TestSSPGapAtEveryRelease(t *testing.T) {
	holds := 0
	for seed := uint64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		k, s := 2+rng.IntN(5), int64(rng.IntN(4))
		g := newSSPGate(k, s)
		running := make([]int, 0, k)
		for p := 0; p < k; p++ {
			running = append(running, p)
		}
		for step := 0; step < 500; step++ {
			if len(running) == 0 {
				t.Fatalf("seed %d step %d: every worker is held (stall)", seed, step)
			}
			i := rng.IntN(len(running))
			p := running[i]
			running = append(running[:i], running[i+1:]...)
			rel := g.Pushed(0, p, nil)
			for _, q := range rel {
				if gap := g.Clock(q) - g.Min(); gap > s {
					t.Fatalf("seed %d step %d: worker %d released at gap %d > s = %d", seed, step, q, gap, s)
				}
				running = append(running, q)
			}
			if !slices.Contains(rel, p) {
				holds++
				if gap := g.Clock(p) - g.Min(); !g.Held(p) || gap <= s {
					t.Fatalf("seed %d step %d: worker %d not released at gap %d ≤ s = %d (held %v)", seed, step, p, gap, s, g.Held(p))
				}
			}
		}
		if st := g.Stats(); st.MaxGap > s {
			t.Fatalf("seed %d: MaxGap %d > s = %d", seed, st.MaxGap, s)
		}
	}
	if holds == 0 {
		t.Fatal("no worker was ever held: the schedules tested nothing")
	}
}
