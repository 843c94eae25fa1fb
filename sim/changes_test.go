package sim

import (
	"testing"
	"time"

	"github.com/pacer-ps/pacer/timing"
)

// TestSlowWindowStretchesBSPRounds: a cluster that changes (issue 36) in
// the simulator. Two workers of 1 s under BSP, worker 1 three times slower
// for iterations that start in [10 s, 20 s): ten rounds of 1 s, rounds of
// 3 s starting at 10, 13, 16 and 19 s (an iteration's speed is the one
// where it starts: the round begun at 19 s lasts 3 s whole), then 1 s
// rounds again; 30 rounds end at 10 + 12 + 16 = 38 s.
func TestSlowWindowStretchesBSPRounds(t *testing.T) {
	r, err := Run(Config{Spec: mustSpec(t, "bsp"), Workers: 2, Iterations: 30, Seed: 1,
		Timing: timing.WorkerSpec{Base: time.Second, Straggler: timing.MustStraggler("slow:worker=1,factor=3,from=10,to=20")}})
	if err != nil {
		t.Fatal(err)
	}
	if r.VirtualSeconds != 38 {
		t.Errorf("30 rounds end at %v s, want 38 s", r.VirtualSeconds)
	}
}
