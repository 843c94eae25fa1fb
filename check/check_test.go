package check

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/launch"
	"github.com/pacer-ps/pacer/network"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/timing"
)

func iv(v float64) compare.Interval { return compare.Interval{Median: &v} }

func fixture(thr, wait map[string]float64, order ...string) *compare.Summary {
	s := &compare.Summary{Seeds: []uint64{1}}
	for _, p := range order {
		s.Paradigms = append(s.Paradigms, compare.ParadigmStats{Paradigm: p, Throughput: iv(thr[p]), WaitFraction: iv(wait[p]), StalenessMean: iv(1)})
		s.Runs = append(s.Runs, runstats.Run{Paradigm: p, StalenessMax: 3})
	}
	return s
}

// Join: ratios, gaps, the extra time per iteration, the rankings, and a
// reason for every figure out of tolerance.
func TestJoin(t *testing.T) {
	pred := fixture(map[string]float64{"bsp": 50, "asp": 100}, map[string]float64{"bsp": 0.4, "asp": 0}, "bsp", "asp")
	close := fixture(map[string]float64{"bsp": 48, "asp": 95}, map[string]float64{"bsp": 0.42, "asp": 0.02}, "bsp", "asp")
	r := Join(pred, close, "tcp", 20*time.Millisecond, 2)
	if !r.SameRanking || len(r.Paradigms) != 2 || r.Paradigms[0].ThroughputRatio != 0.96 || len(r.Why) != 1 || !strings.Contains(r.Why[0], "within 10%") {
		t.Errorf("a close measurement: %+v", r)
	}
	// Predicted within 5% of each other: a tie, whichever way round the
	// measurement puts them.
	tie := fixture(map[string]float64{"bsp": 100, "asp": 98}, map[string]float64{}, "bsp", "asp")
	swapped := fixture(map[string]float64{"bsp": 90, "asp": 92}, map[string]float64{}, "bsp", "asp")
	if r := Join(tie, swapped, "tcp", 20*time.Millisecond, 2); !r.SameRanking {
		t.Errorf("a predicted tie measured the other way round: %v", r.Inversions)
	}
	// 2 workers at 50 → 25 pushes/s: an iteration took 2/25 − 2/50 = 40 ms more.
	far := fixture(map[string]float64{"bsp": 25, "asp": 20}, map[string]float64{"bsp": 0.6, "asp": 0}, "bsp", "asp")
	r = Join(pred, far, "tcp", 20*time.Millisecond, 2)
	if r.SameRanking || r.MeasuredRanking[0] != "bsp" || r.PredictedRanking[0] != "asp" {
		t.Errorf("rankings %v / %v", r.PredictedRanking, r.MeasuredRanking)
	}
	if d := r.Paradigms[0].ExtraPerIteration - 0.04; d > 1e-12 || d < -1e-12 {
		t.Errorf("extra per iteration %v, want 0.04 s", r.Paradigms[0].ExtraPerIteration)
	}
	text := strings.Join(r.Why, "\n")
	for _, w := range []string{"bsp: live throughput 50%", "40.0 ms longer", "waiting 20.0 points more", "rankings differ", "bsp over asp"} {
		if !strings.Contains(text, w) {
			t.Errorf("the reasons do not say %q:\n%s", w, text)
		}
	}
	// bsp 40 ms longer an iteration, asp 2/20 − 2/100 = 80 ms: the median
	// 60 ms over 5 messages.
	if lat := r.FitLatency(); lat != 12*time.Millisecond {
		t.Errorf("fitted latency %s, want 12ms", lat)
	}
	if lat := Join(pred, close, "tcp", 20*time.Millisecond, 2).FitLatency(); lat != 272*time.Microsecond {
		t.Errorf("fitted latency of a close measurement %s", lat)
	}
	if md := r.Markdown(); !strings.Contains(md, "| bsp | 50.0 | 25.0 | 0.50 |") {
		t.Errorf("markdown:\n%s", md)
	}
}

// Run end to end on the live runtime in this process: the same paradigms
// and seeds on both sides, the live workers stretched to the model; and
// what the live runtime cannot emulate is refused before anything runs.
func TestRunInproc(t *testing.T) {
	specs := []paradigm.Spec{}
	for _, s := range []string{"bsp", "asp"} {
		sp, err := paradigm.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, sp)
	}
	c := compare.Config{Specs: specs, Seeds: 1, Job: job.Config{Workers: 3, Shards: 1, Model: "mlp", Dataset: "synthetic", TrainLimit: 1200, TestLimit: 300,
		Epochs: 1, Batch: 32, LR: 0.1, Momentum: -1, Seed: 1, EvalEvery: 0.5, Timing: timing.WorkerSpec{Speeds: []float64{1, 1, 2.5}}},
		Launch: launch.TrainMode}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := Run(ctx, c, runstats.Inproc)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", r.Markdown())
	if len(r.Paradigms) != 2 || r.Base != DefaultBase.String() || r.Predicted == nil || r.Measured == nil {
		t.Fatalf("result %+v", r)
	}
	for _, p := range r.Paradigms {
		if p.Predicted.Throughput <= 0 || p.Measured.Throughput <= 0 {
			t.Errorf("%s: throughput predicted %v, measured %v", p.Paradigm, p.Predicted.Throughput, p.Measured.Throughput)
		}
		// The live side pays real work on top of the model's compute:
		// it can be slower than predicted, never much faster.
		if p.ThroughputRatio > 1.15 {
			t.Errorf("%s: live throughput %.2f× the prediction", p.Paradigm, p.ThroughputRatio)
		}
	}
	// The refit charges the measured overhead: a latency on every message,
	// so every paradigm is predicted slower than before, against the same
	// measurement. (How close it lands depends on the machine's load while
	// the live runs ran; docs/check.md has figures from a quiet machine.)
	if r.FitLatency() > 0 {
		if r.Refit == nil || len(r.Refit.Paradigms) != 2 || r.Refit.Latency == "" {
			t.Fatalf("a %s overhead a message measured, no refit: %+v", r.FitLatency(), r.Refit)
		}
		for i, p := range r.Refit.Paradigms {
			q := r.Paradigms[i]
			if p.Paradigm != q.Paradigm || p.Measured.Throughput != q.Measured.Throughput || !(p.Predicted.Throughput < q.Predicted.Throughput) {
				t.Errorf("%s: refit predicts %.1f pushes/s against the first prediction's %.1f (measured %.1f)", p.Paradigm,
					p.Predicted.Throughput, q.Predicted.Throughput, p.Measured.Throughput)
			}
		}
	}
	for _, bad := range []func(*compare.Config){
		func(c *compare.Config) { c.Job.Network = &network.Spec{Default: network.DefaultLink} },
	} {
		cc := c
		bad(&cc)
		if _, err := Run(ctx, cc, runstats.Inproc); !errors.Is(err, ErrNotEmulated) {
			t.Errorf("%v, want ErrNotEmulated", err)
		}
	}
	if _, err := Run(ctx, c, "virtual"); err == nil {
		t.Error("a check measured in virtual mode accepted")
	}
}

// A check without speeds, jitter or stragglers holds its live workers to
// the base, as the prediction charges it: the synthetic MLP's real step
// is a fraction of the 20 ms base, so unheld live workers would run
// several times faster than predicted.
func TestRunHoldsLiveToTheBase(t *testing.T) {
	bsp, err := paradigm.Parse("bsp")
	if err != nil {
		t.Fatal(err)
	}
	c := compare.Config{Specs: []paradigm.Spec{bsp}, Seeds: 1, Job: job.Config{Workers: 2, Shards: 1, Model: "mlp", Dataset: "synthetic",
		TrainLimit: 1280, TestLimit: 100, Epochs: 1, Batch: 32, LR: 0.1, Momentum: -1, Seed: 1},
		Launch: launch.TrainMode}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := Run(ctx, c, runstats.Inproc)
	if err != nil {
		t.Fatal(err)
	}
	p := r.Paradigms[0]
	t.Logf("predicted %.1f pushes/s, measured %.1f", p.Predicted.Throughput, p.Measured.Throughput)
	if !(p.ThroughputRatio > 0 && p.ThroughputRatio < 1.15) {
		t.Errorf("live throughput %.2f× the prediction: want the live workers held to the %s base", p.ThroughputRatio, r.Base)
	}
	if c.Job.Timing.Speeds != nil {
		t.Errorf("Run changed its caller's timing: %+v", c.Job.Timing)
	}
}

// A live run's steady throughput: per worker one push per cycle of its
// mean iteration over its share of time not held, summed; the check takes
// it over the wall rate, which counts start-up.
func TestSteadyThroughput(t *testing.T) {
	r := runstats.Run{WorkerIterations: []runstats.IterStats{{N: 10, Mean: 0.1}, {N: 10, Mean: 0.2}, {N: 0}},
		WorkerWait: []float64{0, 0.5, 0}}
	v, ok := SteadyThroughput(&r)
	if want := 1/0.1 + 0.5/0.2; !ok || math.Abs(v-want) > 1e-9 {
		t.Errorf("steady throughput %g (%v), want %g", v, ok, want)
	}
	if _, ok := SteadyThroughput(&runstats.Run{}); ok {
		t.Error("a run without per-worker figures has a steady throughput")
	}
	one := 3.0
	s := &compare.Summary{Paradigms: []compare.ParadigmStats{{Paradigm: "asp", Runs: 1, Throughput: compare.Interval{Median: &one}}},
		Runs: []runstats.Run{{Paradigm: "asp", WorkerIterations: r.WorkerIterations, WorkerWait: r.WorkerWait}}}
	if m := metrics(s, s.Paradigms[0]); math.Abs(m.Throughput-12.5) > 1e-9 || m.WallThroughput != 3 {
		t.Errorf("metrics %+v: want throughput 12.5 (steady), wall 3", m)
	}
}

// A comparison the live side would refuse (a horizon; backup workers
// with one set for every shard, which needs them in one process) is
// refused before the prediction runs: nothing is reported, and no run is
// made.
func TestRunRefusesBeforePredicting(t *testing.T) {
	bsp, err := paradigm.Parse("bsp")
	if err != nil {
		t.Fatal(err)
	}
	shared, err := paradigm.Parse("backup:b=1,set=shared")
	if err != nil {
		t.Fatal(err)
	}
	base := compare.Config{Specs: []paradigm.Spec{bsp}, Seeds: 1, Job: job.Config{Workers: 2, Shards: 1, Model: "mlp", Dataset: "synthetic",
		TrainLimit: 1200, TestLimit: 300, Epochs: 1, Batch: 32, Seed: 1, EvalEvery: 0.5}, Launch: launch.TrainMode}
	for name, bad := range map[string]func(*compare.Config){
		"horizon": func(c *compare.Config) { c.Horizon = time.Minute },
		"shared":  func(c *compare.Config) { c.Specs = []paradigm.Spec{bsp, shared} },
	} {
		c := base
		bad(&c)
		var said []string
		c.Progress = func(s string) { said = append(said, s) }
		if _, err := Run(context.Background(), c, runstats.Inproc); err == nil || !strings.Contains(err.Error(), "live runs") {
			t.Errorf("%s: %v, want the live side's refusal", name, err)
		}
		if len(said) > 0 {
			t.Errorf("%s: ran before refusing: %q", name, said)
		}
	}
}
