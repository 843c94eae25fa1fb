package live

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacer-ps/pacer/ckpt"
	"github.com/pacer-ps/pacer/internal/ratelog"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// ServerConfig is one shard server process (`pacer server`). Zero fields
// take the defaults in parentheses.
type ServerConfig struct {
	Index  int
	Params *job.Description
	// Listen is the address to serve on (127.0.0.1:0); ignored when
	// Listener is set.
	Listen   string
	Listener net.Listener
	// Transport listens on Listen when Listener is nil and dials the
	// coordinator's links to the other shards (wire.TCP{}, with TLS when
	// set); the in-process mode passes its wire.Inproc.
	Transport wire.Transport
	// Token is the job token every connection presents; ControlToken is
	// the second secret the control roles (the coordinator's membership
	// links, observers such as pacer train) must also present. Both
	// required, and different: workers hold only the job token.
	Token        string
	ControlToken string
	// ShardAddrs are every shard's address as workers dial them; shard 0
	// (the coordinator) needs them all, other shards ignore them.
	ShardAddrs []string
	// CheckpointDir enables checkpoints every CheckpointInterval
	// (DefaultCheckpointInterval) and on shutdown; Restore starts from the
	// directory's checkpoint when it has one.
	CheckpointDir      string
	CheckpointInterval time.Duration
	Restore            bool
	// Durability is what an acknowledged push survives (shard_log.go):
	// DurabilityCheckpoint ("", the default) loses the updates since the
	// last checkpoint with the process; DurabilityLog acknowledges a push
	// once a write-ahead log in CheckpointDir holds it, and a restore
	// replays the log.
	Durability string
	// MetricsAddr serves Prometheus metrics at /metrics ("" : none).
	MetricsAddr string
	// ExitWhenDone makes the job end by itself, as a job started by hand
	// must (report.go): shard 0 evaluates the model on the test set at the
	// job's EvalEvery cadence, and once the workers finish it evaluates the
	// final model, writes SummaryDir/summary.json and tells every shard to
	// stop; each writes its final checkpoint and Run returns nil. Off, the
	// servers serve until stopped (a launcher that reads the results
	// itself, as pacer train does).
	ExitWhenDone bool
	// SummaryDir is where shard 0 writes summary.json and model.npz (and
	// buffers.json, the workers' model buffers, when they send any) when
	// the job ends ("": nowhere); a shard 0 restarted after the end keeps
	// the summary it finds there. Given without ExitWhenDone (a cluster,
	// whose pods restart when they exit), shard 0 still evaluates at the
	// job's cadence and writes both, and every shard serves on.
	SummaryDir string
	Logger     *slog.Logger
	// Replan is --paradigm auto's decision (shard 0; required for auto):
	// package auto's Planner, which the launcher and pacer server hand in
	// (the runtime does not import the simulator).
	Replan Replanner
	// Ready is called with the listening address once the server accepts.
	Ready func(addr string)
	// Wire overrides the data plane's limits and timeouts (Token is set
	// from Token).
	Wire wire.Config
	// Init is a flat model's initial weights (required for one: pacer
	// server --init; flat.go), whose nn.FlatDigest must be the job's
	// InitSHA256. nil for pacer's models, which start from the seed.
	Init []float32
}

// Server is a running shard server, with the coordinator on shard 0.
type Server struct {
	cfg   ServerConfig
	shard *Shard
	coord *Coordinator
	ws    *wire.Server
	links []*memberLink
	log   *slog.Logger
	// plog logs what peers' frames trigger (refusals, skips, joins) at a
	// bounded rate: one connection must not be able to flood the log.
	plog        *ratelog.Logger
	controlHash [32]byte

	metricsMu sync.Mutex
	metricsAt string
	// ready is /readyz: listening, and not yet stopping.
	ready atomic.Bool
	// end stops Run when the job has ended (ExitWhenDone; set by Run).
	end context.CancelFunc
	// report is shard 0's evaluator and summary writer (ExitWhenDone).
	report *reporter
	// endedBefore: the coordinator's state file says the job had ended
	// before this process started (a restart after the end).
	endedBefore bool
	// endAfter is the connection whose reply to "end" stops the server.
	endAfter atomic.Pointer[wire.Peer]
	// delay emulates slow servers (emulate.go; nil: none).
	delay *serverDelay

	// conns holds the open connection of each (role, worker id), and
	// observers counts observer connections: see admit.
	connMu    sync.Mutex
	conns     map[connKey]*wire.Peer
	observers map[*wire.Peer]bool
}

// DefaultCheckpointInterval is the time between a shard's checkpoints when
// none is given (the --checkpoint-interval flags' default).
const DefaultCheckpointInterval = 30 * time.Second

// NewServer prepares shard cfg.Index: the model's w⁰ cut to the shard's
// range, or the checkpoint when restoring.
func NewServer(cfg ServerConfig) (*Server, error) {
	if cfg.Params == nil {
		return nil, errors.New("live: ServerConfig.Params is required")
	}
	j := &cfg.Params.Job // filled by the caller; an unfilled one is refused, not guessed at
	if j.Workers < 1 || j.Shards < 1 || j.Batch < 1 || j.HeartbeatTimeout <= 0 {
		return nil, fmt.Errorf("live: job parameters not filled in (workers=%d shards=%d batch=%d heartbeat=%s)",
			j.Workers, j.Shards, j.Batch, j.HeartbeatTimeout)
	}
	if cfg.Index < 0 || cfg.Index >= j.Shards {
		return nil, fmt.Errorf("live: shard index %d outside [0, %d)", cfg.Index, j.Shards)
	}
	if cfg.Token == "" {
		return nil, errors.New("live: a token is required (--token or $PACER_TOKEN)")
	}
	if cfg.ControlToken == "" {
		return nil, errors.New("live: a control token is required ($PACER_CONTROL_TOKEN or --control-token): the coordinator's links and observers prove their role with it")
	}
	if cfg.ControlToken == cfg.Token {
		return nil, errors.New("live: the control token must differ from the job token: workers hold the job token and must not be able to remove workers or stop the job")
	}
	if cfg.Index == 0 && len(cfg.ShardAddrs) != j.Shards {
		return nil, fmt.Errorf("live: shard 0 hosts the coordinator and needs all %d shard addresses, got %d", j.Shards, len(cfg.ShardAddrs))
	}
	if cfg.Transport == nil {
		cfg.Transport = wire.TCP{}
	}
	if cfg.CheckpointInterval == 0 {
		cfg.CheckpointInterval = DefaultCheckpointInterval
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	n, flat, err := modelSize(j)
	if err != nil {
		return nil, err
	}
	if err := CheckInit(j, cfg.Init); err != nil {
		return nil, err
	}
	sc := ShardConfig{Index: cfg.Index, Params: cfg.Params, Logger: log, Restarted: cfg.Restore}
	if cfg.CheckpointDir != "" {
		// A kill mid-write leaves a temporary file that nothing renames;
		// at start no write of this shard is in progress.
		removed, err := ckpt.RemoveStale(cfg.CheckpointDir, cfg.Index)
		for _, p := range removed {
			log.Warn("removed a stale temporary checkpoint file", "path", p)
		}
		if err != nil {
			return nil, fmt.Errorf("live: %w", err)
		}
	}
	if cfg.Restore && cfg.CheckpointDir != "" {
		path := ckpt.Path(cfg.CheckpointDir, cfg.Index)
		st, err := ckpt.Read(path, CheckpointWant(cfg.Params, cfg.Index, n))
		switch {
		case err == nil:
			sc.Restore = st
			log.Info("restoring checkpoint", "path", path, "version", st.Version)
		case errors.Is(err, os.ErrNotExist):
			log.Warn("no checkpoint to restore; starting from w⁰", "path", path)
		default:
			return nil, fmt.Errorf("live: restore: %w", err)
		}
	}
	switch {
	case sc.Restore != nil:
	case flat:
		sc.Init = cfg.Init // every shard cuts its block from the same file's w⁰ (checked by its digest)
	default:
		m, err := job.NewModel(*j)
		if err != nil {
			return nil, err
		}
		sc.Init = make([]float32, n)
		m.Init(sc.Init, j.Seed) // every shard cuts its block from the same seeded w⁰
	}
	return newServer(cfg, sc, log)
}

// newServer builds the server around a shard config whose initial vector
// is set (benchmarks pass one of any size).
func newServer(cfg ServerConfig, sc ShardConfig, log *slog.Logger) (*Server, error) {
	sh, err := newShard(sc)
	if err != nil {
		return nil, err
	}
	sv := &Server{cfg: cfg, shard: sh, log: log, conns: map[connKey]*wire.Peer{}, observers: map[*wire.Peer]bool{},
		plog: ratelog.New(log, ratelog.Limits{}), controlHash: sha256.Sum256([]byte(cfg.ControlToken))}
	sh.plog = sv.plog
	if sv.delay, err = newServerDelay(sc.Params, cfg.Index); err != nil {
		return nil, fmt.Errorf("live: --server-delay: %w", err)
	}
	if err := CheckDurability(cfg.Durability, cfg.CheckpointDir); err != nil {
		return nil, fmt.Errorf("live: %w", err)
	}
	if err := CheckAutoDurability(cfg.Params.Job.Spec, cfg.Durability); err != nil {
		return nil, fmt.Errorf("live: %w", err)
	}
	if cfg.Durability == DurabilityLog {
		sh.logged = true
		var from uint64
		if sc.Restore != nil {
			from = sc.Restore.LogSegment
		}
		if err := sh.openLog(walDir(cfg.CheckpointDir, cfg.Index), cfg.Restore, from, sc.Restore != nil); err != nil {
			return nil, err
		}
	}
	if cfg.Index == 0 {
		if sv.coord, err = newCoordinator(CoordConfig{Params: cfg.Params, ShardAddrs: cfg.ShardAddrs, Logger: log, Replan: cfg.Replan}, time.Now()); err != nil {
			sh.closeLog()
			return nil, err
		}
		sv.coord.onMembers = sv.publishMembers
		sv.coord.onBarrier = sv.publishBarrier
		sv.coord.onSwitch = sv.startSwitch
		if sh.noise != nil {
			sv.coord.noise = sh.readNoise
		}
		sv.coord.plog = sv.plog.With("role", "coordinator")
		if err := sv.restoreCoordinator(); err != nil {
			sh.closeLog()
			return nil, err
		}
		// A restored coordinator's own shard takes its regime before it
		// serves anyone (the other shards hear it with the view).
		sv.coord.mu.Lock()
		r := sv.coord.regime()
		sv.coord.mu.Unlock()
		if r != nil {
			if err := sh.switchTo(*r); err != nil {
				sh.closeLog()
				return nil, err
			}
		}
	}
	wc := cfg.Wire
	wc.Token = cfg.Token
	if sv.ws, err = wire.NewServer(wc, sv.handle); err != nil {
		sh.closeLog()
		return nil, err
	}
	if cfg.Index == 0 && (cfg.ExitWhenDone || cfg.SummaryDir != "") {
		if sv.report, err = newReporter(sv); err != nil {
			sh.closeLog()
			return nil, err
		}
	}
	sh.screened = true
	sv.ws.SetHooks(wire.Hooks{Replied: sv.replied, Closed: sv.closed, Floats: sv.screenPush,
		AuthFailed: func(addr net.Addr, err error) {
			sv.plog.Warn("authentication failed", "peer", addrString(addr), "err", err)
		},
		PendingRefused: func(addr net.Addr, n int) {
			sv.plog.Warn("connection refused: too many unauthenticated connections open", "peer", addrString(addr), "max_pending", n)
		}})
	return sv, nil
}

// Shard returns the server's shard (tests, tools).
func (sv *Server) Shard() *Shard { return sv.shard }

// Coordinator returns the coordinator, or nil on shards other than 0.
func (sv *Server) Coordinator() *Coordinator { return sv.coord }

// Run serves until ctx ends, then writes a final checkpoint (when
// checkpoints are on) and returns: SIGINT/SIGTERM loses nothing.
func (sv *Server) Run(ctx context.Context) error {
	ctx, sv.end = context.WithCancel(ctx)
	defer sv.end()
	ln := sv.cfg.Listener
	if ln == nil {
		addr := sv.cfg.Listen
		if addr == "" {
			addr = "127.0.0.1:0"
		}
		var err error
		if ln, err = sv.cfg.Transport.Listen(addr); err != nil {
			return fmt.Errorf("live: shard %d: listen %s: %w", sv.cfg.Index, addr, err)
		}
	}
	var stopMetrics func()
	if sv.cfg.MetricsAddr != "" {
		var err error
		if stopMetrics, err = serveMetrics(sv.cfg.MetricsAddr, sv, sv.log); err != nil {
			ln.Close()
			return err
		}
		defer stopMetrics()
	}
	sv.log.Info("shard server listening", "shard", sv.cfg.Index, "addr", ln.Addr().String(),
		"version", sv.shard.Stats().Version, "coordinator", sv.coord != nil)
	sv.ready.Store(true)
	stopReady := context.AfterFunc(ctx, func() { sv.ready.Store(false) })
	defer stopReady()
	defer sv.ready.Store(false)
	if sv.cfg.Ready != nil {
		sv.cfg.Ready(ln.Addr().String())
	}
	var wg sync.WaitGroup
	bg, cancel := context.WithCancel(ctx)
	defer func() { cancel(); wg.Wait() }()
	if sv.coord != nil {
		for i, addr := range sv.cfg.ShardAddrs {
			sv.links = append(sv.links, &memberLink{sv: sv, shard: i, addr: addr, wake: make(chan struct{}, 1)})
		}
		sv.coord.mu.Lock()
		sv.coord.publish()
		sv.coord.tellBarriers()
		if r := sv.coord.regime(); r != nil {
			sv.publishSwitch(*r) // a restored coordinator's: every shard learns it
		}
		sv.coord.mu.Unlock()
		for _, l := range sv.links {
			wg.Add(1)
			go func() { defer wg.Done(); l.run(bg) }()
		}
		wg.Add(1)
		go func() { defer wg.Done(); sv.sweepLoop(bg) }()
		for i, addr := range sv.cfg.ShardAddrs {
			if i != sv.cfg.Index {
				wg.Add(1)
				go func() { defer wg.Done(); sv.watchShard(bg, i, addr) }()
			}
		}
	}
	if sv.cfg.CheckpointDir != "" {
		wg.Add(1)
		go func() { defer wg.Done(); sv.checkpointLoop(bg) }()
	}
	var endErr error
	if sv.report != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			endErr = sv.report.run(bg)
			switch {
			case bg.Err() != nil:
			case sv.cfg.ExitWhenDone:
				sv.end() // the job has ended: stop serving
			case endErr != nil:
				// Serving on, the error would otherwise wait for the stop.
				sv.log.Error("the job has ended, but its end failed", "err", endErr)
			}
		}()
	}
	err := sv.ws.Serve(ctx, ln)
	cancel()
	wg.Wait()
	err = errors.Join(err, endErr)
	if sv.cfg.CheckpointDir != "" {
		if cerr := sv.shard.checkpoint(sv.cfg.CheckpointDir, true); cerr != nil {
			err = errors.Join(err, cerr) // logged and counted by checkpoint
		}
		sv.saveCoordinator()
	}
	if cerr := sv.shard.closeLog(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	return err
}

func (sv *Server) checkpointLoop(ctx context.Context) {
	proto.Every(ctx, sv.cfg.CheckpointInterval, func() {
		// The coordinator's file first: whoever finds shard 0's
		// checkpoint finds it too.
		sv.saveCoordinator()
		sv.shard.checkpoint(sv.cfg.CheckpointDir, false) // a failure is logged and counted; the next tick retries
	})
}

// restoreCoordinator carries on the job shard 0 hosted before a restart
// (--restore), from the coordinator's state file beside the checkpoint.
func (sv *Server) restoreCoordinator() error {
	dir := sv.cfg.CheckpointDir
	if dir != "" && !sv.cfg.Restore {
		// A job that starts afresh has made no switch: a regime file is
		// an earlier job's, and a restore of this one must not read it.
		if err := os.Remove(regimeFile(dir)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("live: %w", err)
		}
	}
	if !sv.cfg.Restore || dir == "" {
		return nil
	}
	removeStaleCoordState(dir)
	st, err := readCoordState(dir)
	if err != nil {
		return err
	}
	var rec *regimeRecord
	if sv.coord.auto != nil {
		if rec, err = sv.coord.readRegime(dir); err != nil {
			return err
		}
	}
	if st == nil {
		sv.log.Warn("no coordinator state to restore: the job's counts start from what the workers report", "path", coordFile(dir))
		return sv.coord.restoreBlind(rec)
	}
	newerRegime(st, rec)
	sv.endedBefore = st.Done
	return sv.coord.restore(time.Now(), st)
}

// saveCoordinator writes the coordinator's state beside shard 0's
// checkpoint; a failure is logged, and the next tick retries.
func (sv *Server) saveCoordinator() {
	if sv.coord == nil {
		return
	}
	if err := sv.coord.saveState(sv.cfg.CheckpointDir); err != nil {
		sv.log.Error("writing the coordinator's state failed", "err", err)
	}
}

// sweepLoop removes silent workers a few times per heartbeat timeout.
func (sv *Server) sweepLoop(ctx context.Context) {
	proto.Every(ctx, sv.coord.every, func() {
		notify, cut := sv.coord.sweep(time.Now())
		sv.coord.sendRelease(notify)
		for _, p := range cut {
			p.Close()
		}
	})
}

// publishMembers hands the coordinator's membership to every shard's link
// (shard 0's delivers directly): one goroutine per link keeps the views in
// order, and the coordinator's lock is never held while a shard applies one.
func (sv *Server) publishMembers(live, rem []int) {
	for _, l := range sv.links {
		l.set(live, rem)
	}
}

// startSwitch records auto's new regime r, begun at pushes, beside shard
// 0's checkpoint (coord_regime.go) and then hands it to the shard links.
// A failed write is logged and the switch goes on: the workers are parked
// and wait for it; only a restart before the next write could then name
// an older regime.
func (sv *Server) startSwitch(r proto.Regime, pushes int64) {
	if dir := sv.cfg.CheckpointDir; dir != "" {
		if err := sv.coord.saveRegime(dir, r, pushes); err != nil {
			sv.log.Error("writing auto's regime failed", "err", err)
		}
	}
	sv.publishSwitch(r)
}

// publishSwitch hands auto's new regime to every shard's link.
func (sv *Server) publishSwitch(r proto.Regime) {
	for _, l := range sv.links {
		l.setRegime(r)
	}
}

// publishBarrier hands the gate's barrier count to the shard links
// (ElasticBSP apply=local: every shard applies its superstep).
func (sv *Server) publishBarrier(b uint64) {
	for _, l := range sv.links {
		l.setBarrier(b)
	}
}
