package live

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/optim"
)

// TestSplitApplySameBits: the apply split across 2 and 3 cores gives the
// same bits as one pass (weights and every optimizer buffer, and Adam's
// step count), for SGD with momentum and without, RMSProp with momentum
// (centered too), Adam and AdamW, for 1 to 6 gradients, on a block whose
// length no part size divides.
func TestSplitApplySameBits(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	n := 3*minSplit + 37
	// One pool of gradients for every case, its first k for k gradients:
	// drawing 21 fresh ones per case was most of the test's time under the
	// race detector, and the bits compared do not depend on which
	// gradients they are.
	rng := rand.New(rand.NewPCG(1, 9))
	pool := make([][]float32, 6)
	for j := range pool {
		pool[j] = make([]float32, n)
		for i := range pool[j] {
			pool[j][i] = float32(rng.NormFloat64())
		}
	}
	for _, v := range []struct {
		mom   float64
		rule  string
		procs []int // the adaptive rules on 3 cores only: the race detector makes each case slow
	}{{-1, "sgd", []int{2, 3}}, {0.9, "sgd", []int{2, 3}}, {0.9, "rmsprop", []int{3}}, {-1, "adam", []int{3}},
		{0.5, "rmsprop:centered=true", []int{3}}, {-1, "adamw", []int{3}}} {
		mom := v.mom
		for _, procs := range v.procs {
			cfg := quickJob(t, "bsp", 6, 1)
			cfg.Momentum = mom
			rule, err := optim.ParseRule(v.rule)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Optimizer = rule
			if rule.Kind == optim.AdamW {
				cfg.WeightDecay = 0.01 // without one AdamW is Adam, bit for bit
			}
			if err := cfg.Fill(); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(procs), 9))
			w0 := make([]float32, n)
			for i := range w0 {
				w0[i] = float32(rng.NormFloat64())
			}
			s, err := newShard(ShardConfig{Index: 0, Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 100}, Init: w0})
			if err != nil {
				t.Fatal(err)
			}
			ref, err := optim.New(cfg.Optim(), n)
			if err != nil {
				t.Fatal(err)
			}
			w := append([]float32(nil), w0...)
			for k := 1; k <= 6; k++ {
				gs := pool[:k]
				ws := make([]float32, k)
				for j := range ws {
					ws[j] = 1 / float32(k)
				}
				runtime.GOMAXPROCS(procs)
				s.applyWeighted(s.cur.buf, gs, ws, 0.01)
				runtime.GOMAXPROCS(1)
				ref.ApplyWeighted(w, gs, ws, 0.01)
				if got := len(s.split.parts); got != procs {
					t.Fatalf("%d parts with %d cores", got, procs)
				}
				for i := range w {
					if math.Float32bits(w[i]) != math.Float32bits(s.cur.buf[i]) {
						t.Fatalf("momentum %g, %d cores, %d gradients: w[%d] = %v split, %v in one pass", mom, procs, k, i, s.cur.buf[i], w[i])
					}
				}
				a, b := s.opt.State(), ref.State()
				if a.Step != b.Step {
					t.Fatalf("%s, %d cores: step count %d split, %d in one pass", v.rule, procs, a.Step, b.Step)
				}
				for name, p := range map[string][2][]float32{"velocity": {a.Velocity, b.Velocity}, "square": {a.Square, b.Square}, "mean": {a.Mean, b.Mean}} {
					if len(p[0]) != len(p[1]) {
						t.Fatalf("%s: %s lengths %d, %d", v.rule, name, len(p[0]), len(p[1]))
					}
					for i := range p[0] {
						if math.Float32bits(p[0][i]) != math.Float32bits(p[1][i]) {
							t.Fatalf("%s momentum %g, %d cores: %s[%d] differs", v.rule, mom, procs, name, i)
						}
					}
				}
			}
		}
	}
}
