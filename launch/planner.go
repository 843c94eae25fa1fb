package launch

import (
	"github.com/pacer-ps/pacer/auto"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live"
	"github.com/pacer-ps/pacer/paradigm"
)

// Planner is --paradigm auto's decision for a live job of d (nil for any
// other paradigm): package auto's, predicting with the job's cluster (its
// network, when it has one, moving the model's bytes). Shard 0 calls it;
// pacer server hands it in as this launcher does.
func Planner(d *job.Description) (live.Replanner, error) {
	j := &d.Job
	if j.Spec.Kind != paradigm.Auto {
		return nil, nil
	}
	params := 0
	if j.Network != nil {
		m, err := job.NewModel(*j)
		if err != nil {
			return nil, err
		}
		params = m.NumParams()
	}
	return auto.LivePlanner(j.Spec, j.Shards, j.Network, params, j.Seed), nil
}
