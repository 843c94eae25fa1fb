package optim

import (
	"math"

	"github.com/pacer-ps/pacer/internal/hugemem"
	"github.com/pacer-ps/pacer/internal/kernel"
)

// Undo keeps what a checked apply overwrote, so that an apply whose result
// is not finite can be taken back exactly. Its buffers grow to the range
// on first use and are kept for the next apply.
type Undo struct {
	// KeptW says the caller keeps the weights as they were before the
	// apply (it applies into a copy): only the state is saved and put
	// back, and the weights of a failed apply are left half-written for
	// the caller to drop.
	KeptW bool
	// Fast says no value the apply writes can overflow (FastOK holds, and
	// every weight, state value and gradient is below 2⁴⁰ in magnitude):
	// nothing is saved. A result that is not finite then is a broken
	// promise, and panics.
	Fast bool
	// Small is set by the apply: every value it wrote is below 2⁴⁰ in
	// magnitude (what Fast needs of the weights and the state next time).
	Small bool

	w, v, sq, gm []float32
	t            int64
}

// ApplyWeightedChecked is ApplyWeighted that checks what it writes, in the
// same pass: chunk by chunk, it keeps the values a chunk will overwrite
// (the weights and the rule's state) in un, steps the chunk, and screens
// the new values while they are still in L1. At the first NaN or ±Inf it
// puts back every value it changed (and Adam's step count, on an
// optimizer from New) and returns false: the apply did not happen. The
// cost over ApplyWeighted is the copy into un (one more write of the
// range and its state) and the screen.
func (o *Optimizer) ApplyWeightedChecked(w []float32, grads [][]float32, weights []float32, lr float32, un *Undo) bool {
	return o.applyWeighted(w, grads, weights, lr, un)
}

// Revert puts back the whole range of w and o's state from un, after a
// checked apply of this range that returned true (a split apply whose
// other part failed). It leaves the step count to the owner (Untick).
func (o *Optimizer) Revert(w []float32, un *Undo) {
	un.restore(&Optimizer{cfg: o.cfg, n: o.n, v: o.v, sq: o.sq, gm: o.gm, t: o.t, sub: true}, w, o.n)
}

// Untick takes back a Tick whose split apply was reverted.
func (o *Optimizer) Untick() {
	if o.sub {
		panic("optim: Untick on a Sub")
	}
	*o.t--
}

// SmallBits are the bits of 2⁴⁰, the magnitude below which Undo.Fast's
// inputs must lie: kernel.FirstAtLeast(x, SmallBits) finds the first
// value that is not.
const SmallBits = 0x53800000

// fastMax bounds the scalars of a fast apply.
const fastMax = 1 << 20

// FastOK says whether an apply by o with these gradient weights and rate
// can overflow only through an input of 2⁴⁰ or more: SGD, with or without
// momentum, with |lr|, Σ|weights| and the weight decay at most 2²⁰. Then
// from inputs below 2⁴⁰ the update is below 2⁶², the weights below 2⁸⁴
// (Nesterov's too), far from float32's 2¹²⁸; the adaptive rules divide by
// a root that can be small, and always save.
func (o *Optimizer) FastOK(weights []float32, lr float32) bool {
	if o.sq != nil || !(math.Abs(float64(lr)) <= fastMax) || !(o.cfg.WeightDecay <= fastMax) {
		return false
	}
	sum := 0.0
	for _, a := range weights {
		sum += math.Abs(float64(a))
	}
	return sum <= fastMax
}

// begin sizes un to o and keeps the step count.
func (un *Undo) begin(o *Optimizer) {
	un.Small = true
	if un.Fast {
		return
	}
	grow := func(b []float32, have []float32) []float32 {
		if have == nil {
			return b[:0]
		}
		if cap(b) < o.n {
			return hugemem.Floats(o.n) // streamed like the weights: 2 MB pages
		}
		return b[:o.n]
	}
	if !un.KeptW {
		if cap(un.w) < o.n {
			un.w = hugemem.Floats(o.n)
		}
		un.w = un.w[:o.n]
	}
	un.v, un.sq, un.gm = grow(un.v, o.v), grow(un.sq, o.sq), grow(un.gm, o.gm)
	un.t = *o.t
}

func (un *Undo) save(o *Optimizer, w []float32, lo, hi int) {
	if un.Fast {
		return
	}
	if !un.KeptW {
		copy(un.w[lo:hi], w[lo:hi])
	}
	if o.v != nil {
		copy(un.v[lo:hi], o.v[lo:hi])
	}
	if o.sq != nil {
		copy(un.sq[lo:hi], o.sq[lo:hi])
	}
	if o.gm != nil {
		copy(un.gm[lo:hi], o.gm[lo:hi])
	}
}

// finite screens what the step wrote to [lo, hi), noting in Small
// whether it is all below 2⁴⁰.
func (un *Undo) finite(o *Optimizer, w []float32, lo, hi int) bool {
	for _, b := range [...][]float32{w, o.v, o.sq, o.gm} {
		if b == nil {
			continue
		}
		c := b[lo:hi]
		i := kernel.FirstAtLeast(c, SmallBits)
		if i < 0 {
			continue
		}
		un.Small = false
		if kernel.FirstNonFinite(c[i:]) >= 0 {
			if un.Fast {
				panic("optim: a fast apply (Undo.Fast) wrote a NaN or ±Inf: its inputs were not below 2⁴⁰, or FastOK did not hold")
			}
			return false
		}
	}
	return true
}

// restore puts [0, hi) back.
func (un *Undo) restore(o *Optimizer, w []float32, hi int) {
	if !un.KeptW {
		copy(w[:hi], un.w[:hi])
	}
	if o.v != nil {
		copy(o.v[:hi], un.v[:hi])
	}
	if o.sq != nil {
		copy(o.sq[:hi], un.sq[:hi])
	}
	if o.gm != nil {
		copy(o.gm[:hi], un.gm[:hi])
	}
	if !o.sub {
		*o.t = un.t
	}
}
