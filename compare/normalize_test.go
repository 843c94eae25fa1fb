package compare

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/scenario"
)

// A scenario's normalize: mean reaches the job (unless --normalize was
// given) and the effective scenario; the runs of a comparison with it give
// the same summary whatever the parallelism, and record the mean.
func TestNormalizeScenarioAndParallelism(t *testing.T) {
	sc := &scenario.Scenario{Name: "n", Paradigms: []string{"bsp", "asp"}, Workers: 2, Normalize: job.NormalizeMean}
	c := Config{Mode: runstats.Virtual, Job: job.Config{Seed: 3}, Seeds: 1}
	if err := ApplyScenario(&c, sc, func(string) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if c.Job.Normalize != job.NormalizeMean || Effective(&c).Normalize != job.NormalizeMean {
		t.Fatalf("job normalize %q, effective %q", c.Job.Normalize, Effective(&c).Normalize)
	}
	given := Config{Mode: runstats.Virtual, Job: job.Config{Seed: 3}, Seeds: 1}
	if err := ApplyScenario(&given, sc, func(f string) bool { return f == "normalize" }); err != nil || given.Job.Normalize != "" {
		t.Errorf("--normalize given: the scenario's replaced it (%q, %v)", given.Job.Normalize, err)
	}
	bad := &scenario.Scenario{Name: "b", Paradigms: []string{"bsp"}, Workers: 2, Normalize: "std"}
	if err := ApplyScenario(&c, bad, func(string) bool { return false }); err == nil || !strings.Contains(err.Error(), "normalize") {
		t.Errorf("normalize: std applied: %v", err)
	}
	var out [2][]byte
	for i, par := range []int{1, 3} {
		c := Config{Mode: runstats.Virtual, Specs: specs(t, "bsp", "asp"), Seeds: 2, Parallel: par,
			Job: job.Config{Workers: 2, Seed: 3, Dataset: "synthetic", TrainLimit: 400, TestLimit: 100, Epochs: 1,
				Batch: 16, EvalEvery: 0.5, Target: 0.3, Normalize: job.NormalizeMean}}
		c.Job.Timing.Speeds = []float64{1, 2}
		s, err := Run(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Runs) != 4 || s.Runs[0].Normalize != job.NormalizeMean || len(s.Runs[0].ChannelMean) != 1 {
			t.Fatalf("runs %d, normalize %q, mean %v", len(s.Runs), s.Runs[0].Normalize, s.Runs[0].ChannelMean)
		}
		out[i], _ = json.Marshal(s)
	}
	if string(out[0]) != string(out[1]) {
		t.Error("Parallel 1 and 3 gave different summaries")
	}
}
