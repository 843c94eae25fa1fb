package wire

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
)

// TestFloatsHookChecksPieces: the Floats hook sees a pushed payload in
// order, piece by piece, with the frame's header; a refusal in the middle
// of a frame is sent back as the handler's error would be, the handler
// never sees the frame (the weights stay), the rest of the payload is read
// (the connection goes on), and later frames are checked whole.
func TestFloatsHookChecksPieces(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr func() Transport, cfg Config) {
		const n = 3*PieceFloats + 5
		e := &env{tr: tr(), shard: newTestShard(n), cfg: cfg, served: make(chan error, 1)}
		var mu sync.Mutex
		var seen []int
		var workers []int32
		hooks := Hooks{Floats: func(p *Peer, f *Frame, piece []float32, off int) error {
			mu.Lock()
			seen = append(seen, off, len(piece))
			workers = append(workers, f.Worker)
			mu.Unlock()
			if f.Type != MsgPush {
				t.Errorf("hook ran on a %s frame", f.Type)
			}
			return CheckFinite(piece)
		}}
		e.serveHooks(t, cfg, hooks)
		c := e.mustDial(t)
		ctx := context.Background()
		took := func() []int {
			mu.Lock()
			defer mu.Unlock()
			s := seen
			seen = nil
			return s
		}

		g := make([]float32, n)
		for i := range g {
			g[i] = 1
		}
		g[2*PieceFloats+7] = float32(nanValue())
		var resp Frame
		var re *RemoteError
		if err := c.Call(ctx, &Frame{Type: MsgPush, Worker: 3, Floats: g}, &resp); !errors.As(err, &re) || re.Code != CodeNonFinite {
			t.Fatalf("push with a NaN in its third piece: %v", err)
		}
		if got, want := took(), []int{0, PieceFloats, PieceFloats, PieceFloats, 2 * PieceFloats, PieceFloats}; !slices.Equal(got, want) {
			t.Errorf("pieces (offset, length) seen %v, want %v: checked in order up to the refusal", got, want)
		}
		if e.shard.version != 0 || e.shard.w[0] != 0 {
			t.Fatal("the handler saw a refused frame")
		}

		g[2*PieceFloats+7] = 1
		if err := c.Call(ctx, &Frame{Type: MsgPush, Worker: 3, Floats: g}, &resp); err != nil || resp.Tag != 1 {
			t.Fatalf("a good push after the refusal: %v (version %d)", err, resp.Tag)
		}
		if got, want := took(), []int{0, PieceFloats, PieceFloats, PieceFloats, 2 * PieceFloats, PieceFloats, 3 * PieceFloats, 5}; !slices.Equal(got, want) {
			t.Errorf("pieces seen %v, want %v", got, want)
		}
		if e.shard.w[n-1] != 1 {
			t.Error("the good push was not applied whole")
		}
		if err := c.Call(ctx, &Frame{Type: MsgPull, Count: 4}, &resp); err != nil || len(took()) != 0 {
			t.Errorf("pull: %v; a pull request has no payload to check", err)
		}
		if workers[0] != 3 {
			t.Errorf("hook saw worker %d, want the header's 3", workers[0])
		}
		if s := e.srv.Stats().Snapshot(); s.HandlerErrors != 1 {
			t.Errorf("handler errors %d, want the one refusal", s.HandlerErrors)
		}
	})
}

// serveHooks is serve with hooks installed before Serve.
func (e *env) serveHooks(t *testing.T, cfg Config, h Hooks) {
	t.Helper()
	srv, err := NewServer(cfg, e.shard.handle)
	if err != nil {
		t.Fatal(err)
	}
	srv.SetHooks(h)
	e.srv = srv
	ln, err := e.tr.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.addr = ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	go func() { e.served <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		close(e.shard.block)
		if err := e.stop(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
}
