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
