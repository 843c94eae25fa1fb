package compare

import (
	"testing"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/network"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/scenario"
)

// A scenario's network section applies unless a network flag was given
// (which replaces it whole), reads back from the effective scenario, and
// a bad one is refused by name.
func TestScenarioNetwork(t *testing.T) {
	rate := 1e9
	sc := &scenario.Scenario{Name: "net", Paradigms: []string{"bsp"}, Workers: 4, Shards: 2,
		Network: &scenario.Network{Link: "rate=1Gbit,latency=100us", ShardLinks: []string{"1:rate=10Gbit"}, ApplyRate: &rate}}
	c := Config{Mode: runstats.Virtual, Job: job.Config{Seed: 1}, Seeds: 1}
	if err := ApplyScenario(&c, sc, func(string) bool { return false }); err != nil {
		t.Fatal(err)
	}
	n := c.Job.Network
	if n == nil || n.Default.Rate != 1.25e8 || n.Shards[1].Rate != 1.25e9 || n.Shards[1].Latency != n.Default.Latency || n.ApplyRate != 1e9 {
		t.Fatalf("network %+v", n)
	}
	eff := Effective(&c)
	back, err := eff.Network.Spec()
	if err != nil || back.String() != n.String() {
		t.Errorf("effective network %+v reads back as %s (%v), want %s", eff.Network, back.String(), err, n.String())
	}
	given := Config{Mode: runstats.Virtual, Job: job.Config{Seed: 1, Network: &network.Spec{Default: network.DefaultLink}}, Seeds: 1}
	if err := ApplyScenario(&given, sc, func(f string) bool { return f == "link" }); err != nil {
		t.Fatal(err)
	}
	if given.Job.Network.Default != network.DefaultLink || given.Job.Network.Shards != nil {
		t.Errorf("--link given, yet the scenario's network applied: %s", given.Job.Network)
	}
	// none: true is instant transfers, whatever the command line's default;
	// a run without a network writes it, so its rerun has none either.
	sc.Network = &scenario.Network{None: true}
	def := Config{Mode: runstats.Virtual, Job: job.Config{Seed: 1, Network: &network.Spec{Default: network.DefaultLink}}, Seeds: 1}
	if err := ApplyScenario(&def, sc, func(string) bool { return false }); err != nil || def.Job.Network != nil {
		t.Fatalf("none: true gave network %v (%v)", def.Job.Network, err)
	}
	if eff := Effective(&def); eff.Network == nil || !eff.Network.None {
		t.Errorf("a run without a network is written as %+v, want none: true", eff.Network)
	}
	rate2 := 5e8
	for _, bad := range []*scenario.Network{{Link: "rate=0bit"}, {WorkerLinks: []string{"x:rate=1Gbit"}}, {Link: "speed=1Gbit"},
		{None: true, Link: "rate=1Gbit"}, {None: true, ApplyRate: &rate2}} {
		sc.Network = bad
		c := Config{Mode: runstats.Virtual, Job: job.Config{Seed: 1}, Seeds: 1}
		if err := ApplyScenario(&c, sc, func(string) bool { return false }); err == nil {
			t.Errorf("network %+v accepted", bad)
		}
	}
	// An index the job does not have is refused when the job is checked.
	sc.Network = &scenario.Network{ShardLinks: []string{"5:rate=1Gbit"}}
	c = Config{Mode: runstats.Virtual, Job: job.Config{Seed: 1}, Seeds: 1}
	if err := ApplyScenario(&c, sc, func(string) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if err := c.Job.Fill(); err == nil {
		t.Error("a link for shard 5 of a 2-shard job accepted")
	}
}

// A preset's own description is followed by the network its runs had.
func TestDescriptionNamesNetwork(t *testing.T) {
	c := Config{Mode: runstats.Virtual, Job: job.Config{Network: &network.Spec{Default: network.DefaultLink, ApplyRate: network.DefaultApplyRate}}}
	if got := c.WithNetwork("Two workers."); got != "Two workers. Simulated network: "+c.Job.Network.String()+"." {
		t.Errorf("with a network: %q", got)
	}
	c.Job.Network = nil
	if got := c.WithNetwork("Two workers. "); got != "Two workers. Transfers are instant (no network model: --network none)." {
		t.Errorf("without: %q", got)
	}
	c.Mode = runstats.TCP
	if got := c.WithNetwork("Two workers."); got != "Two workers." {
		t.Errorf("live: %q", got)
	}
}
