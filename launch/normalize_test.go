package launch

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/timing"

	"github.com/pacer-ps/pacer/data"
	"github.com/pacer-ps/pacer/job"
)

// --normalize mean in the live modes (issue 18): the launcher subtracts the
// training set's mean before its workers and its evaluation see the data,
// the job trains, and the summary records the mean, the same bits as
// data.ChannelMean of the training set (what every process computes).
func TestInprocNormalizedTrains(t *testing.T) {
	skipUnderRace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a guard against a hang
	defer cancel()
	ds := synth(t)
	cfg := quickJob(t, "bsp", 2, 2)
	cfg.Normalize = job.NormalizeMean
	r, err := Train(ctx, cfg, Options{Data: ds}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := data.ChannelMean(ds.Train, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Normalize != job.NormalizeMean || !slices.Equal(r.ChannelMean, want) {
		t.Errorf("summary: normalize %q, mean %v, want %v", r.Normalize, r.ChannelMean, want)
	}
	if r.FinalAccuracy < 0.5 {
		t.Errorf("accuracy %.3f after two epochs of centred synthetic data", r.FinalAccuracy)
	}
	// A set normalized already is refused, not centred twice.
	norm, err := job.Limit(ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Train(ctx, cfg, Options{Data: norm}, nil); err == nil || !strings.Contains(err.Error(), "normalized already") {
		t.Errorf("a normalized set given: %v", err)
	}
}

// The launcher records, beside each evaluation's accuracy, its epoch
// (issue 18): a live run has an epoch axis and epochs to --targets as a
// virtual run does; no training loss, which would take CPU from the
// workers being measured.
func TestInprocRecordsEpochs(t *testing.T) {
	skipUnderRace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a guard against a hang
	defer cancel()
	cfg := quickJob(t, "bsp", 2, 1)
	cfg.Targets = []float64{0.3}
	// Paced to 10 ms an iteration (0.6 s a job): unpaced, the job can end
	// before the launcher's first evaluation during it.
	cfg.Timing = timing.WorkerSpec{Base: 10 * time.Millisecond, Speeds: []float64{1}}
	r, err := Train(ctx, cfg, Options{Data: synth(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := len(r.Curve)
	if n < 2 || len(r.CurveEpochs) != n || r.TrainLoss != nil {
		t.Fatalf("%d evaluations, epochs %v, training loss %v", n, r.CurveEpochs, r.TrainLoss)
	}
	// Two epochs of 2,000 samples in pushes of 32: the last evaluation is
	// at the job's end.
	if !slices.IsSorted(r.CurveEpochs) || r.CurveEpochs[n-1] < 2 || r.CurveEpochs[n-1] > 2.1 {
		t.Errorf("epochs %v, want rising to the job's 2", r.CurveEpochs)
	}
	if len(r.EpochsToTargets) != 1 || r.EpochsToTargets[0] == nil || *r.EpochsToTargets[0] > r.CurveEpochs[n-1] {
		t.Errorf("epochs to the 0.3 target %v (accuracy %v)", r.EpochsToTargets, r.Curve)
	}
}
