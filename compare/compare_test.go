package compare

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/optim"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/scenario"
	"github.com/pacer-ps/pacer/train"
)

func specs(t *testing.T, ss ...string) []paradigm.Spec {
	t.Helper()
	var out []paradigm.Spec
	for _, s := range ss {
		sp, err := paradigm.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sp)
	}
	return out
}

// A scenario fills what the command line left unset, as typed values; what
// was given wins.
func TestApplyScenarioTyped(t *testing.T) {
	sc, err := scenario.Get("softsync")
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Mode: runstats.Virtual, Job: job.Config{Workers: 3, LR: 0.01, Seed: 1}, Seeds: 1}
	given := map[string]bool{"workers": true}
	if err := ApplyScenario(&c, sc, func(f string) bool { return given[f] }); err != nil {
		t.Fatal(err)
	}
	if c.Job.Workers != 3 || c.Job.LR != sc.LR || c.Job.Momentum != -1 || c.Job.Timing.Jitter != sc.Jitter ||
		c.Job.Target != sc.Target || len(c.Specs) != len(sc.Paradigms) || c.Scenario.Name != "softsync" {
		t.Fatalf("applied: %+v", c.Job)
	}
	eff := Effective(&c)
	if eff.Workers != 3 || eff.Momentum == nil || *eff.Momentum != 0 || len(eff.Paradigms) != len(sc.Paradigms) {
		t.Errorf("effective scenario %+v", eff)
	}
	if err := eff.Validate(); err != nil {
		t.Errorf("the effective scenario does not validate: %v", err)
	}
	// A scenario's seeds apply in the deterministic modes, not in the live
	// ones (real time: one run each unless --seeds is given). The presets
	// give none: they race (--seeds auto).
	seeded := *sc
	seeded.Seeds = 7
	sc = &seeded
	for mode, want := range map[runstats.Mode]int{runstats.Virtual: 7, runstats.Sim: 7, runstats.Inproc: 1, runstats.TCP: 1} {
		lc := Config{Mode: mode, Job: job.Config{Seed: 1}, Seeds: 1}
		if err := ApplyScenario(&lc, sc, func(string) bool { return false }); err != nil {
			t.Fatal(err)
		}
		if lc.Seeds != want {
			t.Errorf("%s mode: the scenario's seeds gave %d runs each, want %d", mode, lc.Seeds, want)
		}
	}
	bad := &scenario.Scenario{Name: "x", Paradigms: []string{"bsp"}, Workers: 2, Base: "fast"}
	if err := ApplyScenario(&c, bad, func(string) bool { return false }); err == nil {
		t.Error("a scenario with base \"fast\" was applied")
	}
}

// The summary is the same whatever the parallelism (sim mode: cheap).
func TestSimSummaryIndependentOfParallelism(t *testing.T) {
	var out [2][]byte
	for i, par := range []int{1, 3} {
		c := Config{Mode: runstats.Sim, Specs: specs(t, "bsp", "asp", "ssp:s=2"), Seeds: 3, Iterations: 40, Parallel: par,
			Job: job.Config{Workers: 4, Shards: 1, Seed: 7}}
		c.Job.Timing.Jitter = 0.2
		s, err := Run(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Runs) != 9 || s.Runs[3].Paradigm != "asp" || s.Runs[3].Seed != 7 || s.Runs[5].Seed != 9 {
			t.Fatalf("runs out of order: %d runs", len(s.Runs))
		}
		if s.Verdict.Winner != nil || s.Verdict.Metric != "none" || s.Commit == "" {
			t.Errorf("sim verdict %+v, commit %q", s.Verdict, s.Commit)
		}
		out[i], _ = json.Marshal(s)
	}
	if string(out[0]) != string(out[1]) {
		t.Error("Parallel 1 and 3 gave different summaries")
	}
}

func TestValidateRefuses(t *testing.T) {
	good := Config{Mode: runstats.Sim, Specs: specs(t, "bsp"), Seeds: 1, Job: job.Config{Workers: 2, Seed: 1}}
	for name, mut := range map[string]func(*Config){
		"mode":    func(c *Config) { c.Mode = "fast" },
		"seeds":   func(c *Config) { c.Seeds = 0 },
		"many":    func(c *Config) { c.Seeds = job.MaxSeeds + 1 },
		"seed":    func(c *Config) { c.Job.Seed = 0 },
		"wrap":    func(c *Config) { c.Job.Seed, c.Seeds = math.MaxUint64, 2 }, // seeds MaxUint64, 0
		"specs":   func(c *Config) { c.Specs = nil },
		"horizon": func(c *Config) { c.Horizon = time.Minute }, // sim mode has --duration
		"backup":  func(c *Config) { c.Specs = specs(t, "backup:b=2") },
		"twice":   func(c *Config) { c.Specs = specs(t, "bsp", "ssp:s=1", "bsp") },
		"minus":   func(c *Config) { c.Iterations = -1 },
	} {
		c := good
		mut(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := good.Validate(); err != nil {
		t.Error(err)
	}
}

// Virtual-time runs share the data set across goroutines: the summary is
// the same with one run at a time and with several (run with -race too).
func TestVirtualSummaryIndependentOfParallelism(t *testing.T) {
	var out [2][]byte
	for i, par := range []int{1, 3} {
		c := Config{Mode: runstats.Virtual, Specs: specs(t, "bsp", "asp"), Seeds: 2, Parallel: par,
			Job: job.Config{Workers: 2, Seed: 3, Dataset: "synthetic", TrainLimit: 400, TestLimit: 100, Epochs: 1,
				Batch: 16, EvalEvery: 0.5, Target: 0.3}}
		c.Job.Timing.Speeds = []float64{1, 2}
		s, err := Run(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Runs) != 4 || len(s.Runs[0].Curve) < 2 || s.HorizonSeconds == 0 {
			t.Fatalf("runs %d, curve %v, horizon %v", len(s.Runs), s.Runs[0].Curve, s.HorizonSeconds)
		}
		out[i], _ = json.Marshal(s)
	}
	if string(out[0]) != string(out[1]) {
		t.Error("Parallel 1 and 3 gave different summaries")
	}
}

// Sim mode trains no model: a scenario's target does not apply there (it
// was recorded in summary.json as the verdict's target); its horizon is
// sim mode's virtual-time budget, the duration (it was ignored).
// A scenario's optimizer reaches the job (adam without the flags' default
// momentum), and the effective scenario writes it back so a rerun trains
// the same rule; a bad one is refused naming the field.
func TestApplyScenarioOptimizer(t *testing.T) {
	sc := &scenario.Scenario{Name: "o", Paradigms: []string{"bsp"}, Workers: 2, Optimizer: "adam:b2=0.99"}
	c := Config{Mode: runstats.Virtual, Job: job.Config{Seed: 1, Momentum: 0.9}, Seeds: 1}
	if err := ApplyScenario(&c, sc, func(string) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if c.Job.Optimizer.Kind != optim.Adam || c.Job.Optimizer.Beta2 != 0.99 || c.Job.Momentum != -1 {
		t.Fatalf("applied: optimizer %s, momentum %g", c.Job.Optimizer, c.Job.Momentum)
	}
	if err := c.Job.Fill(); err != nil {
		t.Fatal(err)
	}
	eff := Effective(&c)
	if eff.Optimizer != "adam:b1=0.9,b2=0.99,eps=1e-08" {
		t.Errorf("effective optimizer %q", eff.Optimizer)
	}
	back := Config{Mode: runstats.Virtual, Job: job.Config{Seed: 1}, Seeds: 1}
	if err := ApplyScenario(&back, &eff, func(string) bool { return false }); err != nil || back.Job.Optimizer != c.Job.Optimizer {
		t.Errorf("rerun of the effective scenario: %s, %v", back.Job.Optimizer, err)
	}
	sc.Optimizer = "adam:b1=2"
	if err := ApplyScenario(&c, sc, func(string) bool { return false }); err == nil || !strings.Contains(err.Error(), "optimizer") {
		t.Errorf("bad optimizer: %v", err)
	}
	// AdamW takes no momentum either; centered RMSProp keeps the flags'
	// and its switch survives the effective scenario.
	for _, tc := range []struct {
		spec, eff string
		momentum  float64
	}{
		{"adamw", "adamw:b1=0.9,b2=0.999,eps=1e-08", -1},
		{"rmsprop:centered=true", "rmsprop:alpha=0.99,eps=1e-08,centered=true", 0.9},
	} {
		sc.Optimizer = tc.spec
		c := Config{Mode: runstats.Virtual, Job: job.Config{Seed: 1, Momentum: 0.9}, Seeds: 1}
		if err := ApplyScenario(&c, sc, func(string) bool { return false }); err != nil || c.Job.Momentum != tc.momentum {
			t.Fatalf("%s: momentum %g, %v", tc.spec, c.Job.Momentum, err)
		}
		if err := c.Job.Fill(); err != nil {
			t.Fatal(err)
		}
		if eff := Effective(&c); eff.Optimizer != tc.eff {
			t.Errorf("%s: effective optimizer %q, want %q", tc.spec, eff.Optimizer, tc.eff)
		}
	}
}

func TestApplyScenarioSimMode(t *testing.T) {
	sc, err := scenario.Get("mixed32")
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Mode: runstats.Sim, Job: job.Config{Seed: 1}, Seeds: 1}
	if err := ApplyScenario(&c, sc, func(string) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if c.Job.Target != 0 || sc.Target == 0 {
		t.Errorf("sim mode took the scenario's target %g", c.Job.Target)
	}
	c.Job.Target = 0.5
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "sim mode trains no model") {
		t.Errorf("a sim comparison with a target: %v", err)
	}

	file := &scenario.Scenario{Name: "f", Paradigms: []string{"bsp", "asp"}, Workers: 3, Horizon: "90s", Target: 0.8}
	c = Config{Mode: runstats.Sim, Job: job.Config{Seed: 1}, Seeds: 2}
	if err := ApplyScenario(&c, file, func(string) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if c.Duration != 90*time.Second || c.Horizon != 0 || c.Iterations != 0 {
		t.Fatalf("sim mode: duration %s, horizon %s, iterations %d; want the scenario's horizon as the duration", c.Duration, c.Horizon, c.Iterations)
	}
	s, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if s.HorizonSeconds != 90 || s.Runs[0].VirtualSeconds != 90 || s.Target != 0 || s.Verdict.Target != 0 || s.Scenario.Horizon != "1m30s" {
		t.Errorf("horizon %v, first run %v virtual s, target %v / %v, effective horizon %q",
			s.HorizonSeconds, s.Runs[0].VirtualSeconds, s.Target, s.Verdict.Target, s.Scenario.Horizon)
	}
	// --iterations (or --duration) given on the command line overrides it.
	c = Config{Mode: runstats.Sim, Job: job.Config{Seed: 1}, Seeds: 1, Iterations: 20}
	if err := ApplyScenario(&c, file, func(f string) bool { return f == "iterations" }); err != nil || c.Duration != 0 {
		t.Errorf("--iterations given: duration %s, %v", c.Duration, err)
	}
	// A file with both iterations and a horizon is ambiguous in sim mode.
	both := *file
	both.Iterations = 50
	c = Config{Mode: runstats.Sim, Job: job.Config{Seed: 1}, Seeds: 1}
	if err := ApplyScenario(&c, &both, func(string) bool { return false }); err == nil || !strings.Contains(err.Error(), "alternatives") {
		t.Errorf("iterations and horizon in sim mode: %v", err)
	}
}

// EpochsEach (pacer check's prediction): every virtual run trains for the
// job's epochs, as a live run does, so a slow paradigm's run lasts longer
// instead of all stopping at one horizon; a horizon with it is refused.
func TestVirtualEpochsEach(t *testing.T) {
	c := Config{Mode: runstats.Virtual, Specs: specs(t, "bsp", "asp"), Seeds: 1, EpochsEach: true,
		Job: job.Config{Workers: 2, Seed: 3, Dataset: "synthetic", TrainLimit: 400, TestLimit: 100, Epochs: 1,
			Batch: 16, EvalEvery: 0.5}}
	c.Job.Timing.Speeds = []float64{1, 2}
	s, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	want := int64(2 * train.Iterations(c.Job, 400))
	for _, r := range s.Runs {
		if r.Pushes != want {
			t.Errorf("%s: %d pushes, want the epoch's %d", r.Paradigm, r.Pushes, want)
		}
	}
	if s.HorizonSeconds != 0 || !(s.Runs[0].VirtualSeconds > s.Runs[1].VirtualSeconds) {
		t.Errorf("horizon %v; bsp %v s, asp %v s: want no horizon and bsp the longer", s.HorizonSeconds, s.Runs[0].VirtualSeconds, s.Runs[1].VirtualSeconds)
	}
	c.Horizon = time.Minute
	if _, err := Run(context.Background(), c); err == nil || !strings.Contains(err.Error(), "give one") {
		t.Errorf("a horizon with EpochsEach: %v", err)
	}
}

// A scenario's batch_total sets each worker's batch from the workers; a
// --batch on the command line replaces it, and so does --batch-total a
// scenario's batch.
func TestApplyScenarioBatchTotal(t *testing.T) {
	sc := &scenario.Scenario{Name: "mu-lambda", Paradigms: []string{"bsp"}, Workers: 8, BatchTotal: 128}
	for _, c := range []struct {
		given     string
		job       job.Config
		wantBatch int
	}{
		{"", job.Config{Batch: 64, Seed: 1}, 16},
		{"batch", job.Config{Batch: 32, Seed: 1}, 32},
	} {
		cfg := Config{Mode: runstats.Virtual, Job: c.job, Seeds: 1}
		if err := ApplyScenario(&cfg, sc, func(f string) bool { return f == c.given }); err != nil {
			t.Fatal(err)
		}
		if err := cfg.Job.Fill(); err != nil || cfg.Job.Batch != c.wantBatch {
			t.Errorf("given %q: batch %d (err %v), want %d", c.given, cfg.Job.Batch, err, c.wantBatch)
		}
	}
	withBatch := &scenario.Scenario{Name: "fixed", Paradigms: []string{"bsp"}, Workers: 4, Batch: 64}
	cfg := Config{Mode: runstats.Virtual, Job: job.Config{BatchTotal: 128, Seed: 1}, Seeds: 1}
	if err := ApplyScenario(&cfg, withBatch, func(f string) bool { return f == "batch-total" }); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Job.Fill(); err != nil || cfg.Job.Batch != 32 {
		t.Errorf("--batch-total over a scenario's batch: batch %d (err %v), want 32", cfg.Job.Batch, err)
	}
}
