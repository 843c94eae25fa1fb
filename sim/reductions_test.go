package sim

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/timing"
)

// trace records the events that define a run's schedule: who pushed when,
// who computed when with how many fresh blocks, and what each update applied.
func trace(t *testing.T, cfg Config, kinds ...EventKind) ([]string, *Config) {
	t.Helper()
	var out []string
	cfg.Trace = func(e Event) {
		if slices.Contains(kinds, e.Kind) {
			out = append(out, fmt.Sprintf("%d %v w%d s%d v%d n%d f%d", e.Kind, e.At, e.Worker, e.Shard, e.Version, e.N, e.Fresh))
		}
	}
	if _, err := Run(cfg); err != nil {
		t.Fatal(err)
	}
	// Simultaneous events may be handled in another order by another
	// paradigm's code path; the schedule is the same set of events.
	slices.Sort(out)
	return out, &cfg
}

func withSpec(cfg Config, s string) Config {
	sp, err := paradigm.Parse(s)
	if err != nil {
		panic(err)
	}
	cfg.Spec = sp
	return cfg
}

// PARADIGMS.md, common rules: the reductions that must hold with the same seed.
func TestReductionsGiveTheSameTrace(t *testing.T) {
	schedule := []EventKind{Push, Compute, Update}
	for seed := uint64(1); seed <= 40; seed++ {
		base := scenario(seed, "bsp")
		base.Failures = nil
		k := base.Workers
		for _, pair := range [][2]string{
			{"bsp", "backup:b=0"},
			{"bsp", fmt.Sprintf("psp:c=%d,b=1", k)},
			{"bsp", "ssp:s=0"}, // equal in clocks: SSP applies on arrival, so compare no updates
			{"asp", fmt.Sprintf("softsync:n=%d,lr=const", k)},
		} {
			kinds := schedule
			if pair[1] == "ssp:s=0" {
				kinds = schedule[:2]
			}
			a, _ := trace(t, withSpec(base, pair[0]), kinds...)
			b, _ := trace(t, withSpec(base, pair[1]), kinds...)
			if !slices.Equal(a, b) {
				i := 0
				for i < len(a) && i < len(b) && a[i] == b[i] {
					i++
				}
				t.Fatalf("seed %d: %s and %s differ at event %d of %d/%d", seed, pair[0], pair[1], i, len(a), len(b))
			}
		}
	}
}

// DSSP with identical intervals never grants extra iterations, so it equals
// SSP(s_L) release for release, under both wait rules and both interval
// measures: under wait=next a held worker waits for one slowest worker's
// push after another, deciding again at each, and is released at the push
// that brings the gap back to s_L, as SSP releases it.
func TestDSSPHomogeneousEqualsSSP(t *testing.T) {
	for _, sl := range []int{0, 1, 3} {
		for _, opt := range []string{"", ",wait=sl", ",interval=push", ",wait=sl,interval=push"} {
			cfg := Config{Workers: 6, Shards: 2, Iterations: 60, Seed: 3}
			all := []EventKind{Push, Compute, Update, Release}
			a, _ := trace(t, withSpec(cfg, fmt.Sprintf("ssp:s=%d", sl)), all...)
			b, _ := trace(t, withSpec(cfg, fmt.Sprintf("dssp:sl=%d,su=%d%s", sl, sl+12, opt)), all...)
			if !slices.Equal(a, b) {
				t.Fatalf("s_L=%d%s: DSSP and SSP traces differ", sl, opt)
			}
		}
	}
}

// §4: literal DSSP lets the gap grow without limit on a persistently
// heterogeneous pair; bounded mode keeps it within s_U.
func TestDSSPLiteralGapIsUnbounded(t *testing.T) {
	for _, opt := range []string{"", ",wait=sl"} {
		cfg := Config{Workers: 2, Timing: timing.WorkerSpec{Speeds: []float64{1, 2.2}}, Iterations: 400, Seed: 1}
		lit, err := Run(withSpec(cfg, "dssp:sl=3,su=15"+opt))
		if err != nil {
			t.Fatal(err)
		}
		bnd, err := Run(withSpec(cfg, "dssp:sl=3,su=15,mode=bounded"+opt))
		if err != nil {
			t.Fatal(err)
		}
		if lit.MaxGap <= 100 {
			t.Errorf("literal DSSP%s max gap %d: expected it to grow far past s_U", opt, lit.MaxGap)
		}
		if bnd.MaxGap > 15 {
			t.Errorf("bounded DSSP%s max gap %d > s_U", opt, bnd.MaxGap)
		}
		cfg.Iterations = 800
		lit2, _ := Run(withSpec(cfg, "dssp:sl=3,su=15"+opt))
		if lit2.MaxGap < lit.MaxGap*3/2 {
			t.Errorf("literal%s gap did not keep growing: %d after 400 iterations, %d after 800", opt, lit.MaxGap, lit2.MaxGap)
		}
	}
}

// §8: under homogeneous workers ⟨τ⟩ ≈ n(λ−1)/λ and τ is almost never > 2n.
func TestSoftsyncStaleness(t *testing.T) {
	const lambda = 30
	for _, n := range []int{1, 15, 30} {
		cfg := withSpec(Config{Workers: lambda, Timing: timing.WorkerSpec{Jitter: 0.05}, Iterations: 300, Seed: 11},
			fmt.Sprintf("softsync:n=%d", n))
		r, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		want := float64(n) * (lambda - 1) / lambda
		if math.Abs(r.StalenessMean-want) > 0.1*want {
			t.Errorf("n=%d: mean staleness %.3f, want %.3f ± 10%%", n, r.StalenessMean, want)
		}
		var total, over int64
		for tau, c := range r.StalenessHist {
			total += c
			if tau > 2*n {
				over += c
			}
		}
		if frac := float64(over) / float64(total); frac >= 0.001 {
			t.Errorf("n=%d: %.4f%% of gradients have τ > 2n", n, 100*frac)
		}
		t.Logf("n=%d: mean τ %.3f (expected %.3f), max %d, %d gradients", n, r.StalenessMean, want, r.StalenessMax, total)
	}
}
