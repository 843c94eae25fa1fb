package kernel

// The SGD apply's kernels: a shard folds a round's weighted gradients
// straight into its weights. Unlike Axpy, they use no fused multiply-add:
// every product and sum is rounded as the Go loops round it, so the
// assembly and the Go implementation give the same bits, and a shard's
// weights do not depend on the machine's kernel path. The Go loops convert
// every product to float32 explicitly: the Go compiler fuses a*b + c into
// one FMA where the target has it (GOAMD64=v3, arm64) unless a conversion
// forces the rounding, and the fused result differs in the last bit.

// Sub4 folds four scaled vectors into w:
//
//	for i := range w { w[i] = d*w[i] - (b0*g0[i] + b1*g1[i] + b2*g2[i] + b3*g3[i]) }
//
// (left to right, each operation rounded). It panics if a g is shorter than w.
func Sub4(w, g0, g1, g2, g3 []float32, b0, b1, b2, b3, d float32) {
	n := len(w)
	if len(g0) < n || len(g1) < n || len(g2) < n || len(g3) < n {
		panic("kernel: Sub4: a gradient is shorter than w")
	}
	sub4(w, g0[:n], g1[:n], g2[:n], g3[:n], b0, b1, b2, b3, d)
}

// Sub1 folds one scaled vector into w:
//
//	for i := range w { w[i] = d*w[i] - b*g[i] }
//
// It panics if g is shorter than w.
func Sub1(w, g []float32, b, d float32) {
	if len(g) < len(w) {
		panic("kernel: Sub1: g is shorter than w")
	}
	sub1(w, g[:len(w)], b, d)
}

// sub4Go is Sub4 on equal lengths, unrolled by four. With d = 1 it skips
// the multiplication (1·w is w exactly, so the bits are the same).
func sub4Go(w, g0, g1, g2, g3 []float32, b0, b1, b2, b3, d float32) {
	n := len(w)
	g0, g1, g2, g3 = g0[:n], g1[:n], g2[:n], g3[:n]
	i := 0
	if d == 1 {
		for ; i+4 <= n; i += 4 {
			ww := (*[4]float32)(w[i:])
			x0, x1, x2, x3 := (*[4]float32)(g0[i:]), (*[4]float32)(g1[i:]), (*[4]float32)(g2[i:]), (*[4]float32)(g3[i:])
			ww[0] -= float32(float32(float32(b0*x0[0])+float32(b1*x1[0]))+float32(b2*x2[0])) + float32(b3*x3[0])
			ww[1] -= float32(float32(float32(b0*x0[1])+float32(b1*x1[1]))+float32(b2*x2[1])) + float32(b3*x3[1])
			ww[2] -= float32(float32(float32(b0*x0[2])+float32(b1*x1[2]))+float32(b2*x2[2])) + float32(b3*x3[2])
			ww[3] -= float32(float32(float32(b0*x0[3])+float32(b1*x1[3]))+float32(b2*x2[3])) + float32(b3*x3[3])
		}
	}
	for ; i < n; i++ {
		w[i] = float32(d*w[i]) - (float32(float32(float32(b0*g0[i])+float32(b1*g1[i]))+float32(b2*g2[i])) + float32(b3*g3[i]))
	}
}

// sub1Go is Sub1 on equal lengths.
func sub1Go(w, g []float32, b, d float32) {
	n := len(w)
	g = g[:n]
	i := 0
	if d == 1 {
		for ; i+4 <= n; i += 4 {
			ww, x := (*[4]float32)(w[i:]), (*[4]float32)(g[i:])
			ww[0] -= float32(b * x[0])
			ww[1] -= float32(b * x[1])
			ww[2] -= float32(b * x[2])
			ww[3] -= float32(b * x[3])
		}
	}
	for ; i < n; i++ {
		w[i] = float32(d*w[i]) - float32(b*g[i])
	}
}

// Acc4 sets (first) or adds to u a weighted sum of four vectors:
//
//	for i := range u { u[i] = a0*g0[i] + a1*g1[i] + a2*g2[i] + a3*g3[i] }    // first
//	for i := range u { u[i] += a0*g0[i] + a1*g1[i] + a2*g2[i] + a3*g3[i] }   // otherwise
//
// It panics if a g is shorter than u.
func Acc4(u, g0, g1, g2, g3 []float32, a0, a1, a2, a3 float32, first bool) {
	n := len(u)
	if len(g0) < n || len(g1) < n || len(g2) < n || len(g3) < n {
		panic("kernel: Acc4: a gradient is shorter than u")
	}
	acc4(u, g0[:n], g1[:n], g2[:n], g3[:n], a0, a1, a2, a3, first)
}

// Momentum is the heavy-ball step on equal-length w, v, u:
//
//	for i := range w {
//		v[i] = mu*v[i] + (u[i] + wd*w[i])
//		w[i] -= lr * v[i]
//	}
//
// It panics if v or u is shorter than w.
func Momentum(w, v, u []float32, lr, mu, wd float32) {
	n := len(w)
	if len(v) < n || len(u) < n {
		panic("kernel: Momentum: v or u is shorter than w")
	}
	momentum(w, v[:n], u[:n], lr, mu, wd)
}

func acc4Go(u, g0, g1, g2, g3 []float32, a0, a1, a2, a3 float32, first bool) {
	n := len(u)
	g0, g1, g2, g3 = g0[:n], g1[:n], g2[:n], g3[:n]
	if first {
		for i := range u {
			u[i] = float32(float32(float32(a0*g0[i])+float32(a1*g1[i]))+float32(a2*g2[i])) + float32(a3*g3[i])
		}
		return
	}
	for i := range u {
		u[i] += float32(float32(float32(a0*g0[i])+float32(a1*g1[i]))+float32(a2*g2[i])) + float32(a3*g3[i])
	}
}

func momentumGo(w, v, u []float32, lr, mu, wd float32) {
	n := len(w)
	v, u = v[:n], u[:n]
	for i := range w {
		vi := float32(mu*v[i]) + (u[i] + float32(wd*w[i]))
		v[i] = vi
		w[i] -= float32(lr * vi)
	}
}
