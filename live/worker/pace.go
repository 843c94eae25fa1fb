package worker

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/pacer-ps/pacer/timing"
)

// pace stretches a live worker's iterations to the times the job's timing
// model draws for it (--speeds, --jitter, --straggler): an emulated
// cluster of unequal workers on one machine's equal cores. It runs in the
// worker's loop after the gradient, never in the data plane, and a job
// without a timing model has none.
//
// An iteration's time is the model's draw for this worker in units of
// base: --base when the job sets it, else this worker's own real step
// time, the median of its first measureSteps computes (all but the last
// run unstretched). The stretch can only add time: a draw shorter than the
// real compute (a jitter multiplier below 1 at the measured base) runs
// at the real compute's length, so give --base above the real step time
// (e.g. twice it) for jitter to show both ways.
type pace struct {
	tw      *timing.Workers
	p       int           // this worker's stream
	unit    time.Duration // the model's Base: its draws are in units of it
	base    time.Duration // what one unit is here (0: still measuring)
	samples []time.Duration
	timer   *time.Timer
	// t0 is the start of this worker's first iteration: the model's time
	// (a slow window's from and to, a roaming straggler's periods) counts
	// from it, in units of base, so a worker started late or restarted
	// counts from its own start.
	t0 time.Time
}

// measureSteps is how many real computes set the base when the job gives
// none.
const measureSteps = 5

// newPace is worker id's pace in a job of workers, or nil when the job's
// timing model leaves every worker at its real speed.
func newPace(spec timing.WorkerSpec, workers, id int, seed uint64) (*pace, error) {
	if len(spec.Speeds) == 0 && spec.Jitter == 0 && spec.Straggler.IsZero() {
		return nil, nil
	}
	given := spec.Base // 0: measure it
	if spec.Base == 0 {
		spec.Base = timing.DefaultBase
	}
	tw, err := timing.NewWorkers(spec, workers, seed)
	if err != nil {
		return nil, fmt.Errorf("live: worker %d: the job's timing model: %w", id, err)
	}
	pc := &pace{tw: tw, p: id % workers, unit: spec.Base, base: given}
	return pc, nil
}

// end is when the iteration that started at start, whose gradient took
// compute, may end: start plus this worker's next draw in units of its
// base (a measuring step, and the step that sets the base from the
// measurements, draw none until then: the zero time, no hold). It reads no
// clock, so a trace of starts and computes gives the same ends at any
// load.
func (pc *pace) end(start time.Time, compute time.Duration) time.Time {
	if pc.t0.IsZero() {
		pc.t0 = start
	}
	if pc.base == 0 {
		pc.samples = append(pc.samples, compute)
		if len(pc.samples) < measureSteps {
			return time.Time{}
		}
		slices.Sort(pc.samples)
		pc.base = max(pc.samples[len(pc.samples)/2], time.Microsecond)
	}
	scale := float64(pc.base) / float64(pc.unit) // wall time per model time
	d := pc.tw.NextAt(pc.p, time.Duration(float64(start.Sub(pc.t0))/scale))
	return start.Add(time.Duration(float64(d) * scale))
}

// hold returns once the iteration that started at start, whose gradient
// took compute, has lasted its drawn time (or ctx ended); now is the
// worker loop's reading of the clock, the only one.
func (pc *pace) hold(ctx context.Context, now, start time.Time, compute time.Duration) error {
	wait := pc.end(start, compute).Sub(now)
	if wait <= 0 {
		return nil
	}
	if pc.timer == nil {
		pc.timer = time.NewTimer(wait) // the worker loop's wait for the end end() chose (or the stop)
	} else {
		pc.timer.Reset(wait)
	}
	select {
	case <-ctx.Done():
		pc.timer.Stop()
		return ctx.Err()
	case <-pc.timer.C:
		return nil
	}
}
