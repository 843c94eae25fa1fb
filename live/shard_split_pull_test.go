package live

import (
	"context"
	"log/slog"
	"math"
	"runtime"
	"sync"
	"testing"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// TestPullsDuringSplitApplies: while one worker's pushes are applied (ASP,
// each on arrival, split across two cores), another pulls the block over
// and over; every answer is one whole version: all its values equal (the
// gradient is the same everywhere), and every answer naming a version
// carries the same values as every other answer naming it.
func TestPullsDuringSplitApplies(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	const pushes = 12
	n := 2*minSplit + 5
	cfg := quickJob(t, "asp", 2, 1)
	cfg.Momentum = -1
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	tr := &wire.Inproc{}
	ln, err := tr.Listen("s0")
	if err != nil {
		t.Fatal(err)
	}
	sc := ShardConfig{Index: 0, Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 1000}, Init: make([]float32, n)}
	sv, err := newServer(ServerConfig{Index: 0, Params: sc.Params, Listener: ln, Transport: tr, Token: "secret", ControlToken: "c",
		ShardAddrs: []string{"s0"}}, sc, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { sv.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	pusher, err := dialAs(t, tr, "secret", proto.RoleWorker, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pusher.Close()
	puller, err := dialAs(t, tr, "secret", proto.RoleWorker, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer puller.Close()

	var wg sync.WaitGroup
	stop := make(chan struct{})
	seen := map[uint64]uint32{}
	answers := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		var resp wire.Frame
		for i := 0; i < 10_000; i++ {
			select {
			case <-stop:
				if answers > 0 {
					return
				}
			default:
			}
			if err := puller.Call(context.Background(), &wire.Frame{Type: wire.MsgPull, Worker: 1}, &resp); err != nil {
				t.Error(err)
				return
			}
			if len(resp.Floats) != n {
				t.Errorf("pull of %d floats, want %d", len(resp.Floats), n)
				return
			}
			first := math.Float32bits(resp.Floats[0])
			for j, v := range resp.Floats {
				if math.Float32bits(v) != first {
					t.Errorf("version %d: w[%d] = %v, w[0] = %v: a half-applied version", resp.Tag, j, v, resp.Floats[0])
					return
				}
			}
			if b, ok := seen[resp.Tag]; ok && b != first {
				t.Errorf("version %d answered with %v and with %v", resp.Tag, math.Float32frombits(b), resp.Floats[0])
				return
			}
			seen[resp.Tag] = first
			answers++
		}
	}()
	g := make([]float32, n)
	for i := range g {
		g[i] = 1
	}
	var resp wire.Frame
	v := uint64(0)
	for range pushes {
		if err := pusher.Call(context.Background(), &wire.Frame{Type: wire.MsgPush, Worker: 0, Tag: v, Extra: v, Floats: g}, &resp); err != nil {
			t.Fatal(err)
		}
		v = resp.Tag
	}
	close(stop)
	wg.Wait()
	if v != pushes || sv.Shard().Stats().Updates != pushes {
		t.Fatalf("version %d after %d pushes", v, pushes)
	}
	if len(sv.Shard().split.parts) != 2 {
		t.Errorf("the apply ran in %d parts, want 2", len(sv.Shard().split.parts))
	}
	t.Logf("%d pulls answered, %d versions seen", answers, len(seen))
}
