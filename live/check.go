package live

import (
	"errors"
	"fmt"

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
		for _, c := range sp.Among() {
			if err := CheckSpec(c); err != nil {
				return fmt.Errorf("auto's candidate %s: %w", c, err)
			}
			// The switch drains workers at the gate and flushes whole
			// rounds: partial pulls (the worker reads replies into its
			// parameters only when every block is pulled), a fixed delay's
			// queue and local supersteps are not carried across it.
			switch {
			case c.Kind == paradigm.PSP, c.Kind == paradigm.Delay, c.LocalSteps():
				return fmt.Errorf("live: auto's candidate %s: live modes switch among bsp, asp, ssp, dssp, elastic (apply=global), backup and softsync (sim and virtual mode take every paradigm)", c)
			}
		}
	}
	return nil
}
