package compare

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/race"
	"github.com/pacer-ps/pacer/runstats"
)

// simRace is a sim-mode race on four workers, one four times slower: ASP
// iterates far faster than BSP, and backup:b=0 is BSP under another name.
func simRace(t *testing.T, par int, names ...string) Config {
	c := Config{Mode: runstats.Sim, Specs: specs(t, names...), Race: &RaceConfig{}, Iterations: 40, Parallel: par,
		Job: job.Config{Workers: 4, Shards: 1, Seed: 3}}
	c.Job.Timing.Speeds = []float64{1, 1, 1, 4}
	c.Job.Timing.Jitter = 0.1
	return c
}

func summaryBytes(t *testing.T, s *Summary) []byte {
	t.Helper()
	c := *s
	c.Version, c.Commit = "", ""
	b, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A race's summary is the same bytes whatever GOMAXPROCS (and so however
// many runs are in flight): the rounds and the stopping rule read only the
// runs' results.
func TestRaceSameBytesAnyGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var out [2][]byte
	for i, procs := range []int{1, 4} {
		runtime.GOMAXPROCS(procs)
		s, err := Run(context.Background(), simRace(t, 0, "bsp", "asp", "ssp:s=2", "backup:b=0"))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = summaryBytes(t, s)
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Error("GOMAXPROCS 1 and 4 gave different race summaries")
	}
}

// The paradigms shown slower leave after the first round and run no more
// seeds; the summary carries the race and its verdict.
func TestRaceEliminatedStopCosting(t *testing.T) {
	s, err := Run(context.Background(), simRace(t, 2, "bsp", "asp", "backup:b=0"))
	if err != nil {
		t.Fatal(err)
	}
	res := s.Race
	if res == nil || s.Schema != Schema || s.Verdict.Metric != MetricIteration {
		t.Fatalf("race %v, schema %d, metric %q", res != nil, s.Schema, s.Verdict.Metric)
	}
	perParadigm := map[string]int{}
	for _, r := range s.Runs {
		perParadigm[r.Paradigm]++
	}
	if len(s.Runs) != res.Runs || res.Runs > res.Budget || res.Budget != DefaultBudget(3) {
		t.Errorf("%d runs, the race spent %d of %d", len(s.Runs), res.Runs, res.Budget)
	}
	for _, st := range res.Standings {
		if perParadigm[st.Paradigm] != st.Seeds {
			t.Errorf("%s: %d runs, the race says %d seeds", st.Paradigm, perParadigm[st.Paradigm], st.Seeds)
		}
	}
	v := s.Verdict
	if v.Kind != race.Winner || v.Winner == nil || *v.Winner != "asp" || v.Recommended != "asp" ||
		res.Standings[0].Left != 1 || res.Standings[2].Left != 1 || res.Standings[0].Seeds != race.DefaultFirst {
		t.Errorf("verdict %+v, standings %+v; want asp the winner, bsp and backup:b=0 out after the first round", v, res.Standings)
	}
	if s.Scenario.Seeds != 0 || len(s.Seeds) != res.Standings[1].Seeds || s.TestMethod != race.Method {
		t.Errorf("scenario seeds %d, seeds %v, test method %q", s.Scenario.Seeds, s.Seeds, s.TestMethod)
	}
}

// bsp and backup:b=0 are one rule: the race ends at once with both
// equivalent, never a winner, and recommends bsp, the simpler.
func TestRaceSameRuleEquivalent(t *testing.T) {
	s, err := Run(context.Background(), simRace(t, 2, "backup:b=0", "bsp"))
	if err != nil {
		t.Fatal(err)
	}
	v := s.Verdict
	if v.Kind != race.Equivalent || v.Winner != nil || v.Recommended != "bsp" || len(s.Race.Rounds) != 1 || len(v.Tied) != 2 {
		t.Errorf("verdict %+v after %d rounds, want bsp and backup:b=0 equivalent at once, bsp recommended", v, len(s.Race.Rounds))
	}
	if !strings.Contains(v.Reason, "simpler") {
		t.Errorf("reason %q does not say why bsp", v.Reason)
	}
}

// A virtual race compares times to the target; a run that never reaches
// it counts at the horizon.
func TestRaceVirtualTimeToTarget(t *testing.T) {
	if _, err := os.Stat("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"); err != nil {
		t.Skip("Fashion-MNIST is not installed (scripts/setup installs Debian's dataset-fashion-mnist)")
	}
	// A target both reach (on the synthetic set's few samples the MLP
	// learns nothing, and the race would compare accuracy instead).
	c := Config{Mode: runstats.Virtual, Specs: specs(t, "bsp", "asp"), Race: &RaceConfig{Budget: 6}, Parallel: 2,
		Job: job.Config{Workers: 2, Seed: 1, Model: "mlp", Dataset: "fashion-mnist", TrainLimit: 3000, TestLimit: 500,
			Epochs: 3, Batch: 64, LR: 0.1, Momentum: -1, EvalEvery: 0.5, Target: 0.6}}
	c.Job.Timing.Speeds = []float64{1, 4}
	s, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if s.Race == nil || s.Race.Runs != 6 || len(s.Runs) != 6 || s.Verdict.Metric != MetricTime || s.Race.Scale != race.Log {
		t.Fatalf("race %+v, %d runs, metric %q", s.Race, len(s.Runs), s.Verdict.Metric)
	}
	if s.Verdict.Kind == "" || s.Verdict.Leader == "" || s.Verdict.RunnerUp == "" || s.Verdict.P == nil {
		t.Errorf("verdict %+v lacks its kind, leader or runner-up", s.Verdict)
	}
}

// A target no run reaches makes every time the horizon: the race then
// compares the accuracy at the horizon, on the runs it already made, and
// says so, instead of calling every paradigm "equally fast".
func TestRaceUnreachedTargetComparesAccuracy(t *testing.T) {
	c := Config{Mode: runstats.Virtual, Specs: specs(t, "bsp", "asp"), Race: &RaceConfig{Budget: 6}, Parallel: 2,
		Job: job.Config{Workers: 2, Seed: 1, Dataset: "synthetic", TrainLimit: 400, TestLimit: 100, Batch: 16, Epochs: 1, Target: 0.999}}
	c.Job.Timing.Speeds = []float64{1, 3}
	s, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if s.Verdict.Metric != MetricAccuracy || s.Race.Scale != race.Linear || s.Race.Margin != 0.5 {
		t.Fatalf("metric %q, race scale %v margin %g: want the accuracy at the horizon in points", s.Verdict.Metric, s.Race.Scale, s.Race.Margin)
	}
	if !strings.Contains(s.Verdict.Reason, "fewer than half its seeds") {
		t.Errorf("reason %q does not say why the race compared accuracy", s.Verdict.Reason)
	}
	seen := map[string]bool{}
	for _, r := range s.Runs {
		k := fmt.Sprintf("%s/%d", r.Paradigm, r.Seed)
		if seen[k] {
			t.Errorf("run %s made twice", k)
		}
		seen[k] = true
	}
}

// The race's flags are checked before any run, each by name.
func TestRaceValidate(t *testing.T) {
	for name, c := range map[string]struct {
		mut  func(c *Config)
		want string
	}{
		"live":   {func(c *Config) { c.Mode = runstats.Inproc }, "deterministic modes"},
		"unit":   {func(c *Config) { c.Race.Margin, c.Race.Unit = 0.5, UnitPoints }, "margin=0.5pt"},
		"budget": {func(c *Config) { c.Race.Budget = 5 }, "budget=5"},
		"big":    {func(c *Config) { c.Race.Margin, c.Race.Unit = 100, UnitPercent }, "margin=100%"},
		"one":    {func(c *Config) { c.Specs = c.Specs[:1] }, "two paradigms"},
	} {
		cfg := simRace(t, 1, "bsp", "asp")
		c.mut(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want one naming %q", name, err, c.want)
		}
	}
	ok := simRace(t, 1, "bsp", "asp")
	ok.Race.Margin, ok.Race.Unit = 2, UnitPercent
	if err := ok.Validate(); err != nil {
		t.Errorf("a 2%% margin on times: %v", err)
	}
}
