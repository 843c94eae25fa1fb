package optim

import "math"

// ClipNorm scales g so that its 2-norm is at most maxNorm, as PyTorch's
// torch.nn.utils.clip_grad_norm_ does over a model's whole gradient: by
// maxNorm/(‖g‖ + 10⁻⁶) when that is below 1, else not at all. It returns
// the norm before clipping. A worker clips its whole gradient before it
// pushes the blocks, so the clip sees every parameter, as PyTorch's does.
// The norm is summed in float64: a float32 sum of squares of a million
// values loses digits the threshold can hinge on.
func ClipNorm(g []float32, maxNorm float64) float64 {
	var ss float64
	for _, v := range g {
		ss += float64(v) * float64(v)
	}
	norm := math.Sqrt(ss)
	if coef := maxNorm / (norm + 1e-6); coef < 1 {
		c := float32(coef)
		for i := range g {
			g[i] *= c
		}
	}
	return norm
}

// EMA moves avg toward w: avg ← alpha·avg + (1−alpha)·w, elementwise, in
// float32 as PyTorch's avg.mul_(alpha).add_(w, alpha=1−alpha) computes it.
func EMA(avg, w []float32, alpha float64) {
	a, b := float32(alpha), float32(1-alpha)
	w = w[:len(avg)]
	for i := range avg {
		avg[i] = a*avg[i] + b*w[i]
	}
}
