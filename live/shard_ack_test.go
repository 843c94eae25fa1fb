package live

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/wire"
)

// TestAckBeforeApply: the push that completes a BSP round is acknowledged
// while the apply it decided has not been made (the apply is held here
// until the acknowledgement is in), and a pull of the new version that
// arrives meanwhile waits for the apply and gets the whole new version.
func TestAckBeforeApply(t *testing.T) {
	const n = 1000
	cfg := quickJob(t, "bsp", 2, 1)
	cfg.Momentum, cfg.LR = -1, 0.5
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
	gate, entered := make(chan struct{}), make(chan struct{}, 1)
	sv.Shard().onApply = func() {
		entered <- struct{}{}
		<-gate
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { sv.Run(ctx); close(done) }()
	opened := false
	defer func() {
		if !opened {
			close(gate)
		}
		cancel()
		<-done
	}()
	var ws [2]*wire.Conn
	for i := range ws {
		if ws[i], err = dialAs(t, tr, "secret", RoleWorker, int32(i)); err != nil {
			t.Fatal(err)
		}
		defer ws[i].Close()
	}
	g := make([]float32, n)
	for i := range g {
		g[i] = 1
	}
	call := func(c *wire.Conn, req *wire.Frame) (wire.Frame, error) {
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		var resp wire.Frame
		err := c.Call(cctx, req, &resp)
		return resp, err
	}
	if _, err := call(ws[0], &wire.Frame{Type: wire.MsgPush, Worker: 0, Floats: g}); err != nil {
		t.Fatal(err)
	}
	// Worker 1's push completes the round: its acknowledgement comes back
	// while the apply is held at the gate.
	ack, err := call(ws[1], &wire.Frame{Type: wire.MsgPush, Worker: 1, Floats: g})
	if err != nil {
		t.Fatalf("the round's last push was not acknowledged while its apply was held: %v", err)
	}
	if ack.Tag != 1 {
		t.Fatalf("acknowledged at version %d, want 1", ack.Tag)
	}
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the apply never started")
	}
	pulled := make(chan wire.Frame, 1)
	go func() {
		resp, err := call(ws[0], &wire.Frame{Type: wire.MsgPull, Worker: 0, Extra: 1})
		if err != nil {
			t.Error(err)
		}
		pulled <- resp
	}()
	select {
	case resp := <-pulled:
		t.Fatalf("a pull was answered (version %d) while the apply was held", resp.Tag)
	case <-time.After(100 * time.Millisecond):
	}
	close(gate)
	opened = true
	var resp wire.Frame
	select {
	case resp = <-pulled:
	case <-time.After(10 * time.Second):
		t.Fatal("the pull was not answered after the apply")
	}
	if resp.Tag != 1 || len(resp.Floats) != n {
		t.Fatalf("pull answered version %d with %d floats, want version 1 with %d", resp.Tag, len(resp.Floats), n)
	}
	for i, v := range resp.Floats {
		if v != -0.5 { // w⁰ = 0, mean gradient 1, rate 0.5
			t.Fatalf("w[%d] = %v after the round, want -0.5", i, v)
		}
	}
	if st := sv.Shard().Stats(); st.Updates != 1 || st.AfterAck != 1 {
		t.Errorf("updates %d, made after the acknowledgement %d: want 1 and 1", st.Updates, st.AfterAck)
	}
}
