// Claim: n-softsync (PARADIGMS.md §8, the staleness-aware async SGD paper)
// applies c = ⌊λ/n⌋ buffered gradients weighted α(τ)/c, α(τ) = α₀/τ. (sim's
// TestSoftsyncStaleness checks ⟨τ⟩ ≈ n(λ−1)/λ over a run.)

package paradigm

import "testing"

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
