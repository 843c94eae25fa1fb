package launch

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/network"
	"github.com/pacer-ps/pacer/nsnet"
)

// A job with links runs every process on a host of its own whose link is
// shaped (package nsnet): a BSP round can go no faster than its incast
// through the shard's link allows, and it makes the same updates as on
// loopback.
func TestTCPLinksEmulated(t *testing.T) {
	skipUnderRace(t)
	if err := nsnet.Check(); err != nil {
		t.Skipf("%v (run the tests as root with iproute2 to include this)", err)
	}
	const rate = 20e6 // bytes/s: the shard's link
	cfg := fmnistJob(t, "bsp", 2, 1, 1024, 1)
	// The two runs must make the same BSP rounds: a worker removed on a
	// busy machine for missed heartbeats (and admitted again) would leave
	// a round without its gradient, so no worker is removed here.
	cfg.HeartbeatTimeout = time.Minute
	plain, err := TrainResult(context.Background(), cfg, tcpOpts(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Network = &network.Spec{Default: network.DefaultLink, Shards: map[int]network.Link{0: {Rate: rate, Latency: network.DefaultLink.Latency}}}
	shaped, err := TrainResult(context.Background(), cfg, tcpOpts(t), nil)
	if errors.Is(err, nsnet.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	p, s := plain.Run, shaped.Run
	// Each round moves both workers' blocks in through the shard's link,
	// then (BSP: after the round) both back out: 4 MLP blocks at the rate.
	block := float64(network.FrameBytes(235146))
	rounds := float64(s.Updates)
	floor := rounds * 4 * block / rate
	t.Logf("loopback: %d updates in %.2f s, accuracy %.4f; shard link %.0f MB/s: %d updates in %.2f s (the link alone needs %.2f s), accuracy %.4f",
		p.Updates, p.Seconds, p.FinalAccuracy, rate/1e6, s.Updates, s.Seconds, floor, s.FinalAccuracy)
	if s.Updates != p.Updates || s.FinalAccuracy != p.FinalAccuracy {
		t.Errorf("BSP through shaped links made %d updates to accuracy %v, on loopback %d to %v: want the same", s.Updates, s.FinalAccuracy, p.Updates, p.FinalAccuracy)
	}
	if s.Seconds < floor*0.9 {
		t.Errorf("%d rounds in %.2f s through a %.0f MB/s link: faster than its %.2f s of transfers", s.Updates, s.Seconds, rate/1e6, floor)
	}
}

func TestLinksNeedTCP(t *testing.T) {
	cfg := fmnistJob(t, "bsp", 2, 1, 256, 1)
	cfg.Network = &network.Spec{Default: network.DefaultLink}
	_, err := TrainResult(context.Background(), cfg, Options{Mode: "inproc"}, nil)
	if err == nil || !strings.Contains(err.Error(), "tcp mode only") {
		t.Fatalf("inproc with links: %v", err)
	}
	o := tcpOpts(t)
	o.MetricsAddr = "127.0.0.1:0"
	if _, err := TrainResult(context.Background(), cfg, o, nil); err == nil || !strings.Contains(err.Error(), "metrics") {
		t.Fatalf("links with metrics: %v", err)
	}
}

// A worker's time in its clock reports is all of its time: one worker
// behind a slow shard link pulls the model and pushes its gradient, and
// the held time the job's summary keeps covers both transfers, the push
// too (it was counted only from the next compute on, so the last report
// left out every worker's last push and the check's steady rate came out
// too fast: here, half the time).
func TestTCPLinksWaitCountsLastPush(t *testing.T) {
	skipUnderRace(t)
	if err := nsnet.Check(); err != nil {
		t.Skipf("%v (run the tests as root with iproute2 to include this)", err)
	}
	const rate = 5e6                        // bytes/s: the shard's link
	cfg := fmnistJob(t, "bsp", 1, 1, 32, 1) // one iteration
	cfg.HeartbeatTimeout = time.Minute
	cfg.Network = &network.Spec{Default: network.DefaultLink, Shards: map[int]network.Link{0: {Rate: rate, Latency: network.DefaultLink.Latency}}}
	res, err := TrainResult(context.Background(), cfg, tcpOpts(t), nil)
	if errors.Is(err, nsnet.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	r := res.Run
	if len(r.WorkerIterations) != 1 || len(r.WorkerWait) != 1 || r.WorkerIterations[0].N < 1 || r.WorkerWait[0] >= 1 {
		t.Fatalf("per-worker figures %+v, %v", r.WorkerIterations, r.WorkerWait)
	}
	it := r.WorkerIterations[0]
	busy := float64(it.N) * it.Mean
	total := busy / (1 - r.WorkerWait[0])
	// An idle link lets a packet (up to 64 KiB) through at once: each
	// transfer pays for the rest.
	const burst = 65536
	transfers := float64(it.N) * 2 * float64(network.FrameBytes(235146)-burst) / rate
	t.Logf("%d iterations: %.3f s held and computing (%.3f s computing); the link alone needs %.3f s", it.N, total, busy, transfers)
	if total < 0.8*transfers {
		t.Errorf("%d iterations reported as %.3f s held and computing: less than their %d pulls and pushes through a %.0f MB/s link take (%.3f s)",
			it.N, total, it.N, rate/1e6, transfers)
	}
}
