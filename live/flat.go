package live

import (
	"fmt"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/nn"
)

// This file: a job of a flat model (nn.ParseFlat: a user's own PyTorch
// network, N floats to pacer). Its shards start from initial weights the
// user made with the model's own initialization (pacer server --init, the
// file pacer.torch.save_flat writes), checked across shards by their
// digest in the job description; they apply the optimizer, checkpoint and
// restore as for any model. Shard 0 cannot evaluate it: the job's summary
// says so (runstats.Run.NoAccuracy) and the workers evaluate themselves.

// modelSize is the parameter count of the job's model and whether it is
// flat.
func modelSize(j *job.Config) (n int, flat bool, err error) {
	if n, flat, err = nn.ParseFlat(j.Model); err != nil || flat {
		return n, flat, err
	}
	m, err := job.NewModel(*j)
	if err != nil {
		return 0, false, err
	}
	return m.NumParams(), false, nil
}

// CheckInit refuses initial weights that are not the job's: a flat model
// needs them, of its size and with the description's digest; pacer's own
// models initialize from the seed and take none.
func CheckInit(j *job.Config, init []float32) error {
	n, flat, err := nn.ParseFlat(j.Model)
	switch {
	case err != nil:
		return err
	case !flat && (init != nil || j.InitSHA256 != ""):
		return fmt.Errorf("live: model %s initializes from the job's seed; initial weights (--init) are a flat model's (flat:n=N)", j.Model)
	case !flat:
		return nil
	case j.InitSHA256 == "":
		return fmt.Errorf("live: model %s: the job description has no init_sha256 (the digest of the initial weights every shard starts from)", j.Model)
	case init == nil:
		return fmt.Errorf("live: model %s needs its initial weights (--init FILE: pacer.torch.save_flat writes one; docs/python.md)", j.Model)
	case len(init) != n:
		return fmt.Errorf("live: initial weights of %d parameters; model %s has %d", len(init), j.Model, n)
	}
	if d := nn.FlatDigest(init); d != j.InitSHA256 {
		return fmt.Errorf("live: initial weights with sha256 %.12s…, the job's are %.12s… (give every shard of the job the same --init file)", d, j.InitSHA256)
	}
	return nil
}
