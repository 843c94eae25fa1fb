package check

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/network"
)

// This file: the refit, a second prediction that charges the live
// runtime's measured overhead as link latency.

// Refit is a second prediction that charges the live runtime's overhead,
// as the check measured it, as the latency of every message in a
// simulated network: the model's own account of pushes, pulls, clock
// reports and releases, 5 latencies an iteration (docs/paradigms.md, The
// network). Fitted on the median paradigm's extra time, it is checked on
// every paradigm.
type Refit struct {
	Latency     string     `json:"latency"` // per message
	Paradigms   []Paradigm `json:"paradigms"`
	SameRanking bool       `json:"same_ranking"`
	Inversions  []string   `json:"inversions,omitempty"`
}

// MessagesPerIteration is how many latencies an iteration pays in the
// network model: push, pull request, pull reply, clock report, release.
const MessagesPerIteration = 5

// FitLatency is the first guess at the per-message latency that accounts
// for the median paradigm's extra time per live iteration: that time over
// MessagesPerIteration (0 when the live runs were not slower).
func (r *Result) FitLatency() time.Duration {
	m, ok := r.medianExtra()
	if !ok || m <= 0 {
		return 0
	}
	return time.Duration(m / MessagesPerIteration * float64(time.Second)).Round(time.Microsecond)
}

// medianExtra is the median over the paradigms of the extra time per
// live iteration (seconds); a single paradigm has no median to fit on.
func (r *Result) medianExtra() (float64, bool) {
	var xs []float64
	for _, p := range r.Paradigms {
		xs = append(xs, p.ExtraPerIteration)
	}
	if len(xs) < 2 {
		return 0, false
	}
	m := compare.MedianInterval(xs).Median
	if m == nil {
		return 0, false
	}
	return *m, true
}

// refitSteps bounds the secant steps after the first guess: each is one
// more prediction.
const refitSteps = 2

// refit predicts pc again with the latency that brings the median
// paradigm's extra time to zero: a first guess (FitLatency), then secant
// steps on the median residual (an iteration pays more than
// MessagesPerIteration latencies when messages wait on each other). It
// keeps the prediction with the smallest residual.
func refit(ctx context.Context, pc compare.Config, r *Result, meas *compare.Summary, say func(string)) (*Refit, error) {
	j := &pc.Job
	e0, _ := r.medianExtra()
	lat := r.FitLatency()
	var best *Refit
	bestRes := math.Inf(1)
	for step := 0; step <= refitSteps && lat > 0; step++ {
		if say != nil {
			say(fmt.Sprintf("check: predicting again with the measured overhead charged (%s a message)", lat))
		}
		fc := pc
		fc.Job.Network = withLatency(pc.Job.Network, lat)
		fit, err := compare.Run(ctx, fc)
		if err != nil {
			return nil, fmt.Errorf("check: the refit prediction: %w", err)
		}
		fr := Join(fit, meas, r.Live, j.Timing.Base, j.Workers)
		res, _ := fr.medianExtra()
		if math.Abs(res) < bestRes {
			bestRes = math.Abs(res)
			best = &Refit{Latency: lat.String(), Paradigms: fr.Paradigms, SameRanking: fr.SameRanking, Inversions: fr.Inversions}
		}
		// The residual falls from e0 at no latency to res at lat; aim
		// where the line through the two crosses zero.
		if e0-res <= 0 || math.Abs(res) < 1e-4 {
			break
		}
		lat = time.Duration(float64(lat) * e0 / (e0 - res)).Round(time.Microsecond)
	}
	return best, nil
}

// withLatency is the network s with lat added to every link's latency;
// with no network, links at the fastest rate a link takes, so that the
// latency alone is charged.
func withLatency(s *network.Spec, lat time.Duration) *network.Spec {
	if s == nil {
		return &network.Spec{Default: network.Link{Rate: network.MaxRate, Latency: lat}}
	}
	out := *s
	out.Default.Latency += lat
	for _, m := range []*map[int]network.Link{&out.Workers, &out.Shards} {
		over := map[int]network.Link{}
		for i, l := range *m {
			l.Latency += lat
			over[i] = l
		}
		*m = over
	}
	return &out
}

// ErrNotEmulated refuses what the live runtime cannot yet carry out.
var ErrNotEmulated = errors.New("check: not emulated in the live modes yet")
