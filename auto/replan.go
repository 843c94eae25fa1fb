package auto

import (
	"context"
	"slices"
	"time"

	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/sim"
	"github.com/pacer-ps/pacer/timing"
)

// Configure gives a simulator's run of --paradigm auto its planner
// (sim.Config.Replan); other paradigms are left as they are. Every
// driver of the simulator (sim mode, virtual time, a comparison) calls it.
func Configure(c *sim.Config) {
	if c.Spec.Kind != paradigm.Auto {
		return
	}
	spec, shards, net, params, seed := c.Spec, max(c.Shards, 1), c.Network, c.Params, c.Seed
	among := spec.Among()
	c.Replan = func(now time.Duration, w sim.Window, current paradigm.Spec) (sim.Plan, error) {
		// The prediction covers the time to the next decision at the
		// slowest worker's pace: every rounds of it.
		r := Rule{Among: among, Horizon: time.Duration(spec.Every) * slices.Max(w.Iter),
			Threshold: spec.Threshold, Lambda: spec.Lambda,
			// One seed a decision, the same for every candidate.
			Seed: seed ^ uint64(now)}
		m := Measured{Iter: w.Iter, CV: min(w.CV, timing.MaxCV), Shards: shards, Network: net, Params: params}
		if net != nil && net.Changes() {
			// The links as they are now, as the workers are measured: a
			// window in the job's time means nothing in the prediction's,
			// which starts at 0.
			m.Network = net.At(now)
		}
		// The simulator's run is bounded (MaxPushes); nothing outside it
		// can stop a decision halfway.
		d, err := Decide(context.Background(), now, m, current, r)
		if err != nil {
			return sim.Plan{}, err
		}
		return sim.Plan{Switch: d.Switch, Next: d.Best, Best: d.Best.String(), Gain: d.Gain}, nil
	}
}
