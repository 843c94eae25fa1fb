package live

import (
	"errors"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/paradigm"
)

// CheckJob refuses a job the live runtime cannot run as asked: CheckSpec's
// paradigms, and the recipes only virtual time carries out.
func CheckJob(j *job.Config) error {
	if err := CheckSpec(j.Spec); err != nil {
		return err
	}
	return nil
}

// CheckSpec refuses the options whose decisions need every shard in one
// process: the simulator and virtual mode run them.
func CheckSpec(sp paradigm.Spec) error {
	if sp.SharedSet {
		return errors.New("live: backup set=shared needs every shard in one process; live modes support set=shard (sim and virtual mode run set=shared)")
	}
	if sp.Kind == paradigm.Auto {
		return errors.New("live: --paradigm auto runs in sim and virtual modes for now: the live coordinator does not switch paradigms yet (docs/auto.md)")
	}
	return nil
}
