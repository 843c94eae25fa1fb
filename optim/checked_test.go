package optim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestApplyWeightedCheckedRevertsExactly: for every rule, a checked apply
// of finite gradients is ApplyWeighted bit for bit; one whose result
// overflows (in the last chunk, after earlier chunks were written) returns
// false and leaves the weights, the state and the step count exactly as
// they were, whole range and split into Sub ranges alike.
func TestApplyWeightedCheckedRevertsExactly(t *testing.T) {
	const n = 3*chunk + 17
	for _, tc := range []struct {
		rule     string
		momentum float64
		wd       float64
	}{{"sgd", 0, 0}, {"sgd", 0, 0.01}, {"sgd", 0.9, 0}, {"rmsprop", 0, 0}, {"rmsprop", 0.9, 0},
		{"rmsprop:centered=true", 0.9, 0}, {"adam", 0, 0}, {"adamw", 0, 0.01}} {
		for _, k := range []int{1, 6} {
			t.Run(fmt.Sprintf("%s momentum %g wd %g k %d", tc.rule, tc.momentum, tc.wd, k), func(t *testing.T) {
				rule, err := ParseRule(tc.rule)
				if err != nil {
					t.Fatal(err)
				}
				cfg := Config{LR: 0.1, Momentum: tc.momentum, WeightDecay: tc.wd, Rule: rule}
				rng := rand.New(rand.NewPCG(1, uint64(k)))
				vec := func(scale float32) []float32 {
					v := make([]float32, n)
					for i := range v {
						v[i] = scale * float32(rng.NormFloat64())
					}
					return v
				}
				mk := func() (*Optimizer, []float32) {
					o, err := New(cfg, n)
					if err != nil {
						t.Fatal(err)
					}
					return o, nil
				}
				a, _ := mk()
				b, _ := mk()
				w0 := vec(1)
				grads, weights := make([][]float32, k), make([]float32, k)
				for i := range grads {
					grads[i], weights[i] = vec(1), 1/float32(k)
				}
				// Some state first, the same in both.
				wa, wb := slices.Clone(w0), slices.Clone(w0)
				a.ApplyWeighted(wa, grads, weights, 0.1)
				var un Undo
				if !b.ApplyWeightedChecked(wb, grads, weights, 0.1, &un) {
					t.Fatal("a finite apply reported non-finite")
				}
				if !slices.Equal(wa, wb) || !sameState(a.State(), b.State()) {
					t.Fatal("the checked apply differs from ApplyWeighted")
				}
				// Then an update that overflows near the end of the range.
				big := slices.Clone(grads[0])
				big[n-5] = math.MaxFloat32
				big[n-4] = -math.MaxFloat32
				bad := append([][]float32{big}, grads[1:]...)
				badW := slices.Clone(weights)
				badW[0] = 1e4
				before, st := slices.Clone(wb), cloneState(b.State())
				if b.ApplyWeightedChecked(wb, bad, badW, 1e4, &un) {
					t.Fatal("an overflowing apply reported finite")
				}
				if !slices.Equal(wb, before) || !sameState(b.State(), st) {
					t.Fatal("the refused apply changed the weights or the state")
				}
				// Applied into a copy the caller drops (KeptW): the state alone
				// is put back.
				wc := slices.Clone(wb)
				un.KeptW = true
				if b.ApplyWeightedChecked(wc, bad, badW, 1e4, &un) || !sameState(b.State(), st) {
					t.Fatal("an overflowing apply into a kept copy: reported finite, or the state changed")
				}
				un.KeptW = false
				// Split in two Sub ranges, the second failing: both put back.
				b.Tick()
				s1, _ := b.Sub(0, n/2)
				s2, _ := b.Sub(n/2, n)
				cut := func(gs [][]float32, lo, hi int) [][]float32 {
					out := make([][]float32, len(gs))
					for i, g := range gs {
						out[i] = g[lo:hi]
					}
					return out
				}
				var u1, u2 Undo
				ok1 := s1.ApplyWeightedChecked(wb[:n/2], cut(bad, 0, n/2), badW, 1e4, &u1)
				ok2 := s2.ApplyWeightedChecked(wb[n/2:], cut(bad, n/2, n), badW, 1e4, &u2)
				if !ok1 || ok2 {
					t.Fatalf("split apply: first part %v, second %v; want true, false", ok1, ok2)
				}
				s1.Revert(wb[:n/2], &u1)
				b.Untick()
				if !slices.Equal(wb, before) || !sameState(b.State(), st) {
					t.Fatal("the reverted split apply changed the weights or the state")
				}
			})
		}
	}
}

func cloneState(s State) State {
	return State{Velocity: slices.Clone(s.Velocity), Square: slices.Clone(s.Square), Mean: slices.Clone(s.Mean), Step: s.Step}
}

func sameState(a, b State) bool {
	same := func(x, y []float32) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
				return false
			}
		}
		return true
	}
	return a.Step == b.Step && same(a.Velocity, b.Velocity) && same(a.Square, b.Square) && same(a.Mean, b.Mean)
}

// BenchmarkApplyWeightedChecked: what the check costs the shard's hot path
// (K = 4 gradients over 10M floats, plain SGD and momentum 0.9):
// ApplyWeighted, then the checked apply saving what it overwrites in
// place, into a kept copy (KeptW: the state alone saved), and fast (no
// input can overflow: nothing saved), alternating inside each iteration;
// the log gives the median times and their ratios to the plain apply.
//
//	go test ./optim -run '^$' -bench ApplyWeightedChecked -benchtime 15x -v
func BenchmarkApplyWeightedChecked(b *testing.B) {
	const n, k = 10_000_000, 4
	rng := rand.New(rand.NewPCG(1, 2))
	w := randVec(rng, n)
	grads := make([][]float32, k)
	weights := make([]float32, k)
	for i := range grads {
		grads[i] = randVec(rng, n)
		weights[i] = 1.0 / k
	}
	median := func(x []float64) float64 { slices.Sort(x); return x[len(x)/2] }
	for _, mom := range []float64{0, 0.9} {
		o, err := New(Config{LR: 0.1, Momentum: mom}, n)
		if err != nil {
			b.Fatal(err)
		}
		undos := []*Undo{{}, {KeptW: true}, {Fast: true}}
		o.ApplyWeighted(w, grads, weights, 1e-9) // warm every buffer
		for _, un := range undos {
			o.ApplyWeightedChecked(w, grads, weights, 1e-9, un)
		}
		times := make([][]float64, 1+len(undos))
		for range b.N {
			t0 := time.Now()
			o.ApplyWeighted(w, grads, weights, 1e-9)
			times[0] = append(times[0], time.Since(t0).Seconds())
			for i, un := range undos {
				t0 = time.Now()
				o.ApplyWeightedChecked(w, grads, weights, 1e-9, un)
				times[i+1] = append(times[i+1], time.Since(t0).Seconds())
			}
		}
		if b.N == 1 {
			continue // the first, sizing call: one sample
		}
		p, c, d, f := median(times[0]), median(times[1]), median(times[2]), median(times[3])
		b.Logf("momentum %g: plain %.2f ms; checked: saving %.2f ms (×%.2f), into a kept copy %.2f ms (×%.2f), fast %.2f ms (×%.2f)",
			mom, p*1e3, c*1e3, c/p, d*1e3, d/p, f*1e3, f/p)
	}
}

// TestFastApply: a fast apply (Undo.Fast: FastOK and inputs below 2⁴⁰)
// saves nothing and writes ApplyWeighted's bits; Small reports whether
// what it wrote stays below 2⁴⁰; FastOK holds for SGD and momentum with
// moderate scalars only; a fast apply whose inputs broke the promise
// panics rather than leave a NaN.
func TestFastApply(t *testing.T) {
	if SmallBits != math.Float32bits(1<<40) {
		t.Fatalf("SmallBits %#x, the bits of 2⁴⁰ are %#x", SmallBits, math.Float32bits(1<<40))
	}
	const n = 2*chunk + 5
	rng := rand.New(rand.NewPCG(3, 4))
	vec := func(scale float32) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = scale * float32(rng.NormFloat64())
		}
		return v
	}
	for _, mom := range []float64{0, 0.9} {
		a, _ := New(Config{LR: 0.1, Momentum: mom, Nesterov: mom > 0}, n)
		b, _ := New(Config{LR: 0.1, Momentum: mom, Nesterov: mom > 0}, n)
		grads, weights := [][]float32{vec(1), vec(1)}, []float32{0.5, 0.5}
		if !b.FastOK(weights, 0.1) {
			t.Fatal("FastOK refused SGD with moderate scalars")
		}
		wa := vec(1)
		wb := slices.Clone(wa)
		a.ApplyWeighted(wa, grads, weights, 0.1)
		un := Undo{Fast: true}
		if !b.ApplyWeightedChecked(wb, grads, weights, 0.1, &un) || !un.Small || un.w != nil {
			t.Fatalf("fast apply: small %v, saved %d values", un.Small, len(un.w))
		}
		if !slices.Equal(wa, wb) || !sameState(a.State(), b.State()) {
			t.Fatal("the fast apply differs from ApplyWeighted")
		}
		big := vec(1)
		big[n-1] = 1 << 45
		if !b.ApplyWeightedChecked(wb, [][]float32{big}, []float32{1}, 1, &un) || un.Small {
			t.Fatalf("an apply writing 2⁴⁵: small %v, want false", un.Small)
		}
		huge := vec(1)
		huge[n-1] = math.MaxFloat32
		func() {
			defer func() {
				if recover() == nil {
					t.Error("a fast apply that overflowed did not panic")
				}
			}()
			b.ApplyWeightedChecked(wb, [][]float32{huge}, []float32{1e4}, 1e4, &un)
		}()
	}
	rule, err := ParseRule("adam")
	if err != nil {
		t.Fatal(err)
	}
	adam, err := New(Config{LR: 0.1, Rule: rule}, n)
	if err != nil {
		t.Fatal(err)
	}
	sgd, _ := New(Config{LR: 0.1}, n)
	for _, tc := range []struct {
		o       *Optimizer
		weights []float32
		lr      float32
		want    bool
	}{{adam, []float32{1}, 0.1, false}, {sgd, []float32{1 << 21}, 0.1, false}, {sgd, []float32{1}, 1 << 21, false},
		{sgd, []float32{1}, float32(math.NaN()), false}, {sgd, []float32{0.25, 0.25, 0.25, 0.25}, 10, true}} {
		if got := tc.o.FastOK(tc.weights, tc.lr); got != tc.want {
			t.Errorf("FastOK(%v, %g) = %v, want %v", tc.weights, tc.lr, got, tc.want)
		}
	}
}
