package train

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/data"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/sim"
	"github.com/pacer-ps/pacer/timing"
)

// fashion returns a small Fashion-MNIST subset, or skips when the files are
// absent (CI installs them; see scripts/setup).
func fashion(t *testing.T, train, test int) *data.Dataset {
	t.Helper()
	ds, err := job.Data(job.Config{Dataset: "fashion-mnist", TrainLimit: train, TestLimit: test})
	if err != nil {
		t.Skipf("Fashion-MNIST not available: %v", err)
	}
	return ds
}

func spec(s string) paradigm.Spec {
	sp, err := paradigm.Parse(s)
	if err != nil {
		panic(err)
	}
	return sp
}

func quick(s string, k int) job.Config {
	return job.Config{Spec: spec(s), Workers: k, Shards: 2, Epochs: 1, EvalEvery: 0.5, Seed: 5,
		Timing: timing.WorkerSpec{Speeds: []float64{1, 1.7, 1.2}, Jitter: 0.2}}
}

// Issue 5: same seed, same summary.json, byte for byte.
func TestVirtualIsDeterministic(t *testing.T) {
	ds := fashion(t, 3000, 500)
	for _, s := range []string{"dssp:sl=1,su=6", "psp:c=2,b=0.5,t2=300ms"} {
		cfg := quick(s, 3)
		cfg.ServerDelay = timing.MustServerDelay("spike:p=0.05,delay=2s")
		var out [2][]byte
		for i := range out {
			r, err := Virtual(cfg, ds, nil)
			if err != nil {
				t.Fatal(err)
			}
			out[i], _ = json.Marshal(r)
		}
		if !bytes.Equal(out[0], out[1]) {
			t.Fatalf("%s: two runs with one seed differ", s)
		}
	}
}

// PARADIGMS.md's reductions hold in the weights, not only in the schedule:
// identical accuracy curves on a test set, bit for bit.
func TestReductionsInTheWeights(t *testing.T) {
	ds := fashion(t, 3000, 1000)
	k := 3
	for _, pair := range [][2]string{
		{"bsp", "backup:b=0"},
		{"bsp", fmt.Sprintf("psp:c=%d,b=1", k)},
		{"asp", fmt.Sprintf("softsync:n=%d,lr=const", k)},
		{"asp", "delay:d=0"},
	} {
		var curves [2][][2]float64
		for i, s := range pair {
			cfg := quick(s, k)
			cfg.FullAsyncLR = true // softsync's α₀ is per gradient; give ASP the same
			r, err := Virtual(cfg, ds, nil)
			if err != nil {
				t.Fatal(err)
			}
			curves[i] = r.Curve
		}
		if !slices.Equal(curves[0], curves[1]) {
			t.Errorf("%s and %s: curves differ:\n%v\n%v", pair[0], pair[1], curves[0], curves[1])
		}
	}
}

// One worker learns Fashion-MNIST through the workers' code path.
func TestOneWorkerLearns(t *testing.T) {
	ds := fashion(t, 10000, 2000)
	r, err := Virtual(job.Config{Workers: 1, Epochs: 1, Seed: 1, Target: 0.7}, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.FinalAccuracy < 0.75 || r.TimeToTarget == nil || r.Curve[0][1] > 0.2 {
		t.Fatalf("final accuracy %.3f, curve %v", r.FinalAccuracy, r.Curve)
	}
}

// The staleness-aware paper's point (§8): with the literal per-gradient α₀,
// λ-softsync (= ASP) takes λ times BSP's step and fails where α₀/τ trains.
// Plain SGD, as in the paper's formulas: explicit momentum on top of stale
// gradients oscillates early (staleness itself acts as momentum).
func TestStalenessAwareRateRescuesSoftsync(t *testing.T) {
	ds := fashion(t, 20000, 1000)
	acc := map[string]float64{}
	for _, s := range []string{"bsp", "softsync:n=8,lr=const", "softsync:n=8"} {
		cfg := job.Config{Spec: spec(s), Workers: 8, Epochs: 2, Seed: 2, LR: 0.2, Momentum: -1, Timing: timing.WorkerSpec{Jitter: 0.1}}
		r, err := Virtual(cfg, ds, nil)
		if err != nil {
			t.Fatal(err)
		}
		acc[s] = r.FinalAccuracy
	}
	// Paper: constant α₀ ends near chance (90% error); α₀/τ matches hardsync.
	if acc["softsync:n=8,lr=const"] > 0.2 || acc["softsync:n=8"] < acc["bsp"]-0.05 {
		t.Fatalf("accuracies %v: expected α₀/τ to match BSP and constant α₀ to fail", acc)
	}
}

func TestVirtualRejectsBadJobs(t *testing.T) {
	ds, _ := data.NewSynthetic(data.SyntheticConfig{Train: 100, Test: 20})
	for _, cfg := range []job.Config{
		{Workers: -1},
		{Spec: spec("backup:b=3"), Workers: 3},
		{Model: "resnet"},
		{Shards: 1 << 30},
		{LR: -1},
	} {
		if _, err := Virtual(cfg, ds, nil); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

// ElasticBSP local-only (PARADIGMS.md §5): with identical workers every
// superstep is one push and it is BSP, bit for bit; with unequal workers
// the workers step their own copies between barriers and the averaged
// model still learns about as well as BSP.
func TestElasticLocalOnly(t *testing.T) {
	ds := fashion(t, 3000, 1000)
	var curves [2][][2]float64
	for i, s := range []string{"bsp", "elastic:r=4,apply=local"} {
		cfg := quick(s, 3)
		cfg.Timing = timing.WorkerSpec{}
		cfg.SearchCost = -1 // the barrier search free: BSP has none to charge
		r, err := Virtual(cfg, ds, nil)
		if err != nil {
			t.Fatal(err)
		}
		curves[i] = r.Curve
	}
	if !slices.Equal(curves[0], curves[1]) {
		t.Fatalf("identical workers: local-only differs from BSP:\n%v\n%v", curves[0], curves[1])
	}
	ds = fashion(t, 10000, 1000)
	acc, updates := map[string]float64{}, map[string]int64{}
	for _, s := range []string{"bsp", "elastic:r=4,apply=local"} {
		cfg := quick(s, 3)
		cfg.Epochs = 2
		r, err := Virtual(cfg, ds, nil)
		if err != nil {
			t.Fatal(err)
		}
		acc[s], updates[s] = r.FinalAccuracy, r.Updates
	}
	t.Log(acc, updates)
	if acc["elastic:r=4,apply=local"] < max(0.7, acc["bsp"]-0.08) || updates["elastic:r=4,apply=local"] >= updates["bsp"] {
		t.Fatalf("accuracies %v, updates %v: want local-only near BSP with fewer, longer supersteps", acc, updates)
	}
}

// barrierCheck watches a local-only run: after every barrier's apply the
// shards' weights must be the mean of the workers' local models (plain
// SGD, constant rate), which only holds if the workers really stepped
// their own copies.
type barrierCheck struct {
	*learner
	diffs []float64 // per apply on the last shard: max |w − mean(local)|
	multi int       // applies with more gradients than workers
}

func (c *barrierCheck) Apply(now time.Duration, i int, a paradigm.Apply) {
	c.learner.Apply(now, i, a)
	if i != len(c.ranges)-1 {
		return
	}
	if len(a.Grads) > c.cfg.Workers {
		c.multi++
	}
	worst := 0.0
	for j, w := range c.w {
		var m float64
		for p := range c.local {
			m += float64(c.local[p][j])
		}
		worst = max(worst, math.Abs(float64(w)-m/float64(len(c.local))))
	}
	c.diffs = append(c.diffs, worst)
}

func TestElasticLocalOnlyAveragesLocalModels(t *testing.T) {
	ds := fashion(t, 3000, 200)
	cfg := quick("elastic:r=4,apply=local", 3)
	cfg.Momentum = -1
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	l, err := newLearner(cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &barrierCheck{learner: l}
	if _, err := sim.Run(sim.Config{Spec: cfg.Spec, Workers: cfg.Workers, Shards: cfg.Shards, Timing: cfg.Timing,
		Iterations: 20, Seed: cfg.Seed, Learner: c}); err != nil {
		t.Fatal(err)
	}
	// The last apply is the stop's partial superstep: not every worker
	// contributed, so it is not the mean of all three copies.
	barriers := c.diffs[:len(c.diffs)-1]
	if len(barriers) < 5 || c.multi == 0 {
		t.Fatalf("%d barriers, %d with local steps: the scenario does not exercise local-only", len(barriers), c.multi)
	}
	for k, d := range barriers {
		if d > 1e-5 {
			t.Fatalf("barrier %d: shards differ from the mean of the local models by %g", k+1, d)
		}
	}
}

// Virtual time records the mean mini-batch loss since the previous
// evaluation, as the live modes do from the workers' reports: none at the
// initial evaluation (no batch yet), one at every later one, falling as
// the model learns, and near the evaluated weights' training loss.
func TestVirtualBatchLoss(t *testing.T) {
	ds := fashion(t, 3000, 500)
	cfg := quick("asp", 3)
	cfg.EvalEvery = 0.25
	r, err := Virtual(cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.BatchLoss) != len(r.Curve) || len(r.Curve) < 4 || r.BatchLoss[0] != nil {
		t.Fatalf("%d batch losses for %d evaluations (the first nil: %v): want one each, none at the first", len(r.BatchLoss), len(r.Curve), r.BatchLoss[0] == nil)
	}
	for k, l := range r.BatchLoss[1:] {
		if l == nil || !(*l > 0) {
			t.Fatalf("evaluation %d: no positive batch loss", k+2)
		}
		t.Logf("evaluation %d: batch loss %.3f, training loss %.3f then %.3f", k+2, *l, r.TrainLoss[k], r.TrainLoss[k+1])
		// The batches since the previous evaluation were computed on the
		// weights between the two evaluations, so their mean lies near
		// those weights' loss on the training subset.
		if lo, hi := min(r.TrainLoss[k], r.TrainLoss[k+1]), max(r.TrainLoss[k], r.TrainLoss[k+1]); *l < 0.7*lo || *l > 1.3*hi {
			t.Errorf("evaluation %d: batch loss %.3f, training loss %.3f then %.3f", k+2, *l, r.TrainLoss[k], r.TrainLoss[k+1])
		}
	}
	if first, last := *r.BatchLoss[1], *r.BatchLoss[len(r.BatchLoss)-1]; !(last < 0.8*first) {
		t.Errorf("batch loss %.3f at the second evaluation, %.3f at the last: want it to fall", first, last)
	}
}
