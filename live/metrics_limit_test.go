package live

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/live/ops"
)

// TestMetricsConnectionsBounded: beyond MaxConns a new connection closes
// the oldest one not serving a request, so idle clients cannot make the
// metrics server hold a goroutine and buffers each without bound, nor keep
// a probe waiting (issue 37: 300 silent connections made /healthz take
// 9–10 s).
func TestMetricsConnectionsBounded(t *testing.T) {
	saved := ops.Limits
	// Deadlines below are guards: every wait ends on an event long before.
	// The server's own timeouts outlast them, so only the bound can close
	// a connection here.
	const guard = time.Minute
	ops.Limits.MaxConns = 4
	ops.Limits.ReadHeaderTimeout, ops.Limits.IdleTimeout = 3*guard, 3*guard
	t.Cleanup(func() { ops.Limits = saved })
	sv, _ := testServer(t, "127.0.0.1:0")
	addr := waitMetrics(t, sv)
	get := func(c net.Conn, path string) error {
		c.SetDeadline(time.Now().Add(guard))
		io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		return c
	}
	// A flood of silent connections. (No scraper idle between requests
	// before it: when the server marks that one idle is its own goroutine's
	// business, after the reply the client has read, so whether it is the
	// oldest idle one when the flood comes depends on the load: at load 19
	// it was still serving and outlived a newer one.)
	const flood = 40
	for i := 0; i < flood; i++ {
		dial()
	}
	// A probe is served at once, whatever the flood holds.
	probe := dial()
	if err := get(probe, "/healthz"); err != nil {
		t.Fatalf("/healthz behind %d silent connections (MaxConns %d): %v", flood, ops.Limits.MaxConns, err)
	}
	// Every connection but the newest MaxConns was closed by the server.
	closed := 0
	for _, c := range conns[:len(conns)-ops.Limits.MaxConns] {
		c.SetReadDeadline(time.Now().Add(guard))
		if _, err := c.Read(make([]byte, 1)); errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err) {
			closed++
		}
	}
	if want := len(conns) - ops.Limits.MaxConns; closed != want {
		t.Errorf("%d connections closed by the server, want %d (%d open, MaxConns %d)", closed, want, len(conns), ops.Limits.MaxConns)
	}
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}
