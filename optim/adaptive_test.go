package optim

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// refAdaptive is the rules of adaptive.go in float64, element by element,
// with Adam's count t already advanced.
func refAdaptive(cfg Config, w, v, sq []float64, t int64, u []float64, lr float64) {
	r := cfg.Rule
	for i := range w {
		g := u[i] + cfg.WeightDecay*w[i]
		switch r.Kind {
		case RMSProp:
			sq[i] = r.Alpha*sq[i] + (1-r.Alpha)*g*g
			a := math.Sqrt(sq[i]) + r.Eps
			if cfg.Momentum > 0 {
				v[i] = cfg.Momentum*v[i] + g/a
				w[i] -= lr * v[i]
			} else {
				w[i] -= lr * g / a
			}
		case Adam:
			v[i] = r.Beta1*v[i] + (1-r.Beta1)*g
			sq[i] = r.Beta2*sq[i] + (1-r.Beta2)*g*g
			bc1, bc2 := 1-math.Pow(r.Beta1, float64(t)), 1-math.Pow(r.Beta2, float64(t))
			w[i] -= lr / bc1 * v[i] / (math.Sqrt(sq[i])/math.Sqrt(bc2) + r.Eps)
		}
	}
}

var adaptiveConfigs = []Config{
	{LR: 0.01, Rule: Rule{Kind: RMSProp, Alpha: DefaultAlpha, Eps: DefaultEps}},
	{LR: 0.01, Momentum: 0.9, WeightDecay: 0.01, Rule: Rule{Kind: RMSProp, Alpha: 0.9, Eps: 1e-6}},
	{LR: 0.001, Rule: Rule{Kind: Adam, Beta1: DefaultBeta1, Beta2: DefaultBeta2, Eps: DefaultEps}},
	{LR: 0.001, WeightDecay: 0.1, Rule: Rule{Kind: Adam, Beta1: 0.5, Beta2: 0.9, Eps: 1e-4}},
}

// TestAdaptiveMatchesReference: RMSProp and Adam over ranges that cross
// the 8 KB chunks of ApplyWeighted, with 0 to 6 gradients, for three steps,
// against the float64 rules.
func TestAdaptiveMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	sizes := []int{1, 7, chunk + 3, 2*chunk + 1}
	for trial := range 16 {
		cfg := adaptiveConfigs[trial%len(adaptiveConfigs)]
		n := sizes[(trial/len(adaptiveConfigs))%len(sizes)]
		k := rng.IntN(7)
		w, wbuf, off, grads, weights := weightedCase(rng, n, k)
		o, err := New(cfg, n)
		if err != nil {
			t.Fatal(err)
		}
		wRef, vRef, sqRef := to64(w), make([]float64, n), make([]float64, n)
		u := make([]float64, n)
		for i := range u {
			for j, g := range grads {
				u[i] += float64(weights[j]) * float64(g[i])
			}
		}
		for s := range 3 {
			o.ApplyWeighted(w, grads, weights, float32(cfg.LR))
			refAdaptive(cfg, wRef, vRef, sqRef, int64(s+1), u, float64(float32(cfg.LR)))
		}
		checkGuards(t, wbuf, n, off)
		for i := range w {
			if d := math.Abs(float64(w[i]) - wRef[i]); d > 1e-5*(1+math.Abs(wRef[i])) {
				t.Fatalf("trial %d (%s, momentum %g, n=%d K=%d): w[%d] = %v, reference %v", trial, cfg.Rule, cfg.Momentum, n, k, i, w[i], wRef[i])
			}
		}
		st := o.State()
		for i := range st.Square {
			if d := math.Abs(float64(st.Square[i]) - sqRef[i]); d > 1e-5*(1+sqRef[i]) {
				t.Fatalf("trial %d: square[%d] = %v, reference %v", trial, i, st.Square[i], sqRef[i])
			}
		}
		if want := int64(3); cfg.Rule.Kind == Adam && st.Step != want {
			t.Errorf("trial %d: Adam counted %d steps, want %d", trial, st.Step, want)
		}
	}
}

// TestSubTickSameBits: a range applied as three Sub ranges after one Tick
// gives the same bits (weights, every buffer, the count) as one pass, step
// after step; without the Tick a Sub of Adam refuses to step, and a Sub
// cannot Tick.
func TestSubTickSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	n := 3*chunk + 11
	for _, cfg := range adaptiveConfigs {
		whole, _ := New(cfg, n)
		split, _ := New(cfg, n)
		cuts := []int{0, 5, chunk + 2, n}
		var subs []*Optimizer
		for i := 0; i+1 < len(cuts); i++ {
			s, err := split.Sub(cuts[i], cuts[i+1])
			if err != nil {
				t.Fatal(err)
			}
			subs = append(subs, s)
		}
		w1, _ := guarded(rng, n, 0)
		w2 := slices.Clone(w1)
		for range 3 {
			gs := [][]float32{nil, nil}
			for j := range gs {
				gs[j], _ = guarded(rng, n, 0)
			}
			ws := []float32{0.5, 0.25}
			whole.ApplyWeighted(w1, gs, ws, 0.01)
			split.Tick()
			for i, s := range subs {
				lo, hi := cuts[i], cuts[i+1]
				s.ApplyWeighted(w2[lo:hi], [][]float32{gs[0][lo:hi], gs[1][lo:hi]}, ws, 0.01)
			}
		}
		a, b := whole.State(), split.State()
		for name, pair := range map[string][2][]float32{"w": {w1, w2}, "velocity": {a.Velocity, b.Velocity}, "square": {a.Square, b.Square}} {
			if len(pair[0]) != len(pair[1]) {
				t.Fatalf("%s: %s lengths %d, %d", cfg.Rule, name, len(pair[0]), len(pair[1]))
			}
			for i := range pair[0] {
				if math.Float32bits(pair[0][i]) != math.Float32bits(pair[1][i]) {
					t.Fatalf("%s: %s[%d] = %v in one pass, %v split", cfg.Rule, name, i, pair[0][i], pair[1][i])
				}
			}
		}
		if a.Step != b.Step {
			t.Errorf("%s: step count %d in one pass, %d split", cfg.Rule, a.Step, b.Step)
		}
	}
	fresh, _ := New(adaptiveConfigs[2], 4)
	sub, _ := fresh.Sub(0, 2)
	for name, f := range map[string]func(){
		"Tick on a Sub":     sub.Tick,
		"Sub before a Tick": func() { sub.Step(make([]float32, 2), make([]float32, 2), 1) },
		"Apply before Tick": func() { sub.ApplyWeighted(make([]float32, 2), nil, nil, 1) },
	} {
		func() {
			defer func() {
				if r, ok := recover().(string); !ok || !strings.HasPrefix(r, "optim:") {
					t.Errorf("%s: recovered %v, want an optim: panic", name, r)
				}
			}()
			f()
		}()
	}
}

// TestStateRoundTrip: an optimizer restored from another's State goes on
// bit for bit as the original; states of the wrong shape are refused and
// change nothing.
func TestStateRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	n := 9
	for _, cfg := range append(slices.Clone(adaptiveConfigs), Config{LR: 0.1, Momentum: 0.9}, Config{LR: 0.1}) {
		o, _ := New(cfg, n)
		w, _ := guarded(rng, n, 0)
		g, _ := guarded(rng, n, 0)
		o.Step(w, g, 0.01)
		o.Step(w, g, 0.01)
		st := o.State()
		saved := State{Velocity: slices.Clone(st.Velocity), Square: slices.Clone(st.Square), Step: st.Step}
		r, _ := New(cfg, n)
		if err := r.SetState(saved); err != nil {
			t.Fatalf("%s: %v", cfg.Rule, err)
		}
		w2 := slices.Clone(w)
		o.Step(w, g, 0.01)
		r.Step(w2, g, 0.01)
		for i := range w {
			if math.Float32bits(w[i]) != math.Float32bits(w2[i]) {
				t.Fatalf("%s: restored w[%d] = %v, original %v", cfg.Rule, i, w2[i], w[i])
			}
		}
		bad := []State{
			{Velocity: make([]float32, n+1), Square: saved.Square, Step: saved.Step},
			{Velocity: saved.Velocity, Square: make([]float32, n-1), Step: saved.Step},
			{Velocity: saved.Velocity, Square: saved.Square, Step: -1},
		}
		if cfg.Rule.Kind != Adam {
			bad = append(bad, State{Velocity: saved.Velocity, Square: saved.Square, Step: 4})
		}
		if cfg.Rule.Kind == SGD {
			bad = append(bad, State{Velocity: saved.Velocity, Square: make([]float32, n)})
		}
		before := r.State()
		bv, bs, bt := slices.Clone(before.Velocity), slices.Clone(before.Square), before.Step
		for i, b := range bad {
			if err := r.SetState(b); err == nil || !strings.HasPrefix(err.Error(), "optim: SetState") {
				t.Errorf("%s: bad state %d: error %v", cfg.Rule, i, err)
			}
		}
		if after := r.State(); !slices.Equal(after.Velocity, bv) || !slices.Equal(after.Square, bs) || after.Step != bt {
			t.Errorf("%s: a refused state changed the optimizer", cfg.Rule)
		}
	}
}

func TestAdaptiveDoesNotAllocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	n := 2*chunk + 1
	grads := [][]float32{nil, nil, nil, nil, nil}
	weights := make([]float32, len(grads))
	for i := range grads {
		grads[i], _ = guarded(rng, n, 0)
		weights[i] = 0.2
	}
	for _, cfg := range adaptiveConfigs {
		o, _ := New(cfg, n)
		w, _ := guarded(rng, n, 0)
		if a := testing.AllocsPerRun(10, func() { o.ApplyWeighted(w, grads, weights, 1e-3) }); a != 0 {
			t.Errorf("%s: %v allocations per ApplyWeighted", cfg.Rule, a)
		}
	}
}

func TestParseRule(t *testing.T) {
	good := map[string]Rule{
		"":                             {},
		"sgd":                          {},
		"rmsprop":                      {Kind: RMSProp, Alpha: 0.99, Eps: 1e-8},
		"rmsprop:alpha=0.9":            {Kind: RMSProp, Alpha: 0.9, Eps: 1e-8},
		"rmsprop:alpha=0,eps=1e-6":     {Kind: RMSProp, Alpha: 0, Eps: 1e-6},
		"adam":                         {Kind: Adam, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8},
		"adam:b1=0.8,b2=0.99,eps=1e-7": {Kind: Adam, Beta1: 0.8, Beta2: 0.99, Eps: 1e-7},
		" adam:b2=0.95 ":               {Kind: Adam, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8},
	}
	for s, want := range good {
		got, err := ParseRule(s)
		if err != nil || got != want {
			t.Errorf("ParseRule(%q) = %+v, %v; want %+v", s, got, err, want)
		}
		if back, err := ParseRule(got.String()); err != nil || back != got {
			t.Errorf("%q: String %q reads back as %+v, %v", s, got.String(), back, err)
		}
	}
	bad := map[string]string{
		"adagrad":            "is not sgd",
		"sgd:momentum=0.9":   "sgd takes no parameters",
		"adam:b1=1":          "Beta1",
		"adam:b2=-0.1":       "Beta2",
		"adam:eps=0":         "Eps",
		"adam:alpha=0.9":     "adam takes b1, b2, eps, not alpha",
		"rmsprop:b1=0.9":     "rmsprop takes alpha, eps, not b1",
		"rmsprop:alpha=1":    "Alpha",
		"rmsprop:eps=inf":    "Eps",
		"rmsprop:alpha":      "is not NAME=NUMBER",
		"adam:b1=0.5,b1=0.6": "given twice",
		"rmsprop:alpha=0.9,": "is not NAME=NUMBER",
		"adam:b1=x":          "is not NAME=NUMBER",
	}
	for s, want := range bad {
		if _, err := ParseRule(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRule(%q): error %v, want one containing %q", s, err, want)
		}
	}
}

func TestValidateRule(t *testing.T) {
	adam := Rule{Kind: Adam, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
	rms := Rule{Kind: RMSProp, Alpha: 0.99, Eps: 1e-8}
	cases := map[string]Config{
		"Config.Rule.Kind = sgd":     {LR: 1, Rule: Rule{Eps: 1e-8}},
		"Config.Rule.Kind = 9":       {LR: 1, Rule: Rule{Kind: 9}},
		"Config.Momentum = 0.9":      {LR: 1, Momentum: 0.9, Rule: adam},
		"Config.Nesterov = true":     {LR: 1, Momentum: 0.9, Nesterov: true, Rule: rms},
		"Config.Rule.Eps = 0":        {LR: 1, Rule: Rule{Kind: RMSProp, Alpha: 0.5}},
		"Config.Rule.Beta2 = 1":      {LR: 1, Rule: Rule{Kind: Adam, Beta1: 0.9, Beta2: 1, Eps: 1}},
		"Config.Rule.Kind = rmsprop": {LR: 1, Rule: Rule{Kind: RMSProp, Alpha: 0.5, Beta1: 0.9, Eps: 1}},
	}
	for want, cfg := range cases {
		if _, err := New(cfg, 2); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: error %v, want %q", cfg, err, want)
		}
	}
	for _, cfg := range []Config{{LR: 1, Rule: adam}, {LR: 1, Momentum: 0.5, WeightDecay: 1, Rule: rms}} {
		if err := cfg.Validate(); err != nil {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
}
