package live

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/wire"
)

const benchN = 10_000_000

// benchShard serves one shard of benchN floats over loopback TCP: a
// BSP job of two workers, so worker 0's push is validated, accepted and
// buffered, and worker 1's closes the round (its apply is
// BenchmarkShardApply's business).
func benchShard(b *testing.B, durability string) (*Server, string, func()) {
	cfg := quickJob(b, "bsp", 2, 1)
	if err := cfg.Fill(); err != nil {
		b.Fatal(err)
	}
	ln, err := (wire.TCP{}).Listen("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	sc := ShardConfig{Index: 0, Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 1000}, Init: make([]float32, benchN)}
	scfg := ServerConfig{Index: 0, Params: sc.Params, Listener: ln, Token: "t", ControlToken: "c", ShardAddrs: []string{addr}}
	if durability == DurabilityLog {
		scfg.CheckpointDir, scfg.CheckpointInterval, scfg.Durability = b.TempDir(), time.Hour, durability
	}
	sv, err := newServer(scfg, sc, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { sv.Run(ctx); close(done) }()
	return sv, addr, func() { cancel(); <-done }
}

// rawTCP is the reference: the same bytes over a plain loopback TCP
// connection into a reused buffer, acknowledged with one byte.
type rawTCP struct {
	c   net.Conn
	buf []byte
	one [1]byte
	op  [1]byte
}

func newRawTCP(b *testing.B) (*rawTCP, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 4*benchN)
		var op [1]byte
		for {
			if _, err := io.ReadFull(c, op[:]); err != nil {
				return
			}
			if op[0] == 'w' { // the client sends a block: read it, ack
				if _, err := io.ReadFull(c, buf); err != nil {
					return
				}
				c.Write(op[:])
			} else { // the client reads a block
				c.Write(buf)
			}
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	return &rawTCP{c: c, buf: make([]byte, 4*benchN)}, func() { c.Close(); ln.Close() }
}

func (r *rawTCP) push() {
	r.op[0] = 'w'
	r.c.Write(r.op[:])
	r.c.Write(r.buf)
	io.ReadFull(r.c, r.one[:])
}

func (r *rawTCP) pull() {
	r.op[0] = 'r'
	r.c.Write(r.op[:])
	io.ReadFull(r.c, r.buf)
}

// BenchmarkPushPull measures a 10M-float push and pull through a shard
// server end to end (frame, token-authenticated connection, shard checks
// including the NaN screen as the floats arrive, aggregator, zero-copy
// snapshot for the pull) against plain TCP moving the same bytes,
// alternating the two in every iteration after two warm-up iterations of
// each (the first push and pull allocate and fault in their buffers).
// push_ratio and pull_ratio are the medians over the iterations of
// plain-TCP time ÷ shard time (goal ≥ 0.9 with the log off); _min and _max
// bound them. log=on runs the shard under --durability log (in $TMPDIR).
//
//	go test ./live -run '^$' -bench PushPull -benchtime 7x
func BenchmarkPushPull(b *testing.B) {
	for _, log := range []string{"off", "on"} {
		b.Run("log="+log, func(b *testing.B) {
			dur := DurabilityCheckpoint
			if log == "on" {
				dur = DurabilityLog
			}
			benchPushPull(b, dur)
		})
	}
}

func benchPushPull(b *testing.B, durability string) {
	sv, addr, stop := benchShard(b, durability)
	defer stop()
	raw, rstop := newRawTCP(b)
	defer rstop()
	var conns [2]*wire.Conn
	for w := range conns {
		cc := wire.ClientConfig{Hello: wire.Hello{Role: proto.RoleWorker, Worker: int32(w)}}
		cc.Token = "t"
		c, err := wire.Dial(context.Background(), wire.TCP{}, addr, cc)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		conns[w] = c
	}
	c, other := conns[0], conns[1]
	g := make([]float32, benchN)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range g {
		g[i] = float32(rng.NormFloat64())
	}
	var req, resp, pull wire.Frame
	ctx := context.Background()
	ack := wire.Frame{Type: wire.MsgHeartbeat}
	var tRawPush, tRawPull, tPush, tPull time.Duration
	pushRatios, pullRatios := make([]float64, 0, b.N), make([]float64, 0, b.N)
	const warm = 2
	for i := range warm + b.N {
		if i == warm {
			b.SetBytes(2 * 4 * benchN)
			b.ResetTimer()
		}
		t0 := time.Now()
		raw.push()
		t1 := time.Now()
		// Worker 0's push of round r is buffered; worker 1's, untimed,
		// closes the round, so the pull reads a version just made.
		r := uint64(i + 1)
		req = wire.Frame{Type: wire.MsgPush, Worker: 0, Tag: r, Extra: r - 1, Floats: g}
		if err := c.Call(ctx, &req, &resp); err != nil || resp.Flags&proto.FlagDropped != 0 {
			b.Fatal(err, resp.Flags)
		}
		t2 := time.Now()
		req = wire.Frame{Type: wire.MsgPush, Worker: 1, Tag: r, Extra: r - 1, Floats: g}
		if err := other.Call(ctx, &req, &resp); err != nil || resp.Tag != r {
			b.Fatal(err, resp.Tag)
		}
		t2r := time.Now()
		raw.pull()
		t3 := time.Now()
		req = wire.Frame{Type: wire.MsgPull, Tag: r - 1, Extra: r}
		if err := c.Call(ctx, &req, &pull); err != nil || len(pull.Floats) != benchN {
			b.Fatal(err, len(pull.Floats))
		}
		ack.Tag = r
		c.Send(ctx, &ack)
		t4 := time.Now()
		if i < warm {
			continue
		}
		tRawPush, tPush, tRawPull, tPull = tRawPush+t1.Sub(t0), tPush+t2.Sub(t1), tRawPull+t3.Sub(t2r), tPull+t4.Sub(t3)
		pushRatios = append(pushRatios, t1.Sub(t0).Seconds()/t2.Sub(t1).Seconds())
		pullRatios = append(pullRatios, t3.Sub(t2r).Seconds()/t4.Sub(t3).Seconds())
	}
	b.StopTimer()
	if st := sv.Shard().Stats(); st.Refused != 0 || st.Pushes != int64(2*(warm+b.N)) {
		b.Fatalf("shard refused %d, accepted %d of %d pushes", st.Refused, st.Pushes, 2*(warm+b.N))
	}
	gbs := func(d time.Duration) float64 { return 4 * benchN * float64(b.N) / d.Seconds() / 1e9 }
	b.ReportMetric(gbs(tPush), "push_GB/s")
	b.ReportMetric(gbs(tRawPush), "rawpush_GB/s")
	b.ReportMetric(gbs(tPull), "pull_GB/s")
	b.ReportMetric(gbs(tRawPull), "rawpull_GB/s")
	reportRatios(b, "push_ratio", pushRatios)
	reportRatios(b, "pull_ratio", pullRatios)
}

// BenchmarkShardApply measures the shard's apply (mean of K = 4 gradients
// plus the SGD step, through the shard's bookkeeping) over 10M floats
// against an axpy over the same size, alternating them after a warm-up:
// the apply on one core (GOMAXPROCS 1), the axpy, and the apply split over
// two cores. ratio is the median over the iterations of apply bytes/s ÷
// axpy bytes/s, counting K+1 reads and a write for the apply, two reads
// and a write for the axpy (goal ≥ 0.85); scale2 is the median of one-core
// time ÷ two-core time of the apply (goal ≥ 1.5).
//
//	go test ./live -run '^$' -bench ShardApply -benchtime 9x
func BenchmarkShardApply(b *testing.B) {
	const k = 4
	cfg := quickJob(b, "bsp", k, 1)
	cfg.Momentum = -1
	if err := cfg.Fill(); err != nil {
		b.Fatal(err)
	}
	s, err := newShard(ShardConfig{Index: 0, Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 1000}, Init: make([]float32, benchN)})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float32, benchN)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	var a paradigm.Apply
	y := make([]float32, benchN)
	for id := uint64(0); id < k; id++ {
		g := make([]float32, benchN)
		copy(g, x)
		s.grads[id] = g
		a.Grads = append(a.Grads, paradigm.Contribution{ID: id, Worker: int(id), Weight: 1.0 / k})
	}
	a.LRScale = 1e-9 // tiny steps keep w finite however long it runs
	keep := make([][]float32, k)
	for id := range keep {
		keep[id] = s.grads[uint64(id)]
	}
	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(procs)
	apply := func(cores int, v uint64) time.Duration {
		for id := range keep { // the apply recycles them; put them back
			s.grads[uint64(id)] = keep[id]
		}
		a.Version = v
		runtime.GOMAXPROCS(cores)
		t0 := time.Now()
		s.mu.Lock()
		s.apply(a, ^uint64(0), nil)
		s.mu.Unlock()
		return time.Since(t0)
	}
	const warm = 2
	ratios, scales := make([]float64, 0, b.N), make([]float64, 0, b.N)
	var t1, t2, tAxpy time.Duration
	for i := range warm + b.N {
		if i == warm {
			b.ResetTimer()
		}
		d1 := apply(1, uint64(2*i+1))
		t0 := time.Now()
		axpy(y, x, 1e-9)
		dx := time.Since(t0)
		d2 := apply(2, uint64(2*i+2))
		if i < warm {
			continue
		}
		t1, t2, tAxpy = t1+d1, t2+d2, tAxpy+dx
		ratios = append(ratios, float64(k+2)*dx.Seconds()/(3*d1.Seconds()))
		scales = append(scales, d1.Seconds()/d2.Seconds())
	}
	b.StopTimer()
	gbs := func(bytes int, d time.Duration) float64 {
		return float64(bytes*4*benchN) * float64(b.N) / d.Seconds() / 1e9
	}
	b.ReportMetric(gbs(k+2, t1), "apply1_GB/s")
	b.ReportMetric(gbs(k+2, t2), "apply2_GB/s")
	b.ReportMetric(gbs(3, tAxpy), "axpy_GB/s")
	reportRatios(b, "ratio", ratios)
	reportRatios(b, "scale2", scales)
}

// axpy is the reference loop: y += a·x.
func axpy(y, x []float32, a float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] += a * x[i]
	}
}
