package live

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/internal/hugemem"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// This file: a synchronous round of K workers through one or two shards,
// against plain TCP moving the same bytes in the same run.

// roundBench is a BSP job of k workers over len(svs) shards that split
// benchN floats, on loopback TCP. Every (worker, shard) pair has its own
// connection and goroutine, as a worker's links do, kept across rounds so
// a round in steady state starts no goroutine.
type roundBench struct {
	svs   []*Server
	pairs []*roundPair
	stop  func()
}

// roundPair is one worker's link to one shard.
type roundPair struct {
	c      *wire.Conn
	w      int32
	g      []float32
	req    wire.Frame
	resp   wire.Frame
	pull   wire.Frame
	ready  chan struct{}
	start  chan uint64
	done   chan error
	parked bool
}

func newRoundBench(b *testing.B, k, shards int, durability string) *roundBench {
	cfg := quickJob(b, "bsp", k, shards)
	if err := cfg.Fill(); err != nil {
		b.Fatal(err)
	}
	p := &job.Description{Version: job.Version, Job: cfg, TrainN: 1000}
	var lns []net.Listener
	var addrs []string
	for range shards {
		ln, err := (wire.TCP{}).Listen("127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		lns, addrs = append(lns, ln), append(addrs, ln.Addr().String())
	}
	rb := &roundBench{}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	rb.stop = func() {
		for _, pr := range rb.pairs {
			close(pr.start)
			pr.c.Close()
		}
		cancel()
		wg.Wait()
	}
	per := benchN / shards
	w0 := make([]float32, benchN) // the whole model: each shard cuts its block
	for i := range shards {
		sc := ShardConfig{Index: i, Params: p, Init: w0}
		scfg := ServerConfig{Index: i, Params: p, Listener: lns[i], Transport: wire.TCP{}, Token: "t", ControlToken: "c", ShardAddrs: addrs}
		if durability == DurabilityLog {
			scfg.CheckpointDir, scfg.CheckpointInterval, scfg.Durability = b.TempDir(), time.Hour, durability
		}
		sv, err := newServer(scfg, sc, slog.New(slog.DiscardHandler))
		if err != nil {
			b.Fatal(err)
		}
		rb.svs = append(rb.svs, sv)
		wg.Add(1)
		go func() { defer wg.Done(); sv.Run(ctx) }()
	}
	g := hugemem.Floats(per) // a worker's gradient buffer is (live/worker/worker.go)
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range g {
		g[i] = float32(rng.NormFloat64()) * 1e-3
	}
	for w := range k {
		for s := range shards {
			pr := &roundPair{w: int32(w), g: g, ready: make(chan struct{}, 1), start: make(chan uint64), done: make(chan error, 1)}
			cc := wire.ClientConfig{Hello: wire.Hello{Role: proto.RoleWorker, Worker: int32(w)},
				OnNotify: func(f *wire.Frame) {
					if f.Type == wire.MsgPullResp && f.Flags&proto.FlagReady != 0 {
						select {
						case pr.ready <- struct{}{}:
						default:
						}
					}
				}}
			cc.Token = "t"
			c, err := wire.Dial(context.Background(), wire.TCP{}, addrs[s], cc)
			if err != nil {
				rb.stop()
				b.Fatal(err)
			}
			pr.c = c
			pr.req.Shard, pr.pull.Shard = uint32(s), uint32(s)
			rb.pairs = append(rb.pairs, pr)
			go pr.serve()
		}
	}
	return rb
}

// serve runs the pair's part of each round it is started for: push the
// gradient read at version r-1, then pull version r (waiting for the
// shard's ready notice if the round is not complete yet).
func (pr *roundPair) serve() {
	ctx := context.Background()
	for r := range pr.start {
		pr.req = wire.Frame{Type: wire.MsgPush, Shard: pr.req.Shard, Worker: pr.w, Tag: r, Extra: r - 1, Floats: pr.g}
		if err := pr.c.Call(ctx, &pr.req, &pr.resp); err != nil {
			pr.done <- err
			continue
		}
		var err error
		for {
			q := wire.Frame{Type: wire.MsgPull, Shard: pr.req.Shard, Worker: pr.w, Tag: r - 1, Extra: r}
			if err = pr.c.Call(ctx, &q, &pr.pull); err != nil || pr.pull.Flags&proto.FlagPending == 0 {
				break
			}
			<-pr.ready
		}
		if err == nil && (pr.pull.Tag != r || len(pr.pull.Floats) != len(pr.g)) {
			err = fmt.Errorf("worker %d pulled version %d (%d floats), want %d (%d)", pr.w, pr.pull.Tag, len(pr.pull.Floats), r, len(pr.g))
		}
		pr.done <- err
	}
}

// round runs round r and returns its wall time.
func (rb *roundBench) round(b *testing.B, r uint64) time.Duration {
	t0 := time.Now()
	for _, pr := range rb.pairs {
		pr.start <- r
	}
	for _, pr := range rb.pairs {
		if err := <-pr.done; err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(t0)
}

// rawRound is the reference: k·shards plain TCP connections, each moving
// its pair's block up (acknowledged with one byte) and back down,
// concurrently, with persistent goroutines on both ends.
type rawRound struct {
	conns []*rawPair
	ln    net.Listener
}

type rawPair struct {
	c     net.Conn
	buf   []byte
	op    [1]byte
	start chan struct{}
	done  chan error
}

func newRawRound(b *testing.B, pairs, floats int) *rawRound {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	rr := &rawRound{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go rawServe(c, 4*floats)
		}
	}()
	for range pairs {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		rp := &rawPair{c: c, buf: make([]byte, 4*floats), start: make(chan struct{}), done: make(chan error, 1)}
		rr.conns = append(rr.conns, rp)
		go func() {
			for range rp.start {
				rp.op[0] = 'w'
				_, err := rp.c.Write(rp.op[:])
				if err == nil {
					_, err = rp.c.Write(rp.buf)
				}
				if err == nil {
					_, err = io.ReadFull(rp.c, rp.op[:])
				}
				if err == nil {
					rp.op[0] = 'r'
					_, err = rp.c.Write(rp.op[:])
				}
				if err == nil {
					_, err = io.ReadFull(rp.c, rp.buf)
				}
				rp.done <- err
			}
		}()
	}
	return rr
}

// rawServe answers one raw connection: 'w' reads a block and acknowledges
// it, 'r' sends the block back.
func rawServe(c net.Conn, size int) {
	defer c.Close()
	buf := make([]byte, size)
	var op [1]byte
	for {
		if _, err := io.ReadFull(c, op[:]); err != nil {
			return
		}
		var err error
		if op[0] == 'w' {
			if _, err = io.ReadFull(c, buf); err == nil {
				_, err = c.Write(op[:])
			}
		} else {
			_, err = c.Write(buf)
		}
		if err != nil {
			return
		}
	}
}

func (rr *rawRound) round(b *testing.B) time.Duration {
	t0 := time.Now()
	for _, rp := range rr.conns {
		rp.start <- struct{}{}
	}
	for _, rp := range rr.conns {
		if err := <-rp.done; err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(t0)
}

func (rr *rawRound) close() {
	for _, rp := range rr.conns {
		close(rp.start)
		rp.c.Close()
	}
	rr.ln.Close()
}

// BenchmarkRound: a BSP round of K workers through one and two shards
// (each worker pushes its gradient of benchN floats, split across the
// shards, and pulls the new version), against plain TCP moving the same
// bytes over as many connections, the two alternating round by round after
// two warm-up rounds of each. ratio is the median over the rounds of
// (raw time ÷ round time); ratio_min and ratio_max bound them;
// round_cpu_ms and raw_cpu_ms are the process's CPU time (both ends, all
// cores) a round took, less sensitive to other load than the wall time.
// Under log=on the shards run --durability log (the log in $TMPDIR).
//
//	go test ./live -run '^$' -bench Round -benchtime 7x -benchmem
func BenchmarkRound(b *testing.B) {
	for _, log := range []string{"off", "on"} {
		for _, shards := range []int{1, 2} {
			for _, k := range []int{2, 4, 8} {
				b.Run(fmt.Sprintf("log=%s/shards=%d/K=%d", log, shards, k), func(b *testing.B) {
					dur := DurabilityCheckpoint
					if log == "on" {
						dur = DurabilityLog
					}
					rb := newRoundBench(b, k, shards, dur)
					defer rb.stop()
					rr := newRawRound(b, k*shards, benchN/shards)
					defer rr.close()
					r := uint64(0)
					for range max(*roundWarmup, 2) { // buffers, snapshots, page faults; see roundWarmup
						r++
						rb.round(b, r)
						rr.round(b)
					}
					ratios := make([]float64, 0, b.N)
					var tRaw, tRound, cRaw, cRound time.Duration
					b.SetBytes(int64(2 * 4 * benchN * k))
					b.ResetTimer()
					for i := range b.N {
						r++
						var raw, rd time.Duration
						c0 := cpuTime()
						if i%2 == 0 {
							raw = rr.round(b)
							c1 := cpuTime()
							rd = rb.round(b, r)
							cRaw, cRound = cRaw+c1-c0, cRound+cpuTime()-c1
						} else {
							rd = rb.round(b, r)
							c1 := cpuTime()
							raw = rr.round(b)
							cRound, cRaw = cRound+c1-c0, cRaw+cpuTime()-c1
						}
						tRaw, tRound = tRaw+raw, tRound+rd
						ratios = append(ratios, raw.Seconds()/rd.Seconds())
					}
					b.StopTimer()
					reportRatios(b, "ratio", ratios)
					b.ReportMetric(float64(tRound.Milliseconds())/float64(b.N), "round_ms")
					b.ReportMetric(float64(tRaw.Milliseconds())/float64(b.N), "raw_ms")
					b.ReportMetric(cRound.Seconds()*1000/float64(b.N), "round_cpu_ms")
					b.ReportMetric(cRaw.Seconds()*1000/float64(b.N), "raw_cpu_ms")
				})
			}
		}
	}
}

// roundWarmup is how many rounds of each kind BenchmarkRound runs before it
// times any. Two fault the buffers in; the Go runtime's own caches (the
// sudogs a blocked channel operation takes, the free goroutine records)
// keep growing for a hundred rounds or more, because goroutines block on
// one core and wake on the other, so -benchmem counts a few allocations a
// round until then. Steady state: -round.warmup 150.
var roundWarmup = flag.Int("round.warmup", 2, "BenchmarkRound: warm-up rounds before timing")

// reportRatios reports the median of in-run ratios and their range.
func reportRatios(b *testing.B, name string, rs []float64) {
	if len(rs) == 0 {
		return
	}
	s := slices.Clone(rs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	b.ReportMetric(med, name)
	b.ReportMetric(s[0], name+"_min")
	b.ReportMetric(s[len(s)-1], name+"_max")
}
