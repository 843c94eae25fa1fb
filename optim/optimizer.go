package optim

import "fmt"

// chunk is how many floats of the aggregated update ApplyWeighted keeps at a time: 8 KB, so the
// buffer stays in L1 while every gradient streams through it once.
const chunk = 2048

// Optimizer holds the state of the update rule for one contiguous parameter range of length n:
// the velocity when Momentum > 0, nothing otherwise. Methods on one Optimizer must not run
// concurrently; optimizers from Sub on disjoint ranges may.
type Optimizer struct {
	cfg Config
	n   int
	v   []float32 // nil when Momentum == 0
}

// New validates cfg and allocates the state for n parameters.
func New(cfg Config, n int) (*Optimizer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("optim: New: length %d, must be ≥ 0", n)
	}
	o := &Optimizer{cfg: cfg, n: n}
	if cfg.Momentum > 0 {
		o.v = make([]float32, n)
	}
	return o, nil
}

// Config returns the configuration the optimizer was built with.
func (o *Optimizer) Config() Config { return o.cfg }

// Len is the length of the range the optimizer updates.
func (o *Optimizer) Len() int { return o.n }

// Sub returns an optimizer for elements [lo, hi) of o's range that shares o's velocity, so a
// range can be updated by several goroutines, one sub-range each.
func (o *Optimizer) Sub(lo, hi int) (*Optimizer, error) {
	if lo < 0 || hi < lo || hi > o.n {
		return nil, fmt.Errorf("optim: Sub(%d, %d) outside [0, %d]", lo, hi, o.n)
	}
	s := &Optimizer{cfg: o.cfg, n: hi - lo}
	if o.v != nil {
		s.v = o.v[lo:hi:hi]
	}
	return s, nil
}

// Velocity returns the momentum buffer for checkpoints (nil for plain SGD). It aliases the
// optimizer's state: copy it if the optimizer keeps running.
func (o *Optimizer) Velocity() []float32 { return o.v }

// SetVelocity restores the momentum buffer from a checkpoint.
func (o *Optimizer) SetVelocity(v []float32) error {
	if o.v == nil {
		if len(v) == 0 {
			return nil
		}
		return fmt.Errorf("optim: SetVelocity: plain SGD (Momentum 0) has no velocity, got %d values", len(v))
	}
	if len(v) != o.n {
		return fmt.Errorf("optim: SetVelocity: %d values for a range of %d", len(v), o.n)
	}
	copy(o.v, v)
	return nil
}

// Step applies one update with direction u (usually the mean gradient) and rate lr:
//
//	g = u + wd·w
//	plain:     w ← w − lr·g
//	momentum:  v ← μ·v + g;  w ← w − lr·v
//	Nesterov:  v ← μ·v + g;  w ← w − lr·(g + μ·v)
//
// Mismatched lengths are a programming error and panic.
func (o *Optimizer) Step(w, u []float32, lr float32) {
	if len(w) != o.n || len(u) != o.n {
		panic(fmt.Sprintf("optim: Step: len(w)=%d len(u)=%d, optimizer range %d", len(w), len(u), o.n))
	}
	o.step(w, u, lr, 0, o.n)
}

// step applies the rule to w[lo:hi] with direction u (already cut to the same span).
func (o *Optimizer) step(w, u []float32, lr float32, lo, hi int) {
	wd := float32(o.cfg.WeightDecay)
	if o.v == nil {
		sgd(w[lo:hi], u, lr, wd)
		return
	}
	momentum(w[lo:hi], o.v[lo:hi], u, lr, float32(o.cfg.Momentum), wd, o.cfg.Nesterov)
}

// ApplyWeighted aggregates and steps in one go: u = Σ_k weights[k]·grads[k], then Step(w, u, lr),
// without allocating. It walks the range in chunks of 8 KB: each chunk of u is built by
// streaming the gradients through it four at a time and then consumed by the step while still
// in L1, so main memory sees each gradient read once and w read and written once.
//
// With no gradients, u is zero and only weight decay and momentum act. Mismatched lengths are a
// programming error and panic.
func (o *Optimizer) ApplyWeighted(w []float32, grads [][]float32, weights []float32, lr float32) {
	if len(w) != o.n || len(grads) != len(weights) {
		panic(fmt.Sprintf("optim: ApplyWeighted: len(w)=%d for range %d, %d gradients with %d weights",
			len(w), o.n, len(grads), len(weights)))
	}
	for k, g := range grads {
		if len(g) != o.n {
			panic(fmt.Sprintf("optim: ApplyWeighted: gradient %d has length %d, range %d", k, len(g), o.n))
		}
	}
	if o.v == nil {
		o.applySGD(w, grads, weights, lr)
		return
	}
	var buf [chunk]float32 // on the stack: no allocation, and private to this call
	for lo := 0; lo < o.n; lo += chunk {
		hi := min(lo+chunk, o.n)
		u := buf[:hi-lo]
		k := 0
		for ; k+4 <= len(grads); k += 4 {
			acc4(u, grads[k][lo:hi], grads[k+1][lo:hi], grads[k+2][lo:hi], grads[k+3][lo:hi],
				weights[k], weights[k+1], weights[k+2], weights[k+3], k == 0)
		}
		for ; k < len(grads); k++ {
			acc1(u, grads[k][lo:hi], weights[k], k == 0)
		}
		if len(grads) == 0 {
			clear(u)
		}
		o.step(w, u, lr, lo, hi)
	}
}

// applySGD is ApplyWeighted for plain SGD, which needs no u at all: w ← (1 − lr·wd)·w −
// Σ_k (lr·weights[k])·grads[k], folded into w four gradients at a time. For K ≤ 4 that is a
// single pass over memory; for more, the range is chunked so the chunk of w stays in L1 between
// groups.
func (o *Optimizer) applySGD(w []float32, grads [][]float32, weights []float32, lr float32) {
	d := 1 - lr*float32(o.cfg.WeightDecay)
	span := o.n
	if len(grads) > 4 {
		span = chunk
	}
	for lo := 0; lo < o.n; lo += span {
		hi := min(lo+span, o.n)
		wc := w[lo:hi]
		dk := d // the decay applies once, with the first group
		k := 0
		for ; k+4 <= len(grads); k += 4 {
			sub4(wc, grads[k][lo:hi], grads[k+1][lo:hi], grads[k+2][lo:hi], grads[k+3][lo:hi],
				lr*weights[k], lr*weights[k+1], lr*weights[k+2], lr*weights[k+3], dk)
			dk = 1
		}
		for ; k < len(grads); k++ {
			sub1(wc, grads[k][lo:hi], lr*weights[k], dk)
			dk = 1
		}
		if len(grads) == 0 && dk != 1 {
			scale(wc, dk)
		}
	}
}
