package live

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// durBench is one ASP shard of n floats served over loopback TCP, with
// one worker connection per worker.
type durBench struct {
	sv    *Server
	conns []*wire.Conn
	acked []uint64
	stop  func()
}

func newDurBench(b *testing.B, n, workers int, durability string) *durBench {
	cfg := quickJob(b, "asp", workers, 1)
	if err := cfg.Fill(); err != nil {
		b.Fatal(err)
	}
	ln, err := (wire.TCP{}).Listen("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	sc := ShardConfig{Index: 0, Params: &job.Description{Version: job.Version, Job: cfg, TrainN: 1000}, Init: make([]float32, n)}
	sv, err := newServer(ServerConfig{Index: 0, Params: sc.Params, Listener: ln, Token: "t", ControlToken: "c", ShardAddrs: []string{addr},
		CheckpointDir: b.TempDir(), CheckpointInterval: time.Hour, Durability: durability}, sc, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { sv.Run(ctx); close(done) }()
	d := &durBench{sv: sv, acked: make([]uint64, workers)}
	d.stop = func() {
		for _, c := range d.conns {
			c.Close()
		}
		cancel()
		<-done
	}
	for w := 0; w < workers; w++ {
		cc := wire.ClientConfig{Hello: wire.Hello{Role: proto.RoleWorker, Worker: int32(w)}}
		cc.Token = "t"
		c, err := wire.Dial(context.Background(), wire.TCP{}, addr, cc)
		if err != nil {
			d.stop()
			b.Fatal(err)
		}
		d.conns = append(d.conns, c)
	}
	return d
}

// round has every worker push its gradient k times, concurrently, each
// waiting for its acknowledgement; it returns the wall time.
func (d *durBench) round(b *testing.B, g []float32, k int) time.Duration {
	var wg sync.WaitGroup
	errs := make(chan error, len(d.conns))
	t0 := time.Now()
	for w, c := range d.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var resp wire.Frame
			for range k {
				req := wire.Frame{Type: wire.MsgPush, Worker: int32(w), Tag: d.acked[w], Extra: d.acked[w], Floats: g}
				if err := c.Call(context.Background(), &req, &resp); err != nil {
					errs <- err
					return
				}
				d.acked[w] = resp.Tag
			}
		}()
	}
	wg.Wait()
	el := time.Since(t0)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return el
}

// BenchmarkPushDurability: push throughput under --durability log against
// --durability checkpoint, the two shards alternating round by round in
// the same run (ASP: every push is applied, in both). Each round has every
// worker push k times concurrently and wait for each acknowledgement; under
// the log that is after the fsync its record shares with the others'
// (group commit). ratio = log pushes/s ÷ checkpoint pushes/s;
// records/fsync shows the sharing. The log goes to the test's temporary
// directory ($TMPDIR): a tmpfs there would make fsync free.
//
//	go test ./live -run '^$' -bench PushDurability -benchtime 5x
func BenchmarkPushDurability(b *testing.B) {
	for _, tc := range []struct{ n, workers, k int }{{100_000, 1, 40}, {100_000, 4, 20}, {100_000, 16, 5}, {benchN, 1, 2}} {
		b.Run(fmt.Sprintf("floats=%d/workers=%d", tc.n, tc.workers), func(b *testing.B) {
			ck := newDurBench(b, tc.n, tc.workers, DurabilityCheckpoint)
			defer ck.stop()
			lg := newDurBench(b, tc.n, tc.workers, DurabilityLog)
			defer lg.stop()
			g := make([]float32, tc.n)
			rng := rand.New(rand.NewPCG(5, 6))
			for i := range g {
				g[i] = float32(rng.NormFloat64()) * 1e-3
			}
			var tCk, tLog time.Duration
			b.SetBytes(int64(4 * tc.n * tc.workers * tc.k))
			b.ResetTimer()
			for i := range b.N {
				if i%2 == 0 {
					tCk += ck.round(b, g, tc.k)
					tLog += lg.round(b, g, tc.k)
				} else {
					tLog += lg.round(b, g, tc.k)
					tCk += ck.round(b, g, tc.k)
				}
			}
			b.StopTimer()
			pushes := float64(b.N * tc.workers * tc.k)
			ws := lg.sv.Shard().wal.Stats()
			b.ReportMetric(pushes/tCk.Seconds(), "ckpt_pushes/s")
			b.ReportMetric(pushes/tLog.Seconds(), "log_pushes/s")
			b.ReportMetric(tCk.Seconds()/tLog.Seconds(), "ratio")
			b.ReportMetric(float64(ws.Records)/float64(max(1, ws.Syncs)), "records/fsync")
		})
	}
}
