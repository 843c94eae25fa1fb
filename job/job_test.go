package job

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/timing"
)

func TestFillDefaultsAndIdempotence(t *testing.T) {
	for _, mom := range []float64{0, -1, 0.5} {
		c := Config{Momentum: mom}
		if err := c.Fill(); err != nil {
			t.Fatal(err)
		}
		first := c
		if err := c.Fill(); err != nil || fmt.Sprint(c) != fmt.Sprint(first) {
			t.Fatalf("momentum %g: second Fill changed %+v into %+v", mom, first, c)
		}
		want := map[float64]float64{0: 0.9, -1: 0, 0.5: 0.5}[mom]
		if got := c.Optim().Momentum; got != want {
			t.Errorf("momentum %g: optimizer gets %g, want %g", mom, got, want)
		}
	}
	c := Config{}
	c.Fill()
	if c.Workers != 1 || c.Shards != 1 || c.Batch != 64 || c.Model != "mlp" || c.Spec.Kind != paradigm.BSP || c.LR != 0.05 {
		t.Errorf("defaults %+v", c)
	}
}

func TestFillRejectsBadJobs(t *testing.T) {
	for _, c := range []Config{
		{Workers: -1}, {Shards: -2}, {Batch: -1}, {Epochs: -1}, {LR: -0.1}, {Momentum: 1}, {WeightDecay: -1},
		{EvalEvery: -1}, {Target: 2}, {TrainLimit: -5},
		{Spec: paradigm.Spec{Kind: paradigm.PSP, C: 9}, Workers: 4},
		// Issue 20: the documented limits.
		{Workers: MaxWorkers + 1}, {Shards: MaxShards + 1}, {Workers: 2000, Shards: 501}, {Batch: MaxBatch + 1},
		{Epochs: MaxEpochs + 1}, {Spec: paradigm.Spec{Kind: paradigm.Elastic, R: 10_000}, Workers: 1001},
		// A horizon is a virtual run's length: bounded by its pushes.
		{Workers: 100, Horizon: 278 * time.Hour}, {Horizon: time.Hour, Timing: timing.WorkerSpec{Base: 10 * time.Nanosecond}},
		{Horizon: time.Hour, Timing: timing.WorkerSpec{Speeds: []float64{1, 1e-6}}}, {Horizon: -time.Second},
	} {
		if err := c.Fill(); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// Each refusal names its field with the value given.
func TestFillNamesTheField(t *testing.T) {
	for _, c := range []struct {
		c    Config
		want string
	}{
		{Config{TrainLimit: -5}, "train-limit=-5"}, {Config{TestLimit: -2}, "test-limit=-2"},
		{Config{Workers: -1}, "workers=-1"}, {Config{Normalize: "zscore"}, `normalize="zscore"`}, {Config{Horizon: 30_000 * time.Hour}, "horizon=30000h0m0s"},
		{Config{EMATime: -time.Second}, "ema-time=-1s"}, {Config{EMATime: time.Second, EMA: 0.9}, "ema-time=1s with ema=0.9"},
	} {
		if err := c.c.Fill(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %q", c.c, err, c.want)
		}
	}
}

func TestStepScale(t *testing.T) {
	c := Config{Spec: paradigm.Spec{Kind: paradigm.ASP}, Workers: 4}
	a := paradigm.Apply{LRScale: 1}
	if s := c.StepScale(c.Spec, a); s != 0.25 {
		t.Errorf("asp with 4 workers: %g, want 1/4", s)
	}
	c.FullAsyncLR = true
	if s := c.StepScale(c.Spec, a); s != 1 {
		t.Errorf("asp, full async lr: %g", s)
	}
	// delay's line applies one gradient at a time, as ASP does: delay:d=0
	// is ASP in the weights only if it steps alike.
	c = Config{Spec: paradigm.Spec{Kind: paradigm.Delay, D: 3}, Workers: 4}
	if s := c.StepScale(c.Spec, a); s != 0.25 {
		t.Errorf("delay with 4 workers: %g, want 1/4", s)
	}
	c = Config{Spec: paradigm.Spec{Kind: paradigm.PSP}, Workers: 4}
	if s := c.StepScale(c.Spec, paradigm.Apply{LRScale: 0.75}); s != 0.75 {
		t.Errorf("psp keeps its own d/K: %g", s)
	}
	// Under auto the rule in force decides: an apply of asp is split K
	// ways, one of bsp is not (StepSize: the first candidate's).
	auto, err := paradigm.Parse("auto:among=bsp|asp")
	if err != nil {
		t.Fatal(err)
	}
	c = Config{Spec: auto, Workers: 4, LR: 0.1}
	asp := paradigm.Spec{Kind: paradigm.ASP}
	if s := c.StepScale(asp, a); s != 0.25 {
		t.Errorf("auto running asp: %g, want 1/4", s)
	}
	if s, u := c.StepSize(a, 0), c.StepSizeUnder(asp, a, 0); s != 0.1 || u != 0.025 {
		t.Errorf("auto's step size: %g at the start (bsp), %g under asp; want 0.1 and 0.025", s, u)
	}
}

func TestRanges(t *testing.T) {
	r := Ranges(10, 3)
	if r[0] != [2]int{0, 3} || r[1] != [2]int{3, 6} || r[2] != [2]int{6, 10} {
		t.Errorf("%v", r)
	}
}

func TestSizeCheckNamesTheField(t *testing.T) {
	for _, c := range []struct {
		s    Size
		want string
	}{
		{Size{Workers: 1e12}, "--workers=1000000000000"},
		{Size{Workers: -3}, "--workers=-3"},
		{Size{Shards: -1}, "--shards=-1"},
		{Size{Workers: 2, Iterations: 1e12}, "--iterations=1000000000000"},
		{Size{Workers: 1000, Iterations: 100_001}, "100001000 pushes exceeds 100000000"},
		{Size{Workers: 1000, Duration: 1e6 * time.Second}, "--duration=277h46m40s"},
		{Size{Workers: 1000, Duration: 1e5 * time.Second, Base: time.Second, FastestSpeed: 0.5}, "--duration"},
		{Size{Epochs: 1e300}, "--epochs=1e+300"},
		{Size{Speeds: []float64{1, 1e300}}, "--speeds: 1e+300"},
		{Size{Speeds: []float64{1e-300}}, "--speeds: 1e-300"},
		{Size{Jitter: 1e300}, "--jitter=1e+300"},
		{Size{Base: 2 * time.Hour}, "--base=2h0m0s"},
		{Size{Workers: 1000, Horizon: 1e6 * time.Second}, "--horizon=277h46m40s"},
		{Size{Horizon: -time.Second}, "--horizon=-1s must not be negative"},
		{Size{Duration: -time.Second}, "--duration=-1s must not be negative"},
		{Size{Workers: 100_000, Specs: []paradigm.Spec{{Kind: paradigm.Elastic, R: 101}}}, "elastic:r=101: r=101 for --workers=100000"},
	} {
		err := c.s.Check("--")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %q", c.s, err, c.want)
		}
	}
	ok := Size{Workers: MaxWorkers, Shards: 10, Iterations: 1000, Duration: 1000 * time.Second, Epochs: MaxEpochs, Batch: MaxBatch,
		Specs: []paradigm.Spec{{Kind: paradigm.Elastic, R: 100}}}
	if err := ok.Check("--"); err != nil {
		t.Errorf("at the limits: %v", err)
	}
}

// The average's decay: per update under EMA, fading in time under
// EMATime (e⁻¹ after τ, 1 at dt = 0: an update at the same instant as the
// last moves nothing).
func TestEMADecay(t *testing.T) {
	per := Config{EMA: 0.99}
	timed := Config{EMATime: 30 * time.Second}
	for _, c := range []struct {
		c    Config
		dt   time.Duration
		want float64
	}{
		{per, time.Hour, 0.99}, {per, 0, 0.99},
		{timed, 30 * time.Second, math.Exp(-1)}, {timed, 0, 1}, {timed, 60 * time.Second, math.Exp(-2)}, {timed, -time.Second, 1},
	} {
		if got := c.c.EMADecay(c.dt); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%+v after %s: %v, want %v", c.c, c.dt, got, c.want)
		}
	}
	if !timed.Averaged() || !per.Averaged() || (&Config{}).Averaged() {
		t.Error("Averaged: want true for EMA and EMATime, false for neither")
	}
}
