package report

import (
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/runstats"
)

// A paradigm whose runs left samples out of every applied gradient is
// warned of in the report, with the remedy when it sampled shards.
func TestUnlearntWarning(t *testing.T) {
	part, all := 0.75, 1.0
	runs := []runstats.Run{
		{Paradigm: "bsp", Mode: "virtual", Seed: 1, Workers: 4, Throughput: 10, SamplesLearnt: &all, Curve: curve(0.8, 5, 20, 2)},
		{Paradigm: "backup:b=1", Mode: "virtual", Seed: 1, Workers: 4, Throughput: 12, SamplesLearnt: &part, Curve: curve(0.78, 5, 20, 2)},
	}
	s := summarize(runs, 0, 0)
	txt := Text(Scenario{}, s)
	if !strings.Contains(txt, "backup:b=1 left 25% of the training samples") || !strings.Contains(txt, "--sampling global") {
		t.Errorf("no warning for backup:b=1's unlearnt quarter:\n%s", txt)
	}
	if strings.Contains(txt, "Warning: bsp") {
		t.Errorf("a warning for bsp, which learnt every sample:\n%s", txt)
	}
	runs[1].Sampling = "global"
	if txt := Text(Scenario{}, summarize(runs, 0, 0)); strings.Contains(txt, "--sampling global draws") || !strings.Contains(txt, "too short") {
		t.Errorf("a global-sampling run's warning should not suggest global sampling:\n%s", txt)
	}
}

// --targets: each paradigm's median time and epochs to each accuracy.
func TestTargetLines(t *testing.T) {
	mk := func(name string, seed uint64, t1, e1 float64) runstats.Run {
		r := runstats.Run{Paradigm: name, Mode: "virtual", Seed: seed, Workers: 2, Throughput: 10, Curve: curve(0.8, 5, 20, 2)}
		r.Targets, r.TimesToTargets, r.EpochsToTargets = []float64{0.5, 0.99}, []*float64{&t1, nil}, []*float64{&e1, nil}
		return r
	}
	s := summarize([]runstats.Run{mk("bsp", 1, 4, 0.5), mk("bsp", 2, 6, 0.7), mk("asp", 1, 3, 0.4), mk("asp", 2, 3, 0.4)}, 0, 0)
	txt := Text(Scenario{}, s)
	for _, want := range []string{"Targets, bsp: 50% at", "99% not reached", "Targets, asp: 50% at 3 s", "(epoch 0.4"} {
		if !strings.Contains(txt, want) {
			t.Errorf("no %q in:\n%s", want, txt)
		}
	}
}
