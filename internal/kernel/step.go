package kernel

// The rest of the optimizer's apply path (package optim): the steps and
// accumulations that have no assembly, Go loops unrolled by four for four
// independent chains per iteration. As apply.go's, every product is
// converted to float32 before it is added, so no target fuses it into a
// multiply-add: a shard's weights have the same bits on every machine.

// Acc1 sets (first) or adds to u one weighted vector:
//
//	for i := range u { u[i] (=|+=) a*g[i] }
//
// It panics if g is shorter than u.
func Acc1(u, g []float32, a float32, first bool) {
	n := len(u)
	if len(g) < n {
		panic("kernel: Acc1: g is shorter than u")
	}
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
		u[i] += float32(a * g[i])
		u[i+1] += float32(a * g[i+1])
		u[i+2] += float32(a * g[i+2])
		u[i+3] += float32(a * g[i+3])
	}
	for ; i < n; i++ {
		u[i] += float32(a * g[i])
	}
}

// SGD is the plain step on w by the update u:
//
//	for i := range w { w[i] -= lr * (u[i] + wd*w[i]) }
//
// It panics if u is shorter than w.
func SGD(w, u []float32, lr, wd float32) {
	n := len(w)
	if len(u) < n {
		panic("kernel: SGD: u is shorter than w")
	}
	u = u[:n]
	i := 0
	if wd == 0 {
		for ; i+4 <= n; i += 4 {
			w[i] -= float32(lr * u[i])
			w[i+1] -= float32(lr * u[i+1])
			w[i+2] -= float32(lr * u[i+2])
			w[i+3] -= float32(lr * u[i+3])
		}
	} else {
		for ; i+4 <= n; i += 4 {
			w[i] -= float32(lr * (u[i] + float32(wd*w[i])))
			w[i+1] -= float32(lr * (u[i+1] + float32(wd*w[i+1])))
			w[i+2] -= float32(lr * (u[i+2] + float32(wd*w[i+2])))
			w[i+3] -= float32(lr * (u[i+3] + float32(wd*w[i+3])))
		}
	}
	for ; i < n; i++ {
		w[i] -= float32(lr * (u[i] + float32(wd*w[i])))
	}
}

// Nesterov is Nesterov's momentum step on equal-length w, v, u:
//
//	for i := range w {
//		g := u[i] + wd*w[i]
//		v[i] = mu*v[i] + g
//		w[i] -= lr * (g + mu*v[i])
//	}
//
// It panics if v or u is shorter than w.
func Nesterov(w, v, u []float32, lr, mu, wd float32) {
	n := len(w)
	if len(v) < n || len(u) < n {
		panic("kernel: Nesterov: v or u is shorter than w")
	}
	v, u = v[:n], u[:n]
	for i := range w {
		g := u[i] + float32(wd*w[i])
		vi := float32(mu*v[i]) + g
		v[i] = vi
		w[i] -= float32(lr * (g + float32(mu*vi)))
	}
}

// Scale multiplies w by d in place: for i := range w { w[i] *= d }.
func Scale(w []float32, d float32) {
	for i := range w {
		w[i] *= d
	}
}
