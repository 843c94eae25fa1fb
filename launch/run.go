package launch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/modelfile"
	"github.com/pacer-ps/pacer/nn"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/wire"
)

// This file: pacer run, a job of a model of the user's own (a flat model,
// nn.ParseFlat) whose workers are N copies of the user's PyTorch script,
// started as torchrun starts them: each told its rank and where the job
// is through the environment. The model's size and initial weights are
// the first worker's: pacer run starts it alone with PACER_INIT_FILE, its
// pacer.torch.Worker writes the model's own initialization there before it
// joins, and the shards start from that file. The shards end the job by
// themselves (--exit-when-done: shard 0 writes summary.json), and Run then
// exports the final model from their checkpoints.

// The environment of a worker process (docs/python.md, "One command").
// RANK, WORLD_SIZE, LOCAL_RANK and LOCAL_WORLD_SIZE are set too, as
// torchrun names them, so a script that splits its data by them runs
// unchanged.
const (
	EnvCoordinator = "PACER_COORDINATOR" // shard 0's address, host:port
	EnvWorkerID    = "PACER_WORKER_ID"   // this worker's id, 0 … K−1
	EnvWorkers     = "PACER_WORKERS"     // K
	EnvInitFile    = "PACER_INIT_FILE"   // worker 0 only: write the model's initial weights here
)

// RunConfig is one pacer run.
type RunConfig struct {
	// Job is the job but for its model, which is flat:n=N with N the
	// first worker's (a Model given here is refused).
	Job job.Config
	// TrainN is the training samples an epoch counts (0: count Job's
	// data set, as pacer server does).
	TrainN int
	// Command is the worker script's argv, started once per worker.
	Command []string
	// Out receives init.npz, ckpt/, summary.json, model.npz and each
	// process's log (shard-i.log, worker-p.log).
	Out string
	// Binary is the pacer executable the shards run (os.Executable()).
	Binary string
	// Host is the address the shards bind (127.0.0.1).
	Host string
	// Output receives the workers' lines, each prefixed with its name, and
	// with Verbose the shards' too. nil: the log files only.
	Output  io.Writer
	Verbose bool
	// LogLevel is the shards' log level.
	LogLevel slog.Level
}

// RunResult is where a finished pacer run left its results.
type RunResult struct {
	Params  int    // N, the model's parameters
	Init    string // the initial weights, as worker 0 wrote them
	Summary string // shard 0's summary.json
	Model   string // the exported final model (.npz, pacer.torch.load_flat reads it)
	Run     runstats.Run
}

// CheckRun refuses a run that cannot start, naming the field, before
// anything is started or written.
func CheckRun(rc *RunConfig) error {
	if len(rc.Command) == 0 || rc.Command[0] == "" {
		return errors.New("launch: no worker command: give the script to run after --, e.g. -- python my_train.py")
	}
	if rc.Job.Model != "" {
		return fmt.Errorf("launch: model %q: a run's model is its workers' own (flat:n=N, its size and initial weights from worker 0): leave --model out", rc.Job.Model)
	}
	if rc.Out == "" {
		return errors.New("launch: --out: give a directory for the run's results")
	}
	if rc.TrainN < 0 {
		return fmt.Errorf("launch: --train-n=%d must not be negative", rc.TrainN)
	}
	if _, err := exec.LookPath(rc.Command[0]); err != nil {
		return fmt.Errorf("launch: the worker command %q: %w", rc.Command[0], err)
	}
	j := rc.Job
	j.Model = "flat:n=1" // its size comes later; everything else is checked now
	d, err := job.Describe(j, rc.TrainN)
	if err != nil {
		return err
	}
	if err := live.CheckJob(&d.Job); err != nil {
		return err
	}
	if d.Job.Network != nil || len(d.Job.Timing.Speeds) > 0 || d.Job.Timing.Jitter > 0 || !d.Job.Timing.Straggler.IsZero() {
		return errors.New("launch: emulated links and worker speeds are for pacer's Go workers; a run's workers run at their real speed")
	}
	if rc.TrainN == 0 {
		// As every shard would: the job's length is epochs·N/batch pushes.
		if rc.TrainN, err = job.CountTrain(d.Job); err != nil {
			return fmt.Errorf("launch: --train-n not given, and the data set that would count an epoch: %w", err)
		}
	}
	return nil
}

// Run runs rc: worker 0 first, until it has written the model's initial
// weights; then the shards from them and the other workers; then, once
// the shards have ended the job, the export. A worker or shard that exits
// with an error ends the run with it, every other process stopped.
func Run(ctx context.Context, rc RunConfig) (*RunResult, error) {
	if err := CheckRun(&rc); err != nil {
		return nil, err
	}
	r := &runner{rc: rc, exits: make(chan procExit, 2*(rc.Job.Workers+rc.Job.Shards))}
	defer r.stop()
	return r.run(ctx)
}

type runner struct {
	rc           RunConfig
	bin          string
	token, ctl   string
	addrs        []string
	lns          []*net.TCPListener
	procs        []*runProc
	exits        chan procExit
	out, ckptDir string
	outMu        sync.Mutex
}

type runProc struct {
	name string
	cmd  *exec.Cmd
	last *tailBuf
	log  *os.File
	done bool
}

type procExit struct {
	p   *runProc
	err error
}

func secret() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (r *runner) run(ctx context.Context) (*RunResult, error) {
	rc := &r.rc
	var err error
	if r.bin = rc.Binary; r.bin == "" {
		if r.bin, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("launch: pacer run needs the pacer binary: %w", err)
		}
	}
	if r.out, err = filepath.Abs(rc.Out); err != nil {
		return nil, err
	}
	r.ckptDir = filepath.Join(r.out, "ckpt")
	init := filepath.Join(r.out, "init.npz")
	// A run owns these: what an earlier run left would be taken for this
	// one's (an old init file for worker 0's, old checkpoints for the
	// final model).
	for _, p := range []string{init, r.ckptDir, filepath.Join(r.out, "summary.json"), filepath.Join(r.out, "model.npz"),
		filepath.Join(r.out, "buffers.json")} {
		if err := os.RemoveAll(p); err != nil {
			return nil, fmt.Errorf("launch: --out: %w", err)
		}
	}
	if err := os.MkdirAll(r.ckptDir, 0o755); err != nil {
		return nil, fmt.Errorf("launch: --out: %w", err)
	}
	r.token, r.ctl = secret(), secret()
	host := rc.Host
	if host == "" {
		host = "127.0.0.1"
	}
	// Every address is known before any process starts (the sockets are
	// handed down): the workers are told shard 0's at once.
	for range rc.Job.Shards {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, fmt.Errorf("launch: listening for a shard: %w", err)
		}
		r.lns = append(r.lns, ln.(*net.TCPListener))
		r.addrs = append(r.addrs, ln.Addr().String())
	}
	if err := r.startWorker(0, init); err != nil {
		return nil, err
	}
	w0, err := r.awaitInit(ctx, init)
	if err != nil {
		return nil, err
	}
	j := rc.Job
	j.Model, j.InitSHA256 = fmt.Sprintf("flat:n=%d", len(w0)), nn.FlatDigest(w0)
	desc, err := job.Describe(j, rc.TrainN)
	if err != nil {
		return nil, err
	}
	descJSON, err := json.Marshal(desc)
	if err != nil {
		return nil, err
	}
	for i := range r.addrs {
		if err := r.startShard(i, string(descJSON), init); err != nil {
			return nil, err
		}
	}
	// The shards hold their sockets now. This process's copies are closed,
	// so that once a shard has exited a dial of it is refused at once,
	// rather than waiting in a backlog nobody reads (ended's question).
	for _, ln := range r.lns {
		ln.Close()
	}
	for p := 1; p < j.Workers; p++ {
		if err := r.startWorker(p, ""); err != nil {
			return nil, err
		}
	}
	if err := r.await(ctx); err != nil {
		return nil, err
	}
	res := &RunResult{Params: len(w0), Init: init, Summary: filepath.Join(r.out, "summary.json"), Model: filepath.Join(r.out, "model.npz")}
	b, err := os.ReadFile(res.Summary)
	if err != nil {
		return nil, fmt.Errorf("launch: the job ended without its summary: %w", err)
	}
	if err := json.Unmarshal(b, &res.Run); err != nil {
		return nil, fmt.Errorf("launch: %s: %w", res.Summary, err)
	}
	m, err := modelfile.FromCheckpoints(r.ckptDir)
	if err != nil {
		return nil, fmt.Errorf("launch: exporting the final model: %w", err)
	}
	if err := modelfile.WriteNPZ(res.Model, m); err != nil {
		return nil, err
	}
	return res, nil
}

// awaitInit waits for worker 0's initial weights (the file appears whole:
// pacer.torch writes it beside and renames it) and reads them.
func (r *runner) awaitInit(ctx context.Context, path string) ([]float32, error) {
	// The file has no notice of its own: it is looked for every 50 ms,
	// and worker 0's exit or the run's end ends the wait at once.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	say := 10 * time.Second
	for {
		if _, err := os.Stat(path); err == nil {
			n, err := modelfile.FlatLen(path)
			if err != nil {
				return nil, fmt.Errorf("launch: worker 0's initial weights (%s=%s): %w", EnvInitFile, path, err)
			}
			w, err := modelfile.ReadFlat(path, n)
			if err != nil {
				return nil, fmt.Errorf("launch: worker 0's initial weights (%s=%s): %w", EnvInitFile, path, err)
			}
			return w, nil
		}
		select {
		case e := <-r.exits:
			e.p.done = true
			if err := exited(e); err != nil {
				return nil, err
			}
			if _, err := os.Stat(path); err == nil {
				continue // written just before the exit: a worker may leave at once (its job's end is the shards' business)
			}
			return nil, fmt.Errorf("launch: %s exited without writing the model's initial weights to $%s (pacer.torch.Worker writes them when the variable is set; docs/python.md)", e.p.name, EnvInitFile)
		case <-ctx.Done():
			return nil, fmt.Errorf("launch: waiting for worker 0's initial weights: %w", context.Cause(ctx))
		case now := <-tick.C:
			if now.Sub(start) >= say && r.rc.Output != nil {
				fmt.Fprintf(r.rc.Output, "pacer run: still waiting for worker 0 to write the model's initial weights to %s (%.0f s)\n", path, now.Sub(start).Seconds())
				say = min(2*say, say+time.Minute)
			}
		}
	}
}

// await waits for every process to exit: the workers when the job has
// ended, the shards once the last has left (shard 0 then writes the
// summary and stops the others). The first failure ends the run, and so
// do workers that all exit before the job has ended: the shards would
// wait for their pushes for ever.
func (r *runner) await(ctx context.Context) error {
	left, workers := 0, 0
	for _, p := range r.procs {
		if !p.done {
			left++
			if strings.HasPrefix(p.name, "worker-") {
				workers++
			}
		}
	}
	if workers == 0 && left > 0 {
		if err := r.ended(ctx); err != nil {
			return err
		}
	}
	for left > 0 {
		select {
		case e := <-r.exits:
			e.p.done = true
			left--
			if err := exited(e); err != nil {
				return err
			}
			if strings.HasPrefix(e.p.name, "worker-") {
				if workers--; workers == 0 && left > 0 {
					if err := r.ended(ctx); err != nil {
						return err
					}
				}
			}
		case <-ctx.Done():
			return fmt.Errorf("launch: the run stopped before the job ended (%s): %w", r.running(), context.Cause(ctx))
		}
	}
	return nil
}

// ended asks the coordinator, once every worker has exited, whether the
// job has ended. No answer (shard 0 stopping, as it does once the job
// has ended) is no error: the shards' exits say the rest.
func (r *runner) ended(ctx context.Context) error {
	o := proto.NewObserver(wire.TCP{}, r.addrs[0], 0, r.token, r.ctl)
	o.GiveUp = time.Second
	defer o.Close()
	c, cancel := context.WithTimeout(ctx, time.Minute) // a guard: shard 0 answers once it serves, or is stopping
	defer cancel()
	st, err := o.Stats(c)
	if err != nil || st.Coord == nil || st.Coord.Done {
		return nil
	}
	return fmt.Errorf("launch: every worker exited with status 0 after %d of the job's %d pushes: does the script loop until pacer.torch.Worker.step() returns False?", st.Coord.Pushes, st.Coord.Target)
}

func (r *runner) running() string {
	var names []string
	for _, p := range r.procs {
		if !p.done {
			names = append(names, p.name)
		}
	}
	if len(names) == 0 {
		return "no process running"
	}
	return "still running: " + strings.Join(names, ", ")
}

// stop ends whatever still runs: the workers killed, the shards asked
// with SIGTERM (their final checkpoints) and killed after a guard of 15 s.
func (r *runner) stop() {
	live := map[*runProc]bool{}
	for _, p := range r.procs {
		if !p.done {
			live[p] = true
			if strings.HasPrefix(p.name, "worker-") {
				p.cmd.Process.Kill()
			} else {
				p.cmd.Process.Signal(syscall.SIGTERM)
			}
		}
	}
	guard := time.NewTimer(15 * time.Second)
	defer guard.Stop()
	for len(live) > 0 {
		select {
		case e := <-r.exits:
			e.p.done = true
			delete(live, e.p)
		case <-guard.C:
			for p := range live {
				p.cmd.Process.Kill()
			}
			guard.Reset(time.Hour) // the kills end them; their exits are still taken
		}
	}
	for _, ln := range r.lns {
		ln.Close()
	}
}
