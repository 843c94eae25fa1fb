package optim

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// refApply is the deliberately dumb version of ApplyWeighted, in float64:
// u = Σ weights[k]·grads[k]; g = u + wd·w; then the rule of Step.
func refApply(cfg Config, w, v []float64, grads [][]float32, weights []float32, lr float64) {
	for i := range w {
		u := 0.0
		for k, g := range grads {
			u += float64(weights[k]) * float64(g[i])
		}
		g := u + cfg.WeightDecay*w[i]
		switch {
		case cfg.Momentum == 0:
			w[i] -= lr * g
		case cfg.Nesterov:
			v[i] = cfg.Momentum*v[i] + g
			w[i] -= lr * (g + cfg.Momentum*v[i])
		default:
			v[i] = cfg.Momentum*v[i] + g
			w[i] -= lr * v[i]
		}
	}
}

func to64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// weightedCase draws one ApplyWeighted case: n guarded weights at a random
// offset, k guarded gradients and their weights.
func weightedCase(rng *rand.Rand, n, k int) (w, wbuf []float32, off int, grads [][]float32, weights []float32) {
	off = rng.IntN(4)
	w, wbuf = guarded(rng, n, off)
	grads = make([][]float32, k)
	weights = make([]float32, k)
	for j := range grads {
		grads[j], _ = guarded(rng, n, 0)
		weights[j] = float32(rng.Float64())
	}
	return w, wbuf, off, grads, weights
}

// guarded returns a slice of n random values inside a larger buffer whose margins hold a
// sentinel, so writes outside [0, n) are detected; off shifts the start to vary alignment.
func guarded(rng *rand.Rand, n, off int) (s, buf []float32) {
	buf = make([]float32, n+off+8)
	for i := range buf {
		buf[i] = 12345
	}
	s = buf[off : off+n : off+n]
	for i := range s {
		s[i] = float32(rng.NormFloat64())
	}
	return s, buf
}

func checkGuards(t *testing.T, buf []float32, n, off int) {
	t.Helper()
	for i, v := range buf {
		if (i < off || i >= off+n) && v != 12345 {
			t.Fatalf("write outside the range at %d (range [%d, %d))", i, off, off+n)
		}
	}
}

func TestApplyWeightedMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	configs := []Config{
		{LR: 0.1},
		{LR: 0.1, WeightDecay: 0.01},
		{LR: 0.1, Momentum: 0.9},
		{LR: 0.1, Momentum: 0.5, WeightDecay: 0.1},
		{LR: 0.1, Momentum: 0.9, Nesterov: true, WeightDecay: 0.001},
	}
	sizes := []int{0, 1, 3, 5, 7, 31, chunk - 1, chunk + 3, 2*chunk + 1, 3*chunk + 17}
	for trial := range 60 {
		cfg := configs[trial%len(configs)]
		n := sizes[trial%len(sizes)]
		if trial >= len(sizes) {
			n = 1 + rng.IntN(3*chunk)
		}
		k := rng.IntN(10) // 0..9 gradients: groups of four, tails, none
		w, wbuf, off, grads, weights := weightedCase(rng, n, k)
		o, err := New(cfg, n)
		if err != nil {
			t.Fatal(err)
		}
		wRef, vRef := to64(w), make([]float64, n)
		const lr = 0.05
		for range 3 { // several steps, so the velocity carries over
			o.ApplyWeighted(w, grads, weights, lr)
			refApply(cfg, wRef, vRef, grads, weights, lr)
		}
		checkGuards(t, wbuf, n, off)
		for i := range w {
			if d := math.Abs(float64(w[i]) - wRef[i]); d > 1e-5*(1+math.Abs(wRef[i])+float64(k)) {
				t.Fatalf("trial %d (cfg %+v n=%d K=%d): w[%d] = %v, reference %v", trial, cfg, n, k, i, w[i], wRef[i])
			}
		}
		if cfg.Momentum > 0 {
			for i, v := range o.Velocity() {
				if d := math.Abs(float64(v) - vRef[i]); d > 1e-5*(1+math.Abs(vRef[i])+float64(k)) {
					t.Fatalf("trial %d: v[%d] = %v, reference %v", trial, i, v, vRef[i])
				}
			}
		}
	}
}

func TestStepEqualsApplyOfOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 9))
	for _, cfg := range []Config{{LR: 1}, {LR: 1, Momentum: 0.9, WeightDecay: 0.1}, {LR: 1, Momentum: 0.9, Nesterov: true}} {
		n := 2*chunk + 5
		w1, _ := guarded(rng, n, 0)
		u, _ := guarded(rng, n, 0)
		w2 := slices.Clone(w1)
		a, _ := New(cfg, n)
		b, _ := New(cfg, n)
		for range 2 {
			a.Step(w1, u, 0.1)
			b.ApplyWeighted(w2, [][]float32{u}, []float32{1}, 0.1)
		}
		for i := range w1 {
			if math.Abs(float64(w1[i]-w2[i])) > 1e-6*(1+math.Abs(float64(w1[i]))) {
				t.Fatalf("cfg %+v: Step w[%d]=%v, ApplyWeighted %v", cfg, i, w1[i], w2[i])
			}
		}
	}
}

// TestHandComputed pins the update rules on numbers worked out by hand; all are exact in float32.
func TestHandComputed(t *testing.T) {
	cases := []struct {
		name  string
		cfg   Config
		w, u  float32
		lr    float32
		steps []float32 // w after each step with the same u
	}{
		// w ← w − lr·u: 1 − 0.5·2 = 0, then −1.
		{"sgd", Config{LR: 1}, 1, 2, 0.5, []float32{0, -1}},
		// g = u + wd·w = 1 + 0.5·2 = 2; w = 2 − 0.5·2 = 1; then g = 1.5, w = 0.25.
		{"weight decay", Config{LR: 1, WeightDecay: 0.5}, 2, 1, 0.5, []float32{1, 0.25}},
		// v = 0.5·0 + 1 = 1, w = 0 − 1 = −1; v = 0.5 + 1 = 1.5, w = −2.5; v = 1.75, w = −4.25.
		{"momentum", Config{LR: 1, Momentum: 0.5}, 0, 1, 1, []float32{-1, -2.5, -4.25}},
		// v = 1, w = −(1 + 0.5·1) = −1.5; v = 1.5, w = −1.5 − (1 + 0.75) = −3.25.
		{"nesterov", Config{LR: 1, Momentum: 0.5, Nesterov: true}, 0, 1, 1, []float32{-1.5, -3.25}},
		// g = 1 + 0.25·4 = 2, v = 2, w = 4 − 0.5·2 = 3; g = 1.75, v = 0.5·2 + 1.75 = 2.75, w = 1.625.
		{"momentum+wd", Config{LR: 1, Momentum: 0.5, WeightDecay: 0.25}, 4, 1, 0.5, []float32{3, 1.625}},
	}
	for _, c := range cases {
		for _, path := range []string{"Step", "ApplyWeighted"} {
			o, err := New(c.cfg, 1)
			if err != nil {
				t.Fatal(err)
			}
			w := []float32{c.w}
			for s, want := range c.steps {
				if path == "Step" {
					o.Step(w, []float32{c.u}, c.lr)
				} else {
					// u = 1·(u/2) + 2·(u/4): the aggregation is exercised too, and stays exact.
					o.ApplyWeighted(w, [][]float32{{c.u / 2}, {c.u / 4}}, []float32{1, 2}, c.lr)
				}
				if w[0] != want {
					t.Errorf("%s/%s step %d: w = %v, want %v", c.name, path, s, w[0], want)
				}
			}
		}
	}
}

func TestApplyWeightedDoesNotAllocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	n := 3*chunk + 1
	grads := make([][]float32, 6)
	weights := make([]float32, 6)
	for i := range grads {
		grads[i], _ = guarded(rng, n, 0)
		weights[i] = 1.0 / 6
	}
	for _, cfg := range []Config{{LR: 1}, {LR: 1, Momentum: 0.9}} {
		o, _ := New(cfg, n)
		w, _ := guarded(rng, n, 0)
		if a := testing.AllocsPerRun(10, func() { o.ApplyWeighted(w, grads, weights, 1e-3) }); a != 0 {
			t.Errorf("cfg %+v: %v allocations per ApplyWeighted", cfg, a)
		}
	}
}

func TestLengthMismatchPanicsWithMessage(t *testing.T) {
	o, _ := New(Config{LR: 1}, 4)
	for name, f := range map[string]func(){
		"Step short u":  func() { o.Step(make([]float32, 4), make([]float32, 3), 1) },
		"Apply weights": func() { o.ApplyWeighted(make([]float32, 4), [][]float32{make([]float32, 4)}, nil, 1) },
		"Apply grad":    func() { o.ApplyWeighted(make([]float32, 4), [][]float32{make([]float32, 5)}, []float32{1}, 1) },
	} {
		func() {
			defer func() {
				r := recover()
				if s, ok := r.(string); !ok || !strings.HasPrefix(s, "optim:") {
					t.Errorf("%s: recovered %v, want an optim: panic", name, r)
				}
			}()
			f()
		}()
	}
}
