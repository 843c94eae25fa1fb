package sim

import (
	"testing"

	"github.com/pacer-ps/pacer/network"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/timing"
)

// Issue 34: under PSP a worker does not send a block the shard is known to
// drop (its tag below a version the shard answered it with, an answer that
// came in while it computed), and counts it. Every block withheld would
// have been dropped: the shard's version when the worker decided is
// already past the tag. With and without a network; every other block is
// offered as before. The case is rare here (a slow answer served at a
// newer version than the ones the worker computed with): unequal workers,
// heavy jitter and frequent slow answers make it happen a few times.
func TestPSPWithholdsKnownDrops(t *testing.T) {
	slow := network.DefaultLink
	slow.Rate = 100e6 / 8 // bytes per second: 100 Mbit/s
	for _, net := range []*network.Spec{nil, {Default: slow}} {
		total := int64(0)
		for _, spec := range []string{"psp:c=1,b=0.25", "psp:c=2,b=0.5,t1=200ms,t2=50ms"} {
			sp, err := paradigm.Parse(spec)
			if err != nil {
				t.Fatal(err)
			}
			for seed := uint64(1); seed <= 5; seed++ {
				cfg := Config{Spec: sp, Workers: 6, Shards: 4, Iterations: 100, Seed: seed, Network: net, Params: 100_000,
					Timing:      timing.WorkerSpec{Speeds: []float64{1, 1, 2, 3, 1, 0.5}, Jitter: 0.5},
					ServerDelay: timing.MustServerDelay("spike:p=0.2,delay=2s")}
				total += checkWithheld(t, cfg)
			}
		}
		if total == 0 {
			t.Fatalf("network %v: no block withheld", net)
		}
		t.Logf("network %v: %d blocks withheld", net, total)
	}
}

// checkWithheld runs cfg and checks every block withheld against the
// shard's version, and the summary's counts against the trace.
func checkWithheld(t *testing.T, cfg Config) int64 {
	t.Helper()
	version := make([]uint64, cfg.Shards)
	var withheld, arrived, dropped int64
	cfg.Trace = func(e Event) {
		switch e.Kind {
		case Update:
			version[e.Shard] = e.Version
		case Arrive:
			arrived++
		case Drop:
			dropped++
		case Withhold:
			withheld++
			if e.Version <= uint64(e.Clock) || version[e.Shard] < e.Version {
				t.Fatalf("%s seed %d: worker %d withheld its block (tag %d) from shard %d at version %d, knowing version %d: the shard would have taken it",
					cfg.Spec, cfg.Seed, e.Worker, e.Clock, e.Shard, version[e.Shard], e.Version)
			}
		}
	}
	r, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Withheld != withheld || r.Dropped != dropped {
		t.Fatalf("%s seed %d: summary says %d withheld, %d dropped; the trace %d, %d", cfg.Spec, cfg.Seed, r.Withheld, r.Dropped, withheld, dropped)
	}
	// Each push is a block for every shard: sent (arrived; with a network
	// the last may be on the wire, or lost with a dead worker) or withheld.
	if sent := r.Pushes*int64(cfg.Shards) - withheld; arrived > sent || arrived < sent-int64(cfg.Workers*cfg.Shards) {
		t.Fatalf("%s seed %d: %d pushes × %d shards, %d withheld, %d arrived", cfg.Spec, cfg.Seed, r.Pushes, cfg.Shards, withheld, arrived)
	}
	return withheld
}
