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
// same bits as one pass (weights and velocity), with momentum and
// without, for 1 to 6 gradients, on a block whose length no part size
// divides.
func TestSplitApplySameBits(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	n := 3*minSplit + 37
	for _, mom := range []float64{-1, 0.9} {
		for _, procs := range []int{2, 3} {
			cfg := quickJob(t, "bsp", 6, 1)
			cfg.Momentum = mom
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
				gs := make([][]float32, k)
				ws := make([]float32, k)
				for j := range gs {
					gs[j] = make([]float32, n)
					for i := range gs[j] {
						gs[j][i] = float32(rng.NormFloat64())
					}
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
				if v, rv := s.opt.Velocity(), ref.Velocity(); len(v) != len(rv) {
					t.Fatalf("velocity lengths %d, %d", len(v), len(rv))
				} else {
					for i := range v {
						if math.Float32bits(v[i]) != math.Float32bits(rv[i]) {
							t.Fatalf("momentum %g, %d cores: v[%d] differs", mom, procs, i)
						}
					}
				}
			}
		}
	}
}
