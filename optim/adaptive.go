package optim

import "math"

// This file: RMSProp, Adam and AdamW, element by element in the order of
// PyTorch's single-tensor implementations (torch.optim.RMSprop, Adam and
// AdamW on CPU tensors), so the float32 results stay within an ulp or two
// of PyTorch's:
//
//	g = u + wd·w                         (not AdamW)
//	RMSProp: v ← α·v + (1−α)·g²;  a = √v + ε
//	         centered: ḡ ← α·ḡ + (1−α)·g;  a = √(v − ḡ²) + ε
//	         with momentum: b ← μ·b + g/a;  w ← w − lr·b
//	         without:       w ← w − lr·g/a
//	Adam:    t ← t + 1;  m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²
//	         w ← w − (lr/(1−β1ᵗ))·m / (√v/√(1−β2ᵗ) + ε)
//	AdamW:   g = u;  w ← (1 − lr·wd)·w, then Adam's step
//
// The scalars that depend on the step (the bias corrections, AdamW's
// factor) are computed once per apply in float64, as PyTorch computes
// them in Python floats, and rounded to float32 as its kernels take them.
// (PyTorch 2 moves m by lerp, m + (1−β1)·(g − m): the same value up to
// float32 rounding; the reference test holds either within tolerance.)

// adaptiveCoef holds one step's scalars.
type adaptiveCoef struct {
	wd     float32 // L2 on the gradient; 0 for AdamW
	decay  float32 // α (RMSProp) or β2 (Adam)
	keep   float32 // 1−α or 1−β2
	b1     float32 // Adam: β1
	b1c    float32 // Adam: 1−β1
	eps    float32
	mu     float32 // RMSProp's momentum
	lr     float32 // RMSProp: lr; Adam: lr/(1−β1ᵗ)
	bc2    float32 // Adam: √(1−β2ᵗ)
	shrink float32 // AdamW: 1 − lr·wd; Adam: 1, which multiplies exactly
	adam   bool
	nomom  bool // RMSProp without momentum
}

// coef computes the scalars of the step at o's current count.
func (o *Optimizer) coef(lr float32) adaptiveCoef {
	r := o.cfg.Rule
	k := adaptiveCoef{wd: float32(o.cfg.WeightDecay), eps: float32(r.Eps), lr: lr, shrink: 1}
	switch r.Kind {
	case RMSProp:
		k.decay, k.keep = float32(r.Alpha), float32(1-r.Alpha)
		k.mu, k.nomom = float32(o.cfg.Momentum), o.cfg.Momentum == 0
	case Adam, AdamW:
		t := float64(*o.t)
		k.adam = true
		k.decay, k.keep, k.b1, k.b1c = float32(r.Beta2), float32(1-r.Beta2), float32(r.Beta1), float32(1-r.Beta1)
		k.lr = float32(float64(lr) / (1 - math.Pow(r.Beta1, t)))
		k.bc2 = float32(math.Sqrt(1 - math.Pow(r.Beta2, t)))
		if r.Kind == AdamW {
			// The decay scales with the undivided rate, as PyTorch's
			// param.mul_(1 - lr * weight_decay): the bias correction
			// does not touch it.
			k.wd, k.shrink = 0, float32(1-float64(lr)*o.cfg.WeightDecay)
		}
	}
	return k
}

// adaptiveStep applies RMSProp, Adam or AdamW to w, the span [lo, hi) of
// o's range, with direction u of the same length.
func (o *Optimizer) adaptiveStep(w, u []float32, lo, hi int, k *adaptiveCoef) {
	n := len(w)
	u, sq := u[:n], o.sq[lo:hi][:n]
	var v []float32
	if o.v != nil {
		v = o.v[lo:hi][:n]
	}
	switch {
	case k.adam:
		adam(w, v, sq, u, k)
	case o.gm != nil:
		centered(w, v, sq, o.gm[lo:hi][:n], u, k)
	case k.nomom:
		for i := range w {
			g := u[i] + k.wd*w[i]
			s := sq[i]*k.decay + k.keep*g*g
			sq[i] = s
			w[i] += -k.lr * g / (sqrt32(s) + k.eps)
		}
	default:
		for i := range w {
			g := u[i] + k.wd*w[i]
			s := sq[i]*k.decay + k.keep*g*g
			sq[i] = s
			b := v[i]*k.mu + g/(sqrt32(s)+k.eps)
			v[i] = b
			w[i] += -k.lr * b
		}
	}
}

// centered is RMSProp's centered step; v is nil without momentum. The
// variance v − ḡ² is never negative in exact arithmetic (Jensen), but
// float32 rounding can push it a few ulps below 0 once the gradient has
// barely changed for many steps; PyTorch's root of it is then NaN and so
// is every weight after. It is taken as 0 instead: the step that follows
// is the one for a vanishing variance.
func centered(w, v, sq, gm, u []float32, k *adaptiveCoef) {
	n := len(w)
	sq, gm, u = sq[:n], gm[:n], u[:n]
	for i := range w {
		g := u[i] + k.wd*w[i]
		s := sq[i]*k.decay + k.keep*g*g
		sq[i] = s
		a := gm[i]*k.decay + k.keep*g
		gm[i] = a
		d := g / (sqrt32(max(s-a*a, 0)) + k.eps)
		if k.nomom {
			w[i] += -k.lr * d
			continue
		}
		b := v[i]*k.mu + d
		v[i] = b
		w[i] += -k.lr * b
	}
}

func adam(w, m, sq, u []float32, k *adaptiveCoef) {
	n := len(w)
	m, sq, u = m[:n], sq[:n], u[:n]
	for i := range w {
		g := u[i] + k.wd*w[i]
		mi := m[i]*k.b1 + k.b1c*g
		m[i] = mi
		s := sq[i]*k.decay + k.keep*g*g
		sq[i] = s
		w[i] = w[i]*k.shrink - k.lr*mi/(sqrt32(s)/k.bc2+k.eps)
	}
}

// sqrt32 is the correctly rounded float32 square root: the float64 root
// of a float32 rounds to the same value.
func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) }
