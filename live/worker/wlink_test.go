package worker

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/nn"
	"github.com/pacer-ps/pacer/wire"
)

// TestPullReadsIntoParams: a link with the worker's block as its target
// reads a pull reply straight into it (the event's floats are the block
// itself, holding the shard's weights), and a link without one still hands
// over a buffer of its own (PSP, whose late replies may land while the
// worker computes).
func TestPullReadsIntoParams(t *testing.T) {
	const n = 1000
	init := make([]float32, n)
	for i := range init {
		init[i] = float32(i) / 4
	}
	cfg := quickJob(t, "bsp", 1, 1)
	// A flat model of n weights: the shard serves init, the block the
	// test reads back.
	cfg.Model, cfg.InitSHA256 = nn.FlatName(n), nn.FlatDigest(init)
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	tr := &wire.Inproc{}
	ln, err := tr.Listen("s0")
	if err != nil {
		t.Fatal(err)
	}
	params := &job.Description{Version: job.Version, Job: cfg, TrainN: 100}
	sv, err := live.NewServer(live.ServerConfig{Index: 0, Params: params, Listener: ln, Transport: tr, Token: "secret", ControlToken: "c",
		ShardAddrs: []string{"s0"}, Init: init})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() { sv.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	desc, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	for _, direct := range []bool{true, false} {
		w := &Worker{tr: tr, wireCfg: wire.Config{Token: "secret"}, log: slog.New(slog.DiscardHandler), events: make(chan linkEvent, 2),
			info: proto.JobInfo{Job: desc}} // the Hello names the job the shard runs
		l := newLink(w, 0, "s0", n)
		params := make([]float32, n+2)
		params[n], params[n+1] = -1, -1 // past the block: must stay
		if direct {
			l.into = params[:n:n]
		}
		finished := make(chan bool, 1)
		go func() { finished <- l.pull(ctx, &linkOp{kind: opPull}) }()
		var ev linkEvent
		select {
		case ev = <-w.events:
		case <-ctx.Done():
			t.Fatal("no pull reply")
		}
		if ev.kind != evData || len(ev.floats) != n {
			t.Fatalf("event %v (err %v, %d floats)", ev.kind, ev.err, len(ev.floats))
		}
		if inPlace := &ev.floats[0] == &params[0]; inPlace != direct {
			t.Errorf("direct=%v: reply read in place: %v", direct, inPlace)
		}
		if direct && !slices.Equal(params[:n], init) {
			t.Error("the block read in place differs from the shard's weights")
		}
		if !slices.Equal(ev.floats, init) || params[n] != -1 || params[n+1] != -1 {
			t.Error("the reply differs from the shard's weights, or was written past the block")
		}
		ev.done <- struct{}{}
		if !<-finished {
			t.Error("the pull did not finish")
		}
		l.conn.Close()
	}
}
