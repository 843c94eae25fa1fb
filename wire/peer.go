package wire

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Peer is the server's side of one authenticated connection. Handlers find
// it with PeerFrom; a coordinator keeps it to notify the worker later
// (Release, Shutdown) from any goroutine.
type Peer struct {
	nc       net.Conn
	cfg      *Config
	hello    Hello
	assigned int32

	wmu    sync.Mutex
	w      *Writer
	closed atomic.Bool
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
func (p *Peer) ID() int32 { return p.assigned }

// RemoteAddr returns the peer's network address.
func (p *Peer) RemoteAddr() net.Addr { return p.nc.RemoteAddr() }

// Send writes f to the peer as a one-way notification (f.ReqID is set to
// 0). Safe to call concurrently with the connection's handler.
func (p *Peer) Send(f *Frame) error {
	f.ReqID = 0
	return p.write(f)
}

// Close closes the connection; its handler goroutine then ends.
func (p *Peer) Close() error {
	if !p.closed.CompareAndSwap(false, true) {
		return nil
	}
	return p.nc.Close()
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
	if err != nil {
		if !isEncodeError(err) {
			p.cfg.Stats.IOErrors.Add(1)
			p.Close()
		}
		return err
	}
	p.cfg.Stats.out(n)
	return nil
}

// sendError writes an Error frame answering reqID.
func (p *Peer) sendError(reqID uint64, code ErrorCode, msg string) error {
	var f Frame
	f.ReqID = reqID
	f.SetError(code, msg)
	return p.write(&f)
}
