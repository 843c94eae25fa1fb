package optim

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

var sink float32

// axpyRef is the reference: the plain loop a compiler sees most often,
//
//	for i := range y { y[i] += a * x[i] }
func axpyRef(y, x []float32, a float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] += a * x[i]
	}
}

func randVec(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// BenchmarkApplyMean measures the shard's hot path, ApplyWeighted of K=4 gradients with plain
// SGD over 10M floats, against an axpy over the same size, alternating the two inside each
// iteration so both see the same machine state. Bytes count what must cross the memory bus:
// K+1 reads and one write of the vector for the apply, 2 reads and one write for the axpy.
// ratio = apply bytes/s ÷ axpy bytes/s; the goal (DESIGN.md "Numbers") is ≥ 0.70.
//
//	go test ./optim -run '^$' -bench ApplyMean -benchtime 20x
func BenchmarkApplyMean(b *testing.B) {
	const n, k = 10_000_000, 4
	rng := rand.New(rand.NewPCG(1, 2))
	w, x := randVec(rng, n), randVec(rng, n)
	grads := make([][]float32, k)
	weights := make([]float32, k)
	for i := range grads {
		grads[i] = randVec(rng, n)
		weights[i] = 1.0 / k
	}
	o, err := New(Config{LR: 0.1}, n)
	if err != nil {
		b.Fatal(err)
	}
	// Tiny steps keep w finite however many iterations run.
	const lr, a = 1e-9, 1e-9
	o.ApplyWeighted(w, grads, weights, lr) // warm the pages
	axpyRef(w, x, a)
	var tApply, tAxpy time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		axpyRef(w, x, a)
		t1 := time.Now()
		o.ApplyWeighted(w, grads, weights, lr)
		tApply += time.Since(t1)
		tAxpy += t1.Sub(t0)
	}
	sink = w[n/2]
	applyBps := float64((k+2)*4*n) * float64(b.N) / tApply.Seconds()
	axpyBps := float64(3*4*n) * float64(b.N) / tAxpy.Seconds()
	b.ReportMetric(applyBps/1e9, "apply-GB/s")
	b.ReportMetric(axpyBps/1e9, "axpy-GB/s")
	b.ReportMetric(applyBps/axpyBps, "ratio")
}

// BenchmarkApplyWeighted covers the other rules and gradient counts, each with SetBytes in the
// same bus-traffic terms (each state vector, velocity, squared average or mean gradient, adds one
// read and one write).
func BenchmarkApplyWeighted(b *testing.B) {
	const n = 1 << 20
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		name string
		cfg  Config
		k    int
	}{
		{"sgd/K=1", Config{LR: 0.1}, 1},
		{"sgd/K=4", Config{LR: 0.1}, 4},
		{"sgd/K=7", Config{LR: 0.1}, 7},
		{"sgd-wd/K=4", Config{LR: 0.1, WeightDecay: 1e-4}, 4},
		{"momentum/K=4", Config{LR: 0.1, Momentum: 0.9}, 4},
		{"nesterov/K=4", Config{LR: 0.1, Momentum: 0.9, Nesterov: true}, 4},
		{"rmsprop-momentum/K=4", Config{LR: 0.1, Momentum: 0.9, Rule: Rule{Kind: RMSProp, Alpha: DefaultAlpha, Eps: DefaultEps}}, 4},
		{"adam/K=4", Config{LR: 0.1, Rule: Rule{Kind: Adam, Beta1: DefaultBeta1, Beta2: DefaultBeta2, Eps: DefaultEps}}, 4},
		{"rmsprop-centered-momentum/K=4", Config{LR: 0.1, Momentum: 0.9, Rule: Rule{Kind: RMSProp, Alpha: DefaultAlpha, Eps: DefaultEps, Centered: true}}, 4},
		{"adamw/K=4", Config{LR: 0.1, WeightDecay: 0.01, Rule: Rule{Kind: AdamW, Beta1: DefaultBeta1, Beta2: DefaultBeta2, Eps: DefaultEps}}, 4},
	} {
		b.Run(c.name, func(b *testing.B) {
			w := randVec(rng, n)
			grads := make([][]float32, c.k)
			weights := make([]float32, c.k)
			for i := range grads {
				grads[i], weights[i] = randVec(rng, n), 1/float32(c.k)
			}
			o, _ := New(c.cfg, n)
			vecs := c.k + 2
			if c.cfg.Momentum > 0 || c.cfg.Rule.Kind.counts() {
				vecs += 2
			}
			if c.cfg.Rule.Kind != SGD {
				vecs += 2 // the squared-gradient average
			}
			if c.cfg.Rule.Centered {
				vecs += 2 // the mean gradient
			}
			b.SetBytes(int64(vecs * 4 * n))
			for range b.N {
				o.ApplyWeighted(w, grads, weights, 1e-9)
			}
			sink = w[0]
		})
	}
	b.Run(fmt.Sprintf("axpy/n=%d", n), func(b *testing.B) {
		y, x := randVec(rng, n), randVec(rng, n)
		b.SetBytes(3 * 4 * n)
		for range b.N {
			axpyRef(y, x, 1e-9)
		}
		sink = y[0]
	})
}
