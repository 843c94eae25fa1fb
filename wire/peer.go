package wire

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// This file: one connection's side on the server: its Hello, its
// writer (batched sends, notices, queued frames) and its close.

// Peer is the server's side of one authenticated connection. Handlers find
// it with PeerFrom; a coordinator keeps it to notify the worker later
// (Release, Shutdown) from any goroutine.
type Peer struct {
	nc    net.Conn
	cfg   *Config
	hello Hello
	// assigned is atomic: the Hello's handler may hand the peer to other
	// goroutines (a coordinator's notices) before serveHello stores it.
	assigned atomic.Int32
	maxIn    int // payload limit after the Hello (0: Config.MaxPayload)

	wmu    sync.Mutex
	w      *Writer
	closed atomic.Bool

	// One-way frames wait here for the sender goroutine, so Send never
	// waits on this connection's write lock (held up to WriteTimeout by
	// a peer that does not read).
	qmu     sync.Mutex
	queue   []Frame
	spare   []Frame // the sender's last batch, emptied, for the next queue
	sending bool
	senders sync.WaitGroup
	drainFn func() // p.drain, made once: a go statement on it allocates nothing
}

type peerKey struct{}

// PeerFrom returns the connection a Handler's request arrived on.
func PeerFrom(ctx context.Context) (*Peer, bool) {
	p, ok := ctx.Value(peerKey{}).(*Peer)
	return p, ok
}

// Hello returns the peer's Hello, token removed.
func (p *Peer) Hello() Hello { return p.hello }

// ID returns the worker id the HelloOK reply carried (-1 before it).
func (p *Peer) ID() int32 { return p.assigned.Load() }

// RemoteAddr returns the peer's network address.
func (p *Peer) RemoteAddr() net.Addr { return p.nc.RemoteAddr() }

// LimitPayload bounds the payload of every frame the peer sends after its
// Hello to n bytes (never above Config.MaxPayload): the largest frame its
// role can need. A larger header is refused before anything is allocated
// and closes the connection. Call it from the Handler serving the Hello.
func (p *Peer) LimitPayload(n int) {
	if n > 0 {
		p.maxIn = n
	}
}

// Send queues f for the peer as a one-way notification (f.ReqID is set to
// 0; its payload is copied) and returns without waiting for the write, so
// a peer that stopped reading holds up no one else. Safe to call from any
// goroutine. A frame that cannot be encoded is refused at once; a peer
// with MaxQueuedNotices frames already waiting is closed (ErrSlowPeer); a
// write that fails later closes the connection, as a reply's would.
func (p *Peer) Send(f *Frame) error {
	f.ReqID = 0
	if _, err := f.prepare(p.w.maxPayload); err != nil {
		return err
	}
	p.qmu.Lock()
	defer p.qmu.Unlock()
	if p.closed.Load() {
		return ErrClosed
	}
	if len(p.queue) >= MaxQueuedNotices {
		p.cfg.Stats.SlowPeers.Add(1)
		// Closed off this goroutine: closing a TLS connection may try to
		// write an alert to the very peer that does not read.
		if p.closed.CompareAndSwap(false, true) {
			p.senders.Add(1)
			go func() { defer p.senders.Done(); p.nc.Close() }()
		}
		return ErrSlowPeer
	}
	q := *f
	q.Floats = append([]float32(nil), f.Floats...)
	q.Bytes = append([]byte(nil), f.Bytes...)
	p.queue = append(p.queue, q)
	if !p.sending {
		p.sending = true
		p.senders.Add(1)
		if p.drainFn == nil {
			p.drainFn = p.drain
		}
		go p.drainFn()
	}
	return nil
}

// drain writes queued notices, a batch per flush, until the queue is
// empty or the connection closes.
func (p *Peer) drain() {
	defer p.senders.Done()
	for {
		p.qmu.Lock()
		if len(p.queue) == 0 || p.closed.Load() {
			clear(p.queue)
			p.queue, p.sending = p.queue[:0], false
			p.qmu.Unlock()
			return
		}
		// The two slices take turns, so a steady trickle of notices
		// allocates nothing.
		batch := p.queue
		p.queue, p.spare = p.spare[:0], nil
		p.qmu.Unlock()
		p.writeBatch(batch)
		clear(batch)
		p.qmu.Lock()
		p.spare = batch[:0]
		p.qmu.Unlock()
	}
}

// Close closes the connection; its handler goroutine then ends.
func (p *Peer) Close() error {
	if !p.closed.CompareAndSwap(false, true) {
		return nil
	}
	return p.nc.Close()
}

// shut closes the connection and waits for its notice sender to stop.
func (p *Peer) shut() {
	p.Close()
	// A Send that saw the connection open has started its sender by the
	// time it lets go of qmu; later ones see it closed.
	p.qmu.Lock()
	p.qmu.Unlock()
	p.senders.Wait()
}

// write encodes and flushes f under the write lock and the write timeout.
// An I/O failure closes the connection; a refusal to encode does not.
func (p *Peer) write(f *Frame) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if p.closed.Load() {
		return ErrClosed
	}
	p.nc.SetWriteDeadline(time.Now().Add(p.cfg.WriteTimeout))
	n, err := p.w.WriteFrame(f)
	if err == nil {
		err = p.w.Flush()
	}
	return p.wrote(n, err)
}

// writeBatch writes fs with one flush (sender goroutine).
func (p *Peer) writeBatch(fs []Frame) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if p.closed.Load() {
		return
	}
	p.nc.SetWriteDeadline(time.Now().Add(p.cfg.WriteTimeout))
	total := 0
	for i := range fs {
		n, err := p.w.WriteFrame(&fs[i])
		if err != nil {
			p.wrote(0, err)
			return
		}
		total += n
	}
	if p.wrote(0, p.w.Flush()) == nil {
		p.cfg.Stats.FramesOut.Add(uint64(len(fs)))
		p.cfg.Stats.BytesOut.Add(uint64(total))
	}
}

// wrote accounts for a write of n bytes that ended with err (lock held).
func (p *Peer) wrote(n int, err error) error {
	if err != nil {
		if !isEncodeError(err) {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				p.cfg.Stats.SlowPeers.Add(1)
			}
			p.cfg.Stats.IOErrors.Add(1)
			p.Close()
		}
		return err
	}
	if n > 0 {
		p.cfg.Stats.out(n)
	}
	return nil
}

// releaseWriter gives back the write buffer of an idle connection, unless
// a notice is being written right now.
func (p *Peer) releaseWriter() {
	if p.wmu.TryLock() {
		p.w.release()
		p.wmu.Unlock()
	}
}

// sendError writes an Error frame answering reqID.
func (p *Peer) sendError(reqID uint64, code ErrorCode, msg string) error {
	var f Frame
	f.ReqID = reqID
	f.SetError(code, msg)
	return p.write(&f)
}
