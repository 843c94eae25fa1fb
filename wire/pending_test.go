package wire

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"
)

// TestPendingCapAndAuthHook: connections that have not authenticated are
// capped (the one over the cap is closed unread and reported), a slot
// frees when its connection ends, and a refused token reaches the
// AuthFailed hook with the peer's address.
func TestPendingCapAndAuthHook(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr func() Transport, cfg Config) {
		srvCfg := cfg
		srvCfg.MaxPending = 2
		type event struct {
			addr    net.Addr
			err     error
			pending int
		}
		auth, refused := make(chan event, 16), make(chan event, 16)
		e := &env{tr: tr(), shard: newTestShard(1000), cfg: cfg, served: make(chan error, 1)}
		srv, err := NewServer(srvCfg, e.shard.handle)
		if err != nil {
			t.Fatal(err)
		}
		srv.SetHooks(Hooks{
			AuthFailed:     func(a net.Addr, err error) { auth <- event{addr: a, err: err} },
			PendingRefused: func(a net.Addr, n int) { refused <- event{addr: a, pending: n} },
		})
		e.srv = srv
		ln, err := e.tr.Listen("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		e.addr = ln.Addr().String()
		ctx, cancel := context.WithCancel(context.Background())
		e.cancel = cancel
		go func() { e.served <- srv.Serve(ctx, ln) }()
		t.Cleanup(func() { close(e.shard.block); e.stop() })

		raw := func() net.Conn {
			nc, err := e.tr.Dial(context.Background(), e.addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { nc.Close() })
			return nc
		}
		silent1, _ := raw(), raw()
		// Over TLS the dial itself fails: the handshake finds it closed.
		if third, err := e.tr.Dial(context.Background(), e.addr); err == nil {
			defer third.Close()
			third.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := third.Read(make([]byte, 1)); err == nil {
				t.Fatal("a third unauthenticated connection was served")
			} else if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("the third connection was left open: %v", err)
			}
		}
		select {
		case ev := <-refused:
			if ev.pending != 2 || ev.addr == nil {
				t.Fatalf("refusal reported as %+v", ev)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no PendingRefused report")
		}
		if n := srv.Stats().PendingRefused.Load(); n != 1 {
			t.Fatalf("PendingRefused = %d, want 1", n)
		}
		// Closing a silent connection frees its slot: a worker gets in.
		silent1.Close()
		deadline := time.Now().Add(5 * time.Second)
		for {
			c, err := e.dial(t, "worker", nil)
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no slot after a pending connection closed: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		// A wrong token: refused, and the hook hears who it was.
		bad := &env{tr: e.tr, addr: e.addr, cfg: cfg}
		bad.cfg.Token = "not-the-token"
		if _, err := bad.dial(t, "worker", nil); err == nil {
			t.Fatal("wrong token admitted")
		}
		select {
		case ev := <-auth:
			if ev.addr == nil || ev.addr.String() == "" || !errors.Is(ev.err, ErrUnauthenticated) {
				t.Fatalf("AuthFailed reported %+v", ev)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no AuthFailed report for a wrong token")
		}
	})
}
