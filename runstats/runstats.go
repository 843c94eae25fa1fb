// Package runstats holds the record every pacer run produces — simulated,
// virtual-time or live — so that sim, train, compare and the report read and
// write one shape. It is plain data: JSON field names are part of the
// command-line contract of DESIGN.md and must not change.
package runstats

import (
	"encoding/json"
	"math"
	"slices"
)

// Run is one run's summary, written as summary.json (a list of them for
// compare). Fields that do not apply to a mode are left zero and omitted.
type Run struct {
	Paradigm string `json:"paradigm"` // the spec string as given, e.g. "ssp:s=3"
	// Decisions are --paradigm auto's, in order (sim and virtual modes).
	Decisions []Decision `json:"decisions,omitempty"`
	Mode      Mode       `json:"mode"`               // sim | virtual | inproc | tcp
	Scenario  string     `json:"scenario,omitempty"` // preset or file name, when there is one
	Model     string     `json:"model,omitempty"`    // mlp | cnn (training runs)
	Workers   int        `json:"workers"`
	Shards    int        `json:"shards"`
	Seed      uint64     `json:"seed"`

	Pushes   int64 `json:"pushes"`   // gradients pushed by workers (one per iteration)
	Updates  int64 `json:"updates"`  // applies summed over shards
	Dropped  int64 `json:"dropped"`  // gradients refused by a shard (stale or surplus)
	Releases int64 `json:"releases"` // gate releases

	// Withheld counts the gradient blocks a worker did not send because it
	// knew the shard would drop them (PSP: tagged below a version the shard
	// had answered with; paradigm.Spec.KnownDropped). Sim and virtual
	// modes; the live worker sends every block.
	Withheld int64 `json:"withheld,omitempty"`

	Seconds        float64   `json:"seconds"`                   // virtual or wall, per mode
	VirtualSeconds float64   `json:"virtual_seconds,omitempty"` // set by sim and virtual modes
	Throughput     float64   `json:"throughput"`                // pushes per second
	WaitFraction   float64   `json:"wait_fraction"`             // mean share of worker time held
	WorkerWait     []float64 `json:"worker_wait_fraction"`      // per worker share of time held
	WorkerPushes   []int64   `json:"worker_pushes"`             // per worker pushes
	MaxGap         int64     `json:"max_gap"`                   // largest clock gap seen at a release

	StalenessMean  float64   `json:"staleness_mean"`
	StalenessMax   int64     `json:"staleness_max"`
	StalenessHist  []int64   `json:"staleness_hist"` // all shards; index = staleness
	ShardStaleness [][]int64 `json:"shard_staleness_hist,omitempty"`

	// Network is the simulated network ("" when transfers were instant);
	// ShardLinkIn and ShardLinkOut are each shard link's share of the run
	// spent receiving pushes and sending pulls.
	Network      string    `json:"network,omitempty"`
	ShardLinkIn  []float64 `json:"shard_link_in,omitempty"`
	ShardLinkOut []float64 `json:"shard_link_out,omitempty"`
	// TimeSplit is, with a network, where the workers' time went: shares
	// (mean over workers) computing, pushing (until the coordinator has
	// counted the push), held by the gate, pulling over the network, and
	// held at a shard during a pull (for a version, an apply or a delay).
	TimeSplit *TimeSplit `json:"time_split,omitempty"`

	// ControllerCalls counts DSSP controller runs or ElasticBSP barrier searches.
	ControllerCalls int64 `json:"controller_calls,omitempty"`
	// ControllerSeconds is the wall time those calls took on this machine
	// (PARADIGMS.md: record controller/ZipLine time). It is shown by the
	// commands and the report but kept out of summary.json, which must be
	// byte-for-byte the same for a seed.
	ControllerSeconds float64 `json:"-"`
	// SearchSeconds is the simulated time ElasticBSP's barrier searches
	// held the released workers (sim.Config.SearchCost), summed over the
	// barriers.
	SearchSeconds float64 `json:"search_seconds,omitempty"`

	FinalAccuracy float64      `json:"final_accuracy,omitempty"`
	BestAccuracy  float64      `json:"best_accuracy,omitempty"`
	Curve         [][2]float64 `json:"curve,omitempty"` // [seconds, test accuracy]
	Target        float64      `json:"target,omitempty"`
	// TimeToTarget is when the curve first crossed Target, interpolated
	// linearly between the two evaluations around the crossing (TimeTo);
	// nil when never reached.
	TimeToTarget *float64 `json:"time_to_target,omitempty"`
	// CurveEpochs are the epochs (all workers' samples over the training
	// set) at the curve's evaluations, where the mode records them
	// (virtual time); TrainLoss is the evaluated weights' mean
	// cross-entropy on a fixed training subset (its first TrainLossSamples)
	// at each evaluation; null in JSON where it was not finite (a run
	// that diverged: JSON has no NaN), read back as NaN.
	CurveEpochs []float64 `json:"curve_epochs,omitempty"`
	TrainLoss   Losses    `json:"train_loss,omitempty"`
	// BatchLoss is, at each evaluation, the mean mini-batch training loss
	// the workers computed (live: reported with their pushes) since the
	// previous evaluation: what any training loop logs, free because the
	// gradient computes it anyway. null where no mini-batch was reported
	// since (the initial evaluation; a live worker that does not report
	// its loss, such as an older client) or where it was not finite (a run
	// that diverged); nil when none was. It is the
	// loss of the weights each worker read, on its own batches, so it is
	// noisier than, and lags, TrainLoss.
	BatchLoss []*float64 `json:"batch_loss,omitempty"`
	// Targets are the accuracies of --targets; TimesToTargets and
	// EpochsToTargets are their first crossings, interpolated as TimeTo
	// (null: never reached; epochs only where CurveEpochs are recorded).
	Targets         []float64  `json:"targets,omitempty"`
	TimesToTargets  []*float64 `json:"times_to_targets,omitempty"`
	EpochsToTargets []*float64 `json:"epochs_to_targets,omitempty"`
	// SamplesLearnt is, in virtual time, the share of the training set
	// that was in at least one applied gradient. Below 1 when a worker's
	// gradients are always dropped and it samples its own shard (its data
	// is never learnt from), or when the run is too short to draw every
	// sample; nil where it is not measured (sim and the live modes).
	SamplesLearnt *float64 `json:"samples_learnt,omitempty"`
	// Sampling is the job's sampling mode, "global" (else the default,
	// shard).
	Sampling string `json:"sampling,omitempty"`
	// Normalize is the job's normalization, "mean" (else none), and
	// ChannelMean the per-channel mean it subtracted (job.Config.Normalize),
	// which whoever evaluates the trained weights elsewhere must subtract
	// too.
	Normalize   string    `json:"normalize,omitempty"`
	ChannelMean []float64 `json:"channel_mean,omitempty"`
	// NoAccuracy says why a run that trained has no accuracy (no curve):
	// a live job whose shard 0 could not evaluate the model (a flat model,
	// a user's own network that its workers evaluate; no test set on the
	// machine). Empty when there is an accuracy, or none applies (sim).
	NoAccuracy string `json:"no_accuracy,omitempty"`
	// Interrupted marks a live run stopped before it finished (Ctrl-C,
	// SIGTERM): the counters and the curve are what was measured so far.
	Interrupted bool `json:"interrupted,omitempty"`

	// WorkerIterations are a live run's per-worker iteration (compute)
	// times, the input of pacer profile.
	WorkerIterations []IterStats `json:"worker_iterations,omitempty"`
	// ShardPullReplies are, live, each shard's times to answer a worker's
	// pull with its block (pacer profile fits the server delays from them).
	ShardPullReplies []IterStats `json:"shard_pull_replies,omitempty"`
}

// IterStats summarises one worker's iteration times: their count, mean
// (seconds) and the mean and sample standard deviation of their natural
// logarithms (a log-normal's parameters).
type IterStats struct {
	N       int64   `json:"n"`
	Mean    float64 `json:"mean_seconds"`
	LogMean float64 `json:"log_mean"`
	LogSD   float64 `json:"log_sd"`
	// Hist counts the iterations by time, as [bucket, count] pairs of the
	// non-empty buckets in bucket order; bucket b holds the times in
	// [IterBucketLow(b), IterBucketLow(b+1)). A straggler tail shows there,
	// not in the moments.
	Hist [][2]int64 `json:"hist,omitempty"`
}

// Iteration time buckets: IterBucketsPerOctave per doubling from 1 µs, the
// first and last open-ended.
const (
	IterBucketsPerOctave = 16
	IterBuckets          = 32 * IterBucketsPerOctave // 1 µs to 2³² µs (71 minutes)
)

// IterBucket is the bucket of an iteration of d seconds (d > 0).
func IterBucket(d float64) int {
	b := math.Floor(math.Log2(d*1e6) * IterBucketsPerOctave)
	return int(max(0, min(b, IterBuckets-1)))
}

// IterBucketLow is the shortest time (seconds) in bucket b.
func IterBucketLow(b int) float64 { return math.Exp2(float64(b)/IterBucketsPerOctave) * 1e-6 }

// IterAcc accumulates iteration times into IterStats.
type IterAcc struct {
	N                  int64
	Sum, SumLog, SumL2 float64
	Hist               [IterBuckets]uint32
}

// Add counts one iteration of d seconds (d > 0; others are ignored).
func (a *IterAcc) Add(d float64) {
	if !(d > 0) {
		return
	}
	l := math.Log(d)
	a.N++
	a.Sum += d
	a.SumLog += l
	a.SumL2 += l * l
	if b := IterBucket(d); a.Hist[b] < math.MaxUint32 {
		a.Hist[b]++
	}
}

// Stats are the accumulated figures.
func (a IterAcc) Stats() IterStats {
	if a.N == 0 {
		return IterStats{}
	}
	n := float64(a.N)
	st := IterStats{N: a.N, Mean: a.Sum / n, LogMean: a.SumLog / n}
	if a.N > 1 {
		v := (a.SumL2 - a.SumLog*a.SumLog/n) / (n - 1)
		st.LogSD = math.Sqrt(max(v, 0))
	}
	for b, c := range a.Hist {
		if c > 0 {
			st.Hist = append(st.Hist, [2]int64{int64(b), int64(c)})
		}
	}
	return st
}

// Progress is a live run as it goes, as its launcher reports it after
// every test evaluation.
type Progress struct {
	Epoch        float64 // epochs done, all workers together
	Pushes       int64
	Target       int64
	Seconds      float64 // wall time since the first worker joined
	Accuracy     float64 // test accuracy of the shards' weights
	Throughput   float64 // pushes per second
	WaitFraction float64 // mean share of worker time spent held
	Live         int     // workers the coordinator counts as live
}

// TimeSplit is Run.TimeSplit; the five shares add up to 1.
type TimeSplit struct {
	Compute float64 `json:"compute"`
	Push    float64 `json:"push"`
	Gate    float64 `json:"gate"`
	Pull    float64 `json:"pull"`
	Server  float64 `json:"server"`
}

// MarshalJSON writes final_accuracy and best_accuracy for every run that
// has an accuracy curve, even when they are 0 (a model that never
// classified a test sample right is a result, not a missing field); runs
// without a curve (sim) leave them out.
func (r Run) MarshalJSON() ([]byte, error) {
	type plain Run // no methods: no recursion
	out := struct {
		plain
		FinalAccuracy *float64 `json:"final_accuracy,omitempty"`
		BestAccuracy  *float64 `json:"best_accuracy,omitempty"`
	}{plain: plain(r)}
	if slices.ContainsFunc(r.BatchLoss, func(v *float64) bool { return v != nil && !finite(*v) }) {
		out.BatchLoss = make([]*float64, len(r.BatchLoss))
		for i, v := range r.BatchLoss {
			if v != nil && finite(*v) {
				out.BatchLoss[i] = v
			}
		}
	}
	if len(r.Curve) > 0 {
		out.FinalAccuracy, out.BestAccuracy = &r.FinalAccuracy, &r.BestAccuracy
	}
	return json.Marshal(out)
}

// SetCurve records the accuracy curve and what follows from it: final and
// best accuracy, and the time to target (target 0: none).
func (r *Run) SetCurve(curve [][2]float64, target float64) {
	r.Curve = curve
	r.FinalAccuracy, r.BestAccuracy, r.Target, r.TimeToTarget = 0, 0, 0, nil
	if len(curve) > 0 {
		r.FinalAccuracy = curve[len(curve)-1][1]
	}
	for _, p := range curve {
		r.BestAccuracy = max(r.BestAccuracy, p[1])
	}
	if target > 0 {
		r.Target = target
		if t, ok := r.TimeTo(target); ok {
			r.TimeToTarget = &t
		}
	}
}

// TimeTo returns when the curve first reaches acc, and whether it did.
// Evaluations are minutes of virtual time apart, so the first evaluation at
// or above acc overstates the time by up to one interval, differently for
// each paradigm (grid noise): the crossing is interpolated linearly between
// that evaluation and the one before it.
func (r *Run) TimeTo(acc float64) (float64, bool) {
	k, f, ok := r.crossing(acc)
	if !ok {
		return 0, false
	}
	if k == 0 {
		return r.Curve[0][0], true
	}
	return r.Curve[k-1][0] + f*(r.Curve[k][0]-r.Curve[k-1][0]), true
}

// EpochTo is TimeTo in epochs: the epoch at which the curve first reaches
// acc, interpolated alike, and whether it did; false too where the run
// records no epochs (CurveEpochs).
func (r *Run) EpochTo(acc float64) (float64, bool) {
	if len(r.CurveEpochs) != len(r.Curve) {
		return 0, false
	}
	k, f, ok := r.crossing(acc)
	if !ok {
		return 0, false
	}
	if k == 0 {
		return r.CurveEpochs[0], true
	}
	return r.CurveEpochs[k-1] + f*(r.CurveEpochs[k]-r.CurveEpochs[k-1]), true
}

// crossing is the first evaluation k at or above acc and the fraction f of
// the way from evaluation k−1 where the line between them crosses it.
func (r *Run) crossing(acc float64) (int, float64, bool) {
	for k, p := range r.Curve {
		if p[1] < acc {
			continue
		}
		if k == 0 {
			return 0, 0, true
		}
		q := r.Curve[k-1] // below acc, so p[1] > q[1]
		return k, (acc - q[1]) / (p[1] - q[1]), true
	}
	return 0, 0, false
}

// TrainLossSamples is how many training samples (the first) the training
// loss is measured on at each evaluation.
const TrainLossSamples = 1000

// TrainLossBatch is the batch the training loss is computed in (nn.Loss):
// one value in every mode, so the losses of a virtual and a live run of a
// job are the same computation.
const TrainLossBatch = 250

// SetTargets records when the curve first reached each of targets, in
// time and, where CurveEpochs are recorded, in epochs.
func (r *Run) SetTargets(targets []float64) {
	r.Targets, r.TimesToTargets, r.EpochsToTargets = nil, nil, nil
	if len(targets) == 0 {
		return
	}
	r.Targets = append([]float64(nil), targets...)
	epochs := len(r.CurveEpochs) == len(r.Curve)
	for _, a := range targets {
		var t, e *float64
		if tv, ok := r.TimeTo(a); ok {
			t = &tv
			if ev, ok := r.EpochTo(a); ok {
				e = &ev
			}
		}
		r.TimesToTargets = append(r.TimesToTargets, t)
		if epochs {
			r.EpochsToTargets = append(r.EpochsToTargets, e)
		}
	}
}

// TimeToMethod says in words how TimeTo reads a curve; reports quote it.
const TimeToMethod = "interpolated linearly between the two evaluations around the first crossing"

// Decision is one of --paradigm auto's decisions: at virtual time At, with
// Current in force, the candidate predicted best, its predicted gain over
// staying (the switch's cost paid), and whether the job switched to it.
type Decision struct {
	AtSeconds float64 `json:"at_s"`
	Current   string  `json:"current"`
	Best      string  `json:"best"`
	Gain      float64 `json:"gain"`
	Switch    bool    `json:"switch"`
	// Noise is the gradient noise scale the decision read, in gradients
	// (virtual time measures it; 0: not measured).
	Noise float64 `json:"noise_gradients,omitempty"`
}

// Losses are losses at evaluations that may not be finite: a run that
// diverged has a NaN or infinite loss, which JSON cannot hold. They are
// written as null there and read back as NaN.
type Losses []float64

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// MarshalJSON writes each loss, null where it is not finite.
func (l Losses) MarshalJSON() ([]byte, error) {
	if l == nil {
		return []byte("null"), nil
	}
	out := make([]*float64, len(l))
	for i := range l {
		if finite(l[i]) {
			out[i] = &l[i]
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads losses, null as NaN.
func (l *Losses) UnmarshalJSON(b []byte) error {
	var in []*float64
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	if in == nil {
		*l = nil
		return nil
	}
	*l = make(Losses, len(in))
	for i, v := range in {
		(*l)[i] = math.NaN()
		if v != nil {
			(*l)[i] = *v
		}
	}
	return nil
}
