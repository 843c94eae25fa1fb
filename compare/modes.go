package compare

import (
	"context"
	"fmt"
	"time"

	"github.com/pacer-ps/pacer/auto"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/sim"
	"github.com/pacer-ps/pacer/train"
)

// This file: the runs of each mode: the simulator's, virtual time's (and
// its default horizon), and the live modes' through the Launcher.

func (e *engine) simConfig(sp paradigm.Spec, seed uint64) sim.Config {
	j := e.c.Job
	c := sim.Config{Spec: sp, Workers: j.Workers, Shards: j.Shards, Timing: j.Timing, ServerDelay: j.ServerDelay,
		Seed: seed, HeartbeatTimeout: 0, SearchCost: j.SimSearchCost()}
	if j.Network != nil {
		// The transfers move the job's model's size (sim mode trains
		// nothing, but the horizon's timing run and its bytes are the
		// virtual runs'). A model that does not build leaves Params 0,
		// which sim refuses by name.
		c.Network = j.Network
		if m, err := job.NewModel(j); err == nil {
			c.Params = m.NumParams()
		}
		if e.c.Params > 0 && e.c.Mode == runstats.Sim {
			c.Params = e.c.Params
		}
	}
	auto.Configure(&c)
	return c
}

func (e *engine) simRun(ctx context.Context, k int) (*runstats.Run, error) {
	return e.entryRun(k, func(sp paradigm.Spec, seed uint64) (*runstats.Run, error) {
		cfg := e.simConfig(sp, seed)
		cfg.Iterations, cfg.Duration, cfg.Failures = e.c.Iterations, e.c.Duration, e.c.Failures
		cfg.Clock = time.Now // measures the controller only; summary.json leaves its time out
		r, err := sim.RunContext(ctx, cfg)
		if err != nil {
			return nil, err
		}
		r.Scenario = e.c.Scenario.Name
		return r, nil
	})
}

// prepareVirtual loads the data set and sets the horizon every virtual run
// trains to.
func (e *engine) prepareVirtual(ctx context.Context) error {
	j := e.c.Job
	if err := j.Fill(); err != nil {
		return err
	}
	ds, err := job.Data(j)
	if err != nil {
		return err
	}
	e.ds = ds
	if e.c.Race != nil {
		e.say("compare: %s, %d training and %d test samples from %s; %d paradigms race over seeds, %d runs at most", ds.Train.Name,
			ds.Train.N, ds.Test.N, ds.Source, len(e.c.Names()), e.total())
	} else {
		e.say("compare: %s, %d training and %d test samples from %s; %d paradigms × %d seeds", ds.Train.Name, ds.Train.N,
			ds.Test.N, ds.Source, len(e.c.Names()), e.c.Seeds)
	}
	e.horizon = e.c.Horizon
	if e.c.EpochsEach {
		e.say("compare: every run trains for %g epoch(s)", e.c.Job.Epochs)
	} else {
		if e.horizon == 0 {
			if e.horizon, err = DefaultHorizon(ctx, e.c, ds.Train.N); err != nil {
				return err
			}
		}
		e.say("compare: every run trains for %s of virtual time", e.horizon.Round(time.Second))
	}
	return nil
}

// virtualRun trains run k in virtual time, to the shared horizon.
func (e *engine) virtualRun(ctx context.Context, k int) (*runstats.Run, error) {
	return e.entryRun(k, func(sp paradigm.Spec, seed uint64) (*runstats.Run, error) {
		cfg := e.c.Job
		cfg.Spec, cfg.Seed, cfg.Horizon = sp, seed, e.horizon
		r, err := train.VirtualContext(ctx, cfg, e.ds, &train.Options{Plan: auto.Configure})
		if err != nil {
			return nil, err
		}
		r.Scenario = e.c.Scenario.Name
		return r, nil
	})
}

// DefaultHorizon is the virtual time the slowest paradigm (over all seeds)
// takes for the job's epochs: every run gets at least its epochs, and the
// faster paradigms turn their speed into more training within the same
// time. It simulates timing only (no gradients), so it costs little.
func DefaultHorizon(ctx context.Context, c Config, trainN int) (time.Duration, error) {
	j := c.Job
	if err := j.Fill(); err != nil {
		return 0, err
	}
	iters := train.Iterations(j, trainN)
	var h time.Duration
	for _, sp := range c.AllSpecs() {
		for _, seed := range c.SeedList() {
			e := engine{c: c}
			cfg := e.simConfig(sp, seed)
			cfg.Iterations = iters
			r, err := sim.RunContext(ctx, cfg)
			if err != nil {
				return 0, fmt.Errorf("the default horizon: %s (seed %d): %w", sp, seed, err)
			}
			h = max(h, time.Duration(r.VirtualSeconds*float64(time.Second)))
		}
	}
	// Whole seconds: the horizon is printed and recorded, and a round
	// figure reads as the budget it is.
	return h.Truncate(time.Second) + time.Second, nil
}

// live runs every paradigm and seed on the live server, one at a time.
func (e *engine) live(ctx context.Context) ([]runstats.Run, error) {
	var runs []runstats.Run
	for k := range e.total() {
		i, seed := e.runJob(k)
		sp := e.c.Specs[i] // Validate refuses groups here
		cfg := e.c.Job
		cfg.Spec, cfg.Seed = sp, seed
		r, err := e.c.Launch(ctx, cfg, e.c.Mode, func(p runstats.Progress) {
			e.say("compare: [%d/%d] %-22s seed %d (%s) epoch %.2f/%g  test accuracy %.4f  %.1f pushes/s  waiting %.0f%%  wall %s",
				k+1, e.total(), sp, seed, e.c.Mode, p.Epoch, cfg.Epochs, p.Accuracy, p.Throughput, 100*p.WaitFraction,
				time.Since(e.start).Round(time.Second))
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, e.interrupted(ctx)
			}
			return nil, fmt.Errorf("%s (seed %d): %w", sp, seed, err)
		}
		r.Scenario = e.c.Scenario.Name
		runs = append(runs, *r)
		e.runDone()
	}
	return runs, nil
}
