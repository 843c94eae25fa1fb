package wire

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"
)

const testToken = "s3cret"

// testShard is a miniature shard server: enough behaviour to exercise every
// path of the transport (replies, errors, notifications, blocking handlers).
type testShard struct {
	mu      sync.Mutex
	w       []float32
	version uint64
	nextID  int32
	block   chan struct{} // MsgControl handlers wait on it (or ctx)
}

func newTestShard(n int) *testShard {
	return &testShard{w: make([]float32, n), block: make(chan struct{})}
}

func (s *testShard) handle(ctx context.Context, req, resp *Frame) error {
	switch req.Type {
	case MsgHello:
		var h Hello
		if err := req.JSON(&h); err != nil {
			return err
		}
		if h.Role == "intruder" {
			return &RemoteError{Code: CodeBadRequest, Message: "no intruders"}
		}
		s.mu.Lock()
		id := s.nextID
		s.nextID++
		s.mu.Unlock()
		resp.Type, resp.Worker = MsgHelloOK, id
		resp.Bytes = append(resp.Bytes, `{"size":`+fmt.Sprint(len(s.w))+`}`...)
	case MsgPush:
		if req.Offset+uint64(len(req.Floats)) > uint64(len(s.w)) {
			return &RemoteError{Code: CodeBadRequest, Message: "range out of shard"}
		}
		if err := CheckFinite(req.Floats); err != nil {
			return err
		}
		s.mu.Lock()
		for i, v := range req.Floats {
			s.w[int(req.Offset)+i] += v
		}
		s.version++
		resp.Tag = s.version
		s.mu.Unlock()
		resp.Type, resp.Count = MsgPushAck, uint32(len(req.Floats))
	case MsgPull:
		if req.Offset+uint64(req.Count) > uint64(len(s.w)) {
			return &RemoteError{Code: CodeBadRequest, Message: "range out of shard"}
		}
		s.mu.Lock()
		copy(resp.FloatBuf(int(req.Count)), s.w[req.Offset:])
		resp.Tag = s.version
		s.mu.Unlock()
		resp.Type, resp.Offset = MsgPullResp, req.Offset
	case MsgClock:
		// Answer later, from another goroutine, as a coordinator would.
		p, _ := PeerFrom(ctx)
		clock := req.Tag
		go p.Send(&Frame{Type: MsgRelease, Worker: p.ID(), Tag: clock})
	case MsgHeartbeat:
		resp.Type, resp.Tag = MsgHeartbeat, req.Tag
	case MsgControl:
		select {
		case <-s.block:
		case <-ctx.Done():
		}
		resp.Type = MsgControl
	default:
		return &RemoteError{Code: CodeProtocol, Message: "unexpected " + req.Type.String()}
	}
	return nil
}

type env struct {
	tr     Transport
	addr   string
	srv    *Server
	shard  *testShard
	cfg    Config // client side
	cancel context.CancelFunc
	served chan error

	once     sync.Once
	serveErr error
}

// start serves a fresh testShard on a fresh listener of tr.
func start(t *testing.T, tr Transport, clientCfg Config, srvCfg Config) *env {
	t.Helper()
	e := &env{tr: tr, shard: newTestShard(1000), cfg: clientCfg, served: make(chan error, 1)}
	return e.serve(t, srvCfg, e.shard.handle)
}

// serve starts a server with h on a fresh listener of e.tr; the test's
// cleanup stops it and reports how Serve ended.
func (e *env) serve(t *testing.T, cfg Config, h Handler) *env {
	t.Helper()
	srv, err := NewServer(cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	e.srv = srv
	ln, err := e.tr.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.addr = ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	go func() { e.served <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		close(e.shard.block)
		if err := e.stop(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return e
}

// stop cancels Serve and waits for it to return (idempotent).
func (e *env) stop() error {
	e.once.Do(func() {
		e.cancel()
		e.serveErr = <-e.served
	})
	return e.serveErr
}

func (e *env) dial(t *testing.T, role string, onNotify func(*Frame)) (*Conn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, e.tr, e.addr, ClientConfig{Config: e.cfg, Hello: Hello{Role: role, Worker: -1}, OnNotify: onNotify})
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

func (e *env) mustDial(t *testing.T) *Conn {
	t.Helper()
	c, err := e.dial(t, "worker", nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// transportCases runs the shared suite on every Transport.
func forEachTransport(t *testing.T, test func(t *testing.T, tr func() Transport, cfg Config)) {
	base := Config{Token: testToken, CallTimeout: 10 * time.Second}
	t.Run("inproc", func(t *testing.T) { test(t, func() Transport { return new(Inproc) }, base) })
	t.Run("tcp", func(t *testing.T) { test(t, func() Transport { return TCP{} }, base) })
	srvTLS, cliTLS := testTLS(t)
	t.Run("tls", func(t *testing.T) {
		// One Transport value per side: the server's carries the certificate.
		test(t, func() Transport { return tlsPair{srv: TCP{TLS: srvTLS}, cli: TCP{TLS: cliTLS}} }, base)
	})
}

// tlsPair listens with the server's TLS config and dials with the client's.
type tlsPair struct{ srv, cli TCP }

func (p tlsPair) Listen(addr string) (net.Listener, error) { return p.srv.Listen(addr) }
func (p tlsPair) Dial(ctx context.Context, addr string) (net.Conn, error) {
	return p.cli.Dial(ctx, addr)
}

// testTLS makes a throwaway self-signed certificate for 127.0.0.1.
func testTLS(t *testing.T) (srv, cli *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pacer-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	srv = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS13}
	cli = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS13}
	return srv, cli
}
