package job

import "github.com/pacer-ps/pacer/data"

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
