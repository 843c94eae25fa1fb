package proto

// This file: what an observer makes of the coordinator's counters: the
// workers' wait fractions, and a job's evaluations with the workers'
// mean mini-batch loss between them.

// WaitFractions is the workers' mean share of time held, and each one's.
func (cs CoordStats) WaitFractions() (mean float64, per []float64) {
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
	// and which coordinator it was (CoordStats.Incarnation).
	lossSum float64
	losses  int64
	inc     uint64
	seen    bool
}

// Add records an evaluation of accuracy acc as of the coordinator's
// counters cs, of a job of batch samples a push over trainN training
// samples (0: not known, and no epoch is recorded).
func (e *Evaluations) Add(cs CoordStats, acc float64, batch, trainN int) {
	e.Curve = append(e.Curve, [2]float64{cs.Seconds, acc})
	if trainN > 0 {
		e.Epochs = append(e.Epochs, float64(cs.Pushes*int64(batch))/float64(trainN))
	}
	e.BatchLoss = append(e.BatchLoss, e.batchLoss(cs))
}

// batchLoss is the mean loss the workers reported since the previous
// evaluation (nil: none), from the coordinator's running totals.
func (e *Evaluations) batchLoss(cs CoordStats) *float64 {
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

// BatchLosses is BatchLoss for a summary: nil when no evaluation had any.
func (e *Evaluations) BatchLosses() []*float64 {
	for _, l := range e.BatchLoss {
		if l != nil {
			return e.BatchLoss
		}
	}
	return nil
}
