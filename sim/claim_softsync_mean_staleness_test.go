// Claim: n-softsync's expected staleness under homogeneous workers,
// ⟨τ⟩ ≈ n(λ−1)/λ with τ almost never > 2n (PARADIGMS.md §8, the
// staleness-aware async SGD paper).

package sim

import (
	"fmt"
	"math"
	"testing"

	"github.com/pacer-ps/pacer/timing"
)

// §8: under homogeneous workers ⟨τ⟩ ≈ n(λ−1)/λ and τ is almost never > 2n.
func TestSoftsyncStaleness(t *testing.T) {
	const lambda = 30
	for _, n := range []int{1, 15, 30} {
		cfg := withSpec(Config{Workers: lambda, Timing: timing.WorkerSpec{Jitter: 0.05}, Iterations: 300, Seed: 11},
			fmt.Sprintf("softsync:n=%d", n))
		r, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		want := float64(n) * (lambda - 1) / lambda
		if math.Abs(r.StalenessMean-want) > 0.1*want {
			t.Errorf("n=%d: mean staleness %.3f, want %.3f ± 10%%", n, r.StalenessMean, want)
		}
		var total, over int64
		for tau, c := range r.StalenessHist {
			total += c
			if tau > 2*n {
				over += c
			}
		}
		if frac := float64(over) / float64(total); frac >= 0.001 {
			t.Errorf("n=%d: %.4f%% of gradients have τ > 2n", n, 100*frac)
		}
		t.Logf("n=%d: mean τ %.3f (expected %.3f), max %d, %d gradients", n, r.StalenessMean, want, r.StalenessMax, total)
	}
}
