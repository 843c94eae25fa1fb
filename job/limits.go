package job

import (
	"fmt"
	"time"

	"github.com/pacer-ps/pacer/paradigm"
)

// The limits on the numbers a job, a scenario file or a flag may ask for
// (docs/paradigms.md, "Limits"). Each bounds what one number makes a
// process allocate or compute before anything else could stop it: the
// simulator keeps state per worker and per worker·shard pair (about 170
// bytes each), ElasticBSP predicts r pushes per worker at every barrier,
// and a run's length is its pushes. They sit far above every preset and
// documented experiment (at most 10,000 workers, 32 shards, 1,000
// iterations, 3 epochs).
const (
	MaxWorkers      = 100_000
	MaxShards       = 1_000
	MaxWorkerShards = 1_000_000   // workers × shards: the simulator's per-pair state, about 170 MB
	MaxElasticCells = 10_000_000  // workers × elastic r: one barrier's predictions, 80 MB
	MaxIterations   = 1_000_000   // per worker, in sim mode
	MaxPushes       = 100_000_000 // a simulated run's pushes (iterations × workers): tens of seconds
	// MaxCommandPushes bounds a whole command's simulated pushes (every
	// run of a comparison: paradigms × seeds): ten runs at MaxPushes each
	// were accepted one by one.
	MaxCommandPushes = 1_000_000_000
	MaxEpochs        = 1_000
	MaxBatch         = 65_536
	MaxSeeds         = 1_000 // runs per paradigm in one comparison

	// The simulated cluster's times: beyond these a worker's iteration
	// time overflows the simulator's nanosecond clock or rounds to zero,
	// and the run's figures are garbage (speeds of 1e300 gave a negative
	// virtual time).
	MinSpeed, MaxSpeed = 1e-3, 1e3
	MaxJitter          = 10 // coefficient of variation
	MaxBase            = time.Hour
)

// Size is the part of a job that sets how much a run allocates and how long
// it lasts. Zero fields are not checked (they mean a default).
type Size struct {
	Workers, Shards int
	Iterations      int           // sim: iterations per worker
	Duration        time.Duration // sim: virtual time, checked with Base as an estimate of the pushes
	Horizon         time.Duration // virtual: the time budget of every run, checked as Duration is
	Base            time.Duration // sim: iteration time of a speed-1 worker (0: 1 s)
	FastestSpeed    float64       // sim: the smallest iteration-time multiplier (0: 1)
	Epochs          float64
	Batch           int
	Specs           []paradigm.Spec
	Speeds          []float64 // sim and virtual time: iteration-time multipliers
	Jitter          float64   // sim and virtual time: coefficient of variation
	// Runs is how many runs of this size the command makes (a comparison's
	// paradigms × seeds; 0: one): their pushes together are bounded too.
	Runs int
}

// Check returns an error naming the first field out of its range, spelled
// as prefix+name ("--workers" for a flag, "workers" for a scenario key).
func (s Size) Check(prefix string) error {
	ints := []struct {
		name   string
		v, max int
	}{
		{"workers", s.Workers, MaxWorkers},
		{"shards", s.Shards, MaxShards},
		{"iterations", s.Iterations, MaxIterations},
		{"batch", s.Batch, MaxBatch},
	}
	for _, f := range ints {
		if f.v < 0 || f.v > f.max {
			return fmt.Errorf("%s%s=%d: must lie in [1, %d] (docs/paradigms.md, Limits)", prefix, f.name, f.v, f.max)
		}
	}
	if !(s.Epochs >= 0 && s.Epochs <= MaxEpochs) {
		return fmt.Errorf("%sepochs=%g: must be positive and at most %d (docs/paradigms.md, Limits)", prefix, s.Epochs, MaxEpochs)
	}
	for _, v := range s.Speeds {
		if !(v >= MinSpeed && v <= MaxSpeed) {
			return fmt.Errorf("%sspeeds: %g must lie in [%g, %g] (docs/paradigms.md, Limits)", prefix, v, MinSpeed, MaxSpeed)
		}
	}
	if !(s.Jitter >= 0 && s.Jitter <= MaxJitter) {
		return fmt.Errorf("%sjitter=%g must lie in [0, %d] (docs/paradigms.md, Limits)", prefix, s.Jitter, MaxJitter)
	}
	if s.Base < 0 || s.Base > MaxBase {
		return fmt.Errorf("%sbase=%s must lie in [0, %s] (docs/paradigms.md, Limits)", prefix, s.Base, MaxBase)
	}
	k := max(s.Workers, 1)
	// The products cannot overflow: each factor is already bounded.
	if sh := max(s.Shards, 1); k*sh > MaxWorkerShards {
		return fmt.Errorf("%sworkers=%d × %sshards=%d = %d exceeds %d worker·shard pairs (docs/paradigms.md, Limits)",
			prefix, k, prefix, sh, k*sh, MaxWorkerShards)
	}
	if s.Iterations > 0 && k*s.Iterations > MaxPushes {
		return fmt.Errorf("%siterations=%d × %sworkers=%d = %d pushes exceeds %d (docs/paradigms.md, Limits)",
			prefix, s.Iterations, prefix, k, k*s.Iterations, MaxPushes)
	}
	runs := max(s.Runs, 1)
	if s.Iterations > 0 && float64(k*s.Iterations)*float64(runs) > MaxCommandPushes {
		return fmt.Errorf("%siterations=%d × %sworkers=%d × %d runs (paradigms × seeds) = %.3g pushes exceeds %d for one command (docs/paradigms.md, Limits)",
			prefix, s.Iterations, prefix, k, runs, float64(k*s.Iterations)*float64(runs), MaxCommandPushes)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"duration", s.Duration}, {"horizon", s.Horizon}} {
		if d.v < 0 {
			return fmt.Errorf("%s%s=%s must not be negative", prefix, d.name, d.v)
		}
		if d.v == 0 {
			continue
		}
		base := s.Base
		if base <= 0 {
			base = time.Second
		}
		speed := s.FastestSpeed
		if !(speed > 0) {
			speed = 1
		}
		// The fastest worker's pace for everyone: an upper estimate, since
		// jitter and stragglers only slow workers down on average.
		pushes := float64(k) * d.v.Seconds() / (base.Seconds() * speed)
		if !(pushes <= MaxPushes) {
			return fmt.Errorf("%s%s=%s at a %s iteration (%sbase × fastest speed %g) is about %.3g pushes for %d workers, more than %d (docs/paradigms.md, Limits)",
				prefix, d.name, d.v, time.Duration(base.Seconds()*speed*float64(time.Second)), prefix, speed, pushes, k, MaxPushes)
		}
		if total := pushes * float64(runs); !(total <= MaxCommandPushes) {
			return fmt.Errorf("%s%s=%s is about %.3g pushes a run × %d runs (paradigms × seeds) = %.3g, more than %d for one command (docs/paradigms.md, Limits)",
				prefix, d.name, d.v, pushes, runs, total, MaxCommandPushes)
		}
	}
	for _, sp := range s.Specs {
		if sp.Kind == paradigm.Elastic && sp.R > MaxElasticCells/k {
			return fmt.Errorf("%s: r=%d for %sworkers=%d is more than %d predictions per barrier (docs/paradigms.md, Limits)",
				sp, sp.R, prefix, k, MaxElasticCells)
		}
	}
	return nil
}

// FastestSpeed is the smallest iteration-time multiplier of speeds (0 when
// there is none: all workers run at speed 1), for Size.FastestSpeed.
func FastestSpeed(speeds []float64) float64 {
	fastest := 0.0
	for _, v := range speeds {
		if fastest == 0 || v < fastest {
			fastest = v
		}
	}
	return fastest
}
