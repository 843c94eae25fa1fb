package wire

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Handler serves one request. req is valid only during the call (its
// payload buffers are reused for the connection's next frame). The handler
// fills resp, which arrives Reset with the payload capacity of the previous
// reply; leaving resp.Type zero sends no reply. resp's payload is written
// after the handler returns and before the connection's next request is
// read, so resp.Floats may point into shared memory only if that memory
// stays unchanged until then (else copy into resp.FloatBuf(n)).
//
// A returned error is sent back as an Error frame (code from CodeOf) and
// the connection stays open. Requests on one connection are served in
// order, one at a time; use more connections for parallelism.
//
// The authenticated Hello is the first request on every connection: the
// handler may assign an id and job parameters in a HelloOK (resp.Type zero
// sends HelloOK echoing the requested worker id), or return an error to
// refuse the peer, which closes the connection.
type Handler func(ctx context.Context, req, resp *Frame) error

// Server accepts connections, authenticates them and runs a Handler per
// request.
type Server struct {
	cfg       Config
	h         Handler
	tokenHash [32]byte

	mu    sync.Mutex
	peers map[*Peer]struct{}
}

// NewServer validates cfg and returns a Server that runs h.
func NewServer(cfg Config, h Handler) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if h == nil {
		return nil, errors.New("wire: NewServer: nil Handler")
	}
	cfg = cfg.withDefaults()
	return &Server{cfg: cfg, h: h, tokenHash: sha256.Sum256([]byte(cfg.Token)),
		peers: make(map[*Peer]struct{})}, nil
}

// Stats returns the server's counters.
func (s *Server) Stats() *Stats { return s.cfg.Stats }

// Peers returns the authenticated connections open now (a connection whose
// Hello the handler refuses is listed until it closes).
func (s *Server) Peers() []*Peer {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Peer, 0, len(s.peers))
	for p := range s.peers {
		out = append(out, p)
	}
	return out
}

// Serve accepts connections on ln until ctx is cancelled or ln fails, one
// goroutine per connection. Temporary accept errors are retried with a
// backoff from 5 ms to 1 s. On return, ln and every connection are closed
// and every handler has returned. Cancellation returns nil.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	stopClose := context.AfterFunc(ctx, func() { ln.Close() })
	var wg sync.WaitGroup
	var err error
	var delay time.Duration
	for {
		nc, aerr := ln.Accept()
		if aerr != nil {
			if ctx.Err() != nil {
				break
			}
			if errors.Is(aerr, net.ErrClosed) {
				err = aerr
				break
			}
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
			continue
		}
		delay = 0
		if ctx.Err() != nil {
			nc.Close()
			break
		}
		s.cfg.Stats.Accepted.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.serveConn(ctx, nc)
		}()
	}
	cancel()
	stopClose()
	ln.Close()
	wg.Wait()
	return err
}

func (s *Server) serveConn(ctx context.Context, nc net.Conn) {
	p := &Peer{nc: nc, cfg: &s.cfg, w: NewWriter(nc, s.cfg.BufferSize, s.cfg.MaxPayload), assigned: -1}
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	defer p.Close()
	ctx = context.WithValue(ctx, peerKey{}, p)
	r := NewReader(nc, s.cfg.BufferSize, s.cfg.MaxPayload)
	var req, resp Frame

	nc.SetReadDeadline(time.Now().Add(s.cfg.HandshakeTimeout))
	// Until the token checks out, a peer may not make us allocate more than
	// a Hello needs.
	r.maxPayload = min(r.maxPayload, MaxHelloPayload)
	if err := r.ReadFrame(&req); err != nil {
		s.readFailed(p, err)
		return
	}
	r.maxPayload = s.cfg.MaxPayload
	s.cfg.Stats.in(wireSize(&req))
	if err := s.authenticate(p, &req); err != nil {
		s.cfg.Stats.AuthFailures.Add(1)
		p.sendError(req.ReqID, CodeUnauthenticated, err.Error())
		return
	}
	nc.SetReadDeadline(time.Time{})
	// Listed before the HelloOK goes out, so a client that has its reply
	// can count on being among Peers.
	s.mu.Lock()
	s.peers[p] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.peers, p)
		s.mu.Unlock()
	}()
	if !s.serveHello(ctx, p, &req, &resp) {
		return
	}

	for {
		h, err := r.readHeader()
		if err == nil {
			// Idle time between frames is free; a payload must keep coming.
			nc.SetReadDeadline(time.Now().Add(s.cfg.FrameTimeout))
			err = r.readPayload(&h, &req)
			nc.SetReadDeadline(time.Time{})
		}
		if err != nil {
			if ctx.Err() == nil {
				s.readFailed(p, err)
			}
			return
		}
		s.cfg.Stats.in(wireSize(&req))
		if req.Type == MsgHello {
			s.cfg.Stats.ProtocolErrors.Add(1)
			if p.sendError(req.ReqID, CodeProtocol, "second hello on one connection") != nil {
				return
			}
			continue
		}
		resp.Reset()
		if err := s.h(ctx, &req, &resp); err != nil {
			s.cfg.Stats.HandlerErrors.Add(1)
			resp.SetError(CodeOf(err), err.Error())
		}
		if resp.Type == 0 {
			continue
		}
		resp.ReqID = req.ReqID
		if err := p.write(&resp); err != nil {
			if !isEncodeError(err) || p.sendError(req.ReqID, CodeInternal, "unencodable reply: "+err.Error()) != nil {
				return
			}
		}
	}
}

// authenticate checks that the first frame is a Hello with the token.
// Both sides are hashed first so the comparison's time does not even
// depend on the token's length.
func (s *Server) authenticate(p *Peer, req *Frame) error {
	if req.Type != MsgHello {
		return fmt.Errorf("%w: first frame is %s, want hello", ErrUnauthenticated, req.Type)
	}
	var hello Hello
	if err := req.JSON(&hello); err != nil {
		return fmt.Errorf("%w: %v", ErrUnauthenticated, err)
	}
	got := sha256.Sum256([]byte(hello.Token))
	if subtle.ConstantTimeCompare(got[:], s.tokenHash[:]) != 1 {
		return fmt.Errorf("%w: wrong token", ErrUnauthenticated)
	}
	hello.Token = ""
	p.hello = hello
	return nil
}

// serveHello runs the handler on the authenticated Hello and replies.
func (s *Server) serveHello(ctx context.Context, p *Peer, req, resp *Frame) bool {
	resp.Reset()
	if err := s.h(ctx, req, resp); err != nil {
		s.cfg.Stats.AuthFailures.Add(1)
		p.sendError(req.ReqID, CodeOf(err), err.Error())
		return false
	}
	if resp.Type == 0 {
		resp.Type, resp.Worker = MsgHelloOK, req.Worker
	}
	resp.ReqID = req.ReqID
	p.assigned = resp.Worker
	return p.write(resp) == nil
}

// readFailed answers a malformed frame (best effort) and counts the
// failure; the caller then closes the connection.
func (s *Server) readFailed(p *Peer, err error) {
	if errors.Is(err, io.EOF) {
		return
	}
	s.cfg.Stats.countError(err)
	if isDecodeError(err) {
		p.sendError(0, CodeBadFrame, err.Error())
	}
}

// isEncodeError reports whether a WriteFrame error was a refusal to encode
// (nothing written, stream intact) rather than an I/O failure.
func isEncodeError(err error) bool {
	for _, e := range [...]error{ErrBadType, ErrReserved, ErrPayload, ErrLength, ErrTooLarge} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

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
