package sim

import (
	"testing"
	"time"

	"github.com/pacer-ps/pacer/network"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/timing"
)

// Closed-form checks of the network in the simulator (issue 16). The
// numbers are chosen so that every time is a whole number of nanoseconds:
// a link of 10⁹ bytes per second moves a byte a nanosecond, and 236
// parameters make a 1,000-byte block (944 bytes of values and the 56-byte
// header).
const (
	nParams = 236
	blockB  = 1000 * time.Nanosecond // b: a block through one link
	applyA  = 236 * time.Nanosecond  // A: 236 values at 10⁹ a second
	pathL   = 10 * time.Microsecond  // L: one way, 5 µs at each end
	compC   = time.Millisecond       // C: an iteration's compute
)

func gigNet() *network.Spec {
	return &network.Spec{Default: network.Link{Rate: 1e9, Latency: 5 * time.Microsecond}, ApplyRate: 1e9}
}

func mustSpec(t *testing.T, s string) paradigm.Spec {
	t.Helper()
	sp, err := paradigm.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// releases runs cfg and returns the times the gate released worker 0.
func releases(t *testing.T, cfg Config) []time.Duration {
	t.Helper()
	var at []time.Duration
	cfg.Trace = func(ev Event) {
		if ev.Kind == Release && ev.Worker == 0 {
			at = append(at, ev.At)
		}
	}
	if _, err := Run(cfg); err != nil {
		t.Fatal(err)
	}
	return at
}

// TestNetworkOneWorker: one worker and one shard: an iteration is a pull
// request (L), the pull (b + L), the compute (C), the push (b + L), the
// apply (A), its acknowledgement (L) and the clock report (L); between two
// iterations the release (L).
func TestNetworkOneWorker(t *testing.T) {
	const n = 10
	r, err := Run(Config{Spec: mustSpec(t, "bsp"), Workers: 1, Timing: timing.WorkerSpec{Base: compC}, Iterations: n,
		Seed: 1, Network: gigNet(), Params: nParams})
	if err != nil {
		t.Fatal(err)
	}
	iter := 5*pathL + 2*blockB + compC + applyA
	if want := n*iter + (n-1)*pathL; r.VirtualSeconds != want.Seconds() {
		t.Errorf("%d iterations end at %v s, want %v s", n, r.VirtualSeconds, want.Seconds())
	}
}

// TestNetworkBSPRound: K workers into one shard under BSP. After a release
// the K pulls leave the shard's uplink one after another (K·b), which
// staggers the pushes by b each: the last arrives one b after its pull, so
// a round is 6L + (K+1)·b + C + A — it grows by b, twice over (out and
// back in), with each worker.
func TestNetworkBSPRound(t *testing.T) {
	for _, k := range []int{1, 4, 16} {
		at := releases(t, Config{Spec: mustSpec(t, "bsp"), Workers: k, Timing: timing.WorkerSpec{Base: compC},
			Iterations: 6, Seed: 1, Network: gigNet(), Params: nParams})
		want := 6*pathL + time.Duration(k+1)*blockB + compC + applyA
		if len(at) < 3 {
			t.Fatalf("K=%d: %d releases", k, len(at))
		}
		for j := 1; j < len(at); j++ {
			if got := at[j] - at[j-1]; got != want {
				t.Errorf("K=%d: round %d took %s, want %s", k, j, got, want)
			}
		}
	}
}

// TestNetworkTwoShardsHalveIncast: a communication-bound BSP round of 16
// workers (a 4 MiB model over 1 Gbit/s, little compute) with its model cut
// over two shards, each with its own link. The shards' fan-out and incast
// halve (K·b → K·b/2); what a worker's own link moves, its whole model
// out and in, does not; and a worker's uplink sends its two halves one
// after the other (the FIFO model's known error, half a block). So the
// round goes from (K+1)·b to (K/2 + 1.5)·b: 9.5/17 of it at K = 16.
func TestNetworkTwoShardsHalveIncast(t *testing.T) {
	net := &network.Spec{Default: network.Link{Rate: 1e9 / 8, Latency: 50 * time.Microsecond}}
	round := func(shards int) time.Duration {
		at := releases(t, Config{Spec: mustSpec(t, "bsp"), Workers: 16, Shards: shards, Timing: timing.WorkerSpec{Base: time.Millisecond},
			Iterations: 4, Seed: 1, Network: net, Params: 1 << 20})
		return at[len(at)-1] - at[len(at)-2]
	}
	one, two := round(1), round(2)
	r, want := two.Seconds()/one.Seconds(), 9.5/17
	t.Logf("BSP round, 16 workers, 4 MiB over 1 Gbit/s: one shard %s, two shards %s (%.3f, closed form %.3f)", one, two, r, want)
	if r < want*0.98 || r > want*1.02 {
		t.Errorf("two shards take %.3f of one shard's round, want %.3f", r, want)
	}
}

// TestNetworkStalenessFromTransfers: under ASP, the updates other workers
// apply while a gradient is on the wire make it staler. Worker 0 on a
// slower and slower link (the others on 10 Gbit/s): its gradients' staleness,
// the run's maximum, grows with its transfer time. (The mean does not: in
// ASP it is K−1 whatever the timing, since every gradient's staleness
// counts the others' updates during its cycle, and summed over all
// gradients that is each update counted K−1 times.)
func TestNetworkStalenessFromTransfers(t *testing.T) {
	base := Config{Spec: mustSpec(t, "asp"), Workers: 4, Timing: timing.WorkerSpec{Base: 100 * time.Millisecond, Jitter: 0.05},
		Iterations: 200, Seed: 3, Params: 1 << 20}
	r, err := Run(base)
	if err != nil {
		t.Fatal(err)
	}
	noNet := r.StalenessMax
	last := noNet
	t.Logf("no network: staleness mean %.2f max %d", r.StalenessMean, noNet)
	for _, rate := range []string{"10Gbit", "1Gbit", "300Mbit", "100Mbit"} {
		slow, err := network.ParseLink("rate="+rate, network.DefaultLink)
		if err != nil {
			t.Fatal(err)
		}
		cfg := base
		cfg.Network = &network.Spec{Default: network.DefaultLink, Workers: map[int]network.Link{0: slow}}
		r, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("worker 0 on %s: staleness mean %.2f max %d", rate, r.StalenessMean, r.StalenessMax)
		if r.StalenessMax < last {
			t.Errorf("worker 0 on %s: staleness max %d below the faster link's %d", rate, r.StalenessMax, last)
		}
		last = r.StalenessMax
	}
	if last < 3*noNet {
		t.Errorf("worker 0 on 100 Mbit/s (0.34 s a transfer against 0.1 s of compute): staleness max %d, want well above the no-network run's", last)
	}
}

// TestNetworkNeedsParams: a network without the model's size is refused.
func TestNetworkNeedsParams(t *testing.T) {
	if _, err := Run(Config{Spec: mustSpec(t, "bsp"), Workers: 2, Network: gigNet()}); err == nil {
		t.Error("a network without params accepted")
	}
	if _, err := Run(Config{Spec: mustSpec(t, "bsp"), Workers: 2, Params: 10, Network: &network.Spec{Default: network.DefaultLink, Shards: map[int]network.Link{1: network.DefaultLink}}}); err == nil {
		t.Error("a link for shard 1 of a one-shard job accepted")
	}
}

// TestNetworkTimeSplit: the workers' time splits into shares that add up
// to one, and each paradigm spends its waiting where its protocol says:
// BSP at the gate, ASP not at all there, backup workers (whose pulls wait
// at the shard for the version) held at a shard.
func TestNetworkTimeSplit(t *testing.T) {
	split := map[string]float64{}
	for _, s := range []string{"bsp", "asp", "backup:b=1"} {
		r, err := Run(Config{Spec: mustSpec(t, s), Workers: 8, Timing: timing.WorkerSpec{Base: 20 * time.Millisecond, Jitter: 0.2},
			Iterations: 100, Seed: 2, Network: &network.Spec{Default: network.Link{Rate: 1.25e8, Latency: 50 * time.Microsecond}}, Params: 235146})
		if err != nil {
			t.Fatal(err)
		}
		ts := r.TimeSplit
		if ts == nil {
			t.Fatalf("%s: no time split", s)
		}
		sum := ts.Compute + ts.Push + ts.Gate + ts.Pull + ts.Server
		t.Logf("%s: %+v (sum %.6f)", s, *ts, sum)
		if sum < 0.999999 || sum > 1.000001 || ts.Compute <= 0 || ts.Push <= 0 || ts.Pull <= 0 {
			t.Errorf("%s: split %+v sums to %v", s, *ts, sum)
		}
		split[s+" gate"], split[s+" server"] = ts.Gate, ts.Server
	}
	if !(split["bsp gate"] > 0.1 && split["asp gate"] < 0.01 && split["backup:b=1 server"] > 0.01 && split["bsp server"] < 0.01) {
		t.Errorf("shares: %v", split)
	}
	if r, _ := Run(Config{Spec: mustSpec(t, "bsp"), Workers: 2, Iterations: 5}); r.TimeSplit != nil {
		t.Error("a run without a network has a time split")
	}
}
