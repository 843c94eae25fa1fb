// Claim (PARADIGMS.md, common rules): the reductions that must hold with the
// same seed: backup(b=0) ≡ BSP, PSP(c=K, b=1) ≡ BSP, SSP(s=0) ≡ BSP in
// clocks, softsync(n=λ, constant α) ≡ ASP. The trace helpers here serve the
// other claim files too.

package sim

import (
	"fmt"
	"slices"
	"testing"

	"github.com/pacer-ps/pacer/paradigm"
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
		// The reductions are of the decisions. With a network the
		// protocols differ in cost: a BSP worker pulls once the gate's
		// release reaches it, a backup worker's pull waits at the shard
		// for the version, a round trip sooner (docs/paradigms.md, The
		// network).
		base.Failures, base.Network = nil, nil
		k := base.Workers
		for _, pair := range [][2]string{
			{"bsp", "backup:b=0"},
			{"bsp", fmt.Sprintf("psp:c=%d,b=1", k)},
			{"bsp", "ssp:s=0"}, // equal in clocks: SSP applies on arrival, so compare no updates
			{"asp", fmt.Sprintf("softsync:n=%d,lr=const", k)},
			{"asp", "delay:d=0"},
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
