package live

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/data"
	"github.com/pacer-ps/pacer/internal/ratelog"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/live/worker"
	"github.com/pacer-ps/pacer/wire"
)

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestProbesAndRuntimeMetrics: a shard serves /healthz and /readyz beside
// /metrics, and /metrics carries the Go runtime's and the process's
// collectors and the staleness histogram's fixed buckets.
func TestProbesAndRuntimeMetrics(t *testing.T) {
	sv, _ := testServer(t, "127.0.0.1:0")
	addr := waitMetrics(t, sv)
	if code, body := httpGet(t, "http://"+addr+"/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	var code int
	var body string
	if !waitUntil(func() bool {
		code, body = httpGet(t, "http://"+addr+"/readyz")
		return code == 200 && body == "ready\n"
	}) {
		t.Fatalf("/readyz of a listening shard: %d %q", code, body)
	}
	_, page := httpGet(t, "http://"+addr+"/metrics")
	for _, m := range []string{"go_goroutines ", "go_memstats_heap_alloc_bytes ", "process_cpu_seconds_total ",
		"process_resident_memory_bytes ", "pacer_wire_pending_refused_total{"} {
		if !strings.Contains(page, m) {
			t.Errorf("/metrics lacks %s", m)
		}
	}
	// Every fixed bucket is exported even before any gradient arrives.
	for _, b := range append(append([]float64(nil), StalenessBuckets...), 0) {
		le := strconv.FormatFloat(b, 'g', -1, 64)
		if !strings.Contains(page, `pacer_shard_staleness_bucket{shard="0",le="`+le+`"}`) {
			t.Errorf("/metrics lacks the staleness bucket le=%s", le)
		}
	}
}

// TestStalenessBucketsFixed: staleness counts fold into the fixed buckets
// cumulatively; values past the last bucket count only in +Inf (the total).
func TestStalenessBucketsFixed(t *testing.T) {
	hist := make([]int64, 1001)
	hist[0], hist[1], hist[5], hist[100], hist[1000] = 4, 3, 2, 1, 1
	n, sum, b := stalenessBuckets(hist)
	if n != 11 || sum != 0*4+1*3+5*2+100+1000 {
		t.Fatalf("n=%d sum=%g", n, sum)
	}
	want := map[float64]uint64{0: 4, 1: 7, 2: 7, 4: 7, 6: 9, 96: 9, 128: 10, 512: 10}
	for le, k := range want {
		if b[le] != k {
			t.Errorf("bucket le=%g holds %d, want %d", le, b[le], k)
		}
	}
	if len(b) != len(StalenessBuckets) {
		t.Errorf("%d buckets, want %d", len(b), len(StalenessBuckets))
	}
}

// tcpTestServer is testServer on a loopback TCP port, logging to buf.
func tcpTestServer(t *testing.T, buf *syncBuffer, edit func(*ServerConfig)) (*Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sv, _ := testServerWith(t, func(c *ServerConfig) {
		c.Listener, c.Transport, c.Logger = ln, wire.TCP{}, newTestLogger(buf)
		c.ShardAddrs = []string{ln.Addr().String(), "127.0.0.1:1"}
		if edit != nil {
			edit(c)
		}
	})
	return sv, ln.Addr().String()
}

// TestAuthFailuresLogged: a wrong token is logged with the peer's
// address, at a bounded rate however many connections try.
func TestAuthFailuresLogged(t *testing.T) {
	var buf syncBuffer
	sv, addr := tcpTestServer(t, &buf, nil)
	const n = 60
	start := time.Now()
	for i := 0; i < n; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := wire.Dial(ctx, wire.TCP{}, addr, wire.ClientConfig{Config: wire.Config{Token: "wrong"}, Hello: wire.Hello{Role: proto.RoleWorker, Worker: 0}})
		cancel()
		if err == nil {
			c.Close()
			t.Fatal("a wrong token was admitted")
		}
	}
	elapsed := time.Since(start)
	// The refusal is sent before the hook logs: wait for its line.
	awaitLog(&buf, `msg="authentication failed"`)
	logs := buf.String()
	lines := strings.Count(logs, `msg="authentication failed"`)
	bound := ratelog.DefaultBurst + int(elapsed/ratelog.DefaultEvery) + 1
	if lines == 0 || lines > bound {
		t.Errorf("%d authentication-failure lines for %d attempts in %s, want 1..%d", lines, n, elapsed.Round(time.Millisecond), bound)
	}
	if !strings.Contains(logs, "peer=127.0.0.1:") || !strings.Contains(logs, "wrong token") {
		t.Errorf("the log does not name the peer and the cause:\n%s", logs)
	}
	if got := sv.ws.Stats().AuthFailures.Load(); got != n {
		t.Errorf("AuthFailures %d, want %d", got, n)
	}
}

// TestPendingConnectionsCapped: beyond the cap, a connection that has not
// authenticated is refused with a log line naming the peer; the workers'
// connections get in once the silent ones go.
func TestPendingConnectionsCapped(t *testing.T) {
	var buf syncBuffer
	sv, addr := tcpTestServer(t, &buf, func(c *ServerConfig) { c.Wire.MaxPending = 2 })
	var silent []net.Conn
	defer func() {
		for _, c := range silent {
			c.Close()
		}
	}()
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		silent = append(silent, c)
	}
	over, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer over.Close()
	over.SetReadDeadline(time.Now().Add(waitGuard)) // a guard: the server closes it at once
	if _, err := over.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("the connection over the cap: %v, want closed (EOF)", err)
	}
	awaitLog(&buf, "too many unauthenticated connections")
	if logs := buf.String(); !strings.Contains(logs, "too many unauthenticated connections") || !strings.Contains(logs, "max_pending=2") ||
		!strings.Contains(logs, "peer="+over.LocalAddr().String()) {
		t.Errorf("no refusal line naming the peer %s:\n%s", over.LocalAddr(), logs)
	}
	if got := sv.ws.Stats().PendingRefused.Load(); got != 1 {
		t.Errorf("PendingRefused %d, want 1", got)
	}
	for _, c := range silent {
		c.Close()
	}
	silent = nil
	// The server sees the closes in its own time: dial until one is let in.
	if !waitUntil(func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), waitGuard)
		defer cancel()
		var c *wire.Conn
		if c, err = wire.Dial(ctx, wire.TCP{}, addr, wire.ClientConfig{Config: wire.Config{Token: "secret"}, Hello: wire.Hello{Role: proto.RoleWorker, Worker: 0}}); err == nil {
			c.Close()
		}
		return err == nil
	}) {
		t.Fatalf("a worker could not connect once the silent connections closed: %v", err)
	}
}

// TestWorkerMetrics: a worker with a metrics address serves its own
// counters and probes: not ready before it has joined, its pushes counted
// while it trains.
func TestWorkerMetrics(t *testing.T) {
	cfg := quickJob(t, "asp", 1, 1)
	cfg.Epochs = 1000 // runs until the test has seen what it needs
	if err := cfg.Fill(); err != nil {
		t.Fatal(err)
	}
	ds, err := data.NewSynthetic(data.SyntheticConfig{Train: 256, Test: 10, Dim: 784, Classes: 10, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tr := &wire.Inproc{}
	ln, err := tr.Listen("s0")
	if err != nil {
		t.Fatal(err)
	}
	runServer(t, ServerConfig{Index: 0, Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 256}, Listener: ln,
		Transport: tr, Token: "secret", ControlToken: "control-secret", ShardAddrs: []string{"s0"}})
	at := make(chan string, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := worker.Run(ctx, worker.Config{Coordinator: "s0", Transport: tr, Token: "secret", ID: 0, Data: ds,
			ConnectTimeout: 5 * time.Second, MetricsAddr: "127.0.0.1:0", MetricsReady: func(a string) { at <- a }})
		done <- err
	}()
	var addr string
	select {
	case addr = <-at:
	case err := <-done:
		t.Fatalf("worker ended before serving metrics: %v", err)
	}
	var code int
	var page string
	if !waitUntil(func() bool {
		code, _ = httpGet(t, "http://"+addr+"/readyz")
		_, page = httpGet(t, "http://"+addr+"/metrics")
		n, _ := strconv.Atoi(metric(page, `pacer_worker_pushes_total{worker="0"}`))
		return code == 200 && n > 0
	}) {
		t.Fatalf("worker metrics never showed a push (readyz %d):\n%s", code, page)
	}
	for _, m := range []string{`pacer_worker_compute_seconds_total{worker="0"}`, `pacer_worker_wire_bytes_total{direction="out",worker="0"}`,
		`pacer_worker_clock{worker="0"}`, "go_goroutines", "process_cpu_seconds_total"} {
		if !strings.Contains(page, m) {
			t.Errorf("worker /metrics lacks %s", m)
		}
	}
	cancel()
	<-done
}
