package launch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/pacer-ps/pacer/data"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/nn"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/wire"
)

// Options says how Train runs a live job on this machine.
type Options struct {
	// Mode is runstats.Inproc (default: shards, coordinator and workers
	// as goroutines over the in-process transport) or runstats.TCP (each
	// shard and worker a separate `pacer server` / `pacer worker` process
	// on loopback).
	Mode runstats.Mode
	// Host is the address tcp-mode servers bind (127.0.0.1).
	Host string
	// Token is the shared secret of every connection; "" makes a random one.
	Token string
	// ControlToken is the second secret of the control roles (the
	// coordinator's links, Train's own observer connections); only the
	// servers get it, never the workers. "" makes a random one.
	ControlToken string
	// CheckpointDir turns on shard checkpoints every CheckpointInterval
	// (30 s) and at shutdown; Restore starts the shards from it.
	CheckpointDir      string
	CheckpointInterval time.Duration
	Restore            bool
	// Durability is the shards' live.ServerConfig.Durability: "" or
	// "checkpoint", or "log" (needs CheckpointDir).
	Durability string
	// MetricsAddr serves shard 0's Prometheus metrics (host:port); shard i
	// serves at port+i. "" : none.
	MetricsAddr string
	// Log receives log/slog text logs of the servers and workers (tcp mode:
	// the children's stderr, prefixed with their role). nil: none.
	Log io.Writer
	// LogLevel is the slog level of those logs (Info).
	LogLevel slog.Level
	// Binary is the pacer executable tcp mode launches (os.Executable()).
	Binary string
	// Data is the loaded data set, as data.Load returns it (the job's
	// limits and normalization are applied here); nil loads the job's.
	Data *data.Dataset
	// Faults are injected while the job runs (tests and demonstrations).
	Faults []Fault
	// Poll is how often Train reads the coordinator's counters (100 ms).
	Poll time.Duration
	// Timeout aborts a job that has not finished (0: none).
	Timeout time.Duration
	// PythonWorkers runs the job's last PythonWorkers workers as PyTorch
	// workers (python/torch_worker.py, docs/python.md) instead of
	// `pacer worker` processes: tcp mode only.
	PythonWorkers int
	// PythonWorker is that script ("": python/torch_worker.py beside
	// Binary, else under the working directory) and PythonBin its
	// interpreter ("": /usr/bin/python3, Debian's, which has PyTorch).
	PythonWorker, PythonBin string
}

// Fault is one injected failure, fired once the coordinator has counted
// AtPushes pushes and, for a worker, once the victim has pushed itself
// (on a busy machine a worker may still be loading its data).
type Fault struct {
	Role     string // "worker" or "shard"
	Index    int
	AtPushes int64
	// Restart brings the victim back: a shard with --restore from its
	// checkpoint (needs CheckpointDir), a worker with the same id.
	Restart bool
	// RestartAfter waits this long before the restart (0: at once).
	RestartAfter time.Duration
	// AfterRemoval holds a worker's restart, after RestartAfter, until the
	// coordinator has removed a worker since the kill: the new process
	// returns after its old one's removal however long the heartbeat
	// timeout takes on a loaded machine, and without a guessed wait.
	AfterRemoval bool
	// AfterCheckpoint holds a shard fault back until the shard has written
	// a checkpoint, so that a restart has one to restore.
	AfterCheckpoint bool
	// Stop, for a shard, stops its process (SIGSTOP) for this long and
	// then lets it go on (SIGCONT) instead of killing it: a shard that
	// hangs without dying. Tcp mode only.
	Stop time.Duration
	// Duplicate, for a worker, starts a second process under the victim's
	// id while the first runs (an operator's slip): the newer takes the
	// id and the displaced one exits. Tcp mode only.
	Duplicate bool
}

// FaultRecord is what happened to one fault.
type FaultRecord struct {
	Fault
	FiredAt   int64 // pushes counted when it fired
	Restarted bool
	// FromCheckpoint: the restarted shard had a checkpoint to restore;
	// without one it starts from w⁰ and skips forward to the workers'
	// versions.
	FromCheckpoint bool
	// CheckpointVersion and CheckpointCRC describe the checkpoint a shard
	// restarted from (read from the file before the restart);
	// RestoredVersion and RestoredCRC are what the restarted shard reports
	// holding after its restore. Equal CRCs: the weights are the file's.
	CheckpointVersion uint64
	CheckpointCRC     uint32
	RestoredVersion   uint64
	RestoredCRC       uint32
}

// Result is Train's full outcome: the summary plus what the faults did.
type Result struct {
	Run    *runstats.Run
	Faults []FaultRecord
	Shards []proto.ShardStats
	Coord  proto.CoordStats
}

// Train runs cfg as a live job on this machine and returns its summary.
// progress (may be nil) is called after every evaluation. A job stopped
// before it finished (ctx ended) returns ErrInterrupted with the summary
// of what was measured so far, when there is one.
func Train(ctx context.Context, cfg job.Config, opt Options, progress func(runstats.Progress)) (*runstats.Run, error) {
	res, err := TrainResult(ctx, cfg, opt, progress)
	if res == nil {
		return nil, err
	}
	return res.Run, err
}

// TrainMode is Train in mode (runstats.Inproc or TCP) with the other
// options' defaults: the comparison engine's compare.Launcher.
func TrainMode(ctx context.Context, cfg job.Config, mode runstats.Mode, progress func(runstats.Progress)) (*runstats.Run, error) {
	return Train(ctx, cfg, Options{Mode: mode}, progress)
}

// TrainResult is Train with the fault records and per-shard counters.
func TrainResult(ctx context.Context, cfg job.Config, opt Options, progress func(runstats.Progress)) (*Result, error) {
	// The job's description is built and validated here, once; every
	// shard and (through the coordinator) every worker gets it whole.
	desc, err := job.Describe(cfg, 0)
	if err != nil {
		return nil, err
	}
	cfg = desc.Job
	if err := live.CheckJob(&cfg); err != nil {
		return nil, err
	}
	if opt.Mode == "" {
		opt.Mode = runstats.Inproc
	}
	if _, err := runstats.ParseMode(string(opt.Mode), runstats.Inproc, runstats.TCP); err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	for _, t := range []*string{&opt.Token, &opt.ControlToken} {
		if *t == "" {
			var b [16]byte
			rand.Read(b[:])
			*t = hex.EncodeToString(b[:])
		}
	}
	if err := checkPythonWorkers(cfg, &opt); err != nil {
		return nil, err
	}
	if cfg.Network != nil {
		// The links are emulated for real (package nsnet), never by
		// sleeps in the data plane.
		if opt.Mode != runstats.TCP {
			return nil, errors.New("launch: a job with links emulates them with processes in network namespaces: tcp mode only")
		}
		if cfg.Network.Changes() {
			return nil, ErrWindowNotEmulated
		}
		if opt.MetricsAddr != "" {
			return nil, errors.New("launch: metrics are served on the shards' emulated hosts, out of reach: leave out the metrics address or the links")
		}
	}
	if opt.Token == opt.ControlToken {
		return nil, errors.New("launch: the control token must differ from the job token")
	}
	if opt.Poll == 0 {
		opt.Poll = 100 * time.Millisecond
	}
	for _, f := range opt.Faults {
		if f.Role != "worker" && f.Role != "shard" {
			return nil, fmt.Errorf("launch: fault role %q: want worker or shard", f.Role)
		}
		if (f.Stop != 0 || f.Duplicate) && opt.Mode != runstats.TCP {
			return nil, fmt.Errorf("launch: a stopped shard or a duplicate worker is a fault of processes: tcp mode only, not %s", opt.Mode)
		}
		if f.Stop < 0 || (f.Stop > 0 && (f.Role != "shard" || f.Restart)) {
			return nil, fmt.Errorf("launch: fault on %s %d: a stop (%s) is for a shard, positive, and without a restart", f.Role, f.Index, f.Stop)
		}
		if f.Duplicate && (f.Role != "worker" || f.Restart) {
			return nil, fmt.Errorf("launch: fault on %s %d: a duplicate is for a worker, without a restart", f.Role, f.Index)
		}
		if f.Role == "shard" && f.Restart && opt.CheckpointDir == "" {
			return nil, errors.New("launch: restarting a shard needs a checkpoint directory")
		}
		if f.Role == "shard" && f.Index == 0 && !f.Restart && f.Stop == 0 {
			return nil, errors.New("launch: shard 0 hosts the coordinator: the job cannot go on without it, so a fault of it needs a restart")
		}
		if (f.Role == "shard" && (f.Index < 0 || f.Index >= cfg.Shards)) || (f.Role == "worker" && (f.Index < 0 || f.Index >= cfg.Workers)) {
			return nil, fmt.Errorf("launch: fault on %s %d: outside the job", f.Role, f.Index)
		}
	}
	ds := opt.Data
	if ds == nil {
		if ds, err = job.Data(cfg); err != nil {
			return nil, err
		}
	} else if ds, err = job.Limit(ds, cfg); err != nil {
		return nil, err
	}
	// Refused here, before any process starts, with the error each worker
	// would give (in tcp mode a worker's error is only its exit status).
	m, err := job.NewModel(cfg)
	if err != nil {
		return nil, err
	}
	if err := nn.CheckData(m, ds.Train.Name, ds.Train.Dim, ds.Train.Classes); err != nil {
		return nil, err
	}
	desc.TrainN = ds.Train.N
	params := &desc
	if opt.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opt.Timeout)
		defer cancel()
	}
	var cl cluster
	if opt.Mode == runstats.Inproc {
		cl = newInproc(params, &opt, ds)
	} else {
		cl = newTCP(params, &opt)
	}
	d := &driver{params: params, opt: &opt, ds: ds, cl: cl, progress: progress, ev: proto.Evaluations{Mean: ds.Mean}}
	return d.run(ctx)
}

// cluster is the set of processes (or goroutines) of one job.
type cluster interface {
	// start launches the shards and workers.
	start(ctx context.Context) error
	// addrs are the shards' addresses; dial them with transport.
	addrs() []string
	transport() wire.Transport
	// killWorker kills worker i; with restart, restartWorker follows.
	killWorker(i int, restart bool) error
	restartWorker(ctx context.Context, i int) error
	killShard(i int) error
	restartShard(ctx context.Context, i int) error
	// workersDone is closed when every worker has exited; err then says
	// whether any failed.
	workersDone() <-chan struct{}
	workersErr() error
	// pauseShard stops shard i's process and resumeShard lets it go on
	// (tcp only: Fault.Stop); duplicateWorker starts a second process
	// under worker i's id, the first one displaced (Fault.Duplicate).
	pauseShard(i int) error
	resumeShard(i int) error
	duplicateWorker(i int) error
	// failed reports a shard that stopped on its own (not killed by a
	// fault, not stopped): the job cannot finish without it.
	failed() <-chan error
	// stop shuts the servers down gracefully (final checkpoints) and waits.
	stop() error
}
