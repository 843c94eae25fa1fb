// Claim: DSSP with homogeneous workers ≡ SSP(s_L) (PARADIGMS.md §4 and the
// common rules' reductions), over whole simulated runs. (The controller's
// part: paradigm's claim_dssp_homogeneous_is_ssp_test.go.)

package sim

import (
	"fmt"
	"slices"
	"testing"
)

// DSSP with identical intervals never grants extra iterations, so it equals
// SSP(s_L) release for release, under both wait rules and both interval
// measures: under wait=next a held worker waits for one slowest worker's
// push after another, deciding again at each, and is released at the push
// that brings the gap back to s_L, as SSP releases it.
func TestDSSPHomogeneousEqualsSSP(t *testing.T) {
	for _, sl := range []int{0, 1, 3} {
		for _, opt := range []string{"", ",wait=sl", ",interval=push", ",wait=sl,interval=push"} {
			cfg := Config{Workers: 6, Shards: 2, Iterations: 60, Seed: 3}
			all := []EventKind{Push, Compute, Update, Release}
			a, _ := trace(t, withSpec(cfg, fmt.Sprintf("ssp:s=%d", sl)), all...)
			b, _ := trace(t, withSpec(cfg, fmt.Sprintf("dssp:sl=%d,su=%d%s", sl, sl+12, opt)), all...)
			if !slices.Equal(a, b) {
				t.Fatalf("s_L=%d%s: DSSP and SSP traces differ", sl, opt)
			}
		}
	}
}
