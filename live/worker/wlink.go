package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/pacer-ps/pacer/internal/ratelog"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// A worker's link to one shard: a goroutine that owns the connection,
// carries out the main loop's pushes and pulls in order, waits out pending
// pulls (the shard's ready notice, or a poll as a safety net) and redials
// with backoff when the connection breaks. Its results go back to the main
// loop as events.

type opKind uint8

const (
	opPush opKind = iota + 1
	opPull
)

type linkOp struct {
	kind  opKind
	data  []float32 // push: the gradient block (read-only until the ack)
	read  uint64    // push: version the gradient was computed from; pull: version held
	clock uint64    // push: the worker's iteration tag
	min   uint64    // pull: minimum version
}

type evKind uint8

const (
	evPushed evKind = iota + 1
	evData
	evRepush // the shard restarted while a pull waited on it: the last push may be lost
	evFailed
)

type linkEvent struct {
	kind    evKind
	shard   int
	version uint64
	dropped bool
	floats  []float32     // evData: valid until done is signalled
	done    chan struct{} // evData: the main loop has copied floats
	err     error
}

type wlink struct {
	w      *Worker
	shard  int
	addr   string
	block  int // the shard's block: what a pull reply must hold
	plog   *ratelog.Logger
	ops    chan linkOp
	notify chan struct{}
	conn   *wire.Conn
	id     int32  // the worker id conn was opened under
	inc    uint64 // incarnation of the shard we are connected to
	pushed uint64 // incarnation that acknowledged our last push
	held   uint64 // version of the last block delivered to the main loop
	meta   []byte // the Hello's meta: the job this worker runs
	req    wire.Frame
	resp   wire.Frame
	done   chan struct{}
	// into, when set, is the worker's own block of parameters: a pull
	// reply is read straight into it, without a second copy. Only when
	// the main loop waits for every pull before it computes (see
	// Worker.loop), so no reply lands while the parameters are in use.
	into []float32
}

func newLink(w *Worker, shard int, addr string, block int) *wlink {
	// The Hello presents the job as the coordinator sent it (taken here,
	// on the main loop, which alone writes w.info): a shard started with
	// other job flags refuses it, naming the field.
	meta, _ := json.Marshal(proto.HelloMeta{Job: w.info.Job}) // plain values: cannot fail
	return &wlink{w: w, shard: shard, addr: addr, block: block, plog: ratelog.New(w.log, ratelog.Limits{}), meta: meta,
		ops: make(chan linkOp, 4), notify: make(chan struct{}, 1), done: make(chan struct{}, 1)}
}

func (l *wlink) onNotify(f *wire.Frame) {
	if f.Type == wire.MsgPullResp && f.Flags&proto.FlagReady != 0 {
		select {
		case l.notify <- struct{}{}:
		default:
		}
	}
}

// connect dials the shard until it answers (or ctx ends).
func (l *wlink) connect(ctx context.Context) error {
	if l.conn != nil {
		select {
		case <-l.conn.Done():
			l.conn.Close()
			l.conn = nil
		default:
			if l.id == l.w.curID() {
				return nil
			}
			// The worker was given a fresh id: the shard knows this
			// connection under the old one, which another process has.
			l.conn.Close()
			l.conn = nil
		}
	}
	id := l.w.curID()
	cc := wire.ClientConfig{Config: l.w.wireCfg, Hello: wire.Hello{Role: proto.RoleWorker, Worker: id, Meta: l.meta}, OnNotify: l.onNotify}
	cc.CallTimeout = -1 // calls never block on the server; ctx bounds them
	c, err := proto.DialRetry(ctx, l.w.tr, l.addr, cc, 0)
	if err != nil {
		return err
	}
	var si proto.ShardInfo
	if err := c.HelloOK().JSON(&si); err != nil {
		c.Close()
		return err
	}
	restarted := l.inc != 0 && si.Incarnation != l.inc
	l.conn, l.inc, l.id = c, si.Incarnation, id
	if restarted {
		l.w.log.Warn("shard restarted", "shard", l.shard, "version", si.Version, "held", l.held)
		l.announce(ctx)
	}
	return nil
}

// announce tells the shard which version this worker holds (a one-way
// Heartbeat, as after a pull reply): a restarted shard skips forward to it.
func (l *wlink) announce(ctx context.Context) {
	if l.held == 0 {
		return
	}
	hb := wire.Frame{Type: wire.MsgHeartbeat, Shard: uint32(l.shard), Worker: l.id, Tag: l.held}
	l.conn.Send(ctx, &hb)
}

func (l *wlink) run(ctx context.Context) {
	defer func() {
		if l.conn != nil {
			l.conn.Close()
		}
	}()
	var pending *linkOp // a pull waiting for its version
	// The safety net of the event loop: a waiting pull is asked again
	// every 500 ms in case the shard's ready notice (the event) was lost.
	poll := time.NewTicker(500 * time.Millisecond)
	defer poll.Stop()
	for {
		// A broken connection is redialled at once, not at the next op: a
		// restarted shard must hear the version this worker holds even
		// while the worker waits at the gate (see Shard.done).
		var dead <-chan struct{}
		if l.conn != nil {
			dead = l.conn.Done()
		}
		select {
		case <-ctx.Done():
			return
		case <-dead:
			// On failure (ctx ended, or a refusal the next op reports)
			// the connection stays nil and the loop goes on.
			if l.connect(ctx) == nil && pending != nil && l.pull(ctx, pending) {
				pending = nil
			}
		case op := <-l.ops:
			if op.kind == opPush {
				l.push(ctx, op)
				continue
			}
			pending = &op
			if l.pull(ctx, pending) {
				pending = nil
			}
		case <-l.notify:
			if pending != nil && l.pull(ctx, pending) {
				pending = nil
			}
		case <-poll.C:
			if pending != nil && l.pull(ctx, pending) {
				pending = nil
			}
		}
	}
}

// call runs one request whose reply holds at most floats values,
// redialling and retrying while the connection breaks; a remote error
// (refusal) is returned as is, and so is a reply larger than floats
// (refused unread by wire.Conn.CallBlock): asking again would only bring
// it again. A frame the shard broke off or garbled is logged (rate-limited)
// before the redial: a shard that does so every time is seen.
func (l *wlink) call(ctx context.Context, floats int) error {
	for {
		if err := l.connect(ctx); err != nil {
			return err
		}
		l.req.Worker = l.id // a push or pull offered again after a fresh id goes under it
		err := l.conn.CallBlock(ctx, &l.req, &l.resp, floats)
		var re *wire.RemoteError
		switch {
		case err == nil || errors.As(err, &re) || ctx.Err() != nil:
			return err
		case errors.Is(err, wire.ErrTooLarge):
			l.plog.Error("shard's reply refused: larger than the block asked for", "shard", l.shard, "block", floats, "err", err)
			return err
		case badFrame(err):
			l.plog.Warn("shard sent a bad frame; redialling", "shard", l.shard, "err", err)
		default:
			l.w.log.Debug("shard connection lost; redialling", "shard", l.shard, "err", err)
		}
	}
}

// badFrame says err is a malformed or broken-off frame from the peer (or
// one whose payload did not arrive in time), not a closed connection.
func badFrame(err error) bool {
	for _, e := range []error{wire.ErrBadMagic, wire.ErrVersion, wire.ErrBadType, wire.ErrReserved, wire.ErrLength,
		wire.ErrTruncated, wire.ErrProtocol, os.ErrDeadlineExceeded} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func (l *wlink) push(ctx context.Context, op linkOp) {
	l.req.Reset()
	l.req.Type, l.req.Shard = wire.MsgPush, uint32(l.shard)
	l.req.Tag, l.req.Extra, l.req.Floats = op.clock, op.read, op.data
	err := l.call(ctx, 0) // the ack carries no floats
	// A shard that cannot take pushes for now (its log's disk full, this
	// worker not yet in the membership it was sent) says unavailable and
	// changes nothing: the same push is offered again, paced, until it is
	// taken or the job ends. Said once per outage, not per try.
	var b proto.Backoff
	for told := false; wire.CodeOf(err) == wire.CodeUnavailable && ctx.Err() == nil; {
		if !told {
			l.w.log.Warn("shard refuses pushes for now; offering this one again until it is taken", "shard", l.shard, "err", err)
			told = true
		}
		if !proto.Sleep(ctx, b.Next()) {
			break
		}
		l.req.Floats = op.data
		err = l.call(ctx, 0)
	}
	l.req.Floats = nil // the block belongs to the main loop
	ev := linkEvent{kind: evPushed, shard: l.shard, err: err}
	switch {
	case err == nil:
		ev.version, ev.dropped = l.resp.Tag, l.resp.Flags&proto.FlagDropped != 0
		l.pushed = l.resp.Extra
	case wire.CodeOf(err) == wire.CodeNonFinite:
		// The shard refused a gradient that would have made its weights
		// NaN or infinite, and applied nothing: a dropped push, as a
		// stale one is, not the end of this worker.
		l.plog.Warn("shard refused a gradient that would have made its weights non-finite; training goes on", "shard", l.shard, "err", err)
		ev.err, ev.dropped = nil, true
	}
	l.emit(ctx, ev)
}

// pull asks for op.min; it reports whether the pull is finished (data
// delivered, or failed for good).
func (l *wlink) pull(ctx context.Context, op *linkOp) bool {
	l.req.Reset()
	l.req.Type, l.req.Shard = wire.MsgPull, uint32(l.shard)
	l.req.Tag, l.req.Extra = op.read, op.min
	if l.into != nil {
		l.resp.Floats = l.into[:0] // the reply's payload lands in place (Frame.FloatBuf)
	}
	if err := l.call(ctx, l.block); err != nil {
		l.emit(ctx, linkEvent{kind: evFailed, shard: l.shard, err: err})
		return true
	}
	if l.resp.Flags&proto.FlagPending != 0 {
		if l.pushed != 0 && l.pushed != l.resp.Extra {
			// The shard that took our last push has died: the new one may
			// never have seen it, and a synchronous round would wait for it.
			l.pushed = l.resp.Extra
			l.emit(ctx, linkEvent{kind: evRepush, shard: l.shard})
		}
		return false
	}
	if n := len(l.resp.Floats); n != l.block {
		// Shorter than the block (longer ones are refused unread): the
		// rest of the parameters would silently stay as they were.
		err := fmt.Errorf("shard %d sent a pull reply of %d floats for its block of %d: refused", l.shard, n, l.block)
		l.plog.Error("shard's reply refused: not its block", "shard", l.shard, "floats", n, "block", l.block)
		l.emit(ctx, linkEvent{kind: evFailed, shard: l.shard, err: err})
		return true
	}
	ev := linkEvent{kind: evData, shard: l.shard, version: l.resp.Tag, floats: l.resp.Floats, done: l.done}
	if !l.emit(ctx, ev) {
		return true
	}
	select {
	case <-l.done:
	case <-ctx.Done():
		return true
	}
	// The reply is in: let the shard recycle the snapshot it pointed into.
	l.held = ev.version
	hb := wire.Frame{Type: wire.MsgHeartbeat, Shard: uint32(l.shard), Worker: l.id, Tag: l.held}
	l.conn.Send(ctx, &hb)
	return true
}

func (l *wlink) emit(ctx context.Context, ev linkEvent) bool {
	select {
	case l.w.events <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}
