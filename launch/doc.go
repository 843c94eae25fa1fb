// Package launch runs a whole live job on one machine: the shards, the
// coordinator and the workers of package live as goroutines over the
// in-process transport (Options.Mode runstats.Inproc) or as separate `pacer
// server` and `pacer worker` processes on loopback (runstats.TCP). It watches the
// job through live's Observer client (the coordinator's counters, the
// shards' weights for the test accuracy), injects the faults it is asked
// for, and returns the job's runstats summary.
//
// It is the runtime's launcher and nothing else: it imports live, and live
// never imports it, so the runtime runs the same under a cluster manager
// (docs/deploy.md) as under Train.
package launch
