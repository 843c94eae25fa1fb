package paradigm

import "time"

// softsyncAgg is n-softsync (PARADIGMS.md §8): buffer c = max(1, ⌊λ/n⌋)
// gradients from anyone (the same worker may contribute twice), then
// w ← w − (1/c)·Σ α(τ_l)·g_l with α(τ) = α₀/τ for τ > 0 (option: constant).
// Weights are relative to α₀, which the driver's learning rate carries.
type softsyncAgg struct {
	c       int
	constLR bool
	v       uint64
	buf     []Contribution
	out     []Contribution
}

func newSoftsyncAgg(k, c int, constLR bool) *softsyncAgg {
	return &softsyncAgg{c: c, constLR: constLR}
}

// StalenessWeight is α(τ)/α₀ of PARADIGMS.md §8.
func StalenessWeight(tau int64, constLR bool) float64 {
	if constLR || tau <= 0 {
		return 1
	}
	return 1 / float64(tau)
}

func (a *softsyncAgg) Push(now time.Duration, g Grad) (bool, bool, Apply) {
	tau := int64(a.v) - int64(g.Read)
	a.buf = append(a.buf, Contribution{ID: g.ID, Worker: g.Worker, Staleness: tau,
		Weight: StalenessWeight(tau, a.constLR) / float64(a.c)})
	if len(a.buf) < a.c {
		return true, false, Apply{}
	}
	a.out = append(a.out[:0], a.buf...)
	a.buf = a.buf[:0]
	a.v++
	return true, true, Apply{Version: a.v, LRScale: 1, Grads: a.out}
}

func (a *softsyncAgg) Deadline() (time.Duration, bool)              { return 0, false }
func (a *softsyncAgg) Tick(now time.Duration) (bool, Apply)         { return false, Apply{} }
func (a *softsyncAgg) Leave(now time.Duration, p int) (bool, Apply) { return false, Apply{} }
func (a *softsyncAgg) Join(now time.Duration, p int)                {}
func (a *softsyncAgg) Version() uint64                              { return a.v }
func (a *softsyncAgg) Dropped() int64                               { return 0 }
