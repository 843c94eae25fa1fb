package live

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// BenchmarkPythonPushPull measures the Python client (python/pacer/wire.py,
// driven by python/bench_client.py) against the Go client on the same
// shard in the same run: a 10M-float push and pull through one shard
// server (a 2-worker BSP job, as BenchmarkPushPull's), Go as worker 0 and
// Python as worker 1. The first push of a round is buffered and timed,
// the second closes the round (the apply) and is not; who pushes first
// alternates, so each pair of iterations times one push of each. Both
// pull every round, in alternating order. push_ratio and pull_ratio are
// medians of Go time ÷ Python time (goal ≥ 0.8); each side times its own
// call. Skipped without /usr/bin/python3 and NumPy.
//
//	go test ./live -run '^$' -bench PythonPushPull -benchtime 8x
func BenchmarkPythonPushPull(b *testing.B) {
	if err := exec.Command("/usr/bin/python3", "-c", "import numpy").Run(); err != nil {
		b.Skip("no NumPy for /usr/bin/python3 (scripts/setup installs python3-numpy)")
	}
	_, addr, stop := benchShard(b, DurabilityCheckpoint)
	defer stop()
	py := exec.Command("/usr/bin/python3", filepath.Join("..", "python", "bench_client.py"),
		"--addr", addr, "--token", "t", "--worker", "1", "--n", strconv.Itoa(benchN))
	py.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join("..", "python"))
	py.Stderr = os.Stderr
	in, err := py.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	outPipe, err := py.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := py.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		in.Close()
		done := make(chan error, 1)
		go func() { done <- py.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second): // a guard: closing its stdin ends it
			py.Process.Kill()
			<-done
		}
	}()
	out := bufio.NewReader(outPipe)
	// pyDo runs one command in the Python process and returns its own timing.
	pyDo := func(op string, r uint64) time.Duration {
		if _, err := fmt.Fprintf(in, "%s %d\n", op, r); err != nil {
			b.Fatal(err)
		}
		line := make(chan string, 1)
		go func() {
			s, err := out.ReadString('\n')
			if err != nil && err != io.EOF {
				s = ""
			}
			line <- s
		}()
		var s string
		select {
		case s = <-line:
		case <-time.After(60 * time.Second): // a guard: each command answers with a line
			py.Process.Kill()
			b.Fatalf("python %s %d: no answer in 60 s", op, r)
		}
		sec, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			b.Fatalf("python %s %d: %q (its stderr above)", op, r, s)
		}
		return time.Duration(sec * float64(time.Second))
	}
	cc := wire.ClientConfig{Hello: wire.Hello{Role: proto.RoleWorker, Worker: 0}}
	cc.Token = "t"
	c, err := wire.Dial(context.Background(), wire.TCP{}, addr, cc)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	g := make([]float32, benchN)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range g {
		g[i] = float32(rng.NormFloat64())
	}
	var req, resp, pull wire.Frame
	ctx := context.Background()
	goPush := func(r uint64) time.Duration {
		t0 := time.Now()
		req = wire.Frame{Type: wire.MsgPush, Worker: 0, Tag: r, Extra: r - 1, Floats: g}
		if err := c.Call(ctx, &req, &resp); err != nil || resp.Flags&proto.FlagDropped != 0 {
			b.Fatal(err, resp.Flags)
		}
		return time.Since(t0)
	}
	goPull := func(r uint64) time.Duration {
		t0 := time.Now()
		req = wire.Frame{Type: wire.MsgPull, Tag: r - 1, Extra: r}
		if err := c.Call(ctx, &req, &pull); err != nil || len(pull.Floats) != benchN || pull.Tag < r {
			b.Fatal(err, len(pull.Floats), pull.Tag)
		}
		ack := wire.Frame{Type: wire.MsgHeartbeat, Tag: pull.Tag}
		c.Send(ctx, &ack)
		return time.Since(t0)
	}
	const warm = 2
	n := 2 * ((b.N + 1) / 2) // whole pairs: one timed push of each side
	var goPushT, pyPushT, goPullT, pyPullT []time.Duration
	for i := range warm + n {
		if i == warm {
			b.SetBytes(2 * 4 * benchN)
			b.ResetTimer()
		}
		r := uint64(i + 1)
		var tg, tp time.Duration
		if i%2 == 0 {
			tg = goPush(r)
			pyDo("push", r) // closes the round
		} else {
			tp = pyDo("push", r)
			goPush(r)
		}
		var lg, lp time.Duration
		if i%2 == 0 {
			lg, lp = goPull(r), pyDo("pull", r)
		} else {
			lp, lg = pyDo("pull", r), goPull(r)
		}
		if i < warm {
			continue
		}
		if i%2 == 0 {
			goPushT = append(goPushT, tg)
		} else {
			pyPushT = append(pyPushT, tp)
		}
		goPullT, pyPullT = append(goPullT, lg), append(pyPullT, lp)
	}
	b.StopTimer()
	var pushR, pullR []float64
	for k := range pyPushT {
		pushR = append(pushR, goPushT[k].Seconds()/pyPushT[k].Seconds())
	}
	for k := range pyPullT {
		pullR = append(pullR, goPullT[k].Seconds()/pyPullT[k].Seconds())
	}
	gbs := func(ts []time.Duration) float64 {
		var s time.Duration
		for _, t := range ts {
			s += t
		}
		return 4 * benchN * float64(len(ts)) / s.Seconds() / 1e9
	}
	b.ReportMetric(gbs(goPushT), "go_push_GB/s")
	b.ReportMetric(gbs(pyPushT), "py_push_GB/s")
	b.ReportMetric(gbs(goPullT), "go_pull_GB/s")
	b.ReportMetric(gbs(pyPullT), "py_pull_GB/s")
	reportRatios(b, "push_ratio", pushR)
	reportRatios(b, "pull_ratio", pullR)
}
