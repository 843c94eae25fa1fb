package live

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/ckpt"
	pjob "github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/runstats"
)

// freeAddrs picks n loopback addresses nothing listens on (closed again
// at once: a server binds them moments later).
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	var lns []net.Listener
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().String())
	}
	for _, ln := range lns {
		ln.Close()
	}
	return out
}

// A job started by hand, as docs/deploy.md starts one (pacer server ×2,
// pacer worker ×2, separate processes on loopback), ends by itself: shard
// 0 evaluates the model during the job and at its end, writes
// summary.json in pacer train's schema, every shard writes its final
// checkpoint and every process exits 0; no finished worker is counted as
// removed.
func TestHandRunJobEndsByItself(t *testing.T) {
	skipUnderRace(t)
	// Twice: as loaded, and with --normalize mean, where shard 0 and every
	// worker subtract the training set's mean each from its own copy.
	for _, normalized := range []bool{false, true} {
		var extra []string
		if normalized {
			extra = []string{"--normalize", "mean"}
		}
		t.Run(fmt.Sprintf("normalize=%v", normalized), func(t *testing.T) {
			dir := t.TempDir()
			ck, out := filepath.Join(dir, "ckpt"), filepath.Join(dir, "out")
			addrs := freeAddrs(t, 2)
			env := append(childEnv(os.Environ()), "PACER_TOKEN=secret", "PACER_CONTROL_TOKEN=control-secret")
			type proc struct {
				name string
				cmd  *exec.Cmd
				log  *syncBuffer
				done chan error
			}
			var procs []*proc
			start := func(name string, args ...string) *proc {
				p := &proc{name: name, cmd: exec.Command(pacerBin, args...), log: &syncBuffer{}, done: make(chan error, 1)}
				p.cmd.Env = env
				p.cmd.SysProcAttr = childAttr()
				p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
				if err := p.cmd.Start(); err != nil {
					t.Fatal(err)
				}
				go func() { p.done <- p.cmd.Wait() }()
				procs = append(procs, p)
				return p
			}
			defer func() {
				for _, p := range procs {
					p.cmd.Process.Kill() // whatever is still running (a failure)
				}
			}()
			job := []string{"--shards", "2", "--workers", "2", "--paradigm", "ssp:s=2", "--model", "mlp", "--dataset", "fashion-mnist",
				"--train-limit", "2000", "--test-limit", "500", "--epochs", "3", "--batch", "32", "--lr", "0.05", "--eval-every", "0.5", "--target", "0.6", "--targets", "0.3"}
			job = append(job, extra...)
			for i := 0; i < 2; i++ {
				args := append([]string{"server", "--index", fmt.Sprint(i), "--peers", strings.Join(addrs, ","), "--listen", addrs[i],
					"--checkpoint-dir", ck, "--out", out, "--log-level", "info"}, job...)
				start(fmt.Sprintf("shard-%d", i), args...)
			}
			for w := 0; w < 2; w++ {
				start(fmt.Sprintf("worker-%d", w), "worker", "--coordinator", addrs[0], "--id", fmt.Sprint(w), "--connect-timeout", "60s")
			}
			deadline := time.After(150 * time.Second) // a guard: the job ends by itself
			for _, p := range procs {
				select {
				case err := <-p.done:
					if err != nil {
						t.Errorf("%s exited: %v\n%s", p.name, err, p.log.String())
					}
				case <-deadline:
					for _, q := range procs {
						t.Logf("%s:\n%s", q.name, q.log.String())
					}
					t.Fatalf("%s still running 150 s after the start: the job did not end by itself", p.name)
				}
			}
			b, err := os.ReadFile(filepath.Join(out, "summary.json"))
			if err != nil {
				t.Fatalf("no summary.json: %v\n%s", err, procs[0].log.String())
			}
			var r runstats.Run
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			t.Logf("summary: %d pushes, %d updates, %.2f s, curve %v, final %.3f", r.Pushes, r.Updates, r.Seconds, r.Curve, r.FinalAccuracy)
			want := int64(3 * 2000 / 32)
			if r.Pushes < want || r.Updates == 0 || r.Mode != "tcp" || r.Paradigm != "ssp:s=2" || r.Workers != 2 || r.Shards != 2 || len(r.WorkerPushes) != 2 {
				t.Errorf("summary %+v: want ≥ %d pushes of the job's shape", r, want)
			}
			// Evaluations during the job (every half epoch of 3, polled ten times a
			// second: a fast job skips some) and the final one.
			if len(r.Curve) < 2 || r.FinalAccuracy != r.Curve[len(r.Curve)-1][1] || r.FinalAccuracy < 0.4 || r.Target != 0.6 {
				t.Errorf("curve %v, final %g, target %g: want evaluations during the job and a trained model at the end", r.Curve, r.FinalAccuracy, r.Target)
			}
			// Every push reported its iteration's compute time (pacer profile).
			if len(r.WorkerIterations) != 2 || r.WorkerIterations[0].N+r.WorkerIterations[1].N != r.Pushes || r.WorkerIterations[0].Mean <= 0 {
				t.Errorf("worker_iterations %+v for %d pushes", r.WorkerIterations, r.Pushes)
			}
			for i := 0; i < 2; i++ {
				m, err := ckpt.ReadMeta(ckpt.Path(ck, i))
				if err != nil {
					t.Errorf("shard %d wrote no final checkpoint: %v", i, err)
					continue
				}
				if m.Version == 0 {
					t.Errorf("shard %d's final checkpoint is at version 0", i)
				}
			}
			logs := procs[0].log.String()
			for _, want := range []string{"msg=evaluation", "wrote the job's summary", `msg="job finished"`} {
				if !strings.Contains(logs, want) {
					t.Errorf("shard 0's log lacks %q", want)
				}
			}
			if strings.Contains(logs, "worker removed") {
				t.Errorf("a finished worker was counted as removed:\n%s", logs)
			}
			// Each evaluation's epoch (pushes·batch over the 2,000
			// samples, ending past the job's 3), no training loss (live
			// modes leave the CPU to the workers); the epochs to --targets
			// follow.
			n := len(r.Curve)
			if len(r.CurveEpochs) != n || r.TrainLoss != nil || n == 0 || !slices.IsSorted(r.CurveEpochs) ||
				r.CurveEpochs[n-1] < 3 || r.CurveEpochs[n-1] > 3.5 {
				t.Errorf("epochs %v, training loss %v for %d evaluations", r.CurveEpochs, r.TrainLoss, n)
			}
			// The workers' mini-batch losses since each evaluation but
			// possibly the last (no push may follow the one before).
			if len(r.BatchLoss) != n || n < 2 || slices.Contains(r.BatchLoss[:n-1], nil) {
				t.Errorf("%d batch losses (nil at %d) for %d evaluations", len(r.BatchLoss), slices.Index(r.BatchLoss, nil), n)
			}
			if len(r.EpochsToTargets) != 1 || (r.EpochsToTargets[0] == nil) != (r.TimesToTargets[0] == nil) {
				t.Errorf("epochs to --targets %v, times %v", r.EpochsToTargets, r.TimesToTargets)
			}
			if normalized {
				// Shard 0 took the training set's mean from its own copy, as each
				// worker did: the bits data.ChannelMean gives.
				ds, err := pjob.Data(pjob.Config{Dataset: "fashion-mnist", TrainLimit: 2000, TestLimit: 1, Normalize: pjob.NormalizeMean})
				if err != nil {
					t.Fatal(err)
				}
				if r.Normalize != pjob.NormalizeMean || !slices.Equal(r.ChannelMean, ds.Mean) {
					t.Errorf("summary: normalize %q, channel mean %v, want %v", r.Normalize, r.ChannelMean, ds.Mean)
				}
			} else if r.Normalize != "" || r.ChannelMean != nil {
				t.Errorf("a job without --normalize records normalize %q, mean %v", r.Normalize, r.ChannelMean)
			}
			if !strings.Contains(procs[1].log.String(), "the job has ended") {
				t.Errorf("shard 1 did not stop on the end of the job:\n%s", procs[1].log.String())
			}
		})
	}
}
