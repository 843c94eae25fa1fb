package launch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/runstats"
)

// Issue 30: a shard or worker process that exits on its own ends a tcp
// job with its error, whatever the driver is waiting on. Shard 0 that
// refused its job at start left the driver in its first stats call, its
// observer redialing the shard for ever (`pacer train --mode tcp
// --server-delay bogus` never returned); a shard 0 or a worker killed
// mid-job the same. The processes run through a wrapper that makes one of
// them fail: at start, with a message, or killed from the driver's first
// progress report (the driver waits in that call, so the job is mid-run).
// The job's Timeout is only a guard: the test asserts the error, and logs
// how long the job took to end after the failure.
func TestTCPProcessExitEndsTheJob(t *testing.T) {
	for _, c := range []struct {
		name  string
		match string // the wrapper's test of its arguments: which process fails
		start bool   // fail at start (else killed mid-job)
		want  []string
	}{
		{"shard0-at-start", `[ "$1" = server ] && [ "$3" = 0 ]`, true, []string{"shard 0 exited", "exit status 3", "test: shard refuses its job"}},
		{"shard0-mid-job", `[ "$1" = server ] && [ "$3" = 0 ]`, false, []string{"shard 0 exited", "signal: killed"}},
		{"shard1-mid-job", `[ "$1" = server ] && [ "$3" = 1 ]`, false, []string{"shard 1 exited", "signal: killed"}},
		{"worker1-mid-job", `[ "$1" = worker ] && [ "$5" = 1 ]`, false, []string{"worker 1 exited", "signal: killed"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "pid")
			fail := fmt.Sprintf("echo $$ > %s", pidFile) // exec keeps the pid
			if c.start {
				// The wrapper stamps its exit (ns since the epoch), so the time
				// logged below runs from the failure, not from the job's start.
				fail = fmt.Sprintf("date +%%s%%N > %s; echo 'pacer: test: shard refuses its job' >&2; exit 3", filepath.Join(dir, "exited"))
			}
			wrapper := filepath.Join(dir, "pacer")
			script := fmt.Sprintf("#!/bin/sh\nif %s; then %s; fi\nexec %s \"$@\"\n", c.match, fail, pacerBin)
			if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			sp, err := paradigm.Parse("asp")
			if err != nil {
				t.Fatal(err)
			}
			cfg := job.Config{Spec: sp, Workers: 2, Shards: 2, Dataset: "synthetic", TrainLimit: 400, TestLimit: 100,
				Epochs: 500, Batch: 16, EvalEvery: 0.05}
			opt := tcpOpts(t)
			opt.Binary = wrapper
			opt.Timeout = 3 * time.Minute // a guard: the job is far longer, the failure ends it
			var (
				once   sync.Once
				failed time.Time
			)
			failed = time.Now()
			progress := func(runstats.Progress) {
				once.Do(func() {
					if c.start {
						return
					}
					b, err := os.ReadFile(pidFile)
					if err != nil {
						t.Errorf("the wrapper wrote no pid: %v", err)
						return
					}
					pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
					if err != nil {
						t.Errorf("pid %q: %v", b, err)
						return
					}
					failed = time.Now()
					if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
						t.Errorf("killing %d: %v", pid, err)
					}
				})
			}
			_, err = TrainResult(context.Background(), cfg, opt, progress)
			if c.start {
				b, rerr := os.ReadFile(filepath.Join(dir, "exited"))
				ns, perr := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
				if rerr != nil || perr != nil {
					t.Fatalf("the wrapper's exit stamp: %v %v", rerr, perr)
				}
				failed = time.Unix(0, ns)
			}
			took := time.Since(failed)
			if err == nil {
				t.Fatal("the job succeeded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			t.Logf("the job ended %s after the failure: %v", took.Round(time.Millisecond), err)
		})
	}
}
