package main

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// Issue 16, item 5: a network that does not parse, or names a link the
// job does not have, is refused naming the flag; nothing runs.
func TestNetworkFlagsRefused(t *testing.T) {
	sim := []string{"sim", "--paradigm", "bsp", "--workers", "4", "--shards", "2", "--iterations", "5"}
	for _, c := range []struct {
		want string
		args []string
	}{
		{"--link", []string{"--link", "rate=0Gbit"}},
		{"--link", []string{"--link", "rate=-1Gbit"}},
		{"--link", []string{"--link", "latency=-1ms"}},
		{"--link", []string{"--link", "rate=fast"}},
		{"--link", []string{"--link", "speed=1Gbit"}},
		{"--shard-link", []string{"--shard-link", "2:rate=1Gbit"}},
		{"--shard-link", []string{"--shard-link", "rate=1Gbit"}},
		{"--worker-link", []string{"--worker-link", "4:latency=1ms"}},
		{"--worker-link", []string{"--worker-link", "0:rate=1Gbit", "--worker-link", "0:rate=2Gbit"}},
		{"--apply-rate", []string{"--apply-rate", "-5"}},
		{"--shard-link", []string{"--shard-link", "0:degrade=0,from=1s"}},
		{"--shard-link", []string{"--shard-link", "0:degrade=10,from=2s,to=1s"}},
		{"--shard-link", []string{"--shard-link", "2:degrade=10,from=1s"}},
		{"--worker-link", []string{"--worker-link", "0:from=1s,to=2s"}},
		{"--link", []string{"--link", "degrade=NaN,from=1s"}},
		{"--network", []string{"--network", "fast"}},
		{"--network none", []string{"--network", "none", "--link", "rate=1Gbit"}},
		{"--params", []string{"--network", "none", "--params", "1000"}},
		{"--model", []string{"--network", "none", "--model", "cnn"}},
		{"--params", []string{"--network", "on", "--params", "0"}},
		{"--params", []string{"--network", "on", "--params", "10", "--model", "cnn"}},
		{"--model", []string{"--network", "on", "--model", "resnet"}},
	} {
		refused(t, c.want, append(append([]string{}, sim...), c.args...)...)
	}
	// compare: --params sizes sim mode's transfers only, with a network;
	// the network flags shape virtual time only.
	for _, c := range []struct {
		want string
		args []string
	}{
		{"--params", []string{"compare", "--mode", "sim", "--paradigms", "bsp", "--network", "none", "--params", "1000"}},
		{"--params", []string{"compare", "--paradigms", "bsp", "--link", "rate=1Gbit", "--params", "1000"}},
		{"params", []string{"compare", "--mode", "sim", "--paradigms", "bsp", "--link", "rate=1Gbit", "--params", "-3"}},
		{"--model", []string{"compare", "--mode", "sim", "--paradigms", "bsp", "--network", "none", "--model", "cnn"}},
		{"--link", []string{"compare", "--mode", "inproc", "--paradigms", "bsp", "--link", "rate=1Gbit"}},
		{"--apply-rate", []string{"compare", "--mode", "tcp", "--paradigms", "bsp", "--apply-rate", "1e9"}},
		{"--network", []string{"train", "--mode", "inproc", "--network", "on"}},
		{"--shard-link", []string{"compare", "--paradigms", "bsp", "--shards", "2", "--shard-link", "3:rate=1Gbit"}},
		{"degrade", []string{"compare", "--mode", "tcp", "--paradigms", "bsp", "--shard-link", "0:degrade=10,from=1s"}},
		{"degrade", []string{"train", "--mode", "tcp", "--link", "degrade=10,from=1s,to=2s"}},
	} {
		refused(t, c.want, c.args...)
	}
}

// TestSimWithNetwork: pacer sim with a network (the default: 10 Gbit/s,
// 50 µs) says which, and moves the model's bytes: a slow link makes the
// same BSP run take longer; --network none is instant transfers.
func TestSimWithNetwork(t *testing.T) {
	run := func(extra ...string) map[string]any {
		args := append([]string{"sim", "--paradigm", "bsp", "--workers", "4", "--base", "10ms", "--iterations", "20", "--json"}, extra...)
		out, errs, code := pacer(t, args...)
		if code != 0 {
			t.Fatalf("pacer %v: exit %d: %s", args, code, errs)
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	none, fast, slow := run("--network", "none"), run(), run("--link", "rate=100Mbit", "--model", "mlp")
	if _, ok := none["network"]; ok {
		t.Errorf("--network none reports a network: %v", none["network"])
	}
	if s, _ := fast["network"].(string); s != "rate=10Gbit,latency=50µs; apply 2e+09 floats/s" {
		t.Errorf("the default network is %q, want 10 Gbit/s, 50 µs and the default apply rate", s)
	}
	if s, _ := slow["network"].(string); !strings.Contains(s, "rate=100Mbit") {
		t.Errorf("network %q", s)
	}
	tn, tf, ts := none["virtual_seconds"].(float64), fast["virtual_seconds"].(float64), slow["virtual_seconds"].(float64)
	// 20 BSP rounds of 4 workers moving the MLP (0.94 MB, 75 ms over
	// 100 Mbit/s): the shard's link sends 4 pulls, then the last push
	// follows its pull (sim's TestNetworkBSPRound): (4+1) × 75 ms a round,
	// 7.5 s in all, beside 0.2 s of compute.
	if !(tn < tf && tf < ts && ts > 7.5) {
		t.Errorf("virtual seconds: none %.3f, 10 Gbit/s %.3f, 100 Mbit/s %.3f", tn, tf, ts)
	}
}

// TestSimWithDegradedLink: a window on the shard's link (issue 36) makes
// the same BSP run take longer, and the run's network names it as the
// flag wrote it.
func TestSimWithDegradedLink(t *testing.T) {
	run := func(extra ...string) map[string]any {
		args := append([]string{"sim", "--paradigm", "bsp", "--workers", "4", "--base", "10ms", "--iterations", "20", "--json",
			"--link", "rate=100Mbit", "--model", "mlp"}, extra...)
		out, errs, code := pacer(t, args...)
		if code != 0 {
			t.Fatalf("pacer %v: exit %d: %s", args, code, errs)
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	plain, slow := run(), run("--shard-link", "0:degrade=10,from=2s,to=4s")
	if s, _ := slow["network"].(string); !strings.Contains(s, "shard 0 rate=100Mbit,latency=50µs,degrade=10,from=2s,to=4s") {
		t.Errorf("network %q does not name the window", s)
	}
	// The rounds are all but all transfers (12.3 s of them without the
	// window, 0.2 s of compute); in it the shard's link moves a tenth as
	// much, so its 2 s do 0.2 s of the work: about 1.8 s more.
	tp, ts := plain["virtual_seconds"].(float64), slow["virtual_seconds"].(float64)
	if !(ts > tp+1.5 && ts < tp+2) {
		t.Errorf("virtual seconds: %.3f plain, %.3f with shard 0 ×10 for 2 s (want about 1.8 s more)", tp, ts)
	}
}

// pacer check refuses what it cannot run as asked, before running anything.
func TestCheckRefuses(t *testing.T) {
	base := []string{"check", "--paradigms", "bsp;asp", "--workers", "2", "--dataset", "synthetic"}
	for _, c := range []struct {
		want string
		args []string
	}{
		{"--mode", []string{"--mode", "sim"}},
		{"--live", []string{"--live", "virtual"}},
		{"--link", []string{"--live", "inproc", "--link", "rate=1Gbit"}},
		{"degrade", []string{"--live", "tcp", "--shard-link", "0:degrade=10,from=1s"}},
		{"--fail", []string{"--fail", "1@1s"}},
	} {
		refused(t, c.want, append(append([]string{}, base...), c.args...)...)
	}
}

// Issue 34: pacer sim --help once called --network none the default after
// the default had become on. The help now names the flag's own default,
// and a run without --network is a run with it.
func TestSimHelpNamesTheRealNetworkDefault(t *testing.T) {
	cmd := newSimCmd(io.Discard, io.Discard)
	def := cmd.Flags().Lookup("network").DefValue
	if !strings.Contains(cmd.Long, "The default is --network "+def) {
		t.Fatalf("pacer sim's help does not name --network's default %q:\n%s", def, cmd.Long)
	}
	if def != "none" && strings.Contains(cmd.Long, "none, the default") {
		t.Fatalf("pacer sim's help calls none the default, while the flag's is %q", def)
	}
	args := []string{"--paradigm", "bsp", "--workers", "2", "--base", "10ms", "--iterations", "5"}
	a, b := simJSON(t, args...), simJSON(t, append(args, "--network", def)...)
	if a.Network != b.Network || a.VirtualSeconds != b.VirtualSeconds {
		t.Errorf("without --network: network %q, %g s; with --network %s: %q, %g s", a.Network, a.VirtualSeconds, def, b.Network, b.VirtualSeconds)
	}
}
