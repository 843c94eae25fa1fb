package launch

import (
	"context"
	"testing"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/nn"
	"github.com/pacer-ps/pacer/runstats"
)

// ElasticBSP apply=local in the live modes (PARADIGMS.md §5's local-only
// option): inside a superstep each worker steps its own copy and the
// shards only buffer the gradients; at each barrier of the gate every
// shard applies its superstep once and the released workers pull that
// average. Observable: a shard's updates are the gate's barriers (one per
// barrier, whatever the pushes), where apply=arrival applies every push;
// the workers pull only after barriers (a shard sends far fewer bytes); no
// gradient is stale (each was computed from the version of the
// superstep it lands in); and the job learns.
func TestElasticLocalLive(t *testing.T) {
	skipUnderRace(t)
	for _, mode := range []runstats.Mode{runstats.Inproc, runstats.TCP} {
		t.Run(string(mode), func(t *testing.T) {
			run := func(spec string) *Result {
				cfg := fmnistJob(t, spec, 3, 2, 1200, 2)
				cfg.Seed, cfg.LR = 3, 0.1
				o := Options{Mode: "inproc"}
				if mode == "tcp" {
					o = tcpOpts(t)
				}
				res, err := TrainResult(context.Background(), cfg, o, nil)
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			local, arrival := run("elastic:r=4,apply=local"), run("elastic:r=4")
			lr, ar := local.Run, arrival.Run
			barriers := int64(local.Coord.Barriers)
			t.Logf("%s apply=local: acc %.3f pushes %d updates %d barriers %d staleness %v; apply=arrival: acc %.3f pushes %d updates %d",
				mode, lr.FinalAccuracy, lr.Pushes, lr.Updates, barriers, local.Shards[0].Staleness, ar.FinalAccuracy, ar.Pushes, ar.Updates)
			for _, sh := range local.Shards {
				// The gate's barriers and the one that ends the job.
				// (The last applies nothing when the job ended at a gate barrier.)
				if local.Coord.ControllerCalls+1 != barriers || sh.Version != uint64(barriers) || sh.Updates < barriers-1 || sh.Updates > barriers || sh.Dropped != 0 {
					t.Errorf("apply=local shard %d: version %d, %d updates, %d dropped; the gate passed %d barriers",
						sh.Shard, sh.Version, sh.Updates, sh.Dropped, barriers)
				}
				for s, n := range sh.Staleness {
					if s > 0 && n > 0 {
						t.Errorf("apply=local shard %d: %d gradients of staleness %d: a superstep's gradients read its version", sh.Shard, n, s)
					}
				}
			}
			// Inside a superstep a worker asks no shard: it pulls its block
			// once at its start and then once a barrier at most, where
			// apply=arrival pulls before every push. Pull replies are most
			// of what a shard sends, so shard 1's bytes are bounded by
			// workers × (barriers + 1) blocks (5% and 64 KB for the other
			// frames). How many barriers the gate passes depends on the
			// push times (more on a slow machine), so the bound follows
			// them rather than apply=arrival's bytes.
			m, err := nn.New("mlp", nn.Shape{C: 1, H: 28, W: 28})
			if err != nil {
				t.Fatal(err)
			}
			rg := job.Ranges(m.NumParams(), 2)[1]
			block := int64(rg[1]-rg[0]) * 4
			lb, ab := local.Shards[1].Wire.BytesOut, arrival.Shards[1].Wire.BytesOut
			bound := 3*(barriers+1)*block*105/100 + 64<<10
			t.Logf("shard 1 sent %d bytes under apply=local (bound %d for %d barriers), %d under apply=arrival", lb, bound, barriers, ab)
			if int64(lb) > bound {
				t.Errorf("shard 1 sent %d bytes under apply=local, more than 3 workers × %d barriers + 1 × its %d-byte block: the workers pull inside a superstep", lb, barriers, block)
			}
			if barriers < 2 || lr.Updates >= lr.Pushes*2 || ar.Updates != ar.Pushes*2 {
				t.Errorf("apply=local: %d barriers, %d updates for %d pushes on 2 shards; apply=arrival %d updates for %d pushes",
					barriers, lr.Updates, lr.Pushes, ar.Updates, ar.Pushes)
			}
			if a0 := initialAccuracy(t, fmnistJob(t, "bsp", 3, 2, 1200, 1), 3); lr.FinalAccuracy < a0+0.15 {
				t.Errorf("apply=local reached accuracy %.3f after two epochs, from w⁰'s %.3f", lr.FinalAccuracy, a0)
			}
		})
	}
}

// initialAccuracy is the test accuracy of cfg's seeded w⁰ (an MLP on
// 28×28 images).
func initialAccuracy(t *testing.T, cfg job.Config, seed uint64) float64 {
	t.Helper()
	cfg.Seed = seed
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	ds, err := job.Data(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := nn.New("mlp", nn.Image28)
	w0 := make([]float32, m.NumParams())
	m.Init(w0, cfg.Seed)
	return nn.Accuracy(m, w0, ds.Test.X, ds.Test.Y, 500)
}
