package nn

import "fmt"

// StepFLOPs is the floating-point operations of one Step of m at batch:
// the matrix products of the dense and convolution layers, two per
// multiply-add — forward, the weight gradient, and the input gradient of
// every such layer but the first (Grad computes none below it) — plus the
// SGD update's two per parameter. The biases, ReLUs, poolings and the
// softmax are left out: they are a few elements' work each where a product
// is a few hundred, under 1% of the total for every model here (the MLP at
// batch 64: 64.9 MFLOP). It is the figure a device's FLOP/s turns into a
// step time (`--device-rate`), so it counts what the step computes, as
// each layer's code computes it; a device that runs another algorithm
// (Winograd convolutions) does other work.
func StepFLOPs(m Model, batch int) (int64, error) {
	s, ok := m.(*seq)
	if !ok {
		return 0, fmt.Errorf("nn: %s: no layers to count", m.Name())
	}
	var macs int64 // multiply-adds per sample
	for i, l := range s.layers {
		var fwd int64
		switch l := l.(type) {
		case *dense:
			fwd = int64(l.in) * int64(l.out)
		case *conv:
			fwd = int64(l.oh*l.ow) * int64(l.patch()) * int64(l.cout)
		default:
			continue
		}
		passes := int64(3) // forward, dW, dx
		if i == s.first {
			passes = 2
		}
		macs += passes * fwd
	}
	return 2*macs*int64(batch) + 2*int64(s.nparams), nil
}
