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
	"time"
)

// Handler serves one request. req is valid only during the call (its
// payload buffers are reused for the connection's next frame). The handler
// fills resp, which arrives Reset with the payload capacity of the previous
// reply; leaving resp.Type zero sends no reply. resp's payload is written
// after the handler returns and before the connection's next request is
// read, so resp.Floats may point into shared memory only if that memory
// stays unchanged until then (else copy into resp.FloatBuf(n)); the
// Replied hook says when that is. A refused request's buffers are dropped,
// not reused.
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

// MaxQueuedNotices bounds the one-way frames (Peer.Send) waiting to be
// written to one peer. Notices are a few per round (a release, a ready
// notice), so a queue this long means the peer has stopped reading: it is
// cut off rather than allowed to hold anyone up.
const MaxQueuedNotices = 256

// Hooks are optional callbacks around a Server's Handler; set them with
// SetHooks before Serve.
type Hooks struct {
	// Replied runs on the connection's goroutine once a reply has been
	// written (or its write failed), before the next request is read: any
	// memory the reply pointed into is free again, and the hook should
	// drop resp's references to shared memory (resp keeps its capacity
	// for the next reply otherwise).
	Replied func(p *Peer, resp *Frame)
	// Closed runs once when an authenticated connection has ended (its
	// handler has returned for the last time).
	Closed func(p *Peer)
	// AuthFailed runs when a connection is refused before its Hello
	// reaches the handler (no Hello, a malformed one, a wrong token), with
	// the peer's address: the log's only trace of who tried. It runs on
	// the connection's goroutine, once per refused connection; rate-limit
	// what it logs.
	AuthFailed func(addr net.Addr, err error)
	// Floats runs on the connection's goroutine on each piece of a float
	// payload as soon as it has arrived (pieces of PieceFloats values, in
	// order; off is the piece's index in f.Floats, and f holds the frame's
	// header fields), while the piece is still in the cache. A returned
	// error refuses the frame: the rest of its payload is read unchecked
	// and dropped, the error is sent back as a handler's would be, and the
	// handler never sees the frame. Used to check pushed values as they
	// arrive instead of in a second pass after the whole block is in.
	Floats func(p *Peer, f *Frame, piece []float32, off int) error
	// PendingRefused runs when a connection is closed unread because
	// Config.MaxPending unauthenticated connections are open already.
	PendingRefused func(addr net.Addr, pending int)
}

// Server accepts connections, authenticates them and runs a Handler per
// request.
type Server struct {
	cfg       Config
	h         Handler
	hooks     Hooks
	tokenHash [32]byte

	mu    sync.Mutex
	peers map[*Peer]struct{}
	// pending holds a slot per connection not yet authenticated;
	// pendingBy counts them per IP address (under mu).
	pending   chan struct{}
	pendingBy map[string]int
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
		peers: make(map[*Peer]struct{}), pending: make(chan struct{}, cfg.MaxPending), pendingBy: make(map[string]int)}, nil
}

// SetHooks installs hooks; call it before Serve.
func (s *Server) SetHooks(h Hooks) { s.hooks = h }

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
		host := ipOf(nc.RemoteAddr())
		if limit := s.admit(host); limit > 0 {
			// Refused without a read or a goroutine: the caps are what
			// keep a flood of silent connections from costing more, and
			// the one per address what keeps it from taking every slot.
			s.cfg.Stats.PendingRefused.Add(1)
			if s.hooks.PendingRefused != nil {
				s.hooks.PendingRefused(nc.RemoteAddr(), limit)
			}
			nc.Close()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.serveConn(ctx, nc, host)
		}()
	}
	cancel()
	stopClose()
	ln.Close()
	wg.Wait()
	return err
}

// ipOf is the IP address a connection comes from, "" when the transport
// has none (inproc: one process, not a flood's source).
func ipOf(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	return ""
}

// admit takes a pending slot for a connection from host, or returns the
// cap that refuses it: MaxPending, or MaxPendingPerAddr for an address
// that holds that many already.
func (s *Server) admit(host string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if host != "" && s.pendingBy[host] >= s.cfg.MaxPendingPerAddr {
		return s.cfg.MaxPendingPerAddr
	}
	select {
	case s.pending <- struct{}{}:
	default:
		return cap(s.pending)
	}
	if host != "" {
		s.pendingBy[host]++
	}
	return 0
}

// unpend gives back the pending slot admit took for host.
func (s *Server) unpend(host string) {
	s.mu.Lock()
	if host != "" {
		if s.pendingBy[host]--; s.pendingBy[host] <= 0 {
			delete(s.pendingBy, host)
		}
	}
	s.mu.Unlock()
	<-s.pending
}

func (s *Server) serveConn(ctx context.Context, nc net.Conn, host string) {
	p := &Peer{nc: nc, cfg: &s.cfg, w: NewWriter(nc, s.cfg.BufferSize, s.cfg.MaxPayload)}
	p.assigned.Store(-1)
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	defer p.shut()
	ctx = context.WithValue(ctx, peerKey{}, p)
	r := NewReader(nc, s.cfg.BufferSize, s.cfg.MaxPayload)
	var req, resp Frame
	var unpend sync.Once
	authDone := func() { unpend.Do(func() { s.unpend(host) }) }
	defer authDone()

	nc.SetReadDeadline(time.Now().Add(min(s.cfg.HandshakeTimeout, s.cfg.HelloTimeout)))
	// Until the token checks out, a peer may not make us allocate more than
	// a Hello needs.
	r.maxPayload = min(r.maxPayload, MaxHelloPayload)
	if err := r.ReadFrame(&req); err != nil {
		s.readFailed(p, err)
		if !errors.Is(err, io.EOF) && s.hooks.AuthFailed != nil {
			s.hooks.AuthFailed(nc.RemoteAddr(), fmt.Errorf("%w: no hello: %v", ErrUnauthenticated, err))
		}
		return
	}
	s.cfg.Stats.in(wireSize(&req))
	if err := s.authenticate(p, &req); err != nil {
		s.cfg.Stats.AuthFailures.Add(1)
		if s.hooks.AuthFailed != nil {
			s.hooks.AuthFailed(nc.RemoteAddr(), err)
		}
		p.sendError(req.ReqID, CodeUnauthenticated, err.Error())
		return
	}
	authDone()
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
		if s.hooks.Closed != nil {
			p.shut() // the hook may count on the connection being gone
			s.hooks.Closed(p)
		}
	}()
	if !s.serveHello(ctx, p, &req, &resp) {
		return
	}
	// From here on a frame may be as large as the handler allowed this
	// peer when it served the Hello (Peer.LimitPayload).
	r.maxPayload = s.cfg.MaxPayload
	if p.maxIn > 0 {
		r.maxPayload = min(r.maxPayload, p.maxIn)
	}
	req, resp = Frame{}, Frame{} // the Hello's buffers are not worth keeping
	if s.hooks.Floats != nil {
		r.piece = func(f *Frame, piece []float32, off int) error { return s.hooks.Floats(p, f, piece, off) }
	}

	for {
		err := r.awaitFrame(nc, s.cfg.IdleRelease, func() {
			// Idle: give back the payload and I/O buffers; the next
			// frame allocates what it needs.
			req, resp = Frame{}, Frame{}
			p.releaseWriter()
		})
		if err == nil {
			// Idle time between frames is free; once a frame has begun,
			// the rest of it must keep coming.
			nc.SetReadDeadline(time.Now().Add(s.cfg.FrameTimeout))
			var h header
			if h, err = r.readHeader(); err == nil {
				err = r.readPayload(&h, &req)
			}
		}
		refused, _ := err.(*refusal) // a type check: errors.As would allocate per frame
		if refused != nil {
			err = nil
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
		id := req.ReqID
		herr := error(nil)
		if refused != nil {
			herr = refused.err
		} else {
			herr = s.h(ctx, &req, &resp)
		}
		if err := herr; err != nil {
			s.cfg.Stats.HandlerErrors.Add(1)
			resp.SetError(CodeOf(err), err.Error())
			// A refused frame keeps nothing: its buffer was sized by the
			// peer, not by the work this connection does.
			req = Frame{}
		}
		if resp.Type == 0 {
			continue
		}
		resp.ReqID = id
		err = p.write(&resp)
		if s.hooks.Replied != nil {
			s.hooks.Replied(p, &resp)
		}
		if err != nil {
			if !isEncodeError(err) || p.sendError(id, CodeInternal, "unencodable reply: "+err.Error()) != nil {
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
	p.assigned.Store(resp.Worker)
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
