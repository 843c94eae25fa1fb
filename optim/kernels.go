package optim

import "github.com/pacer-ps/pacer/internal/kernel"

// The kernels of the apply path. Each works on equal-length slices (the callers guarantee
// it). acc4, sub4, sub1 and the heavy-ball step are internal/kernel's (AVX2 without FMA where
// the CPU has it, the same bits as its Go loops); the rest are Go loops here, whose operands
// are re-sliced to len(dst) up front so the compiler drops the bounds checks, unrolled by four
// for four independent chains per iteration. Each comment shows the reference loop.

// acc4 sets (first) or adds a weighted sum of four vectors (the kernel package's loop, AVX2
// where the CPU has it, the same bits as its Go loop):
//
//	for i := range u { u[i] (=|+=) a0*g0[i] + a1*g1[i] + a2*g2[i] + a3*g3[i] }
func acc4(u, g0, g1, g2, g3 []float32, a0, a1, a2, a3 float32, first bool) {
	kernel.Acc4(u, g0, g1, g2, g3, a0, a1, a2, a3, first)
}

// acc1 sets (first) or adds one weighted vector:
//
//	for i := range u { u[i] (=|+=) a*g[i] }
func acc1(u, g []float32, a float32, first bool) {
	n := len(u)
	g = g[:n]
	i := 0
	if first {
		for ; i+4 <= n; i += 4 {
			u[i] = a * g[i]
			u[i+1] = a * g[i+1]
			u[i+2] = a * g[i+2]
			u[i+3] = a * g[i+3]
		}
		for ; i < n; i++ {
			u[i] = a * g[i]
		}
		return
	}
	for ; i+4 <= n; i += 4 {
		u[i] += a * g[i]
		u[i+1] += a * g[i+1]
		u[i+2] += a * g[i+2]
		u[i+3] += a * g[i+3]
	}
	for ; i < n; i++ {
		u[i] += a * g[i]
	}
}

// sgd is the plain step:
//
//	for i := range w { w[i] -= lr * (u[i] + wd*w[i]) }
func sgd(w, u []float32, lr, wd float32) {
	n := len(w)
	u = u[:n]
	i := 0
	if wd == 0 {
		for ; i+4 <= n; i += 4 {
			w[i] -= lr * u[i]
			w[i+1] -= lr * u[i+1]
			w[i+2] -= lr * u[i+2]
			w[i+3] -= lr * u[i+3]
		}
	} else {
		for ; i+4 <= n; i += 4 {
			w[i] -= lr * (u[i] + wd*w[i])
			w[i+1] -= lr * (u[i+1] + wd*w[i+1])
			w[i+2] -= lr * (u[i+2] + wd*w[i+2])
			w[i+3] -= lr * (u[i+3] + wd*w[i+3])
		}
	}
	for ; i < n; i++ {
		w[i] -= lr * (u[i] + wd*w[i])
	}
}

// momentum is the heavy-ball step, or Nesterov's when nesterov is set:
//
//	for i := range w {
//		g := u[i] + wd*w[i]
//		v[i] = mu*v[i] + g
//		w[i] -= lr * v[i]            // heavy ball
//		w[i] -= lr * (g + mu*v[i])   // Nesterov
//	}
func momentum(w, v, u []float32, lr, mu, wd float32, nesterov bool) {
	n := len(w)
	v, u = v[:n], u[:n]
	if nesterov {
		for i := range w {
			g := u[i] + wd*w[i]
			vi := mu*v[i] + g
			v[i] = vi
			w[i] -= lr * (g + mu*vi)
		}
		return
	}
	kernel.Momentum(w, v, u, lr, mu, wd) // the heavy ball: AVX2 where the CPU has it, the same bits
}

// sub4 folds four scaled gradients straight into the weights (plain SGD needs no u):
//
//	for i := range w { w[i] = d*w[i] - (b0*g0[i] + b1*g1[i] + b2*g2[i] + b3*g3[i]) }
//
// d = 1 − lr·wd applies weight decay on the first group; later groups pass d = 1. The loop is
// the kernel package's (AVX2 where the CPU has it, the same bits as its Go loop): the scalar
// loop was bound by its arithmetic, not by memory, at 1.1 ns a weight.
func sub4(w, g0, g1, g2, g3 []float32, b0, b1, b2, b3, d float32) {
	kernel.Sub4(w, g0, g1, g2, g3, b0, b1, b2, b3, d)
}

// sub1 folds one scaled gradient into the weights:
//
//	for i := range w { w[i] = d*w[i] - b*g[i] }
func sub1(w, g []float32, b, d float32) { kernel.Sub1(w, g, b, d) }

// scale multiplies in place: for i := range w { w[i] *= d }
func scale(w []float32, d float32) {
	for i := range w {
		w[i] *= d
	}
}
