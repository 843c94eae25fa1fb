// Package auto is `--paradigm auto`'s decision (issue 36): from what a
// running job has measured, it predicts each candidate paradigm's training
// progress over a horizon with the simulator, which runs the same policy
// code as every mode, and says whether to switch. It is pure: the time is
// an argument, nothing reads a clock, a file or the network, and the same
// measurements give the same decision, byte for byte.
//
// Progress is what a paradigm's applied gradients are worth: every
// gradient a shard applies counts once, discounted by its staleness s as
// 1/(1 + λ·s), and a step of k gradients counts k/(1 + k/N), N the
// gradient noise scale in gradients (McCandlish et al. 2018: a step of
// batch B makes B/(B + B_noise) of an infinite batch's progress), per
// second of the cluster's time. Virtual-time training measures N from the
// steps that average two or more gradients (train's noiseMeter); where
// nothing measures it (sim mode, the live runtime, or a job that has run
// only one-gradient steps since its start) a step of k counts k: the
// linear-scaling regime, which overrates synchronous paradigms' big steps
// once the total batch passes the noise scale. λ is the price of
// staleness, given by the caller (Rule.Lambda).
package auto

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/pacer-ps/pacer/network"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/sim"
	"github.com/pacer-ps/pacer/timing"
)

// Measured is the state a decision reads: what the coordinator measured
// over its last window.
type Measured struct {
	// Iter is each live worker's mean iteration (compute) time over the
	// window, CV the iterations' pooled coefficient of variation.
	Iter []time.Duration
	CV   float64
	// Draws are the window's iterations as multipliers of their worker's
	// mean (timing.Window): when given, the prediction draws each
	// iteration's from them instead of a log-normal of spread CV, so a
	// heavy tail the window saw is in it.
	Draws []float64
	// Noise is the gradient noise scale B_noise in gradients (B_noise
	// over the samples one gradient averages; 0: not measured, the
	// linear-scaling measure).
	Noise float64
	// Shards, and the links as measured (nil: no network), with the
	// model's size in values when there are links.
	Shards  int
	Network *network.Spec
	Params  int
}

// Rule is how decisions are made: the candidates, the horizon each is
// predicted over, and what a switch must gain.
type Rule struct {
	Among []paradigm.Spec
	// Horizon is the cluster time each prediction covers.
	Horizon time.Duration
	// Threshold is the relative gain in progress a switch must clear
	// beyond its cost (0.05: 5%): below it the current paradigm stays,
	// so measurement noise does not flap the job between two.
	Threshold float64
	// Lambda prices staleness: a gradient of staleness s counts
	// 1/(1+Lambda·s).
	Lambda float64
	// Seed draws the predictions' timing (the same seed for every
	// candidate: common random numbers, as in a comparison).
	Seed uint64
}

// Prediction is one candidate's predicted run over the horizon.
type Prediction struct {
	Spec      paradigm.Spec `json:"spec"`
	Progress  float64       `json:"progress_per_s"` // discounted applied gradients per second
	Pushes    float64       `json:"pushes_per_s"`
	Staleness float64       `json:"staleness_mean"`
	Dropped   int64         `json:"dropped"`
}

// Decision is what Decide concluded and why.
type Decision struct {
	At      time.Duration `json:"at_ns"`
	Current paradigm.Spec `json:"current"`
	Best    paradigm.Spec `json:"best"`
	// Switch: run Best from here. Gain is Best's predicted progress over
	// the horizon, the switch's cost paid, relative to staying (0 when
	// Best is the current rule).
	Switch      bool          `json:"switch"`
	Gain        float64       `json:"gain"`
	Cost        time.Duration `json:"cost_ns"`
	Horizon     time.Duration `json:"horizon_ns"` // the rule's, cut to MaxPushes
	Predictions []Prediction  `json:"predictions"`
	Reason      string        `json:"reason"`
}

// MaxPushes bounds one prediction: a decision simulates at most this many
// pushes per candidate (the horizon is cut to fit), so its time is bounded
// whatever the cluster: about a millisecond per thousand pushes on one core.
const MaxPushes = 200_000

var errInput = errors.New("auto")

var errNoWorker = fmt.Errorf("%w: no worker measured", errInput)

// Check refuses a rule that cannot decide, naming the field.
func (r Rule) Check() error {
	switch {
	case len(r.Among) < 2:
		return fmt.Errorf("%w: among has %d paradigms: want at least 2 to choose from", errInput, len(r.Among))
	case r.Horizon <= 0:
		return fmt.Errorf("%w: horizon=%s: want a positive duration", errInput, r.Horizon)
	case !(r.Threshold >= 0 && r.Threshold <= 10):
		return fmt.Errorf("%w: threshold=%g: want a relative gain in [0, 10]", errInput, r.Threshold)
	case !(r.Lambda >= 0 && r.Lambda <= 1e3):
		return fmt.Errorf("%w: lambda=%g: want a staleness price in [0, 1000]", errInput, r.Lambda)
	}
	return nil
}

// workers is the measured cluster as the prediction draws it: the
// window's own multipliers when it kept them, else a log-normal of its
// spread.
func (m Measured) workers(base time.Duration, speeds []float64) timing.WorkerSpec {
	if len(m.Draws) > 0 {
		return timing.WorkerSpec{Base: base, Speeds: speeds, Draws: m.Draws}
	}
	return timing.WorkerSpec{Base: base, Speeds: speeds, Jitter: m.CV}
}

// Decide predicts every candidate of r from m and says whether the job,
// running current at time now, should switch. The switch's cost is a
// barrier: every worker finishes the iteration it is in, so the job loses
// up to the slowest worker's iteration time (documented: the cost charged
// is that whole time, an upper bound).
func Decide(ctx context.Context, now time.Duration, m Measured, current paradigm.Spec, r Rule) (Decision, error) {
	if err := r.Check(); err != nil {
		return Decision{}, err
	}
	if len(m.Iter) < 1 {
		return Decision{}, errNoWorker
	}
	if !(m.CV >= 0 && m.CV <= timing.MaxCV) {
		return Decision{}, fmt.Errorf("%w: measured cv=%g: want [0, %d]", errInput, m.CV, timing.MaxCV)
	}
	for p, d := range m.Iter {
		if d <= 0 {
			return Decision{}, fmt.Errorf("%w: worker %d's measured iteration time %s: want positive", errInput, p, d)
		}
	}
	base := median(m.Iter)
	speeds := make([]float64, len(m.Iter))
	for p, d := range m.Iter {
		speeds[p] = float64(d) / float64(base)
	}
	horizon := r.Horizon
	// Every worker at its own pace pushes horizon/iter times.
	pushes := 0.0
	for _, d := range m.Iter {
		pushes += float64(horizon) / float64(d)
	}
	if pushes > MaxPushes {
		horizon = time.Duration(float64(horizon) * MaxPushes / pushes)
	}
	d := Decision{At: now, Current: current, Cost: slices.Max(m.Iter), Horizon: horizon}
	cur := -1
	for i, sp := range r.Among {
		run, err := sim.RunContext(ctx, sim.Config{Spec: sp, Workers: len(m.Iter), Shards: max(m.Shards, 1),
			Timing:   m.workers(base, speeds),
			Duration: horizon, Seed: r.Seed, Network: m.Network, Params: m.Params})
		if err != nil {
			return Decision{}, fmt.Errorf("auto: predicting %s: %w", sp, err)
		}
		secs := run.VirtualSeconds
		if secs <= 0 {
			return Decision{}, fmt.Errorf("auto: predicting %s: the run covered no time", sp)
		}
		shards := float64(max(m.Shards, 1))
		applied := float64(run.Pushes) - float64(run.Dropped)/shards
		d.Predictions = append(d.Predictions, Prediction{Spec: sp, Pushes: float64(run.Pushes) / secs,
			Progress:  applied / secs / (1 + r.Lambda*run.StalenessMean) / batchDiscount(applied, float64(run.Updates)/shards, m.Noise),
			Staleness: run.StalenessMean, Dropped: run.Dropped})
		if sp.String() == current.String() {
			cur = i
		}
	}
	if cur < 0 {
		return Decision{}, fmt.Errorf("%w: the current paradigm %s is not among %v", errInput, current, r.Among)
	}
	best := cur
	for i, p := range d.Predictions {
		// Ties keep the earlier: among's order is the preference.
		if p.Progress > d.Predictions[best].Progress {
			best = i
		}
	}
	d.Best = r.Among[best]
	pc, pb := d.Predictions[cur].Progress, d.Predictions[best].Progress
	// Staying gives pc·H; switching pb·(H − cost).
	h := float64(horizon)
	stay, move := pc*h, pb*math.Max(h-float64(d.Cost), 0)
	switch {
	case best == cur:
		// Staying pays no switch: no gain, and no cost charged against it.
	case stay > 0:
		d.Gain = move/stay - 1
	case move > 0:
		d.Gain = math.Inf(1)
	}
	switch {
	case best == cur:
		d.Reason = fmt.Sprintf("%s is predicted best (%.3g progress/s)", current, pc)
	case d.Gain > r.Threshold:
		d.Switch = true
		d.Reason = fmt.Sprintf("%s predicted %.3g progress/s against %s's %.3g: %+.1f%% over %s after the switch's %s, above the %.0f%% threshold",
			d.Best, pb, current, pc, 100*d.Gain, horizon, d.Cost, 100*r.Threshold)
	default:
		d.Reason = fmt.Sprintf("%s predicted %.3g progress/s against %s's %.3g: %+.1f%% over %s after the switch's %s, not above the %.0f%% threshold",
			d.Best, pb, current, pc, 100*d.Gain, horizon, d.Cost, 100*r.Threshold)
	}
	return d, nil
}

// batchDiscount is what a step of k gradients (applied over updates, on
// average) is worth per gradient against the linear-scaling measure, at
// a gradient noise scale of noise gradients: a step of batch B makes
// B/(B + B_noise) of the progress of an infinitely large one (McCandlish
// et al. 2018), so k gradients in one step count k/(1 + k/noise), not k.
// 1 when the noise scale is not measured.
func batchDiscount(applied, updates, noise float64) float64 {
	if noise <= 0 || updates <= 0 {
		return 1
	}
	return 1 + applied/updates/noise
}

// median of ds (the lower middle for an even count); ds is not changed.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}
