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
// the K pulls share the shard's uplink and end together after K·b; the
// workers compute alike and their K pushes share the shard's downlink, K·b
// again: a round is 6L + 2K·b + C + A.
func TestNetworkBSPRound(t *testing.T) {
	for _, k := range []int{1, 4, 16} {
		at := releases(t, Config{Spec: mustSpec(t, "bsp"), Workers: k, Timing: timing.WorkerSpec{Base: compC},
			Iterations: 6, Seed: 1, Network: gigNet(), Params: nParams})
		want := 6*pathL + time.Duration(2*k)*blockB + compC + applyA
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

// TestNetworkClosedForms: the fair-share model's contract (issue 31). Each
// case's steady round, worker 0's time between two releases, is within 3%
// of the max-min closed form written beside it. R is a link's rate, B a
// whole model's frame, K workers, C the compute, L a path latency, A an
// apply of the whole model.
func TestNetworkClosedForms(t *testing.T) {
	const (
		k      = 4
		params = 1 << 20 // 4 MiB a model
		rate   = 1.25e9  // 10 Gbit/s
		lat    = 25 * time.Microsecond
		applyR = 2e9
	)
	link := network.Link{Rate: rate, Latency: lat}
	slow := network.Link{Rate: rate / 8, Latency: lat}
	sec := func(d time.Duration) float64 { return d.Seconds() }
	C, L := 100*time.Millisecond, 2*lat
	B := float64(network.FrameBytes(params))        // a whole model
	half := float64(network.FrameBytes(params / 2)) // a half on each of two shards
	A := float64(params) / applyR
	for _, c := range []struct {
		name   string
		spec   string
		shards int
		net    network.Spec
		want   float64 // seconds a round
	}{
		// Every push, then every pull, shares the shard's link: K·B/R each way.
		{"bsp incast, one shard", "bsp", 1, network.Spec{Default: link, ApplyRate: applyR},
			6*sec(L) + 2*k*B/rate + sec(C) + A},
		// Each shard moves half the bytes: K·B/2/R each way; a worker's own
		// link (B/R) is not the bottleneck. Each shard applies half the model.
		{"bsp incast, two shards", "bsp", 2, network.Spec{Default: link, ApplyRate: applyR},
			6*sec(L) + 2*k*half/rate + sec(C) + A/2},
		// Worker 0's link at R/8 < R/K caps its flow at R/8 (the others share
		// the rest and end sooner): B/(R/8) each way.
		{"bsp, one slow worker link", "bsp", 1, network.Spec{Default: link, ApplyRate: applyR, Workers: map[int]network.Link{0: slow}},
			6*sec(L) + 2*B/(rate/8) + sec(C) + A},
		// Shard 1's link at R/8: its K flows share it, K·(B/2)/(R/8) each
		// way; shard 0's end sooner. The barrier waits for shard 1's apply.
		{"bsp, one slow shard link", "bsp", 2, network.Spec{Default: link, ApplyRate: applyR, Shards: map[int]network.Link{1: slow}},
			6*sec(L) + 2*k*half/(rate/8) + sec(C) + A/2},
		// PSP with b = 1/2 of 2 shards: the push still waits for shard 1's
		// acknowledgement (K·(B/2)/(R/8), then its apply), but the pull goes
		// on with shard 0's block alone, K·(B/2)/R: shard 1's reply, at
		// (R/8)/K, leaves shard 0's its share of the worker's downlink.
		{"psp b=0.5, one slow shard link", "psp:c=4,b=0.5", 2, network.Spec{Default: link, ApplyRate: applyR, Shards: map[int]network.Link{1: slow}},
			6*sec(L) + k*half/(rate/8) + A/2 + k*half/rate + sec(C)},
	} {
		at := releases(t, Config{Spec: mustSpec(t, c.spec), Workers: k, Shards: c.shards, Timing: timing.WorkerSpec{Base: C},
			Iterations: 8, Seed: 1, Network: &c.net, Params: params})
		if len(at) < 4 {
			t.Fatalf("%s: %d releases", c.name, len(at))
		}
		got := (at[len(at)-1] - at[len(at)-2]).Seconds()
		t.Logf("%s: a round %.6f s, closed form %.6f s (%.2f%%)", c.name, got, c.want, 100*(got/c.want-1))
		if got < c.want*0.97 || got > c.want*1.03 {
			t.Errorf("%s: a round takes %.6f s, the closed form %.6f s", c.name, got, c.want)
		}
	}
}

// TestNetworkIncast is the incast: 4 workers of a 100 MB model into
// one shard over 10 Gbit/s, 1 s of compute: each push, then each pull,
// ends together after 4 × 100 MB / 1.25 GB/s = 0.32 s; the apply of 25·10⁶
// values at 2·10⁹ a second takes 12.5 ms: 4 / (1 + 0.32 + 0.0125 + 0.32) =
// 2.42 pushes a second (2.44 without the apply).
func TestNetworkIncast(t *testing.T) {
	for _, c := range []struct {
		apply, want float64
	}{{network.DefaultApplyRate, 4 / (1 + 0.32 + 0.0125 + 0.32)}, {0, 4 / (1 + 0.32 + 0.32)}} {
		r, err := Run(Config{Spec: mustSpec(t, "bsp"), Workers: 4, Timing: timing.WorkerSpec{Base: time.Second}, Iterations: 50, Seed: 1,
			Network: &network.Spec{Default: network.Link{Rate: 1.25e9, Latency: time.Nanosecond}, ApplyRate: c.apply}, Params: 25000000})
		if err != nil {
			t.Fatal(err)
		}
		got := float64(r.Pushes) / r.VirtualSeconds
		t.Logf("apply rate %g: %.4f pushes/s, closed form %.4f", c.apply, got, c.want)
		if got < c.want*0.97 || got > c.want*1.03 {
			t.Errorf("apply rate %g: %.4f pushes/s, want %.4f ± 3%%", c.apply, got, c.want)
		}
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
			Iterations: 100, Seed: 2, Network: &network.Spec{Default: network.Link{Rate: 1.25e9, Latency: 50 * time.Microsecond}}, Params: 235146})
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

// TestZeroJitterRotates: identical workers without jitter push at the same
// instants, and PSP with c = 3 of 4 drops one gradient of every round. In
// a fixed worker order the last worker would lose every round (it did:
// worker 3, 80 of 80 drops); the order rotates per round from the seed, so
// every worker loses some, the same ones with and without a network.
func TestZeroJitterRotates(t *testing.T) {
	var runs []map[int]int
	for _, net := range []*network.Spec{nil, {Default: network.DefaultLink}} {
		drops := map[int]int{}
		cfg := Config{Spec: mustSpec(t, "psp:c=3,b=1"), Workers: 4, Shards: 2, Timing: timing.WorkerSpec{Base: time.Second},
			Iterations: 40, Seed: 1, Network: net, Params: 1000}
		cfg.Trace = func(ev Event) {
			if ev.Kind == Drop {
				drops[ev.Worker]++
			}
		}
		if _, err := Run(cfg); err != nil {
			t.Fatal(err)
		}
		t.Logf("network %v: drops by worker %v", net != nil, drops)
		for p := range 4 {
			if drops[p] < 8 || drops[p] > 40 {
				t.Errorf("network %v: worker %d lost %d of 80 blocks, want its share of a rotation (8–40)", net != nil, p, drops[p])
			}
		}
		runs = append(runs, drops)
	}
	for p := range 4 {
		if runs[0][p] != runs[1][p] {
			t.Errorf("drops differ with a network: %v and %v", runs[0], runs[1])
			break
		}
	}
}

// TestNetworkDegradedRound: BSP's round of TestNetworkBSPRound, on a
// model whose block takes b = 1 ms alone on a link, with the shard's link
// divided by 10 from 50 ms to 300 ms of the cluster's time. A round wholly
// in the window is 6L + 2K·10b + C + A, one wholly outside 6L + 2K·b + C +
// A (the network re-shares at the window's edges, as at a start or an
// end), and one across an edge lies between the two.
func TestNetworkDegradedRound(t *testing.T) {
	const (
		k      = 4
		params = 249986 // a frame of 10⁶ bytes
		b      = time.Millisecond
		from   = 50 * time.Millisecond
		to     = 300 * time.Millisecond
	)
	net := gigNet()
	slow := net.Default
	slow.Degrade, slow.From, slow.To = 10, from, to
	net.Shards = map[int]network.Link{0: slow}
	at := releases(t, Config{Spec: mustSpec(t, "bsp"), Workers: k, Timing: timing.WorkerSpec{Base: compC},
		Iterations: 60, Seed: 1, Network: net, Params: params})
	apply := time.Duration(params) * time.Nanosecond
	fast := 6*pathL + 2*k*b + compC + apply
	slowRound := 6*pathL + 2*k*10*b + compC + apply
	var in, out, across int
	for j := 1; j < len(at); j++ {
		got := at[j] - at[j-1]
		switch {
		case at[j-1] >= from && at[j] <= to:
			in++
			if got != slowRound {
				t.Errorf("round %d (%s–%s) in the window took %s, want %s", j, at[j-1], at[j], got, slowRound)
			}
		case at[j] <= from || at[j-1] >= to:
			out++
			if got != fast {
				t.Errorf("round %d (%s–%s) outside the window took %s, want %s", j, at[j-1], at[j], got, fast)
			}
		default:
			across++
			if got <= fast || got >= slowRound {
				t.Errorf("round %d (%s–%s) across an edge took %s, want between %s and %s", j, at[j-1], at[j], got, fast, slowRound)
			}
		}
	}
	if in < 2 || out < 4 || across != 2 {
		t.Errorf("%d rounds in the window, %d outside, %d across: the test no longer covers each", in, out, across)
	}
}
