package live

import (
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/runstats"
)

// Summary builds a live job's run summary (summary.json, the schema of
// pacer train) from the coordinator's counters cs, every shard's counters
// and the accuracy curve: the one place both the launcher and a hand-run
// job's shard 0 build it. mean is the per-channel mean the evaluation
// subtracted from the test images (the job's Normalize; nil: none).
func Summary(d *job.Description, mode string, cs CoordStats, shards []ShardStats, curve [][2]float64, mean []float64) *runstats.Run {
	j := &d.Job
	r := &runstats.Run{Paradigm: j.Spec.String(), Mode: mode, Model: j.Model, Workers: j.Workers, Shards: j.Shards,
		Seed: j.Seed, Pushes: cs.Pushes, Releases: cs.Releases, Seconds: cs.Seconds, MaxGap: cs.MaxGap,
		ControllerCalls: cs.ControllerCalls, ControllerSeconds: cs.ControllerSecs, WorkerPushes: cs.WorkerPushes,
		Sampling: j.Sampling, Normalize: j.Normalize, ChannelMean: mean}
	r.SetCurve(curve, j.Target)
	r.SetTargets(j.Targets)
	if cs.Seconds > 0 {
		r.Throughput = float64(cs.Pushes) / cs.Seconds
	}
	r.WaitFraction, r.WorkerWait = WaitFractions(cs)
	for _, it := range cs.WorkerIter {
		if it.N > 0 {
			r.WorkerIterations = cs.WorkerIter
			break
		}
	}
	var n, sum int64
	for _, st := range shards {
		r.Updates += st.Updates
		r.Dropped += st.Dropped
		r.ShardStaleness = append(r.ShardStaleness, st.Staleness)
		for s, k := range st.Staleness {
			for len(r.StalenessHist) <= s {
				r.StalenessHist = append(r.StalenessHist, 0)
			}
			r.StalenessHist[s] += k
			n += k
			sum += int64(s) * k
			if k > 0 {
				r.StalenessMax = max(r.StalenessMax, int64(s))
			}
		}
	}
	if n > 0 {
		r.StalenessMean = float64(sum) / float64(n)
	}
	return r
}

// WaitFractions is the workers' mean share of time held, and each one's.
func WaitFractions(cs CoordStats) (mean float64, per []float64) {
	n := 0
	for p := range cs.WorkerWait {
		tot := cs.WorkerWait[p] + cs.WorkerBusy[p]
		f := 0.0
		if tot > 0 {
			f = cs.WorkerWait[p] / tot
			mean += f
			n++
		}
		per = append(per, f)
	}
	if n > 0 {
		mean /= float64(n)
	}
	return mean, per
}
