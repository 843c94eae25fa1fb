// Claim: the DSSP paper's Table I (PARADIGMS.md §4): on a heterogeneous pair
// literal DSSP runs at about ASP's pace (3016 s against ASP's 2993 s), with
// the default wait=next; wait=sl gives SSP's pace.

package sim

import (
	"math"
	"testing"

	"github.com/pacer-ps/pacer/timing"
)

// PARADIGMS.md §4, revised: on a 1 : 2 pair with jitter CV 0.05, literal
// DSSP with the defaults (wait=next) runs at ASP's pace, as in the paper's
// Table I; with wait=sl (line 17 as printed) a hold hands back the whole
// lead, and over whole sawtooth cycles that is SSP's pace.
func TestDSSPWaitRulesOnAJitteryPair(t *testing.T) {
	pace := func(spec string, iters int, seed uint64) (float64, float64) {
		cfg := withSpec(Config{Workers: 2, Timing: timing.WorkerSpec{Speeds: []float64{1, 2}, Jitter: 0.05},
			Iterations: iters, Seed: seed}, spec)
		r, err := Run(cfg)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		return r.Throughput, r.WaitFraction
	}
	near := func(a, b, tol float64) bool { return math.Abs(a-b) <= tol*b }
	for seed := uint64(1); seed <= 3; seed++ {
		// The command: 500 iterations.
		asp, _ := pace("asp", 500, seed)
		next, wait := pace("dssp:sl=3,su=15", 500, seed)
		if !near(next, asp, 0.01) || wait > 0.01 {
			t.Errorf("seed %d, 500 iterations: DSSP wait=next %.3f pushes/s (waiting %.1f%%), ASP %.3f", seed, next, 100*wait, asp)
		}
		// Long enough for many sawtooth cycles under wait=sl.
		asp, _ = pace("asp", 4000, seed)
		ssp, _ := pace("ssp:s=3", 4000, seed)
		next, _ = pace("dssp:sl=3,su=15", 4000, seed)
		sl, slWait := pace("dssp:sl=3,su=15,wait=sl", 4000, seed)
		if !near(next, asp, 0.01) {
			t.Errorf("seed %d: DSSP wait=next %.3f pushes/s, ASP %.3f", seed, next, asp)
		}
		if !near(sl, ssp, 0.04) || slWait < 0.2 {
			t.Errorf("seed %d: DSSP wait=sl %.3f pushes/s (waiting %.1f%%), SSP(3) %.3f", seed, sl, 100*slWait, ssp)
		}
		t.Logf("seed %d, 4000 iterations: ASP %.3f, DSSP wait=next %.3f, wait=sl %.3f, SSP(3) %.3f pushes/s", seed, asp, next, sl, ssp)
	}
}
