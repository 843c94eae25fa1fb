package live

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/internal/ratelog"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// testServer runs shard 0 (with the coordinator) of a 1-worker, 2-shard
// BSP job on an in-process transport.
func testServer(t *testing.T, metrics string) (*Server, *wire.Inproc) {
	t.Helper()
	return testServerWith(t, func(c *ServerConfig) { c.MetricsAddr = metrics })
}

// testServerWith is testServer with the config adjusted by edit.
func testServerWith(t *testing.T, edit func(*ServerConfig)) (*Server, *wire.Inproc) {
	t.Helper()
	cfg := quickJob(t, "bsp", 1, 2)
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	tr := &wire.Inproc{}
	ln, err := tr.Listen("s0")
	if err != nil {
		t.Fatal(err)
	}
	sc := ServerConfig{Index: 0, Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 100}, Listener: ln,
		Transport: tr, Token: "secret", ControlToken: "control-secret", ShardAddrs: []string{"s0", "s1"}}
	if edit != nil {
		edit(&sc)
	}
	return runServer(t, sc), tr
}

// runServer starts a server with sc; the test's cleanup stops it and
// reports the error it ended with.
func runServer(t *testing.T, sc ServerConfig) *Server {
	t.Helper()
	sv, err := NewServer(sc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return sv
}

func dialAs(t *testing.T, tr wire.Transport, token, role string, worker int32) (*wire.Conn, error) {
	return dialHello(tr, "s0", token, wire.Hello{Role: role, Worker: worker})
}

// dialControl dials s0 in a control role with the job and control tokens.
func dialControlRole(t *testing.T, tr wire.Transport, role string) (*wire.Conn, error) {
	return dialHello(tr, "s0", "secret", proto.ControlHello(role, "control-secret", nil))
}

func dialHello(tr wire.Transport, addr, token string, h wire.Hello) (*wire.Conn, error) {
	cc := wire.ClientConfig{Hello: h}
	cc.Token = token
	ctx, cancel := context.WithTimeout(context.Background(), waitGuard) // a guard: a dial is answered
	defer cancel()
	return wire.Dial(ctx, tr, addr, cc)
}

// TestBadInputRefused: a connection without the token, a push of the wrong
// length, a NaN gradient and an unknown shard are each refused with an
// error and counted, and the weights do not change.
func TestBadInputRefused(t *testing.T) {
	sv, tr := testServer(t, "")
	sh := sv.Shard()
	w0, v0 := sh.Weights()

	if _, err := dialAs(t, tr, "wrong", proto.RoleWorker, 0); err == nil {
		t.Error("a connection with the wrong token was accepted")
	}
	if got := sv.ws.Stats().AuthFailures.Load(); got != 1 {
		t.Errorf("auth failures %d, want 1", got)
	}
	c, err := dialAs(t, tr, "secret", proto.RoleWorker, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n := len(w0)
	good := make([]float32, n)
	nan := make([]float32, n)
	nan[n/2] = float32(math.NaN())
	cases := []struct {
		name  string
		frame wire.Frame
		code  wire.ErrorCode
	}{
		{"wrong length", wire.Frame{Type: wire.MsgPush, Worker: 0, Floats: good[:n-1]}, wire.CodeBadRequest},
		{"offset", wire.Frame{Type: wire.MsgPush, Worker: 0, Offset: 1, Floats: good[:n-1]}, wire.CodeBadRequest},
		{"NaN", wire.Frame{Type: wire.MsgPush, Worker: 0, Floats: nan}, wire.CodeNonFinite},
		{"unknown shard", wire.Frame{Type: wire.MsgPush, Shard: 7, Worker: 0, Floats: good}, wire.CodeBadRequest},
		{"other worker", wire.Frame{Type: wire.MsgPush, Worker: 3, Floats: good}, wire.CodeBadRequest},
		{"pull out of range", wire.Frame{Type: wire.MsgPull, Offset: uint64(n), Count: 1}, wire.CodeBadRequest},
		{"pull unknown shard", wire.Frame{Type: wire.MsgPull, Shard: 9}, wire.CodeBadRequest},
	}
	for i, tc := range cases {
		var resp wire.Frame
		err := c.Call(context.Background(), &tc.frame, &resp)
		var re *wire.RemoteError
		if !errors.As(err, &re) || re.Code != tc.code {
			t.Errorf("%s: err %v, want a remote %s error", tc.name, err, tc.code)
		}
		if st := sh.Stats(); st.Refused != int64(i+1) {
			t.Errorf("%s: refused counter %d, want %d", tc.name, st.Refused, i+1)
		}
	}
	if st := sh.Stats(); st.NonFinite != 1 || st.Pushes != 0 {
		t.Errorf("non-finite %d (want 1), pushes accepted %d (want 0)", st.NonFinite, st.Pushes)
	}
	w1, v1 := sh.Weights()
	if v1 != v0 || !slices.Equal(w0, w1) {
		t.Errorf("weights or version changed by refused frames (version %d → %d)", v0, v1)
	}
	// The connection survives a refusal: a good push still applies.
	var resp wire.Frame
	good[0] = 1
	if err := c.Call(context.Background(), &wire.Frame{Type: wire.MsgPush, Worker: 0, Floats: good}, &resp); err != nil {
		t.Fatal(err)
	}
	if w2, v2 := sh.Weights(); v2 != v0+1 || w2[0] == w0[0] {
		t.Errorf("a good push after the refusals did not apply (version %d)", v2)
	}
}

// TestRolesRefused: an unknown role, a worker data connection without an
// id, and a control connection to a shard without the coordinator.
func TestRolesRefused(t *testing.T) {
	_, tr := testServer(t, "")
	if _, err := dialAs(t, tr, "secret", "intruder", 0); err == nil {
		t.Error("unknown role accepted")
	}
	if _, err := dialAs(t, tr, "secret", proto.RoleWorker, -1); err == nil {
		t.Error("worker data connection without an id accepted")
	}
	if _, err := dialAs(t, tr, "secret", proto.RoleObserver, -1); wire.CodeOf(err) != wire.CodeUnauthenticated {
		t.Errorf("an observer with the job token only: %v, want unauthenticated", err)
	}
	c, err := dialControlRole(t, tr, proto.RoleObserver)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var resp wire.Frame
	err = c.Call(context.Background(), &wire.Frame{Type: wire.MsgPush, Floats: []float32{1}}, &resp)
	if err == nil {
		t.Error("an observer's push was accepted")
	}
}

// TestRefusalLogBounded (issue 20, finding 12): pulls for a shard that does
// not exist, sent in a loop from one connection, are each refused and
// counted, but the log gets at most the rate limit's lines.
func TestRefusalLogBounded(t *testing.T) {
	var buf syncBuffer
	sv, tr := testServerWith(t, func(c *ServerConfig) { c.Logger = slog.New(slog.NewTextHandler(&buf, nil)) })
	c, err := dialAs(t, tr, "secret", proto.RoleWorker, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 20000
	start := time.Now()
	for i := 0; i < n; i++ {
		var resp wire.Frame
		err := c.Call(context.Background(), &wire.Frame{Type: wire.MsgPull, Shard: 9, Worker: 0}, &resp)
		if wire.CodeOf(err) != wire.CodeBadRequest {
			t.Fatalf("pull %d: %v, want a bad_request refusal", i, err)
		}
	}
	elapsed := time.Since(start)
	if st := sv.Shard().Stats(); st.Refused != n {
		t.Errorf("refused %d, want %d", st.Refused, n)
	}
	warns := strings.Count(buf.String(), "msg=\"refused request\"")
	bound := ratelog.DefaultBurst + int(elapsed/ratelog.DefaultEvery) + 1
	if warns == 0 || warns > bound {
		t.Errorf("%d refusal lines for %d refusals in %s, want 1..%d", warns, n, elapsed.Round(time.Millisecond), bound)
	}
	if !strings.Contains(buf.String(), "peer=") {
		t.Error("refusal lines do not name the peer")
	}
	if got := sv.plog.Suppressed(); got < uint64(n-bound) {
		t.Errorf("suppressed %d lines, want ≥ %d", got, n-bound)
	}
}

func TestMetricsServed(t *testing.T) {
	sv, tr := testServer(t, "127.0.0.1:0")
	_ = tr
	addr := waitMetrics(t, sv)
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, m := range []string{"pacer_shard_pushes_total", "pacer_shard_updates_total", "pacer_shard_dropped_total",
		"pacer_shard_staleness_bucket", "pacer_wire_bytes_total", "pacer_job_releases_total", "pacer_worker_wait_seconds_total",
		"pacer_shard_refused_total", "pacer_wire_slow_peers_total", "pacer_log_suppressed_total", "pacer_job_refused_total"} {
		if !strings.Contains(string(b), m) {
			t.Errorf("/metrics lacks %s", m)
		}
	}
}
