package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// ClientConfig configures Dial.
type ClientConfig struct {
	Config
	// Hello identifies this side; its Token is taken from Config.Token.
	Hello Hello
	// OnNotify receives the server's one-way frames (ReqID 0: Release,
	// Shutdown, an Error about a Send). It runs on the connection's reader
	// goroutine, so it must not block for long or Call on the same
	// connection; f is valid only during the call. Nil: such frames are
	// dropped and counted in Stats.Unroutable.
	OnNotify func(f *Frame)
}

// Conn is the client side of one authenticated connection. Calls may run
// concurrently (each gets its own request id, replies are matched to them);
// a background goroutine reads replies straight into each caller's Frame.
// Any I/O error, decode error or abandoned Call closes the Conn for good.
type Conn struct {
	nc      net.Conn
	cfg     ClientConfig
	stats   *Stats
	r       *Reader
	welcome Frame
	notify  Frame
	done    chan struct{}

	wmu sync.Mutex
	w   *Writer

	mu      sync.Mutex
	pending map[uint64]*call
	nextID  uint64
	err     error
	// spare is the last finished call, kept for the next: the pool is
	// emptied at every GC, and a connection's calls are mostly one at a
	// time, so this makes a steady stream of calls allocate nothing.
	spare *call
}

type call struct {
	resp  *Frame
	done  chan error
	timer *time.Timer
	// maxFloats bounds a float reply's count (CallBlock); -1: only the
	// connection's MaxPayload.
	maxFloats int
}

// MaxNotice bounds the payload of a one-way frame a server sends (a
// Release, a Shutdown, an Error about a Send, a shard's ready notice):
// none carries more than a short message, so a longer one is refused from
// its header, before its payload is read.
const MaxNotice = MaxHelloPayload

var callPool = sync.Pool{New: func() any { return &call{done: make(chan error, 1)} }}

// Dial connects to addr over tr and authenticates with a Hello. The
// server's HelloOK is available from HelloOK.
func Dial(ctx context.Context, tr Transport, addr string, cfg ClientConfig) (*Conn, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Config = cfg.Config.withDefaults()
	hctx, cancel := context.WithTimeout(ctx, cfg.HandshakeTimeout)
	defer cancel()
	nc, err := tr.Dial(hctx, addr)
	if err != nil {
		return nil, fmt.Errorf("wire: dial %s: %w", addr, err)
	}
	c := &Conn{nc: nc, cfg: cfg, stats: cfg.Stats, done: make(chan struct{}),
		r:       NewReader(nc, cfg.BufferSize, cfg.MaxPayload),
		w:       NewWriter(nc, cfg.BufferSize, cfg.MaxPayload),
		pending: make(map[uint64]*call)}
	c.stats.Accepted.Add(1)
	go c.readLoop()
	hello := cfg.Hello
	hello.Token = cfg.Token
	var req Frame
	if err := req.SetJSON(MsgHello, hello); err != nil {
		c.Close()
		return nil, err
	}
	req.Worker = hello.Worker
	if err := c.Call(hctx, &req, &c.welcome); err != nil {
		c.Close()
		if t, ok := tr.(TCP); ok && t.TLS == nil && closedUnanswered(err) && t.speaksTLS(ctx, addr, cfg.HandshakeTimeout) {
			return nil, fmt.Errorf("%w: %s serves TLS, while this side dials in plaintext (the server closed the connection at the Hello: %v)",
				ErrTLSMismatch, addr, err)
		}
		return nil, fmt.Errorf("wire: hello to %s: %w", addr, err)
	}
	return c, nil
}

// HelloOK returns the server's reply to the Hello: Worker is the assigned
// id, Bytes the job parameters. Do not modify it.
func (c *Conn) HelloOK() *Frame { return &c.welcome }

// Stats returns the counters this Conn updates.
func (c *Conn) Stats() *Stats { return c.stats }

// Done is closed once the connection is dead; Err then says why.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns the error that closed the connection, or nil while it is open.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Call sends req (assigning req.ReqID) and waits for the reply, decoding it
// into resp with resp's payload capacity reused: a PullResp lands directly
// in resp.Floats. An Error reply is returned as *RemoteError (the
// connection stays open). If ctx ends first, or Config.CallTimeout passes
// when ctx has no deadline, the Conn is closed: the late reply would land in
// a buffer the caller has taken back.
func (c *Conn) Call(ctx context.Context, req, resp *Frame) error {
	return c.call(ctx, req, resp, -1)
}

// CallBlock is Call for a request whose answer is a block of at most
// floats values (a Pull of that block; 0 for a Push, whose ack carries
// none): a reply carrying floats may carry at most floats, any other at
// most MaxNotice bytes (an Error's message). The reply's header is checked
// before its payload is read; a larger reply is refused: the connection is
// closed unread and the call fails with an error wrapping ErrTooLarge, so
// a server cannot make its client allocate more than it asked for.
func (c *Conn) CallBlock(ctx context.Context, req, resp *Frame, floats int) error {
	return c.call(ctx, req, resp, max(floats, 0))
}

func (c *Conn) call(ctx context.Context, req, resp *Frame, maxFloats int) error {
	if err := ctx.Err(); err != nil {
		return err // nothing sent yet, so the connection stays usable
	}
	c.mu.Lock()
	cl := c.spare
	c.spare = nil
	c.mu.Unlock()
	if cl == nil {
		cl = callPool.Get().(*call)
	}
	cl.resp, cl.maxFloats = resp, maxFloats
	defer c.putCall(cl)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return c.err
	}
	c.nextID++
	req.ReqID = c.nextID
	c.pending[req.ReqID] = cl
	c.mu.Unlock()

	deadline, hasDeadline := ctx.Deadline()
	if err := c.write(req, deadline); err != nil && isEncodeError(err) {
		c.mu.Lock()
		_, mine := c.pending[req.ReqID]
		delete(c.pending, req.ReqID)
		c.mu.Unlock()
		if !mine {
			<-cl.done // the connection failed meanwhile and completed us
		}
		return err
	}
	var timeout <-chan time.Time
	if !hasDeadline && c.cfg.CallTimeout > 0 {
		if cl.timer == nil {
			cl.timer = time.NewTimer(c.cfg.CallTimeout)
		} else {
			cl.timer.Reset(c.cfg.CallTimeout)
		}
		defer cl.timer.Stop()
		timeout = cl.timer.C
	}
	var cause error
	select {
	case err := <-cl.done:
		if err == nil && resp.Type == MsgError {
			c.stats.RemoteErrors.Add(1)
			return resp.Err()
		}
		if err != nil && hasDeadline && errors.Is(err, os.ErrDeadlineExceeded) && !time.Now().Before(deadline) {
			// The write ran into the context's own deadline (it is the
			// socket's deadline too): say so, so callers can tell a
			// deadline from a broken peer. The context's timer fires at
			// the same instant as the socket's, so waiting is brief.
			<-ctx.Done()
			return fmt.Errorf("wire: %s call abandoned: %w (%w)", req.Type, ctx.Err(), err)
		}
		return err
	case <-ctx.Done():
		cause = fmt.Errorf("wire: %s call abandoned: %w", req.Type, ctx.Err())
	case <-timeout:
		cause = fmt.Errorf("wire: %s call timed out after %v: %w", req.Type, c.cfg.CallTimeout, os.ErrDeadlineExceeded)
	}
	c.fail(fmt.Errorf("%w: %w", ErrClosed, cause))
	<-cl.done // whoever holds the call (reader or fail) completes it exactly once
	return cause
}

// putCall keeps a finished call as the connection's spare, or pools it.
func (c *Conn) putCall(cl *call) {
	cl.resp = nil
	c.mu.Lock()
	if c.spare == nil {
		c.spare, cl = cl, nil
	}
	c.mu.Unlock()
	if cl != nil {
		callPool.Put(cl)
	}
}

// Send writes f as a one-way notification (f.ReqID is set to 0); the server
// sends no reply unless its handler produces one, which then arrives at
// OnNotify.
func (c *Conn) Send(ctx context.Context, f *Frame) error {
	if err := c.Err(); err != nil {
		return err
	}
	f.ReqID = 0
	deadline, _ := ctx.Deadline()
	return c.write(f, deadline)
}

// Close closes the connection, fails calls in flight with ErrClosed and
// waits for the reader goroutine to end.
func (c *Conn) Close() error {
	c.fail(ErrClosed)
	<-c.done
	return nil
}

// write encodes and flushes f under the write lock, with a deadline of
// WriteTimeout capped by the caller's deadline.
func (c *Conn) write(f *Frame, deadline time.Time) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	dl := time.Now().Add(c.cfg.WriteTimeout)
	if !deadline.IsZero() && deadline.Before(dl) {
		dl = deadline
	}
	c.nc.SetWriteDeadline(dl)
	n, err := c.w.WriteFrame(f)
	if err == nil {
		err = c.w.Flush()
	}
	if err != nil {
		if !isEncodeError(err) {
			c.stats.IOErrors.Add(1)
			c.fail(fmt.Errorf("%w: write: %w", ErrClosed, err))
		}
		return err
	}
	c.stats.out(n)
	return nil
}

// readLoop routes every incoming frame: replies to their pending call's
// Frame (the payload is read straight into it), notifications to OnNotify.
func (c *Conn) readLoop() {
	defer close(c.done)
	for {
		h, err := c.r.readHeader()
		if err != nil {
			c.readFailed(err)
			return
		}
		var cl *call
		dst := &c.notify
		if h.reqID != 0 {
			c.mu.Lock()
			cl = c.pending[h.reqID]
			delete(c.pending, h.reqID)
			c.mu.Unlock()
			if cl == nil {
				c.stats.ProtocolErrors.Add(1)
				c.fail(fmt.Errorf("%w: reply to unknown request %d", ErrProtocol, h.reqID))
				return
			}
			dst = cl.resp
		}
		if err := replyFits(&h, cl); err != nil {
			c.stats.countError(err)
			c.fail(fmt.Errorf("%w: read: %w", ErrClosed, err))
			if cl != nil {
				cl.done <- c.Err()
			}
			return
		}
		c.nc.SetReadDeadline(time.Now().Add(c.cfg.FrameTimeout))
		err = c.r.readPayload(&h, dst)
		c.nc.SetReadDeadline(time.Time{})
		if err != nil {
			c.readFailed(err)
			if cl != nil {
				cl.done <- c.Err()
			}
			return
		}
		c.stats.in(wireSize(dst))
		switch {
		case cl != nil:
			cl.done <- nil
		case c.cfg.OnNotify != nil:
			c.cfg.OnNotify(dst)
		default:
			c.stats.Unroutable.Add(1)
		}
	}
}

// replyFits checks a frame's header against what its call allows (cl nil:
// a one-way frame, bounded by MaxNotice), before its payload is read.
func replyFits(h *header, cl *call) error {
	switch {
	case cl == nil && h.payloadLen > MaxNotice:
		return fmt.Errorf("%w: a one-way %s of %d bytes, more than a notice's %d", ErrTooLarge, h.typ, h.payloadLen, MaxNotice)
	case cl == nil || cl.maxFloats < 0:
		return nil
	case h.typ.CarriesFloats() && int64(h.count) > int64(cl.maxFloats):
		return fmt.Errorf("%w: a %s of %d floats in reply to a request for at most %d", ErrTooLarge, h.typ, h.count, cl.maxFloats)
	case !h.typ.CarriesFloats() && h.payloadLen > MaxNotice:
		return fmt.Errorf("%w: a %s of %d bytes in reply to a request for a block, more than an error's %d", ErrTooLarge, h.typ, h.payloadLen, MaxNotice)
	}
	return nil
}

// readFailed closes the connection after a read error, counting it unless
// the connection was already closed on purpose.
func (c *Conn) readFailed(err error) {
	if c.Err() == nil && !errors.Is(err, io.EOF) {
		c.stats.countError(err)
	}
	c.fail(fmt.Errorf("%w: read: %w", ErrClosed, err))
}

// fail records the first fatal error, closes the socket and completes every
// pending call with it. Calls the reader has already claimed are completed
// by the reader, whose read fails once the socket is closed.
func (c *Conn) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	pend := c.pending
	c.pending = make(map[uint64]*call)
	c.mu.Unlock()
	c.nc.Close()
	for _, cl := range pend {
		cl.done <- err
	}
}
