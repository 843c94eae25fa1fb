package report

import (
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/runstats"
)

// Issue 31, point 5: the table shows each paradigm's busiest link and the
// notes say for which the network does not matter (under 5%), dominates
// (over 50%) or shapes the results, and, when the scenario gave no base,
// that the shares rest on the 1 s default.
func TestLinksBusyAndTheNetworksRole(t *testing.T) {
	run := func(name string, seed uint64, in, out []float64, push, pull float64) runstats.Run {
		return runstats.Run{Paradigm: name, Mode: "sim", Seed: seed, Workers: 2, Shards: len(in), Pushes: 100, Throughput: 10,
			WorkerWait: []float64{0.1, 0.1}, WaitFraction: 0.1, ShardLinkIn: in, ShardLinkOut: out,
			TimeSplit: &runstats.TimeSplit{Compute: 1 - push - pull, Push: push, Pull: pull}, Network: "rate=10Gbit,latency=50µs"}
	}
	var runs []runstats.Run
	for seed := uint64(1); seed <= 3; seed++ {
		runs = append(runs,
			run("bsp", seed, []float64{0.01, 0.02}, []float64{0.01, 0.02}, 0.01, 0.01),      // idle: 4% at most
			run("asp", seed, []float64{0.2, 0.1}, []float64{0.25, 0.1}, 0.1, 0.1),           // 45%: shapes
			run("ssp:s=3", seed, []float64{0.3, 0.3}, []float64{0.3, 0.31}, 0.2, 0.2),       // 61%: dominates
			run("backup:b=1", seed, []float64{0.01, 0.01}, []float64{0.01, 0.01}, 0.3, 0.3), // a slow worker link: the workers move data 60% of their time
			run("dssp:sl=3,su=15", seed, []float64{0.01, 0.01}, []float64{0.01, 0.01}, 0.05, 0.01),
		)
	}
	s := summarize(runs, 0, 0)
	txt := Text(Scenario{Title: "t"}, s)
	for _, want := range []string{"links busy / transfers", "4% / 2%", "45% / 20%", "61% / 40%", "2% / 60%",
		"iteration time 1 s assumed (set base)",
		"The network does not matter for bsp:",
		"The network dominates for ssp:s=3, backup:b=1:",
		"It shapes the results for asp, dssp:sl=3,su=15 (between 5% and 50%)"} {
		if !strings.Contains(txt, want) {
			t.Errorf("the table and notes lack %q:\n%s", want, txt)
		}
	}
	s.Scenario.Base = "20ms"
	if txt := Markdown(Scenario{}, s); strings.Contains(txt, "assumed") || !strings.Contains(txt, "| links busy / transfers |") {
		t.Errorf("with a base: %s", txt)
	}
	for i := range s.Runs {
		s.Runs[i].ShardLinkIn, s.Runs[i].ShardLinkOut, s.Runs[i].TimeSplit = nil, nil, nil
	}
	if txt := Text(Scenario{}, s); strings.Contains(txt, "links busy") || strings.Contains(txt, "network") {
		t.Errorf("without a network: %s", txt)
	}
}
