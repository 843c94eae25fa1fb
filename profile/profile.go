// Package profile fits the timing models of a cluster to what a live job
// measured (each worker's iteration times, from its summary.json or its
// coordinator) and writes them as a scenario that pacer compare accepts:
// the first half of pacer advise. It is pure: no I/O, no clocks.
package profile

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/scenario"
)

// MinIterations is the fewest iterations a worker must have reported for
// its speed and jitter to be fitted.
const MinIterations = 10

// Fit is the timing the iterations show: a speed-1 worker's mean iteration
// (Base, the fastest worker's), each worker's speed (its mean iteration over
// Base) and the jitter (the coefficient of variation of a mean-1 log-normal,
// timing's jitter model, pooled over the workers).
type Fit struct {
	Base   time.Duration
	Speeds []float64
	Jitter float64
	// Workers are the figures fitted from, per worker.
	Workers []runstats.IterStats
}

// FromRun fits a live run's worker_iterations.
func FromRun(r *runstats.Run) (Fit, error) {
	return FromStats(r.WorkerIterations)
}

// FromStats fits per-worker iteration figures.
func FromStats(ws []runstats.IterStats) (Fit, error) {
	if len(ws) == 0 {
		return Fit{}, fmt.Errorf("profile: no iteration times (worker_iterations): profile a live run of pacer train or compare --mode inproc|tcp, or a hand-run job, made by this version")
	}
	fastest := math.Inf(1)
	var df, ss float64
	for i, w := range ws {
		if w.N < MinIterations || !(w.Mean > 0) {
			return Fit{}, fmt.Errorf("profile: worker %d reported %d iterations; at least %d are needed to fit its speed and jitter", i, w.N, MinIterations)
		}
		fastest = min(fastest, w.Mean)
		// Pooled log-variance: each worker's spread about its own mean,
		// so different speeds do not read as jitter.
		df += float64(w.N - 1)
		ss += float64(w.N-1) * w.LogSD * w.LogSD
	}
	f := Fit{Base: time.Duration(fastest * float64(time.Second)).Round(time.Microsecond), Workers: ws}
	for _, w := range ws {
		f.Speeds = append(f.Speeds, round3(w.Mean/fastest))
	}
	// A log-normal with log-variance σ² has CV √(e^σ² − 1).
	f.Jitter = round3(math.Sqrt(math.Expm1(ss / df)))
	return f, nil
}

// round3 keeps three significant digits: more than the fit can tell.
func round3(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 3, 64), 64)
	return v
}

// Paradigms are the paradigms a profiled cluster of k workers is compared
// on: one of each kind that applies without server delays.
func Paradigms(k int) []string {
	ps := []string{"bsp", "asp", "ssp:s=3", "dssp:sl=3,su=15", "elastic:r=15"}
	if k >= 2 {
		ps = append(ps, "backup:b=1", fmt.Sprintf("softsync:n=%d", k))
	}
	return ps
}

// Scenario is the fitted cluster as a scenario file: name, the job's
// shards and model, every paradigm of Paradigms.
func (f Fit) Scenario(name string, shards int, model string) scenario.Scenario {
	desc := fmt.Sprintf("Profiled from a live job: %d workers, mean iteration of the fastest %s, speeds %v, jitter CV %g.",
		len(f.Speeds), f.Base, f.Speeds, f.Jitter)
	return scenario.Scenario{Name: name, Description: desc, Paradigms: Paradigms(len(f.Speeds)),
		Workers: len(f.Speeds), Shards: shards, Speeds: f.Speeds, Jitter: f.Jitter, Base: f.Base.String(), Model: model}
}
