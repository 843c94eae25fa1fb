package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/wire"
)

// TestCheckFinite: every position of a NaN or ±Inf, at every length around
// the unrolled step, is found; finite extremes pass.
func TestCheckFinite(t *testing.T) {
	bads := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), math.Float32frombits(0x7fc00001)}
	for n := 0; n < 40; n++ {
		v := make([]float32, n)
		for i := range v {
			v[i] = math.MaxFloat32 * float32(1-2*(i%2)) // the largest finite values, both signs
		}
		if err := checkFinite(v); err != nil {
			t.Fatalf("n=%d: finite block refused: %v", n, err)
		}
		for i := 0; i < n; i++ {
			for _, b := range bads {
				old := v[i]
				v[i] = b
				if checkFinite(v) == nil {
					t.Fatalf("n=%d: %v at %d not found", n, b, i)
				}
				if checkFinite(v[1:]) == nil && i > 0 {
					t.Fatalf("n=%d: %v at %d not found in an unaligned view", n, b, i)
				}
				v[i] = old
			}
		}
	}
}

// TestPushScreenedAsItArrives: over the wire a pushed block is checked
// piece by piece as it arrives (Server.screenPush). A NaN in its last
// piece is refused, named by its index in the block, counted, and changes
// nothing; a push that is wrong in another way keeps that reason even if
// it also holds a NaN; a good push then applies.
func TestPushScreenedAsItArrives(t *testing.T) {
	n := 2*wire.PieceFloats + 3
	cfg := quickJob(t, "bsp", 1, 1)
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
	c, err := dialAs(t, tr, "secret", RoleWorker, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sh := sv.Shard()
	w0, v0 := sh.Weights()

	g := make([]float32, n)
	for i := range g {
		g[i] = 0.5
	}
	g[n-1] = float32(math.Inf(-1))
	var resp wire.Frame
	var re *wire.RemoteError
	err = c.Call(context.Background(), &wire.Frame{Type: wire.MsgPush, Floats: g}, &resp)
	if !errors.As(err, &re) || re.Code != wire.CodeNonFinite || !strings.Contains(re.Message, fmt.Sprintf("at index %d", n-1)) {
		t.Fatalf("push with -Inf in its last piece: %v", err)
	}
	g[5] = float32(math.NaN())
	err = c.Call(context.Background(), &wire.Frame{Type: wire.MsgPush, Shard: 7, Floats: g}, &resp)
	if !errors.As(err, &re) || re.Code != wire.CodeBadRequest || !strings.Contains(re.Message, "unknown shard 7") {
		t.Fatalf("push to an unknown shard, with a NaN: %v", err)
	}
	if st := sh.Stats(); st.NonFinite != 1 || st.Refused != 2 || st.Pushes != 0 {
		t.Errorf("non-finite %d (want 1), refused %d (want 2), accepted %d (want 0)", st.NonFinite, st.Refused, st.Pushes)
	}
	if w1, v1 := sh.Weights(); v1 != v0 || !slices.Equal(w0, w1) {
		t.Errorf("a refused push changed the weights or the version (%d → %d)", v0, v1)
	}
	g[5], g[n-1] = 0.5, 0.5
	if err := c.Call(context.Background(), &wire.Frame{Type: wire.MsgPush, Floats: g}, &resp); err != nil {
		t.Fatalf("a good push after the refusals: %v", err)
	}
	if st := sh.Stats(); st.Pushes != 1 {
		t.Errorf("accepted %d pushes, want 1", st.Pushes)
	}
}
