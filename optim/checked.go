package optim

import (
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

// begin sizes un to o and keeps the step count.
func (un *Undo) begin(o *Optimizer) {
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

// finite screens what the step wrote to [lo, hi).
func (un *Undo) finite(o *Optimizer, w []float32, lo, hi int) bool {
	ok := kernel.FirstNonFinite(w[lo:hi]) < 0
	for _, b := range [...][]float32{o.v, o.sq, o.gm} {
		if ok && b != nil {
			ok = kernel.FirstNonFinite(b[lo:hi]) < 0
		}
	}
	return ok
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
