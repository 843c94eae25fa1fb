package job

import (
	"errors"
	"fmt"

	"github.com/pacer-ps/pacer/data"
	"github.com/pacer-ps/pacer/nn"
)

// Data loads the job's data set, cut to its limits and normalized as the
// job says: the one loader of every driver (virtual time, the launcher, a
// live worker, shard 0's evaluation).
func Data(cfg Config) (*data.Dataset, error) {
	ds, err := data.Load(cfg.Dataset, cfg.DataDir)
	if err != nil {
		return nil, err
	}
	return Limit(ds, cfg)
}

// Limit cuts ds, as loaded, to the job's limits (TrainLimit, TestLimit)
// and, with Normalize "mean", subtracts the cut training set's per-channel
// mean from both splits (data.ChannelMean: every process holding the same
// files and limit computes the same bits, so the mean need not travel with
// the job). ds itself is not changed, so a preloaded set can be shared; a
// set that was normalized already is refused, as its mean would be taken
// twice.
func Limit(ds *data.Dataset, cfg Config) (*data.Dataset, error) {
	if ds.Mean != nil {
		return nil, errors.New("job: the data set given is normalized already: give the set as loaded")
	}
	out := *ds
	if cfg.TrainLimit > 0 && cfg.TrainLimit < ds.Train.N {
		out.Train = ds.Train.Subset(cfg.TrainLimit)
	}
	if cfg.TestLimit > 0 && cfg.TestLimit < ds.Test.N {
		out.Test = ds.Test.Subset(cfg.TestLimit)
	}
	if cfg.Normalize != NormalizeMean {
		return &out, nil
	}
	im, err := data.ImageOf(cfg.Dataset)
	if err != nil {
		return nil, err
	}
	mean, err := data.ChannelMean(out.Train, im.C)
	if err != nil {
		return nil, fmt.Errorf("job: --normalize mean: %w", err)
	}
	for _, s := range []**data.Set{&out.Train, &out.Test} {
		if *s, err = (*s).SubtractMean(mean); err != nil {
			return nil, fmt.Errorf("job: --normalize mean: %w", err)
		}
	}
	out.Mean = mean
	return &out, nil
}

// CheckNormalized refuses a data set handed to a driver (rather than loaded
// by it) that is not normalized as cfg says: training on pixels/255 a job
// that asked for mean subtraction, or the other way round, would be another
// job under the same name.
func CheckNormalized(ds *data.Dataset, cfg Config) error {
	switch want := cfg.Normalize == NormalizeMean; {
	case want && ds.Mean == nil:
		return errors.New("job: the job subtracts the training set's mean (--normalize mean) but the data set given is as loaded: load it with job.Data")
	case !want && ds.Mean != nil:
		return errors.New("job: the data set given has its mean subtracted but the job does not (--normalize none)")
	}
	return nil
}

// NewModel builds the job's model (Model) for the shape of its data set's
// samples (data.ImageOf: 1×28×28 for Fashion-MNIST, 3×32×32 for CIFAR-10),
// known from the data set's name: every driver, server and worker builds it
// so, and they agree on the parameter count without reading the files. An
// empty Model or Dataset means the default, as after Fill.
func NewModel(cfg Config) (nn.Model, error) {
	name, set := cfg.Model, cfg.Dataset
	if name == "" {
		name = DefaultModel
	}
	if set == "" {
		set = DefaultDataset
	}
	im, err := data.ImageOf(set)
	if err != nil {
		return nil, err
	}
	return nn.New(name, ImageShape(im))
}

// ImageShape is a data set's sample shape as the models take it.
func ImageShape(im data.Image) nn.Shape { return nn.Shape{C: im.C, H: im.H, W: im.W} }
