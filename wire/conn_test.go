package wire

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestHandshake(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr func() Transport, cfg Config) {
		e := start(t, tr(), cfg, cfg)
		a, b := e.mustDial(t), e.mustDial(t)
		if a.HelloOK().Type != MsgHelloOK || a.HelloOK().Worker == b.HelloOK().Worker {
			t.Fatalf("HelloOK %+v / %+v: want distinct assigned ids", a.HelloOK(), b.HelloOK())
		}
		var params struct{ Size int }
		if err := a.HelloOK().JSON(&params); err != nil || params.Size != 1000 {
			t.Fatalf("job params %+v, %v", params, err)
		}
		// Refused by the handler: an error reply, the connection closed.
		_, err := e.dial(t, "intruder", nil)
		var re *RemoteError
		if !errors.As(err, &re) || re.Code != CodeBadRequest {
			t.Fatalf("refused hello: %v", err)
		}
		if n := e.srv.Stats().AuthFailures.Load(); n != 1 {
			t.Fatalf("AuthFailures = %d, want 1", n)
		}
	})
}

func TestWrongTokenRefused(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr func() Transport, cfg Config) {
		bad := cfg
		bad.Token = "s3creT"
		e := start(t, tr(), bad, cfg)
		_, err := e.mustDialErr(t)
		var re *RemoteError
		if !errors.As(err, &re) || re.Code != CodeUnauthenticated {
			t.Fatalf("wrong token: %v, want unauthenticated", err)
		}
		// A first frame that is not a Hello is refused as well.
		nc, err := e.tr.Dial(context.Background(), e.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		w := NewWriter(nc, 0, 0)
		w.WriteFrame(&Frame{Type: MsgPull, ReqID: 1, Count: 10})
		w.Flush()
		var f Frame
		r := NewReader(nc, 0, 0)
		if err := r.ReadFrame(&f); err != nil || f.Type != MsgError || ErrorCode(f.Extra) != CodeUnauthenticated {
			t.Fatalf("non-hello first frame: reply %+v, %v", f, err)
		}
		if err := r.ReadFrame(&f); err == nil {
			t.Fatal("connection still open after refusal")
		}
		if n := e.srv.Stats().AuthFailures.Load(); n != 2 {
			t.Fatalf("AuthFailures = %d, want 2", n)
		}
		if len(e.srv.Peers()) != 0 {
			t.Fatal("refused connections listed as peers")
		}
	})
}

func (e *env) mustDialErr(t *testing.T) (*Conn, error) { return e.dial(t, "worker", nil) }

func TestPushPull(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr func() Transport, cfg Config) {
		e := start(t, tr(), cfg, cfg)
		c := e.mustDial(t)
		ctx := context.Background()
		push := Frame{Type: MsgPush, Offset: 100, Tag: 1, Floats: make([]float32, 500)}
		for i := range push.Floats {
			push.Floats[i] = float32(i) * 0.5
		}
		var ack Frame
		for k := 1; k <= 2; k++ {
			if err := c.Call(ctx, &push, &ack); err != nil {
				t.Fatal(err)
			}
			if ack.Type != MsgPushAck || ack.Tag != uint64(k) || ack.Count != 500 || ack.ReqID != push.ReqID {
				t.Fatalf("ack %+v", ack)
			}
		}
		resp := Frame{Floats: make([]float32, 0, 600)}
		buf := &resp.Floats[:1][0]
		if err := c.Call(ctx, &Frame{Type: MsgPull, Offset: 50, Count: 600}, &resp); err != nil {
			t.Fatal(err)
		}
		if resp.Type != MsgPullResp || resp.Tag != 2 || len(resp.Floats) != 600 || &resp.Floats[0] != buf {
			t.Fatalf("pull resp type %s tag %d len %d (buffer reused: %v)", resp.Type, resp.Tag, len(resp.Floats), &resp.Floats[0] == buf)
		}
		for i, v := range resp.Floats {
			want := float32(0)
			if j := i + 50 - 100; j >= 0 && j < 500 {
				want = 2 * float32(j) * 0.5
			}
			if v != want {
				t.Fatalf("w[%d] = %v, want %v", i+50, v, want)
			}
		}
	})
}

func TestErrorsKeepConnection(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr func() Transport, cfg Config) {
		e := start(t, tr(), cfg, cfg)
		c := e.mustDial(t)
		ctx := context.Background()
		var resp Frame
		nan := Frame{Type: MsgPush, Floats: []float32{1, float32(nanValue())}}
		var re *RemoteError
		if err := c.Call(ctx, &nan, &resp); !errors.As(err, &re) || re.Code != CodeNonFinite {
			t.Fatalf("NaN push: %v", err)
		}
		if err := c.Call(ctx, &Frame{Type: MsgPull, Offset: 990, Count: 20}, &resp); !errors.As(err, &re) || re.Code != CodeBadRequest {
			t.Fatalf("out-of-range pull: %v", err)
		}
		if err := c.Call(ctx, &Frame{Type: MsgHello}, &resp); !errors.As(err, &re) || re.Code != CodeProtocol {
			t.Fatalf("second hello: %v", err)
		}
		// Refused locally before anything is written; the connection survives.
		if err := c.Call(ctx, &Frame{Type: MsgControl, Floats: []float32{1}}, &resp); !errors.Is(err, ErrPayload) {
			t.Fatalf("unencodable request: %v", err)
		}
		if err := c.Call(ctx, &Frame{Type: MsgHeartbeat, Tag: 5}, &resp); err != nil || resp.Tag != 5 {
			t.Fatalf("connection unusable after errors: %v %+v", err, resp)
		}
		s := e.srv.Stats().Snapshot()
		if s.HandlerErrors != 2 || s.ProtocolErrors != 1 || c.Stats().RemoteErrors.Load() != 3 {
			t.Fatalf("stats %+v, client remote errors %d", s, c.Stats().RemoteErrors.Load())
		}
		if w := e.shard.w; w[0] != 0 || w[1] != 0 {
			t.Fatal("a rejected push changed the weights")
		}
	})
}

func TestBadFrameClosesConnection(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr func() Transport, cfg Config) {
		// The client allows bigger frames than the server: the server must
		// refuse from the header alone, answer and close.
		big, small := cfg, cfg
		big.MaxPayload, small.MaxPayload = 1<<20, 1<<12
		e2 := start(t, tr(), big, small)
		c := e2.mustDial(t)
		var resp Frame
		err := c.Call(context.Background(), &Frame{Type: MsgPush, Floats: make([]float32, 2000)}, &resp)
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("oversize push: %v, want ErrClosed", err)
		}
		<-c.Done()
		if got := e2.srv.Stats().Snapshot().DecodeErrors["too_large"]; got != 1 {
			t.Fatalf("too_large count %d", got)
		}
		if c.Stats().Unroutable.Load() != 1 {
			t.Fatalf("the server's bad_frame notice was not received")
		}
		if err := c.Call(context.Background(), &Frame{Type: MsgHeartbeat}, &resp); !errors.Is(err, ErrClosed) {
			t.Fatalf("call on a dead connection: %v", err)
		}
	})
}

func nanValue() float64 { var z float64; return z / z }

func TestConcurrentCallsAndNotify(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr func() Transport, cfg Config) {
		e := start(t, tr(), cfg, cfg)
		releases := make(chan uint64, 16)
		c, err := e.dial(t, "worker", func(f *Frame) {
			if f.Type == MsgRelease {
				releases <- f.Tag
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		for i := range e.shard.w {
			e.shard.w[i] = float32(i)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var resp Frame
				for k := 0; k < 20; k++ {
					off := uint64(g*100 + k)
					if err := c.Call(ctx, &Frame{Type: MsgPull, Offset: off, Count: 50}, &resp); err != nil {
						errs <- err
						return
					}
					if resp.Offset != off || resp.Floats[0] != float32(off) || resp.Floats[49] != float32(off+49) {
						errs <- errors.New("reply routed to the wrong call")
						return
					}
				}
			}()
		}
		for clock := uint64(1); clock <= 3; clock++ {
			if err := c.Send(ctx, &Frame{Type: MsgClock, Tag: clock}); err != nil {
				t.Fatal(err)
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		got := map[uint64]bool{}
		for len(got) < 3 {
			select {
			case tag := <-releases:
				got[tag] = true
			case <-time.After(5 * time.Second):
				t.Fatalf("releases received: %v", got)
			}
		}
	})
}

func TestAbandonedCallClosesConnection(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr func() Transport, cfg Config) {
		e := start(t, tr(), cfg, cfg)
		c := e.mustDial(t)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		var resp Frame
		err := c.Call(ctx, &Frame{Type: MsgControl}, &resp) // the handler blocks
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(c.Err(), ErrClosed) {
			t.Fatalf("Call %v, Err %v", err, c.Err())
		}
		<-c.Done()
		// CallTimeout applies when the context has none.
		short := cfg
		short.CallTimeout = 50 * time.Millisecond
		e.cfg = short
		c2 := e.mustDial(t)
		if err := c2.Call(context.Background(), &Frame{Type: MsgControl}, &resp); err == nil || c2.Err() == nil {
			t.Fatalf("CallTimeout not applied: %v", err)
		}
	})
}

// TestWriteCutByDeadline: a request whose write runs into the call's own
// context deadline (the server has stopped reading) reports the deadline,
// not a bare "i/o timeout", so callers can tell it from a broken peer.
func TestWriteCutByDeadline(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr func() Transport, cfg Config) {
		e := start(t, tr(), cfg, cfg)
		c := e.mustDial(t)
		blocked := make(chan error, 1)
		go func() {
			var resp Frame
			blocked <- c.Call(context.Background(), &Frame{Type: MsgControl}, &resp) // the server stops reading
		}()
		time.Sleep(20 * time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		big := make([]float32, 8<<20) // 32 MiB: more than any socket buffer holds
		var resp Frame
		err := c.Call(ctx, &Frame{Type: MsgPush, Count: uint32(len(big)), Floats: big}, &resp)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Call %v: want the context's deadline", err)
		}
		if err := <-blocked; err == nil {
			t.Fatal("the blocked call succeeded on a failed connection")
		}
	})
}

func TestServeStops(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr func() Transport, cfg Config) {
		e := start(t, tr(), cfg, cfg)
		c := e.mustDial(t)
		if len(e.srv.Peers()) != 1 {
			t.Fatalf("peers %d", len(e.srv.Peers()))
		}
		if err := e.stop(); err != nil {
			t.Fatalf("Serve: %v", err)
		}
		select {
		case <-c.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("client connection survived server shutdown")
		}
		if err := c.Send(context.Background(), &Frame{Type: MsgHeartbeat}); !errors.Is(err, ErrClosed) {
			t.Fatalf("Send after shutdown: %v", err)
		}
		if _, err := e.dial(t, "worker", nil); err == nil {
			t.Fatal("dial succeeded after shutdown")
		}
	})
}

func TestServerTimeoutsAndPreAuthLimit(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr func() Transport, cfg Config) {
		srvCfg := cfg
		srvCfg.HandshakeTimeout, srvCfg.FrameTimeout = 100*time.Millisecond, 100*time.Millisecond
		e := start(t, tr(), cfg, srvCfg)
		expectClosed := func(what string, nc interface{ Read([]byte) (int, error) }) {
			t.Helper()
			var f Frame
			r := NewReader(nc, 0, 0)
			for {
				if err := r.ReadFrame(&f); err != nil {
					return // closed, as it should be
				}
				if f.Type != MsgError {
					t.Fatalf("%s: unexpected %s", what, f.Type)
				}
			}
		}
		// Silent client: dropped after HandshakeTimeout.
		nc, err := e.tr.Dial(context.Background(), e.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		expectClosed("silent client", nc)

		// A pre-auth frame over 64 KiB is refused from its header alone.
		nc2, err := e.tr.Dial(context.Background(), e.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc2.Close()
		go func() {
			w := NewWriter(nc2, 0, 0)
			w.WriteFrame(&Frame{Type: MsgHello, Bytes: make([]byte, MaxHelloPayload+1)})
			w.Flush()
		}()
		expectClosed("big hello", nc2)

		// Authenticated, then a header whose payload never comes.
		c := e.mustDial(t)
		hdr, _ := AppendFrame(nil, &Frame{Type: MsgPush, Floats: make([]float32, 1000)}, 0)
		c.wmu.Lock()
		c.nc.Write(hdr[:HeaderSize+10])
		c.wmu.Unlock()
		select {
		case <-c.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("stalled frame did not close the connection")
		}
		s := e.srv.Stats().Snapshot()
		if s.DecodeErrors["too_large"] != 1 || s.IOErrors < 2 {
			t.Fatalf("stats %+v", s)
		}
	})
}

func TestClientClosesOnBadFrame(t *testing.T) {
	tr := new(Inproc)
	ln, _ := tr.Listen("fake")
	defer ln.Close()
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		r, w := NewReader(nc, 0, 0), NewWriter(nc, 0, 0)
		var f Frame
		if r.ReadFrame(&f) != nil {
			return
		}
		w.WriteFrame(&Frame{Type: MsgHelloOK, ReqID: f.ReqID})
		w.Flush()
		r.ReadFrame(&f)
		nc.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n.............................."))
		r.ReadFrame(&f) // hold the pipe open until the client hangs up
	}()
	c, err := Dial(context.Background(), tr, "fake", ClientConfig{Config: Config{Token: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var resp Frame
	err = c.Call(context.Background(), &Frame{Type: MsgHeartbeat}, &resp)
	if !errors.Is(err, ErrClosed) || !errors.Is(err, ErrBadMagic) {
		t.Fatalf("garbage reply: %v", err)
	}
	if got := c.Stats().Snapshot().DecodeErrors["bad_magic"]; got != 1 {
		t.Fatalf("bad_magic count %d", got)
	}
}

// A client bounds what its server sends (issue 37 point 8): CallBlock
// refuses a reply of more floats than the block it asked for, and any
// client a one-way frame longer than a notice, each from the header, with
// the payload never read (the fake server sends none) and the connection
// closed; a reply within the bound is read as any other.
func TestClientBoundsReplies(t *testing.T) {
	header := func(f *Frame, count, plen uint32) []byte {
		b, _ := AppendFrame(nil, f, 0)
		b = b[:HeaderSize]
		binary.LittleEndian.PutUint32(b[48:], count)
		binary.LittleEndian.PutUint32(b[52:], plen)
		return b
	}
	for _, c := range []struct {
		name   string
		floats int
		reply  func(req *Frame) []byte
		want   string
	}{
		{"a pull reply of 2^28 floats for 1000", 1000, func(req *Frame) []byte {
			return header(&Frame{Type: MsgPullResp, ReqID: req.ReqID}, 1<<28, 4<<28)
		}, "pull_resp of 268435456 floats in reply to a request for at most 1000"},
		{"an error of 1 MiB to a pull", 1000, func(req *Frame) []byte {
			return header(&Frame{Type: MsgError, ReqID: req.ReqID, Bytes: []byte("x")}, 0, 1<<20)
		}, "error of 1048576 bytes in reply to a request for a block"},
		{"a one-way control of 1 MiB", 1000, func(*Frame) []byte {
			return header(&Frame{Type: MsgControl, Bytes: []byte("x")}, 0, 1<<20)
		}, "one-way control of 1048576 bytes"},
		{"a pull reply of 1000 floats", 1000, func(req *Frame) []byte {
			b, _ := AppendFrame(nil, &Frame{Type: MsgPullResp, ReqID: req.ReqID, Floats: make([]float32, 1000)}, 0)
			return b
		}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := new(Inproc)
			ln, _ := tr.Listen("fake")
			defer ln.Close()
			go func() {
				nc, err := ln.Accept()
				if err != nil {
					return
				}
				defer nc.Close()
				r, w := NewReader(nc, 0, 0), NewWriter(nc, 0, 0)
				var f Frame
				if r.ReadFrame(&f) != nil {
					return
				}
				w.WriteFrame(&Frame{Type: MsgHelloOK, ReqID: f.ReqID})
				w.Flush()
				if r.ReadFrame(&f) != nil {
					return
				}
				nc.Write(c.reply(&f))
				r.ReadFrame(&f) // hold the pipe open until the client hangs up
			}()
			conn, err := Dial(context.Background(), tr, "fake", ClientConfig{Config: Config{Token: "x"}})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			var resp Frame
			err = conn.CallBlock(context.Background(), &Frame{Type: MsgPull}, &resp, c.floats)
			if c.want == "" {
				if err != nil || len(resp.Floats) != c.floats {
					t.Fatalf("a reply within the bound: %v, %d floats", err, len(resp.Floats))
				}
				return
			}
			if !errors.Is(err, ErrClosed) || !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%v\nwant a refusal containing %q", err, c.want)
			}
			if cap(resp.Floats) != 0 || cap(resp.Bytes) != 0 {
				t.Errorf("a buffer was allocated for the refused reply: %d floats, %d bytes", cap(resp.Floats), cap(resp.Bytes))
			}
			if got := conn.Stats().Snapshot().DecodeErrors["too_large"]; got != 1 {
				t.Errorf("too_large count %d, want 1", got)
			}
		})
	}
}
