package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The optimizer's Go steps give their definitions' bits, each operation
// rounded to float32, for every tail length (the unrolled loops' four
// chains and their remainder), with and without weight decay, and with
// special values: a shard's weights rest on it as on Sub4's.
func TestStepsSameBits(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	vec := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		if n > 5 {
			x[2], x[3], x[4] = float32(math.Inf(-1)), float32(math.NaN()), float32(math.Copysign(0, -1))
		}
		return x
	}
	same := func(name string, got, want []float32) {
		t.Helper()
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s, n=%d: element %d is %v, its definition %v", name, len(want), i, got[i], want[i])
			}
		}
	}
	for _, n := range level1Lengths() {
		for _, wd := range []float32{0, 5e-4} {
			const lr, mu, a = 0.05, 0.9, 0.3
			w, u, v := vec(n), vec(n), vec(n)

			for _, first := range []bool{true, false} {
				got, want := append([]float32(nil), u...), append([]float32(nil), u...)
				Acc1(got, w, a, first)
				for i := range want {
					if first {
						want[i] = float32(a * w[i])
					} else {
						want[i] = float32(want[i] + float32(a*w[i]))
					}
				}
				same("Acc1", got, want)
			}

			got, want := append([]float32(nil), w...), append([]float32(nil), w...)
			SGD(got, u, lr, wd)
			for i := range want {
				want[i] = float32(want[i] - float32(lr*float32(u[i]+float32(wd*want[i]))))
			}
			same("SGD", got, want)

			got, want = append([]float32(nil), w...), append([]float32(nil), w...)
			gv, wv := append([]float32(nil), v...), append([]float32(nil), v...)
			Nesterov(got, gv, u, lr, mu, wd)
			for i := range want {
				g := float32(u[i] + float32(wd*want[i]))
				wv[i] = float32(float32(mu*wv[i]) + g)
				want[i] = float32(want[i] - float32(lr*float32(g+float32(mu*wv[i]))))
			}
			same("Nesterov", got, want)
			same("Nesterov's velocity", gv, wv)

			got, want = append([]float32(nil), w...), append([]float32(nil), w...)
			Scale(got, 0.999)
			for i := range want {
				want[i] = float32(want[i] * 0.999)
			}
			same("Scale", got, want)
		}
	}
}
