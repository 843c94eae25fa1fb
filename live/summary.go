package live

import (
	"github.com/pacer-ps/pacer/data"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/nn"
	"github.com/pacer-ps/pacer/runstats"
)

// Summary builds a live job's run summary (summary.json, the schema of
// pacer train) from the coordinator's counters cs, every shard's counters
// and the job's evaluations: the one place both the launcher and a
// hand-run job's shard 0 build it.
func Summary(d *job.Description, mode string, cs proto.CoordStats, shards []proto.ShardStats, ev *Evaluations) *runstats.Run {
	j := &d.Job
	r := &runstats.Run{Paradigm: j.Spec.String(), Mode: mode, Model: j.Model, Workers: j.Workers, Shards: j.Shards,
		Seed: j.Seed, Pushes: cs.Pushes, Releases: cs.Releases, Seconds: cs.Seconds, MaxGap: cs.MaxGap,
		ControllerCalls: cs.ControllerCalls, ControllerSeconds: cs.ControllerSecs, WorkerPushes: cs.WorkerPushes,
		Sampling: j.Sampling, Normalize: j.Normalize, ChannelMean: ev.Mean}
	r.SetCurve(ev.Curve, j.Target)
	r.CurveEpochs, r.BatchLoss = ev.Epochs, ev.batchLosses()
	r.SetTargets(j.Targets)
	if cs.Seconds > 0 {
		r.Throughput = float64(cs.Pushes) / cs.Seconds
	}
	r.WaitFraction, r.WorkerWait = WaitFractions(cs)
	for _, it := range cs.WorkerIter {
		if it.N > 0 {
			r.WorkerIterations = cs.WorkerIter
			break
		}
	}
	var n, sum int64
	for _, st := range shards {
		if st.PullReplies.N > 0 {
			r.ShardPullReplies = make([]runstats.IterStats, len(shards))
			for i, st := range shards {
				r.ShardPullReplies[i] = st.PullReplies
			}
			break
		}
	}
	for _, st := range shards {
		r.Updates += st.Updates
		r.Dropped += st.Dropped
		r.ShardStaleness = append(r.ShardStaleness, st.Staleness)
		for s, k := range st.Staleness {
			for len(r.StalenessHist) <= s {
				r.StalenessHist = append(r.StalenessHist, 0)
			}
			r.StalenessHist[s] += k
			n += k
			sum += int64(s) * k
			if k > 0 {
				r.StalenessMax = max(r.StalenessMax, int64(s))
			}
		}
	}
	if n > 0 {
		r.StalenessMean = float64(sum) / float64(n)
	}
	return r
}

// WaitFractions is the workers' mean share of time held, and each one's.
func WaitFractions(cs proto.CoordStats) (mean float64, per []float64) {
	n := 0
	for p := range cs.WorkerWait {
		tot := cs.WorkerWait[p] + cs.WorkerBusy[p]
		f := 0.0
		if tot > 0 {
			f = cs.WorkerWait[p] / tot
			mean += f
			n++
		}
		per = append(per, f)
	}
	if n > 0 {
		mean /= float64(n)
	}
	return mean, per
}

// Evaluations are a live job's evaluations of its weights, as the
// launcher and a hand-run job's shard 0 take them (Add): the accuracy
// curve, the epoch of each point and the workers' mean mini-batch loss
// since the previous one. Not the evaluated weights' training loss
// (virtual time's TrainLoss): measuring it would take the evaluating
// process's CPU from the workers whose speed the live modes measure (a
// third more than the test accuracy for the MLP, half for the CNN); the
// mini-batch losses come free with the workers' gradients.
type Evaluations struct {
	Curve [][2]float64 // [seconds, test accuracy]
	// Epochs are the epochs at the evaluations: the pushes counted by
	// then, times the batch, over the training set.
	Epochs []float64
	// BatchLoss is, at each evaluation, the mean of the mini-batch losses
	// the workers reported since the previous one (nil: none reported).
	BatchLoss []*float64
	// Mean is the per-channel mean subtracted from the data the
	// evaluations read (job.Config.Normalize; nil: none).
	Mean []float64

	// The coordinator's loss totals at the previous evaluation (if seen),
	// and which coordinator it was (proto.CoordStats.Incarnation).
	lossSum float64
	losses  int64
	inc     uint64
	seen    bool
}

// Add evaluates weights w of model m on test as of the coordinator's
// counters cs, of job d, and returns the accuracy.
func (e *Evaluations) Add(d *job.Description, m nn.Model, w []float32, test *data.Set, cs proto.CoordStats) float64 {
	acc := nn.Accuracy(m, w, test.X, test.Y, 500)
	e.Curve = append(e.Curve, [2]float64{cs.Seconds, acc})
	if d.TrainN > 0 {
		e.Epochs = append(e.Epochs, float64(cs.Pushes*int64(d.Job.Batch))/float64(d.TrainN))
	}
	e.BatchLoss = append(e.BatchLoss, e.batchLoss(cs))
	return acc
}

// batchLoss is the mean loss the workers reported since the previous
// evaluation (nil: none), from the coordinator's running totals.
func (e *Evaluations) batchLoss(cs proto.CoordStats) *float64 {
	// The window starts at the previous evaluation's totals when the
	// coordinator's go on from them: the same coordinator, or one
	// restored from a state file that coordinator wrote after the
	// evaluation (the file holds the totals, so the reports between the
	// evaluation and the restart count). Otherwise (the first evaluation,
	// a file older than the previous one or written by a later
	// coordinator, none) it starts at the totals the coordinator
	// restored: the reports since the file was written are lost with the
	// coordinator that counted them. A coordinator that names no
	// incarnation (an older binary) cannot be followed across a restart:
	// its window starts again.
	goesOn := e.seen && cs.Incarnation != 0 && (cs.Incarnation == e.inc && cs.BatchLosses >= e.losses ||
		cs.RestoredFrom != 0 && cs.RestoredFrom == e.inc && cs.RestoredLosses >= e.losses)
	if !goesOn {
		e.lossSum, e.losses = cs.RestoredLossSum, cs.RestoredLosses
	}
	n, sum := cs.BatchLosses-e.losses, cs.BatchLossSum-e.lossSum
	e.lossSum, e.losses, e.inc, e.seen = cs.BatchLossSum, cs.BatchLosses, cs.Incarnation, true
	if n <= 0 {
		return nil
	}
	mean := sum / float64(n)
	return &mean
}

// batchLosses is BatchLoss for a summary: nil when no evaluation had any.
func (e *Evaluations) batchLosses() []*float64 {
	for _, l := range e.BatchLoss {
		if l != nil {
			return e.BatchLoss
		}
	}
	return nil
}
