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

	"github.com/pacer-ps/pacer/internal/ratelog"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/ckpt"
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
	// SummaryDir is where shard 0 writes summary.json and model.npz when
	// the job ends ("": nowhere). Given without ExitWhenDone (a cluster,
	// whose pods restart when they exit), shard 0 still evaluates at the
	// job's cadence and writes both, and every shard serves on.
	SummaryDir string
	Logger     *slog.Logger
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

// connKey names the one connection a role may hold per worker id (-1 for
// the coordinator's link).
type connKey struct {
	role string
	id   int32
}

// controlPayload bounds the frames of every connection but a worker's
// data connection: the largest is a control frame of this job
// (maxControlBytes: the coordinator's membership view), never below what
// a Hello may be.
func controlPayload(p *job.Description) int { return max(wire.MaxHelloPayload, maxControlBytes(p)) }

// maxObservers bounds observer connections per server (pacer train holds
// one per shard; tools a few more).
const maxObservers = 64

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
	if err := checkInit(j, cfg.Init); err != nil {
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
		if sv.coord, err = newCoordinator(CoordConfig{Params: cfg.Params, ShardAddrs: cfg.ShardAddrs, Logger: log}, time.Now()); err != nil {
			sh.closeLog()
			return nil, err
		}
		sv.coord.onMembers = sv.publishMembers
		sv.coord.onBarrier = sv.publishBarrier
		sv.coord.plog = sv.plog.With("role", "coordinator")
		if err := sv.restoreCoordinator(); err != nil {
			sh.closeLog()
			return nil, err
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
	every(ctx, sv.cfg.CheckpointInterval, func() {
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
	if !sv.cfg.Restore || dir == "" {
		return nil
	}
	removeStaleCoordState(dir)
	st, err := readCoordState(dir)
	if err != nil {
		return err
	}
	if st == nil {
		sv.log.Warn("no coordinator state to restore: the job's counts start from what the workers report", "path", coordFile(dir))
		sv.coord.restoreBlind()
		return nil
	}
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
	every(ctx, sv.coord.every, func() {
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

// publishBarrier hands the gate's barrier count to the shard links
// (ElasticBSP apply=local: every shard applies its superstep).
func (sv *Server) publishBarrier(b uint64) {
	for _, l := range sv.links {
		l.setBarrier(b)
	}
}

// handle serves a request and logs a refusal (rate-limited) with the
// peer's address and role.
func (sv *Server) handle(ctx context.Context, req, resp *wire.Frame) error {
	peer, _ := wire.PeerFrom(ctx)
	start := time.Now()
	err := sv.dispatch(peer, req, resp)
	if err != nil {
		sv.logRefusal(peer, req, err)
	} else if delays(peer, req, resp) {
		if sv.delay != nil {
			sv.delay.hold(ctx, peer.ID())
		}
		// What the worker waited on this shard beyond its reply's bytes
		// (the lock, the log, an emulated delay): pacer profile fits the
		// shard's server delay from it.
		sv.shard.pullServed(time.Since(start))
	}
	return err
}

// logRefusal logs a refused frame; the end of the job is not a refusal.
func (sv *Server) logRefusal(peer *wire.Peer, req *wire.Frame, err error) {
	if wire.CodeOf(err) == wire.CodeShuttingDown {
		return
	}
	msg := "refused request"
	if req.Type == wire.MsgHello {
		msg = "refused hello"
	}
	// A refused Hello has no id yet: the one it asked for is the frame's.
	worker := peer.ID()
	if req.Type == wire.MsgHello {
		worker = req.Worker
	}
	sv.plog.Warn(msg, "peer", peerAddr(peer), "role", peer.Hello().Role, "worker", worker, "type", req.Type.String(), "err", err)
}

// replied is the wire server's hook after a reply is written.
func (sv *Server) replied(p *wire.Peer, resp *wire.Frame) {
	sv.shard.replied(p, resp)
	if sv.endAfter.Load() == p && sv.endAfter.CompareAndSwap(p, nil) {
		go sv.end()
	}
}

func addrString(a net.Addr) string {
	if a == nil {
		return "?"
	}
	return a.String()
}

func peerAddr(p *wire.Peer) string {
	if p == nil || p.RemoteAddr() == nil {
		return "?"
	}
	return p.RemoteAddr().String()
}

// dispatch serves a request by the connection's role.
func (sv *Server) dispatch(peer *wire.Peer, req, resp *wire.Frame) error {
	role := peer.Hello().Role
	if req.Type == wire.MsgHello {
		return sv.hello(peer, role, req, resp)
	}
	if req.Flags != 0 {
		// No request of this protocol sets a flag; only replies do.
		return sv.shard.refuse(wire.CodeProtocol, "%s with flags %#x: requests carry no flags", req.Type, req.Flags)
	}
	switch role {
	case RoleWorker, RoleObserver:
		switch req.Type {
		case wire.MsgPush:
			if role == RoleObserver {
				return sv.shard.refuse(wire.CodeBadRequest, "observers may not push")
			}
			return sv.shard.push(peer, req, resp)
		case wire.MsgPull:
			if role == RoleObserver {
				req.Tag = 0 // an observer's reads never move a restored shard forward
			}
			return sv.shard.pull(peer, req, resp)
		case wire.MsgHeartbeat:
			if role == RoleObserver {
				req.Tag = 0 // as for pulls: an observer never moves a shard forward
			}
			return sv.shard.done(peer, req)
		case wire.MsgControl:
			if role == RoleObserver {
				return sv.observe(peer, req, resp)
			}
			return sv.workerControl(peer, req, resp)
		}
	case RoleControl:
		return sv.control(peer, req, resp)
	case RoleCoordinator:
		if req.Type == wire.MsgControl {
			c, err := sv.decodeControl(req)
			if err != nil {
				return err
			}
			if c.Op == "end" {
				// The job has ended (shard 0's ExitWhenDone): checkpoint
				// and stop, once this reply is on its way.
				sv.log.Info("the job has ended; stopping", "by", who(peer))
				resp.Type = wire.MsgControl
				sv.endAfter.Store(peer) // the Replied hook stops the server once the reply is out
				return nil
			}
			if c.Op == "barrier" {
				if err := sv.shard.barrier(c.Barrier); err != nil {
					return err
				}
				resp.Type = wire.MsgControl
				return nil
			}
			if c.Op == "members" {
				if err := checkView(c.Live, c.Removed, idCap(sv.cfg.Params)); err != nil {
					return sv.shard.refuseErr(err)
				}
				sv.shard.setMembers(c.Live, c.Removed, who(peer))
				resp.Type = wire.MsgControl
				return nil
			}
			return sv.shard.refuse(wire.CodeBadRequest, "control op %q not expected on a %s connection", c.Op, role)
		}
	}
	return sv.shard.refuse(wire.CodeProtocol, "%s frame not expected on a %s connection", req.Type, role)
}

// decodeControl decodes a Control frame's JSON, refusing one larger than
// any view of this job before decoding it.
func (sv *Server) decodeControl(req *wire.Frame) (control, error) {
	var c control
	if n, lim := len(req.Bytes), maxControlBytes(sv.cfg.Params); n > lim {
		return c, sv.shard.refuse(wire.CodeBadRequest, "control payload of %d bytes exceeds this job's %d", n, lim)
	}
	if err := decodeJSON(req.Bytes, &c); err != nil {
		return c, sv.shard.refuseErr(err)
	}
	return c, nil
}

// who names the peer behind a request, for the log.
func who(p *wire.Peer) string {
	if p == nil {
		return "local"
	}
	return p.Hello().Role + "@" + peerAddr(p)
}

func (sv *Server) hello(peer *wire.Peer, role string, req, resp *wire.Frame) error {
	switch role {
	case RoleWorker:
		if err := sv.checkJob(peer.Hello()); err != nil {
			return sv.shard.refuseErr(err) // logged by handle, with the peer
		}
		if err := sv.shard.admit(req.Worker); err != nil {
			return err
		}
	case RoleObserver, RoleCoordinator:
		if err := sv.checkControl(peer.Hello()); err != nil {
			return sv.shard.refuseErr(err)
		}
		if err := sv.checkJob(peer.Hello()); err != nil {
			return sv.shard.refuseErr(err) // logged by handle, with the peer
		}
		req.Worker = -1 // a control role is no worker
	case RoleControl:
		if sv.coord == nil {
			return sv.shard.refuse(wire.CodeBadRequest, "shard %d does not host the coordinator (shard 0 does)", sv.cfg.Index)
		}
		var hm helloMeta
		if h := peer.Hello(); len(h.Meta) > 0 {
			if err := decodeJSON(h.Meta, &hm); err != nil {
				return sv.coord.refuse(wire.CodeBadRequest, "worker %d's hello: %v", req.Worker, err)
			}
		}
		info, notify, err := sv.coord.hello(time.Now(), peer, req.Worker, hm.workerState)
		if err != nil {
			return err
		}
		if err := setJSON(resp, wire.MsgHelloOK, info); err != nil {
			return err
		}
		resp.Worker = int32(info.ID)
		sv.admit(peer, role, resp.Worker)
		if info.ended {
			// As after the clock report that ends the job: everyone is
			// told, this worker too, and no one released.
			go shutdown(sv.coord.allPeersLocked())
			return nil
		}
		sv.coord.sendRelease(notify)
		return nil
	default:
		return sv.shard.refuse(wire.CodeBadRequest, "unknown role %q", role)
	}
	if err := sv.admit(peer, role, req.Worker); err != nil {
		return err
	}
	if err := setJSON(resp, wire.MsgHelloOK, sv.shard.info()); err != nil {
		return err
	}
	resp.Worker = req.Worker
	return nil
}

// admit bounds a role's connections and the size of the frames they may
// send. A worker id (data or control) and the coordinator's link hold one
// connection each: a newer one replaces the older, which is closed (a
// returning worker reconnects before its old connection times out, and a
// thousand connections under one id pin nothing). Observers are capped at
// maxObservers. Only a worker's data connection may send a whole block.
func (sv *Server) admit(peer *wire.Peer, role string, id int32) error {
	limit := controlPayload(sv.cfg.Params)
	key := connKey{role: role, id: id}
	switch role {
	case RoleObserver:
		sv.connMu.Lock()
		defer sv.connMu.Unlock()
		if len(sv.observers) >= maxObservers {
			return remoteErr(wire.CodeBadRequest, "%d observer connections open already (at most %d)", len(sv.observers), maxObservers)
		}
		sv.observers[peer] = true
		peer.LimitPayload(limit)
		return nil
	case RoleWorker:
		limit = max(limit, sv.shard.maxPush())
	case RoleCoordinator:
		key.id = -1
	}
	peer.LimitPayload(limit)
	sv.connMu.Lock()
	old := sv.conns[key]
	sv.conns[key] = peer
	sv.connMu.Unlock()
	if old != nil && old != peer {
		old.Close()
	}
	return nil
}

// closed is the wire server's hook when a connection ends.
func (sv *Server) closed(peer *wire.Peer) {
	sv.connMu.Lock()
	delete(sv.observers, peer)
	for _, role := range [...]string{RoleWorker, RoleControl, RoleCoordinator} {
		key := connKey{role: role, id: peer.ID()}
		if role == RoleCoordinator {
			key.id = -1
		}
		if sv.conns[key] == peer {
			delete(sv.conns, key)
		}
	}
	sv.connMu.Unlock()
	sv.shard.closed(peer)
}

// control serves a worker's control connection to the coordinator.
func (sv *Server) control(peer *wire.Peer, req, resp *wire.Frame) error {
	p := int(peer.ID())
	if (req.Type == wire.MsgClock || req.Type == wire.MsgHeartbeat) && req.Worker != peer.ID() {
		return sv.coord.refuse(wire.CodeBadRequest, "%s names worker %d on the control connection of worker %d", req.Type, req.Worker, p)
	}
	switch req.Type {
	case wire.MsgClock:
		notify, finished, err := sv.coord.clock(time.Now(), peer, p, clockReportOf(req), resp)
		if err != nil {
			return err
		}
		if finished {
			// The job's last push is counted: the workers this clock would
			// release are told it ended instead. Released, they would
			// compute and push one more round, which the shards (not told
			// yet) could complete and apply after the end.
			go shutdown(sv.coord.allPeersLocked())
			return nil
		}
		sv.coord.sendRelease(notify)
		return nil
	case wire.MsgHeartbeat:
		sv.coord.heartbeat(time.Now(), peer, p)
		return nil
	}
	return sv.coord.refuse(wire.CodeProtocol, "%s frame not expected on a control connection", req.Type)
}

// observe answers an observer's control request: stats, average (the
// block of the weights' moving average, as a PullResp), or stop.
func (sv *Server) observe(peer *wire.Peer, req, resp *wire.Frame) error {
	c, err := sv.decodeControl(req)
	if err != nil {
		return err
	}
	if len(c.Live) > 0 || len(c.Removed) > 0 {
		return sv.shard.refuse(wire.CodeBadRequest, "an observer's %q request carries a membership view", c.Op)
	}
	switch c.Op {
	case "stats":
		st := Stats{Shard: sv.shard.Stats()}
		st.Shard.Wire = sv.ws.Stats().Snapshot()
		if sv.coord != nil {
			cs := sv.coord.Stats()
			st.Coord = &cs
		}
		return setJSON(resp, wire.MsgControl, st)
	case "average":
		return sv.average(resp, -1)
	case "stop":
		if sv.coord == nil {
			return sv.shard.refuse(wire.CodeBadRequest, "stop goes to shard 0")
		}
		sv.plog.Warn("job stopped on request", "by", who(peer))
		shutdown(sv.coord.finish(time.Now()))
		resp.Type = wire.MsgControl
		return nil
	}
	return sv.shard.refuse(wire.CodeBadRequest, "unknown control op %q", c.Op)
}

// workerControl answers the one control op a worker's data connection may
// send: "average". A model pacer does not know (--model flat:n=N) is
// evaluated by its workers, not by shard 0, and they hold the job token
// only; θ̄ tells them no more than the θ they pull anyway. The observer's
// other ops (stats, stop) stay behind the control token.
func (sv *Server) workerControl(peer *wire.Peer, req, resp *wire.Frame) error {
	c, err := sv.decodeControl(req)
	if err != nil {
		return err
	}
	if c.Op != "average" || len(c.Live) > 0 || len(c.Removed) > 0 {
		return sv.shard.refuse(wire.CodeBadRequest, "control op %q not expected on a worker connection (a worker may ask for \"average\" only)", c.Op)
	}
	return sv.average(resp, peer.ID())
}

// average answers with the shard's block of the weights' moving average
// (--ema) as a PullResp whose Tag is the shard's version.
func (sv *Server) average(resp *wire.Frame, worker int32) error {
	avg, v, ok := sv.shard.Average()
	if !ok {
		return sv.shard.refuse(wire.CodeBadRequest, "shard %d keeps no moving average: the job runs without --ema", sv.shard.idx)
	}
	// A copy, not the snapshot: nothing for the asker to release.
	resp.Type, resp.Shard, resp.Worker, resp.Tag, resp.Floats = wire.MsgPullResp, uint32(sv.shard.idx), worker, v, avg
	return nil
}
