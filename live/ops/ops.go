// Package ops serves a live process's operational endpoints over HTTP:
// /metrics for Prometheus, /healthz and /readyz for probes. A shard server
// and a worker each serve their own (their collectors live with them), with
// the same bounds on what a client of the endpoint may hold.
package ops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Limits bound what a client of the metrics server can hold: a
// scraper needs one connection and one request every scrape interval, so
// a connection idle for longer than IdleTimeout is closed (a scraper
// redials at no cost), a slow request or reply is cut off, and at most
// MaxConns connections are open at once: an idle connection costs a
// goroutine and its buffers, so their number is bounded too. Tests shorten
// them.
var Limits = struct {
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	MaxHeaderBytes, MaxConns                                  int
}{
	ReadHeaderTimeout: 5 * time.Second,
	ReadTimeout:       10 * time.Second,
	WriteTimeout:      30 * time.Second,
	IdleTimeout:       30 * time.Second,
	MaxHeaderBytes:    16 << 10,
	MaxConns:          128,
}

// connLimit keeps at most max connections of an HTTP server open. A
// connection beyond the bound makes room by closing the oldest one that is
// not serving a request (silent since it connected, or idle between
// requests): connections that hold a slot without asking for anything
// cannot keep a probe out (300 silent connections made /healthz wait
// 9–10 s in the listen backlog while they timed out), and a request being
// served is never cut. Only when every other connection is serving one is
// the new connection closed.
type connLimit struct {
	max   int
	mu    sync.Mutex
	conns map[net.Conn]*connEntry
	seq   uint64
}

type connEntry struct {
	busy bool   // serving a request
	seq  uint64 // when it last became free to close (connected or went idle)
}

func newConnLimit(max int) *connLimit {
	return &connLimit{max: max, conns: make(map[net.Conn]*connEntry)}
}

// state is the http.Server's ConnState hook.
func (l *connLimit) state(c net.Conn, st http.ConnState) {
	var evict net.Conn
	l.mu.Lock()
	switch st {
	case http.StateNew:
		l.seq++
		l.conns[c] = &connEntry{seq: l.seq}
		if len(l.conns) > l.max {
			evict = c
			oldest := uint64(0)
			for o, e := range l.conns {
				if o != c && !e.busy && (oldest == 0 || e.seq < oldest) {
					evict, oldest = o, e.seq
				}
			}
			delete(l.conns, evict)
		}
	case http.StateActive:
		if e := l.conns[c]; e != nil {
			e.busy = true
		}
	case http.StateIdle:
		if e := l.conns[c]; e != nil {
			l.seq++
			e.busy, e.seq = false, l.seq
		}
	case http.StateClosed, http.StateHijacked:
		delete(l.conns, c)
	}
	l.mu.Unlock()
	if evict != nil {
		evict.Close()
	}
}

// Serve serves a process's operational endpoints on addr: /metrics
// (c, the Go runtime's and the process's collectors), /healthz (200 while
// the process serves HTTP at all: a liveness probe) and /readyz (200 only
// while ready() holds: a shard listening for its peers, a worker in its
// job; 503 otherwise, so a readiness probe or a load balancer waits).
// It returns the address it listens on and a stop function.
func Serve(addr string, c prometheus.Collector, ready func() bool, log *slog.Logger) (stop func(), at string, err error) {
	reg := prometheus.NewRegistry()
	// In inproc mode several servers share one process: each registry
	// gets its own runtime and process collectors (they read the same
	// process, which is what each scrape should see).
	for _, col := range []prometheus.Collector{c, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		if err := reg.Register(col); err != nil {
			return nil, "", err
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !ready() {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "not ready\n")
			return
		}
		io.WriteString(w, "ready\n")
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("live: metrics: listen %s: %w", addr, err)
	}
	lim := Limits
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: lim.ReadHeaderTimeout, ReadTimeout: lim.ReadTimeout,
		WriteTimeout: lim.WriteTimeout, IdleTimeout: lim.IdleTimeout, MaxHeaderBytes: lim.MaxHeaderBytes,
		ConnState: newConnLimit(lim.MaxConns).state, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	go func() {
		err := hs.Serve(ln)
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server failed", "err", err)
		}
	}()
	log.Info("metrics at /metrics, probes at /healthz and /readyz", "addr", ln.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if hs.Shutdown(ctx) != nil {
			hs.Close() // a scrape still running after a second is cut off
		}
	}, ln.Addr().String(), nil
}
