package optim

import (
	"fmt"

	"github.com/pacer-ps/pacer/internal/kernel"
)

// chunk is how many floats of the aggregated update ApplyWeighted keeps at a time: 8 KB, so the
// buffer stays in L1 while every gradient streams through it once.
const chunk = 2048

// Optimizer holds the state of the update rule for one contiguous parameter range of length n:
// the velocity when Momentum > 0, and for RMSProp, Adam and AdamW the running mean of squared
// gradients (and Adam's and AdamW's first moment and step count, centered RMSProp's mean
// gradient). Methods on one Optimizer must not run concurrently; optimizers from Sub on
// disjoint ranges may.
type Optimizer struct {
	cfg Config
	n   int
	v   []float32 // momentum buffer, or Adam's first moment; nil for SGD and RMSProp without momentum
	sq  []float32 // the adaptive rules' mean of squared gradients; nil for SGD
	gm  []float32 // centered RMSProp's mean gradient; nil otherwise
	// t is Adam's step count, shared with every Sub: it counts applies of
	// the whole range, so a split apply advances it once (Tick).
	t   *int64
	sub bool // made by Sub: steps with the owner's count and never advances it
}

// New validates cfg and allocates the state for n parameters.
func New(cfg Config, n int) (*Optimizer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("optim: New: length %d, must be ≥ 0", n)
	}
	o := &Optimizer{cfg: cfg, n: n, t: new(int64)}
	if cfg.Momentum > 0 || cfg.Rule.Kind.counts() {
		o.v = make([]float32, n)
	}
	if cfg.Rule.Kind != SGD {
		o.sq = make([]float32, n)
	}
	if cfg.Rule.Centered {
		o.gm = make([]float32, n)
	}
	return o, nil
}

// Config returns the configuration the optimizer was built with.
func (o *Optimizer) Config() Config { return o.cfg }

// Len is the length of the range the optimizer updates.
func (o *Optimizer) Len() int { return o.n }

// Sub returns an optimizer for elements [lo, hi) of o's range that shares o's state (every
// buffer's range, and Adam's step count), so a range can be updated by several goroutines, one
// sub-range each. A Sub never advances the step count: call o.Tick once before the sub-ranges'
// applies of one step, which then all step with the same count, as one pass over the range would.
func (o *Optimizer) Sub(lo, hi int) (*Optimizer, error) {
	if lo < 0 || hi < lo || hi > o.n {
		return nil, fmt.Errorf("optim: Sub(%d, %d) outside [0, %d]", lo, hi, o.n)
	}
	s := &Optimizer{cfg: o.cfg, n: hi - lo, t: o.t, sub: true}
	if o.v != nil {
		s.v = o.v[lo:hi:hi]
	}
	if o.sq != nil {
		s.sq = o.sq[lo:hi:hi]
	}
	if o.gm != nil {
		s.gm = o.gm[lo:hi:hi]
	}
	return s, nil
}

// Tick advances Adam's (and AdamW's) step count for one apply split over Sub optimizers (other rules keep
// no count). ApplyWeighted and Step on an optimizer from New tick by themselves. Tick on a Sub
// is a programming error and panics: sub-ranges must not count a step each.
func (o *Optimizer) Tick() {
	if o.sub {
		panic("optim: Tick on a Sub: the owner of the range ticks once per apply")
	}
	*o.t++
}

// State is an optimizer's state, what a checkpoint keeps beside the weights.
type State struct {
	// Velocity is the momentum buffer (SGD and RMSProp with momentum) or Adam's first moment
	// m; nil when the rule keeps none.
	Velocity []float32
	// Square is the adaptive rules' running mean of squared gradients; nil for SGD.
	Square []float32
	// Mean is centered RMSProp's running mean of the gradients; nil for every other rule.
	Mean []float32
	// Step is Adam's and AdamW's step count t, the applies so far (0 for the other rules).
	Step int64
}

// State returns the optimizer's state. Its slices alias the optimizer's buffers: copy them if
// the optimizer keeps running.
func (o *Optimizer) State() State {
	st := State{Velocity: o.v, Square: o.sq, Mean: o.gm}
	if o.cfg.Rule.Kind.counts() {
		st.Step = *o.t
	}
	return st
}

// SetState restores the state from a checkpoint. It must be exactly the state this
// optimizer's rule keeps: a buffer it lacks, or one it does not keep, is refused with the
// reason, and nothing changes.
func (o *Optimizer) SetState(st State) error {
	name := o.cfg.Rule.Kind.String()
	if o.cfg.Rule.Centered {
		name += " (centered)"
	}
	check := func(what string, have []float32, got []float32) error {
		switch {
		case have == nil && len(got) > 0:
			return fmt.Errorf("optim: SetState: %s (momentum %g) keeps no %s, got %d values", name, o.cfg.Momentum, what, len(got))
		case have != nil && len(got) != o.n:
			return fmt.Errorf("optim: SetState: %s (momentum %g) needs %d %s values, got %d", name, o.cfg.Momentum, o.n, what, len(got))
		}
		return nil
	}
	if err := check("velocity", o.v, st.Velocity); err != nil {
		return err
	}
	if err := check("squared-gradient", o.sq, st.Square); err != nil {
		return err
	}
	if err := check("mean-gradient", o.gm, st.Mean); err != nil {
		return err
	}
	switch {
	case !o.cfg.Rule.Kind.counts() && st.Step != 0:
		return fmt.Errorf("optim: SetState: %s keeps no step count, got %d", name, st.Step)
	case st.Step < 0:
		return fmt.Errorf("optim: SetState: step count %d, must be ≥ 0", st.Step)
	case o.sub:
		return fmt.Errorf("optim: SetState on a Sub: restore the whole range's owner")
	}
	copy(o.v, st.Velocity)
	copy(o.sq, st.Square)
	copy(o.gm, st.Mean)
	*o.t = st.Step
	return nil
}

// Velocity returns the momentum buffer for checkpoints (nil for plain SGD). It aliases the
// optimizer's state: copy it if the optimizer keeps running.
func (o *Optimizer) Velocity() []float32 { return o.v }

// Step applies one update with direction u (usually the mean gradient) and rate lr:
//
//	g = u + wd·w
//	plain:     w ← w − lr·g
//	momentum:  v ← μ·v + g;  w ← w − lr·v
//	Nesterov:  v ← μ·v + g;  w ← w − lr·(g + μ·v)
//
// and for RMSProp, Adam and AdamW the rules of PyTorch's RMSprop, Adam and AdamW (adaptive.go).
// On an optimizer from New it advances Adam's step count; on a Sub it steps with the count the
// owner's Tick set. Mismatched lengths are a programming error and panic.
func (o *Optimizer) Step(w, u []float32, lr float32) {
	if len(w) != o.n || len(u) != o.n {
		panic(fmt.Sprintf("optim: Step: len(w)=%d len(u)=%d, optimizer range %d", len(w), len(u), o.n))
	}
	k := o.begin(lr)
	o.step(w, u, lr, 0, o.n, &k)
}

// begin starts one step: it advances Adam's count unless o is a Sub and returns the step's
// scalars, computed once for every chunk.
func (o *Optimizer) begin(lr float32) adaptiveCoef {
	if o.sq == nil {
		return adaptiveCoef{}
	}
	if o.cfg.Rule.Kind.counts() {
		if !o.sub {
			*o.t++
		} else if *o.t < 1 {
			panic("optim: an Adam Sub stepped before its owner's Tick")
		}
	}
	return o.coef(lr)
}

// step applies the rule to w[lo:hi] with direction u (already cut to the same span).
func (o *Optimizer) step(w, u []float32, lr float32, lo, hi int, k *adaptiveCoef) {
	if o.sq != nil {
		o.adaptiveStep(w[lo:hi], u, lo, hi, k)
		return
	}
	wd := float32(o.cfg.WeightDecay)
	if o.v == nil {
		kernel.SGD(w[lo:hi], u, lr, wd)
		return
	}
	if o.cfg.Nesterov {
		kernel.Nesterov(w[lo:hi], o.v[lo:hi], u, lr, float32(o.cfg.Momentum), wd)
		return
	}
	kernel.Momentum(w[lo:hi], o.v[lo:hi], u, lr, float32(o.cfg.Momentum), wd)
}

// ApplyWeighted aggregates and steps in one go: u = Σ_k weights[k]·grads[k], then Step(w, u, lr),
// without allocating. It walks the range in chunks of 8 KB: each chunk of u is built by
// streaming the gradients through it four at a time and then consumed by the step while still
// in L1, so main memory sees each gradient read once and w read and written once.
//
// With no gradients, u is zero and only weight decay and momentum act. Mismatched lengths are a
// programming error and panic.
func (o *Optimizer) ApplyWeighted(w []float32, grads [][]float32, weights []float32, lr float32) {
	o.applyWeighted(w, grads, weights, lr, nil)
}

// applyWeighted is ApplyWeighted, checked when un is set (checked.go).
func (o *Optimizer) applyWeighted(w []float32, grads [][]float32, weights []float32, lr float32, un *Undo) bool {
	if len(w) != o.n || len(grads) != len(weights) {
		panic(fmt.Sprintf("optim: ApplyWeighted: len(w)=%d for range %d, %d gradients with %d weights",
			len(w), o.n, len(grads), len(weights)))
	}
	for k, g := range grads {
		if len(g) != o.n {
			panic(fmt.Sprintf("optim: ApplyWeighted: gradient %d has length %d, range %d", k, len(g), o.n))
		}
	}
	if un != nil {
		un.begin(o)
	}
	if o.v == nil && o.sq == nil {
		return o.applySGD(w, grads, weights, lr, un)
	}
	coef := o.begin(lr)
	var buf [chunk]float32 // on the stack: no allocation, and private to this call
	for lo := 0; lo < o.n; lo += chunk {
		hi := min(lo+chunk, o.n)
		u := buf[:hi-lo]
		k := 0
		for ; k+4 <= len(grads); k += 4 {
			kernel.Acc4(u, grads[k][lo:hi], grads[k+1][lo:hi], grads[k+2][lo:hi], grads[k+3][lo:hi],
				weights[k], weights[k+1], weights[k+2], weights[k+3], k == 0)
		}
		for ; k < len(grads); k++ {
			kernel.Acc1(u, grads[k][lo:hi], weights[k], k == 0)
		}
		if len(grads) == 0 {
			clear(u)
		}
		if un != nil {
			un.save(o, w, lo, hi)
		}
		o.step(w, u, lr, lo, hi, &coef)
		if un != nil && !un.finite(o, w, lo, hi) {
			un.restore(o, w, hi)
			return false
		}
	}
	return true
}

// applySGD is ApplyWeighted for plain SGD, which needs no u at all: w ← (1 − lr·wd)·w −
// Σ_k (lr·weights[k])·grads[k], folded into w four gradients at a time. For K ≤ 4 that is a
// single pass over memory; for more, the range is chunked so the chunk of w stays in L1 between
// groups.
func (o *Optimizer) applySGD(w []float32, grads [][]float32, weights []float32, lr float32, un *Undo) bool {
	d := 1 - lr*float32(o.cfg.WeightDecay)
	span := o.n
	if len(grads) > 4 || un != nil {
		span = chunk
	}
	for lo := 0; lo < o.n; lo += span {
		hi := min(lo+span, o.n)
		wc := w[lo:hi]
		if un != nil {
			un.save(o, w, lo, hi)
		}
		dk := d // the decay applies once, with the first group
		k := 0
		for ; k+4 <= len(grads); k += 4 {
			kernel.Sub4(wc, grads[k][lo:hi], grads[k+1][lo:hi], grads[k+2][lo:hi], grads[k+3][lo:hi],
				lr*weights[k], lr*weights[k+1], lr*weights[k+2], lr*weights[k+3], dk)
			dk = 1
		}
		for ; k < len(grads); k++ {
			kernel.Sub1(wc, grads[k][lo:hi], lr*weights[k], dk)
			dk = 1
		}
		if len(grads) == 0 && dk != 1 {
			kernel.Scale(wc, dk)
		}
		if un != nil && !un.finite(o, w, lo, hi) {
			un.restore(o, w, hi)
			return false
		}
	}
	return true
}
