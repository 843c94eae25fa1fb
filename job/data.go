package job

import (
	"github.com/pacer-ps/pacer/data"
	"github.com/pacer-ps/pacer/nn"
)

// Data loads the job's data set, cut to its limits: the one loader of
// every driver (virtual time, the launcher, a live worker).
func Data(cfg Config) (*data.Dataset, error) {
	ds, err := data.Load(cfg.Dataset, cfg.DataDir)
	if err != nil {
		return nil, err
	}
	return Limit(ds, cfg), nil
}

// Limit cuts ds to the job's limits (TrainLimit, TestLimit); ds itself is
// not changed, so a preloaded set can be shared.
func Limit(ds *data.Dataset, cfg Config) *data.Dataset {
	out := *ds
	if cfg.TrainLimit > 0 && cfg.TrainLimit < ds.Train.N {
		out.Train = ds.Train.Subset(cfg.TrainLimit)
	}
	if cfg.TestLimit > 0 && cfg.TestLimit < ds.Test.N {
		out.Test = ds.Test.Subset(cfg.TestLimit)
	}
	return &out
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
