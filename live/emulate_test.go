package live

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/timing"
	"github.com/pacer-ps/pacer/wire"
)

// A job's server delays hold a worker's pull replies, by the model's draw
// for that shard and worker; an observer's reads and a job without
// delays are not held.
func TestServerDelayHoldsPullReplies(t *testing.T) {
	for _, c := range []struct {
		spec     string
		min, max time.Duration // of a worker's pull
	}{
		{"const:delay=60ms", 60 * time.Millisecond, 5 * time.Second},
		{"", 0, 50 * time.Millisecond},
	} {
		cfg := quickJob(t, "asp", 2, 1)
		cfg.ServerDelay = timing.MustServerDelay(c.spec)
		if err := cfg.Fill(); err != nil {
			t.Fatal(err)
		}
		p := &job.Description{Version: job.Version, Job: cfg, TrainN: 1000}
		ln, err := (wire.TCP{}).Listen("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		sv, err := newServer(ServerConfig{Index: 0, Params: p, Listener: ln, Token: "t", ControlToken: "c", ShardAddrs: []string{addr}},
			ShardConfig{Index: 0, Params: p, Init: make([]float32, 1000)}, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { sv.Run(ctx); close(done) }()
		cc := wire.ClientConfig{Hello: wire.Hello{Role: proto.RoleWorker, Worker: 1}}
		cc.Token = "t"
		dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
		w, err := wire.Dial(dctx, wire.TCP{}, addr, cc)
		if err != nil {
			t.Fatal(err)
		}
		var resp wire.Frame
		req := wire.Frame{Type: wire.MsgPull, Worker: 1}
		t0 := time.Now()
		if err := w.Call(dctx, &req, &resp); err != nil || len(resp.Floats) != 1000 {
			t.Fatalf("%q: pull: %v, %d floats", c.spec, err, len(resp.Floats))
		}
		took := time.Since(t0)
		o := proto.NewObserver(wire.TCP{}, addr, 0, "t", "c")
		blk := make([]float32, 1000)
		t1 := time.Now()
		if err := o.Weights(dctx, blk); err != nil {
			t.Fatal(err)
		}
		obs := time.Since(t1)
		o.Close()
		w.Close()
		dcancel()
		cancel()
		<-done
		t.Logf("%q: a worker's pull %s, an observer's %s", c.spec, took, obs)
		if took < c.min || took > c.max {
			t.Errorf("%q: a worker's pull took %s, want [%s, %s]", c.spec, took, c.min, c.max)
		}
		if obs >= 60*time.Millisecond {
			t.Errorf("%q: an observer's read took %s: held as a worker's", c.spec, obs)
		}
	}
}
