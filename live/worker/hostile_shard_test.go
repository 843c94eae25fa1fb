package worker

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// fakeShard is a hostile shard on loopback: it answers a Hello as a shard
// of one block of n floats, then every Pull with reply(conn number,
// request); it counts the connections it accepted.
type fakeShard struct {
	ln    net.Listener
	n     int
	reply func(conn int, req *wire.Frame) []byte
	// push, when set, answers every Push (nil: pushes go unanswered).
	push  func(req *wire.Frame) []byte
	mu    sync.Mutex
	conns int
	seen  chan int // each accepted connection's number
}

func newFakeShard(t *testing.T, n int, reply func(conn int, req *wire.Frame) []byte) *fakeShard {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeShard{ln: ln, n: n, reply: reply, seen: make(chan int, 64)}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			f.mu.Lock()
			f.conns++
			k := f.conns
			f.mu.Unlock()
			f.seen <- k
			wg.Add(1)
			go func() { defer wg.Done(); f.serve(k, nc) }()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return f
}

func (f *fakeShard) serve(k int, nc net.Conn) {
	defer nc.Close()
	go func() { <-time.After(time.Minute); nc.Close() }() // a guard: no connection outlives the test
	r := wire.NewReader(nc, 0, 0)
	var req wire.Frame
	for {
		if err := r.ReadFrame(&req); err != nil {
			return
		}
		var out []byte
		switch req.Type {
		case wire.MsgHello:
			si, _ := json.Marshal(proto.ShardInfo{Shard: 0, Shards: 1, Lo: 0, Hi: f.n, Incarnation: 7})
			out, _ = wire.AppendFrame(nil, &wire.Frame{Type: wire.MsgHelloOK, ReqID: req.ReqID, Worker: req.Worker, Bytes: si}, 0)
		case wire.MsgPull:
			out = f.reply(k, &req)
		case wire.MsgPush:
			if f.push == nil {
				continue
			}
			out = f.push(&req)
		default:
			continue
		}
		if _, err := nc.Write(out); err != nil {
			return
		}
	}
}

// pullReply is the frame of a pull reply of floats values, its header
// saying count values (its payload is floats' whatever count says).
func pullReply(req *wire.Frame, floats []float32, count uint32) []byte {
	b, _ := wire.AppendFrame(nil, &wire.Frame{Type: wire.MsgPullResp, ReqID: req.ReqID, Worker: req.Worker, Tag: 1, Floats: floats}, 0)
	binary.LittleEndian.PutUint32(b[48:], count)
	binary.LittleEndian.PutUint32(b[52:], 4*count)
	return b
}

// hostileLink is a worker's link to the fake shard at addr, for a block of
// n floats, logging to logs.
func hostileLink(t *testing.T, addr string, n int, frameTimeout time.Duration, logs io.Writer) (*Worker, *wlink) {
	t.Helper()
	cfg := quickJob(t, "bsp", 1, 1)
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	w := &Worker{tr: wire.TCP{}, wireCfg: wire.Config{Token: "secret", FrameTimeout: frameTimeout},
		log: slog.New(slog.NewTextHandler(logs, nil)), events: make(chan linkEvent, 2)}
	w.job.Job = cfg
	return w, newLink(w, 0, addr, n)
}

func closeLink(l *wlink) {
	if l.conn != nil {
		l.conn.Close()
	}
}

// Issue 37 point 8: a worker bounds every pull reply by the block it
// asked for. A hostile shard's reply declaring 1 GiB is refused from its
// header (nothing allocated for it, the connection closed unread, the
// refusal logged once, no redial); a consistent reply one float short is
// refused as not the block; a payload that stops one float short is
// logged as a bad frame, and the link redials and asks again.
func TestWorkerBoundsPullReplies(t *testing.T) {
	const n = 1000
	good := make([]float32, n)
	pull := func(t *testing.T, w *Worker, l *wlink) linkEvent {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second) // a guard
		defer cancel()
		finished := make(chan bool, 1)
		go func() { finished <- l.pull(ctx, &linkOp{kind: opPull}) }()
		select {
		case ev := <-w.events:
			if ev.kind == evData {
				ev.done <- struct{}{}
			}
			<-finished
			return ev
		case <-ctx.Done():
			t.Fatal("no pull event")
		}
		return linkEvent{}
	}

	t.Run("1 GiB", func(t *testing.T) {
		fs := newFakeShard(t, n, func(_ int, req *wire.Frame) []byte { return pullReply(req, good, 1<<28) })
		var logs syncBuffer
		w, l := hostileLink(t, fs.ln.Addr().String(), n, 0, &logs)
		defer closeLink(l)
		var ev linkEvent
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ev = pull(t, w, l)
		runtime.ReadMemStats(&after)
		if ev.kind != evFailed || !errors.Is(ev.err, wire.ErrTooLarge) || !strings.Contains(ev.err.Error(), "268435456 floats") {
			t.Fatalf("event %v, err %v: want the reply refused as too large", ev.kind, ev.err)
		}
		got := after.TotalAlloc - before.TotalAlloc
		t.Logf("%d bytes allocated by the pull that refused a reply of 1 GiB", got)
		if got > 16<<20 {
			t.Errorf("%d bytes allocated while refusing a reply of 1 GiB", got)
		}
		if c := strings.Count(logs.String(), "larger than the block asked for"); c != 1 {
			t.Errorf("the refusal logged %d times, want once:\n%s", c, logs.String())
		}
		fs.mu.Lock()
		if fs.conns != 1 {
			t.Errorf("%d connections: the refused reply was asked for again", fs.conns)
		}
		fs.mu.Unlock()
	})

	t.Run("one float short", func(t *testing.T) {
		fs := newFakeShard(t, n, func(_ int, req *wire.Frame) []byte { return pullReply(req, good[:n-1], n-1) })
		var logs syncBuffer
		w, l := hostileLink(t, fs.ln.Addr().String(), n, 0, &logs)
		defer closeLink(l)
		if ev := pull(t, w, l); ev.kind != evFailed || ev.err == nil || !strings.Contains(ev.err.Error(), "999 floats for its block of 1000") {
			t.Fatalf("event %v, err %v: want the short reply refused", ev.kind, ev.err)
		}
		if c := strings.Count(logs.String(), "not its block"); c != 1 {
			t.Errorf("the refusal logged %d times, want once:\n%s", c, logs.String())
		}
	})

	t.Run("payload one float short", func(t *testing.T) {
		// The first connection's reply declares n floats and sends n-1,
		// then nothing: the frame times out. The second is answered.
		fs := newFakeShard(t, n, func(k int, req *wire.Frame) []byte {
			b := pullReply(req, good, n)
			if k == 1 {
				return b[:len(b)-4]
			}
			return b
		})
		var logs syncBuffer
		w, l := hostileLink(t, fs.ln.Addr().String(), n, 200*time.Millisecond, &logs)
		defer closeLink(l)
		if ev := pull(t, w, l); ev.kind != evData || len(ev.floats) != n {
			t.Fatalf("event %v, err %v: want the block after a redial", ev.kind, ev.err)
		}
		if !strings.Contains(logs.String(), `level=WARN msg="shard sent a bad frame; redialling"`) {
			t.Errorf("the broken-off reply was not logged:\n%s", logs.String())
		}
		fs.mu.Lock()
		if fs.conns != 2 {
			t.Errorf("%d connections, want 2 (one redial)", fs.conns)
		}
		fs.mu.Unlock()
	})
}
