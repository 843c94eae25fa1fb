package live

import (
	"testing"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/wire"
)

// TestSpareGradsBound: one spare per worker, within spareGradBytes, at
// least one.
func TestSpareGradsBound(t *testing.T) {
	for _, c := range []struct{ k, n, want int }{
		{8, 10_000_000, 8},
		{100, 10_000_000, spareGradBytes / 40_000_000},
		{4, 1 << 30, 1},
		{1000, 100, 1000},
		{3, 0, 0},
	} {
		if got := spareGrads(c.k, c.n); got != c.want {
			t.Errorf("spareGrads(%d, %d) = %d, want %d", c.k, c.n, got, c.want)
		}
		if c.n > 0 && spareGrads(c.k, c.n) > 1 && spareGrads(c.k, c.n)*4*c.n > spareGradBytes {
			t.Errorf("spareGrads(%d, %d) spares exceed %d bytes", c.k, c.n, spareGradBytes)
		}
	}
}

// TestRoundsAllocateNoGradients: a BSP shard of 8 workers starts with a
// spare block per worker and, once every connection holds a buffer, runs
// its rounds without allocating (it used to keep 4 spares and allocate
// the other 4 blocks every round). An ASP shard keeps no spares made in
// advance (it applies each gradient from the receive buffer).
func TestRoundsAllocateNoGradients(t *testing.T) {
	const k, n = 8, 4096
	cfg := quickJob(t, "bsp", k, 1)
	cfg.Momentum = -1
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	s, err := newShard(ShardConfig{Index: 0, Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 100}, Init: make([]float32, n)})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.free) != k || s.maxFree != k {
		t.Fatalf("%d spares made in advance (cap %d), want %d", len(s.free), s.maxFree, k)
	}
	// Each worker's receive buffer, as its connection would hold it: a
	// kept push hands it to the shard and gets a spare back.
	bufs := make([][]float32, k)
	for w := range bufs {
		bufs[w] = make([]float32, n)
	}
	var req, resp wire.Frame
	round := uint64(0)
	run := func() {
		round++
		for w := range k {
			req = wire.Frame{Type: wire.MsgPush, Worker: int32(w), Tag: round, Extra: round - 1, Floats: bufs[w]}
			if err := s.push(nil, &req, &resp); err != nil {
				t.Fatal(err)
			}
			if req.Floats != nil {
				bufs[w] = req.Floats[:n]
			} else {
				bufs[w] = make([]float32, n) // what the connection's next read would do
			}
		}
		if v := resp.Tag; v != round {
			t.Fatalf("round %d ended at version %d", round, v)
		}
	}
	run() // the histogram, gather slices and maps grow once
	if a := testing.AllocsPerRun(5, run); a != 0 {
		t.Errorf("%v allocations per round of %d workers, want 0", a, k)
	}

	acfg := quickJob(t, "asp", k, 1)
	if err := acfg.Fill(); err != nil {
		t.Fatal(err)
	}
	a, err := newShard(ShardConfig{Index: 0, Params: &job.Description{Version: job.Version, Job: acfg, TrainN: 100}, Init: make([]float32, n)})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.free) != 0 {
		t.Errorf("an ASP shard made %d spares in advance, want none", len(a.free))
	}
}
