// Package record builds a live job's record: its run summary
// (summary.json, the schema of pacer train) from the coordinator's and the
// shards' counters, and its evaluations. The launcher and a hand-run
// job's shard 0 both build it here, so the two records cannot differ.
package record

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/pacer-ps/pacer/data"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/nn"
	"github.com/pacer-ps/pacer/runstats"
)

// Summary builds a live job's run summary (summary.json, the schema of
// pacer train) from the coordinator's counters cs, every shard's counters
// and the job's evaluations: the one place both the launcher and a
// hand-run job's shard 0 build it.
func Summary(d *job.Description, mode runstats.Mode, cs proto.CoordStats, shards []proto.ShardStats, ev *proto.Evaluations) *runstats.Run {
	j := &d.Job
	r := &runstats.Run{Paradigm: j.Spec.String(), Mode: mode, Model: j.Model, Workers: j.Workers, Shards: j.Shards,
		Seed: j.Seed, Pushes: cs.Pushes, Releases: cs.Releases, Seconds: cs.Seconds, MaxGap: cs.MaxGap,
		ControllerCalls: cs.ControllerCalls, ControllerSeconds: cs.ControllerSecs, WorkerPushes: cs.WorkerPushes,
		Sampling: j.Sampling, Normalize: j.Normalize, ChannelMean: ev.Mean}
	r.SetCurve(ev.Curve, j.Target)
	r.CurveEpochs, r.BatchLoss = ev.Epochs, ev.BatchLosses()
	r.Decisions = cs.Decisions
	r.SetTargets(j.Targets)
	if cs.Seconds > 0 {
		r.Throughput = float64(cs.Pushes) / cs.Seconds
	}
	r.WaitFraction, r.WorkerWait = cs.WaitFractions()
	for _, it := range cs.WorkerIter {
		if it.N > 0 {
			r.WorkerIterations = cs.WorkerIter
			break
		}
	}
	var n, sum int64
	for _, st := range shards {
		if st.PullReplies.N > 0 {
			r.ShardPullReplies = make([]runstats.IterStats, len(shards))
			for i, st := range shards {
				r.ShardPullReplies[i] = st.PullReplies
			}
			break
		}
	}
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

// Evaluate evaluates weights w of model m on test as of the coordinator's
// counters cs, of job d, records it in ev and returns the accuracy: the
// one evaluation of both the launcher and a hand-run job's shard 0.
func Evaluate(ev *proto.Evaluations, d *job.Description, m nn.Model, w []float32, test *data.Set, cs proto.CoordStats) float64 {
	acc := nn.Accuracy(m, w, test.X, test.Y, 500)
	ev.Add(cs, acc, d.Job.Batch, d.TrainN)
	return acc
}

// Write writes run as dir/summary.json, atomically (a reader never sees
// half a file), and returns its path.
func Write(dir string, run *runstats.Run) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(run, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "summary.json")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return "", err
	}
	return path, os.Rename(tmp, path)
}
