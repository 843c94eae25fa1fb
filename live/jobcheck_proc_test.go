package live

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// jobProcs starts pacer processes for a test and kills what is left at
// its end.
type jobProcs struct {
	t     *testing.T
	procs []*jobProc
}

type jobProc struct {
	cmd  *exec.Cmd
	log  *syncBuffer
	done chan error
}

func (j *jobProcs) start(args ...string) *jobProc {
	p := &jobProc{cmd: exec.Command(pacerBin, args...), log: &syncBuffer{}, done: make(chan error, 1)}
	p.cmd.Env = append(childEnv(os.Environ()), "PACER_TOKEN=secret", "PACER_CONTROL_TOKEN=control-secret")
	p.cmd.SysProcAttr = childAttr()
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		j.t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	j.procs = append(j.procs, p)
	return p
}

func (j *jobProcs) stop() {
	for _, p := range j.procs {
		p.cmd.Process.Kill()
		<-p.done
	}
}

// waitLog waits until p's output holds want, woken by its writes.
func (p *jobProc) waitLog(t *testing.T, want string) {
	t.Helper()
	if !awaitLog(p.log, want) {
		t.Fatalf("no %q in %s's output:\n%s", want, p.cmd.Args[1], p.log.String())
	}
}

// exitErr waits for p to exit and returns its status (a test failure if it
// does not within waitGuard).
func (p *jobProc) exitErr(t *testing.T) error {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err // stop() reads it again
		return err
	case <-time.After(waitGuard): // a guard against a hang
		t.Fatalf("%v still running after %s:\n%s", p.cmd.Args, waitGuard, p.log.String())
		return nil
	}
}

func handJob(paradigm, lr string) []string {
	return []string{"--shards", "2", "--workers", "1", "--paradigm", paradigm, "--model", "mlp", "--dataset", "synthetic",
		"--train-limit", "2000", "--epochs", "50", "--batch", "16", "--lr", lr, "--heartbeat-timeout", "2s", "--log-level", "info"}
}

// TestHandStartedShardsOfTwoJobsRefused: the case. Two shards
// started by hand with different --paradigm no longer run together: shard
// 0 says at ERROR which field differs, and the worker stops with it.
func TestHandStartedShardsOfTwoJobsRefused(t *testing.T) {
	j := &jobProcs{t: t}
	defer j.stop()
	addrs := freeAddrs(t, 2)
	s0 := j.start(append([]string{"server", "--index", "0", "--peers", strings.Join(addrs, ","), "--listen", addrs[0]}, handJob("bsp", "0.1")...)...)
	j.start(append([]string{"server", "--index", "1", "--peers", strings.Join(addrs, ","), "--listen", addrs[1]}, handJob("ssp:s=3", "0.1")...)...)
	w := j.start("worker", "--coordinator", addrs[0], "--id", "0", "--connect-timeout", "60s")
	const want = "shard 1's job differs from shard 0's: paradigm ssp:s=3 ≠ bsp"
	if err := w.exitErr(t); err == nil {
		t.Fatalf("the worker of a mismatched job exited 0:\n%s", w.log.String())
	}
	w.waitLog(t, want)
	s0.waitLog(t, want)
	if !strings.Contains(s0.log.String(), "level=ERROR") {
		t.Errorf("shard 0 does not say it at ERROR:\n%s", s0.log.String())
	}
}

// TestWorkerRefusesCoordinatorOfAnotherJob: shard 0 killed and started
// again with another --lr. The worker, redialling, is handed a job other
// than the one it joined, and stops naming the field instead of training
// on with it.
func TestWorkerRefusesCoordinatorOfAnotherJob(t *testing.T) {
	j := &jobProcs{t: t}
	defer j.stop()
	addrs := freeAddrs(t, 2)
	peers := strings.Join(addrs, ",")
	s0 := j.start(append([]string{"server", "--index", "0", "--peers", peers, "--listen", addrs[0]}, handJob("asp", "0.1")...)...)
	j.start(append([]string{"server", "--index", "1", "--peers", peers, "--listen", addrs[1]}, handJob("asp", "0.1")...)...)
	w := j.start("worker", "--coordinator", addrs[0], "--id", "0", "--connect-timeout", "60s", "--log-level", "debug")
	// Mid-job: the worker has pushed.
	obs := proto.NewObserver(wire.TCP{}, addrs[0], 0, "secret", "control-secret")
	var err error
	if !waitUntil(func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), waitGuard)
		defer cancel()
		var st proto.Stats
		st, err = obs.Stats(ctx)
		return err == nil && st.Coord != nil && st.Coord.Pushes > 5
	}) {
		t.Fatalf("no pushes (%v):\n%s", err, w.log.String())
	}
	obs.Close()
	s0.cmd.Process.Kill()
	<-s0.done
	s0.done <- nil
	j.start(append([]string{"server", "--index", "0", "--peers", peers, "--listen", addrs[0]}, handJob("asp", "0.2")...)...)
	if err := w.exitErr(t); err == nil {
		t.Fatalf("the worker went on with another job's coordinator:\n%s", w.log.String())
	}
	w.waitLog(t, fmt.Sprintf("shard 0's job differs from worker %d's: lr 0.2 ≠ 0.1", 0))
}
