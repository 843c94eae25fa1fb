package wire

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
)

// Transport is the stream layer under the framing: how listeners are opened
// and connections dialled. Framing, authentication and timeouts sit above
// it, so every implementation gets them alike.
type Transport interface {
	Listen(addr string) (net.Listener, error)
	Dial(ctx context.Context, addr string) (net.Conn, error)
}

// TCP is the network Transport. With TLS set, listeners and dials are
// wrapped in TLS using that configuration (servers need Certificates,
// clients RootCAs and ServerName as usual).
type TCP struct {
	TLS *tls.Config
}

// Listen opens a TCP listener on addr ("127.0.0.1:0" picks a free port).
func (t TCP) Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if t.TLS != nil {
		return tls.NewListener(ln, t.TLS), nil
	}
	return ln, nil
}

// Dial connects to addr, honouring ctx's deadline and cancellation.
func (t TCP) Dial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	if t.TLS != nil {
		td := tls.Dialer{NetDialer: &d, Config: t.TLS}
		c, err := td.DialContext(ctx, "tcp", addr)
		if err != nil && plaintextReply(err) {
			return nil, fmt.Errorf("%w: %s answered in plaintext, so it serves without TLS, while this side dials with TLS: %v",
				ErrTLSMismatch, addr, err)
		}
		return c, err
	}
	return d.DialContext(ctx, "tcp", addr)
}

// Inproc is an in-process Transport: Dial hands one end of a net.Pipe to the
// listener registered under addr. It serves `--mode inproc` and tests, with
// exactly the framing, authentication and limits of TCP. The zero value is
// ready to use.
type Inproc struct {
	mu        sync.Mutex
	listeners map[string]*inprocListener
}

// Listen registers a listener under addr; the name is free-form.
func (t *Inproc) Listen(addr string) (net.Listener, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.listeners == nil {
		t.listeners = make(map[string]*inprocListener)
	}
	if _, ok := t.listeners[addr]; ok {
		return nil, fmt.Errorf("wire: inproc address %q already in use", addr)
	}
	l := &inprocListener{t: t, addr: inprocAddr(addr), conns: make(chan net.Conn), done: make(chan struct{})}
	t.listeners[addr] = l
	return l, nil
}

// Dial connects to the listener registered under addr.
func (t *Inproc) Dial(ctx context.Context, addr string) (net.Conn, error) {
	t.mu.Lock()
	l := t.listeners[addr]
	t.mu.Unlock()
	if l == nil {
		return nil, fmt.Errorf("wire: inproc dial %q: connection refused", addr)
	}
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, fmt.Errorf("wire: inproc dial %q: listener closed", addr)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type inprocListener struct {
	t         *Inproc
	addr      inprocAddr
	conns     chan net.Conn
	done      chan struct{}
	closeOnce sync.Once
}

func (l *inprocListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *inprocListener) Close() error {
	err := errors.New("wire: inproc listener already closed")
	l.closeOnce.Do(func() {
		close(l.done)
		l.t.mu.Lock()
		delete(l.t.listeners, string(l.addr))
		l.t.mu.Unlock()
		err = nil
	})
	return err
}

func (l *inprocListener) Addr() net.Addr { return l.addr }

type inprocAddr string

func (a inprocAddr) Network() string { return "inproc" }
func (a inprocAddr) String() string  { return string(a) }
