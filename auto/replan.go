package auto

import (
	"context"
	"slices"
	"time"

	"github.com/pacer-ps/pacer/network"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/sim"
	"github.com/pacer-ps/pacer/timing"
)

// Planner is a job's auto decision as every driver calls it: from the
// window's measured iteration times (each live worker's mean), their CV,
// the iterations as multiples of their worker's mean (draws: the spread's
// shape; none: a log-normal of spread cv) and the gradient noise scale in
// gradients (0: not measured), at now, running current, whether to
// switch and to what. spec is
// the job's auto spec; shards, net and params the job's cluster as the
// predictions simulate it; seed the job's seed.
func Planner(spec paradigm.Spec, shards int, net *network.Spec, params int, seed uint64) func(now time.Duration, iter []time.Duration, cv float64, draws []float64, noise float64, current paradigm.Spec) (Decision, error) {
	among := spec.Among()
	shards = max(shards, 1)
	return func(now time.Duration, iter []time.Duration, cv float64, draws []float64, noise float64, current paradigm.Spec) (Decision, error) {
		if len(iter) == 0 {
			return Decision{}, errNoWorker
		}
		// The prediction covers the time to the next decision at the
		// slowest worker's pace: every rounds of it.
		r := Rule{Among: among, Horizon: time.Duration(spec.Every) * slices.Max(iter),
			Threshold: spec.Threshold, Lambda: spec.Lambda,
			// One seed a decision, the same for every candidate.
			Seed: seed ^ uint64(now)}
		m := Measured{Iter: iter, CV: min(cv, timing.MaxCV), Draws: draws, Noise: noise, Shards: shards, Network: net, Params: params}
		if net != nil && net.Changes() {
			// The links as they are now, as the workers are measured: a
			// window in the job's time means nothing in the prediction's,
			// which starts at 0.
			m.Network = net.At(now)
		}
		// The simulator's run is bounded (MaxPushes); nothing outside it
		// can stop a decision halfway.
		return Decide(context.Background(), now, m, current, r)
	}
}

// Configure gives a simulator's run of --paradigm auto its planner
// (sim.Config.Replan); other paradigms are left as they are. Every
// driver of the simulator (sim mode, virtual time, a comparison) calls it.
func Configure(c *sim.Config) {
	if c.Spec.Kind != paradigm.Auto {
		return
	}
	plan := Planner(c.Spec, c.Shards, c.Network, c.Params, c.Seed)
	c.Replan = func(now time.Duration, w sim.Window, current paradigm.Spec) (sim.Plan, error) {
		d, err := plan(now, w.Iter, w.CV, w.Draws, w.Noise, current)
		if err != nil {
			return sim.Plan{}, err
		}
		return sim.Plan{Switch: d.Switch, Next: d.Best, Best: d.Best.String(), Gain: d.Gain}, nil
	}
}

// LivePlanner is Planner in the shape of the live coordinator's
// decision (live.Replanner): the rule to run next, whether to switch to
// it, the predicted gain.
func LivePlanner(spec paradigm.Spec, shards int, net *network.Spec, params int, seed uint64) func(now time.Duration, iter []time.Duration, cv float64, draws []float64, noise float64, current paradigm.Spec) (paradigm.Spec, bool, float64, error) {
	plan := Planner(spec, shards, net, params, seed)
	return func(now time.Duration, iter []time.Duration, cv float64, draws []float64, noise float64, current paradigm.Spec) (paradigm.Spec, bool, float64, error) {
		d, err := plan(now, iter, cv, draws, noise, current)
		return d.Best, d.Switch, d.Gain, err
	}
}
