package compare

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pacer-ps/pacer/runstats"
)

// Describe says in one paragraph what the comparison ran, for a report
// whose scenario has no description of its own: the cluster, and what
// each run trained (or simulated) for. failures is the --fail list as
// given; horizonSeconds the virtual time every run trained for.
func (c *Config) Describe(failures string, horizonSeconds float64) string {
	j := &c.Job
	var b strings.Builder
	fmt.Fprintf(&b, "%d workers, %d shard(s)", j.Workers, j.Shards)
	if c.Mode.Live() {
		speeds := "no emulated speeds"
		if t := j.Timing; len(t.Speeds) > 0 || t.Jitter > 0 || t.Straggler.String() != "" {
			unit := "its own real step time"
			if t.Base > 0 {
				unit = t.Base.String()
			}
			speeds = fmt.Sprintf("workers stretched to speeds %v, jitter CV %g, stragglers %q in units of %s", t.Speeds, t.Jitter, t.Straggler, unit)
		}
		fmt.Fprintf(&b, ", the live server in %s mode on this machine (real wall time; %s); %s on %s, %g epochs, batch %d per worker, lr %g.",
			c.Mode, speeds, j.Model, j.Dataset, j.Epochs, j.Batch, j.LR)
		return b.String()
	}
	if len(j.Timing.Speeds) > 0 {
		sp := make([]string, len(j.Timing.Speeds))
		for i, v := range j.Timing.Speeds {
			sp[i] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		fmt.Fprintf(&b, ", speeds %s", strings.Join(sp, ","))
	}
	if j.Timing.Base > 0 {
		fmt.Fprintf(&b, ", base iteration %s", j.Timing.Base)
	}
	if j.Timing.Jitter > 0 {
		fmt.Fprintf(&b, ", jitter CV %g", j.Timing.Jitter)
	}
	if j.Timing.Straggler.String() != "" {
		fmt.Fprintf(&b, ", stragglers %s", j.Timing.Straggler)
	}
	if j.ServerDelay.String() != "" {
		fmt.Fprintf(&b, ", server delays %s", j.ServerDelay)
	}
	fmt.Fprintf(&b, ", %s", c.networkPhrase())
	if c.Mode == runstats.Sim {
		switch {
		case c.Duration > 0:
			fmt.Fprintf(&b, "; timing only (no model), %s of virtual time", c.Duration)
		case c.Iterations > 0:
			fmt.Fprintf(&b, "; timing only (no model), %d iterations per worker", c.Iterations)
		default:
			b.WriteString("; timing only (no model), 100 iterations per worker")
		}
		if failures != "" {
			fmt.Fprintf(&b, ", workers failing at %s", failures)
		}
		b.WriteString(".")
		return b.String()
	}
	if c.EpochsEach {
		fmt.Fprintf(&b, "; %s on %s, batch %d per worker, lr %g; every run trains for %g epoch(s), as a live run does.", j.Model, j.Dataset,
			j.Batch, j.LR, j.Epochs)
		return b.String()
	}
	// Virtual mode: every run trains until the same horizon, not for
	// the epochs (they only set the default horizon).
	fmt.Fprintf(&b, "; %s on %s, batch %d per worker, lr %g; every run trains for %s of virtual time", j.Model, j.Dataset,
		j.Batch, j.LR, time.Duration(horizonSeconds*float64(time.Second)))
	if c.Horizon == 0 {
		unit := "epochs"
		if j.Epochs == 1 {
			unit = "epoch"
		}
		fmt.Fprintf(&b, ", what the slowest paradigm needs for %g %s", j.Epochs, unit)
	}
	b.WriteString(".")
	return b.String()
}

// networkPhrase names the simulated network.
func (c *Config) networkPhrase() string {
	if c.Job.Network == nil {
		return "instant transfers (no network model: --network none)"
	}
	return "network " + c.Job.Network.String()
}

// WithNetwork is a scenario's own description followed by the simulated
// network it ran on (a preset's text does not know the command line's).
// The live modes move real bytes: their description is left as it is.
func (c *Config) WithNetwork(desc string) string {
	if c.Mode.Live() {
		return desc
	}
	if c.Job.Network == nil {
		return strings.TrimSpace(desc) + " Transfers are instant (no network model: --network none)."
	}
	return strings.TrimSpace(desc) + " Simulated network: " + c.Job.Network.String() + "."
}
