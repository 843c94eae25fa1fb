package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacer-ps/pacer/data"
	"github.com/pacer-ps/pacer/internal/hugemem"
	"github.com/pacer-ps/pacer/internal/kernel"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/ops"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/nn"
	"github.com/pacer-ps/pacer/optim"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/wire"
)

// Config is one worker process (`pacer worker`).
type Config struct {
	// Coordinator is shard 0's address; everything else about the job
	// comes from it.
	Coordinator string
	Transport   wire.Transport // wire.TCP{} when nil
	Token       string
	// ID asks for a worker id (a restarted worker takes its old one back);
	// negative lets the coordinator assign one.
	ID int
	// DataDir overrides where this machine finds the data set.
	DataDir string
	// Data is the loaded data set (inproc mode shares one); nil loads it.
	Data *data.Dataset
	// ConnectTimeout bounds the first dial of the coordinator (60 s).
	ConnectTimeout time.Duration
	Logger         *slog.Logger
	Wire           wire.Config
	// MetricsAddr serves the worker's own metrics at /metrics, with
	// /healthz and /readyz ("": none).
	MetricsAddr string
	// MetricsReady is called with the metrics server's address once it
	// listens (tests; nil: not called).
	MetricsReady func(addr string)
}

// Result is what a worker did.
type Result struct {
	ID     int
	Pushes int64
	Wait   time.Duration // held: pushing, at the gate, pulling
	Busy   time.Duration // computing gradients
}

// ErrJobDone is returned by Run when the coordinator has finished the
// job before the worker could join it.
var ErrJobDone = errors.New("live: the job has finished")

// Worker is a running worker.
type Worker struct {
	cfg     Config
	tr      wire.Transport
	wireCfg wire.Config
	log     *slog.Logger
	id      int
	info    proto.JobInfo   // the coordinator's HelloOK, the job's description as it sent it
	job     job.Description // info's description, decoded and checked
	events  chan linkEvent
	release chan struct{}
	stop    chan struct{}
	stopped sync.Once
	ctl     *wire.Conn
	ctlMu   sync.Mutex // guards ctl against the heartbeat goroutine
	links   []*wlink
	// What the metrics read while the main loop runs: published after
	// every push (the loop's own state is not shared).
	mPushes, mWaitNS, mBusyNS, mClock atomic.Int64
	mID                               atomic.Int64
	joined                            atomic.Bool
	// barriers and barPushes: the latest barrier count a release or the
	// coordinator's hello carried and the pushes at it (ElasticBSP
	// apply=local), set by the connection's goroutine.
	barriers, barPushes atomic.Uint64
	// ws is where this process stands, sent with every control Hello
	// (written by the main loop, which is also the one that redials).
	ws      proto.WorkerState
	started time.Time
	// redials paces the main loop's redials of the coordinator while it
	// waits (redialWaiting).
	redials redialPace
	// regNext is the newest --paradigm auto regime the coordinator named
	// (regime.go).
	regMu   sync.Mutex
	regNext *proto.Regime
}

// Run runs a worker until the job ends, ctx ends, or it fails.
func Run(ctx context.Context, cfg Config) (Result, error) {
	w := &Worker{cfg: cfg, tr: cfg.Transport, release: make(chan struct{}, 1), stop: make(chan struct{})}
	if w.tr == nil {
		w.tr = wire.TCP{}
	}
	if cfg.Token == "" {
		return Result{}, errors.New("live: a token is required (--token or $PACER_TOKEN)")
	}
	w.wireCfg = cfg.Wire
	w.wireCfg.Token = cfg.Token
	if w.wireCfg.Stats == nil {
		w.wireCfg.Stats = new(wire.Stats) // one count over every link, for the metrics
	}
	w.log = cfg.Logger
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	w.id = cfg.ID
	w.mID.Store(int64(cfg.ID))
	w.ws.Inc = rand.Uint64() | 1 // this process, as against an earlier one under the same id
	w.started = time.Now()
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = time.Minute
	}
	if cfg.MetricsAddr != "" {
		stop, at, err := ops.Serve(cfg.MetricsAddr, workerCollector{w}, w.joined.Load, w.log)
		if err != nil {
			return Result{ID: w.id}, err
		}
		defer stop()
		if cfg.MetricsReady != nil {
			cfg.MetricsReady(at)
		}
	}
	defer w.joined.Store(false)
	if err := w.dialControl(ctx, cfg.ConnectTimeout); err != nil {
		return Result{ID: w.id}, err
	}
	defer func() { w.ctl.Close() }()
	// Beat from the start: loading the data set can outlast the timeout.
	hctx, stop := context.WithCancel(ctx)
	defer stop()
	go w.heartbeats(hctx, w.job.Job.HeartbeatTimeout)
	return w.loop(ctx)
}

// curID is the worker's id, for the goroutines beside the main loop (the
// links, the heartbeats): a redial may change it (dialControl).
func (w *Worker) curID() int32 { return int32(w.mID.Load()) }

// stopping reports whether the coordinator said the job is over. A
// connection that closes after the Shutdown notice is the job's end, not
// a fault to redial for (the server may be gone, and the redial would
// retry until ctx ends); the notice is taken before the close is seen,
// on the connection's own goroutine, so this check settles it.
func (w *Worker) stopping() bool {
	select {
	case <-w.stop:
		return true
	default:
		return false
	}
}

// noteBarrier keeps the latest barrier count the coordinator named (a
// release resent after a reconnect may carry an older one).
func (w *Worker) noteBarrier(b, pushes uint64) {
	for {
		old := w.barriers.Load()
		if b <= old {
			return
		}
		if w.barriers.CompareAndSwap(old, b) {
			w.barPushes.Store(pushes)
			return
		}
	}
}

// dialControl connects (or reconnects) to the coordinator and reads the job.
func (w *Worker) dialControl(ctx context.Context, giveUp time.Duration) error {
	w.ws.AgeUS = time.Since(w.started).Microseconds()
	meta, err := json.Marshal(proto.HelloMeta{WorkerState: w.ws})
	if err != nil {
		return err
	}
	cc := wire.ClientConfig{Config: w.wireCfg, Hello: wire.Hello{Role: proto.RoleControl, Worker: int32(w.id), Meta: meta}, OnNotify: w.onNotify}
	c, err := proto.DialRetry(ctx, w.tr, w.cfg.Coordinator, cc, giveUp)
	if err != nil {
		var re *wire.RemoteError
		if errors.As(err, &re) && re.Code == wire.CodeShuttingDown {
			return ErrJobDone
		}
		return fmt.Errorf("live: worker: coordinator %s: %w", w.cfg.Coordinator, err)
	}
	var info proto.JobInfo
	if err := c.HelloOK().JSON(&info); err != nil {
		c.Close()
		return err
	}
	// The description was validated where it was built; this process
	// checks what it received once, its version first.
	d, err := job.ParseDescription(info.Job)
	if err != nil {
		c.Close()
		return fmt.Errorf("live: worker: coordinator %s: %w", w.cfg.Coordinator, err)
	}
	redial := w.ctl != nil
	if redial {
		// A coordinator restarted with other job flags: this worker's
		// model, data shard and schedule are of the job it joined.
		if err := d.Mismatch("shard 0", &w.job, fmt.Sprintf("worker %d", w.id)); err != nil {
			c.Close()
			return fmt.Errorf("live: worker: coordinator %s: %w", w.cfg.Coordinator, err)
		}
		w.ctl.Close()
	}
	if redial && w.id != info.ID {
		// A redial asks for its own id and is given another only when
		// it was a join's, removed, and went to another join meanwhile
		// (ids are keyed by incarnation): the worker goes on as a join
		// under the new one, from a full pull. Its links read the id
		// (curID) and redial under the new one at their next request.
		w.log.Warn("given a fresh worker id: this process's went to another joining worker while it was removed", "worker", info.ID, "was", w.id)
		info.Rejoined = true
	}
	w.ctl, w.info, w.job, w.id = c, info, d, info.ID
	w.mID.Store(int64(info.ID))
	w.noteBarrier(info.Barriers, uint64(max(info.BarrierPushes, 0)))
	w.noteRegime(info.Regime)
	return nil
}

// state is the main loop's view of the iteration.
type state struct {
	pace    *pace // nil: the worker runs at its real speed
	pl      *paradigm.Puller
	spec    paradigm.Spec // the rule pl is of: the job's, or auto's regime's (gen)
	gen     uint64
	model   nn.Model
	params  []float32
	grad    []float32
	ranges  [][2]int
	read    []uint64
	pulling []bool // a pull to the shard is outstanding
	pushing []bool // a push to the shard awaits its ack
	clock   uint64
	first   bool
	inPull  bool
	// pullFirst: the pull under way is the first after a (re)join, whose
	// replies may answer requests from before it: no re-push then.
	pullFirst bool
	seq       uint64
	iter      time.Duration // the last iteration's compute time, reported with its push
	loss      float64       // the last mini-batch's loss, reported with its push
	waitFrom  time.Time
	res       Result
	start     time.Time
	pushRead  []uint64 // per shard, the read tag of the last push (for re-pushes)
}

func (w *Worker) setup() (*state, *data.Batcher, error) {
	in, j := w.info, &w.job.Job
	if len(in.ShardAddrs) != j.Shards {
		return nil, nil, fmt.Errorf("live: coordinator sent %d shard addresses for %d shards", len(in.ShardAddrs), j.Shards)
	}
	spec, gen := j.Spec.Start(), uint64(0)
	if r := in.Regime; r != nil {
		// Joining an auto job after a switch: its rule from the start.
		var err error
		if spec, err = w.regimeSpec(r); err != nil {
			return nil, nil, err
		}
		gen = r.Gen
	}
	pl, err := paradigm.NewPuller(spec, paradigm.Config{Workers: j.Workers, Shards: j.Shards})
	if err != nil {
		return nil, nil, err
	}
	m, err := job.NewModel(*j)
	if err != nil {
		return nil, nil, err
	}
	ds := w.cfg.Data
	if ds == nil {
		// With --normalize mean every worker subtracts the mean of its own
		// copy of the training set (job.Limit): the same files and limit
		// give the same bits in every process.
		dir := w.cfg.DataDir
		if ds, err = job.Data(job.Config{Dataset: j.Dataset, DataDir: dir, TrainLimit: j.TrainLimit, TestLimit: 1, Normalize: j.Normalize}); err != nil {
			return nil, nil, err
		}
	} else if err := job.CheckNormalized(ds, *j); err != nil {
		return nil, nil, fmt.Errorf("live: worker: %w", err)
	}
	// The same check as virtual time's and the server's: a model fed data of another
	// shape would panic (fewer features) or train on misaligned inputs (more).
	if err := nn.CheckData(m, ds.Train.Name, ds.Train.Dim, ds.Train.Classes); err != nil {
		return nil, nil, fmt.Errorf("live: worker: %w", err)
	}
	// A worker beyond the initial K shares a data shard: ids past K wrap.
	b, err := data.NewBatcher(ds.Train, data.BatcherConfig{Worker: w.id % j.Workers, Workers: j.Workers, Batch: j.Batch, Seed: j.Seed, Global: j.Global()})
	if err != nil {
		return nil, nil, err
	}
	pc, err := newPace(j.Timing, j.Workers, w.id, j.Seed)
	if err != nil {
		return nil, nil, err
	}
	n := m.NumParams()
	st := &state{pace: pc, pl: pl, spec: spec, gen: gen, model: m, params: hugemem.Floats(n), grad: hugemem.Floats(n),
		ranges: job.Ranges(n, j.Shards), read: make([]uint64, j.Shards), pulling: make([]bool, j.Shards),
		pushing: make([]bool, j.Shards), pushRead: make([]uint64, j.Shards), first: true, clock: uint64(in.Clock), start: time.Now()}
	st.waitFrom = st.start
	return st, b, nil
}

func (w *Worker) loop(ctx context.Context) (Result, error) {
	st, b, err := w.setup()
	if err != nil {
		return Result{ID: w.id}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w.events = make(chan linkEvent, 2*len(st.ranges))
	links := make([]*wlink, len(st.ranges))
	w.links = links
	var wg sync.WaitGroup
	// Pull replies are read straight into the parameters unless PSP's
	// partial pulls let replies arrive while the worker computes.
	direct := st.pl.Need() == len(st.ranges)
	for i, addr := range w.info.ShardAddrs {
		r := st.ranges[i]
		links[i] = newLink(w, i, addr, r[1]-r[0])
		if direct {
			links[i].into = st.params[r[0]:r[1]:r[1]]
		}
		wg.Add(1)
		go func() { defer wg.Done(); links[i].run(ctx) }()
	}
	defer wg.Wait()
	defer cancel()
	w.joined.Store(true)
	w.log.Info("worker started", "worker", w.id, "paradigm", st.spec.String(), "shards", len(links), "clock", st.clock)
	w.ws.Clock = w.info.Clock
	if w.info.Held {
		// Back under an id whose earlier process pushed and waits at the
		// gate: this one starts when that release comes.
		w.log.Info("returning worker waits for the gate's release", "worker", w.id, "clock", st.clock)
		err := w.awaitRelease(ctx, st)
		if err == nil {
			err = w.adopt(st) // the release may end a switch
		}
		if err != nil {
			if errors.Is(err, ErrJobDone) {
				return w.result(st), nil
			}
			return w.result(st), err
		}
	}
	for {
		if err := w.pullPhase(ctx, st, links); err != nil {
			if errors.Is(err, ErrJobDone) {
				return w.result(st), nil
			}
			return w.result(st), err
		}
		// Compute with the fresh blocks (and, under PSP, older copies of the rest).
		if err := w.drainPushes(ctx, st); err != nil {
			if errors.Is(err, ErrJobDone) {
				return w.result(st), nil
			}
			return w.result(st), err
		}
		t0 := time.Now()
		st.res.Wait += t0.Sub(st.waitFrom)
		bt := b.Next()
		st.loss = float64(st.model.Grad(st.params, st.grad, bt.X, bt.Y, bt.N))
		if st.pace != nil {
			// An emulated slower worker: the stretch counts as computing.
			now := time.Now()
			if err := st.pace.hold(ctx, now, t0, now.Sub(t0)); err != nil {
				return w.result(st), err
			}
		}
		st.waitFrom = time.Now()
		st.iter = st.waitFrom.Sub(t0)
		st.res.Busy += st.iter
		if err := proto.CheckFinite(st.grad); err != nil {
			return w.result(st), fmt.Errorf("live: worker %d: the model's gradient diverged: %w", w.id, err)
		}
		if c := w.job.Job.ClipNorm; c > 0 {
			optim.ClipNorm(st.grad, c)
		}
		if st.spec.LocalSteps() {
			w.localStep(st, &w.job)
		}
		// Push each block to its shard, then report the push to the gate.
		for i, r := range st.ranges {
			st.pushing[i] = true
			st.pushRead[i] = st.read[i]
			links[i].ops <- linkOp{kind: opPush, data: st.grad[r[0]:r[1]], read: st.read[i], clock: st.clock}
		}
		if err := w.drainPushes(ctx, st); err != nil {
			if errors.Is(err, ErrJobDone) {
				return w.result(st), nil
			}
			return w.result(st), err
		}
		st.clock++
		st.res.Pushes++
		st.seq++
		w.mPushes.Store(st.res.Pushes)
		w.mWaitNS.Store(int64(st.res.Wait))
		w.mBusyNS.Store(int64(st.res.Busy))
		w.mClock.Store(int64(st.clock))
		w.ws.Seq = st.seq
		err := w.reportClock(ctx, st)
		if err == nil {
			err = w.awaitRelease(ctx, st)
		}
		if err == nil {
			err = w.adopt(st)
		}
		if err != nil {
			if errors.Is(err, ErrJobDone) {
				return w.result(st), nil
			}
			return w.result(st), err
		}
	}
}

// localStep steps the worker's own copy with its gradient (ElasticBSP
// apply=local): plain SGD at the rate the shards apply the superstep with,
// the schedule's at the latest barrier (its count and its epoch), as
// virtual time steps it. The barrier's pull replaces the copy.
func (w *Worker) localStep(st *state, d *job.Description) {
	var epoch float64
	if d.TrainN > 0 {
		epoch = float64(int64(w.barPushes.Load())*int64(d.Job.Batch)) / float64(d.TrainN)
	}
	lr := d.Job.Optim().Rate(int64(w.barriers.Load()), epoch)
	kernel.AxpyUnitary(float32(-lr), st.grad, st.params)
}

func (w *Worker) result(st *state) Result {
	st.res.ID = w.id
	return st.res
}

// handle applies one link event to the state.
func (w *Worker) handle(st *state, links []*wlink, ev linkEvent) error {
	switch ev.kind {
	case evFailed:
		return fmt.Errorf("live: worker %d: shard %d: %w", w.id, ev.shard, ev.err)
	case evPushed:
		st.pushing[ev.shard] = false
		if ev.err != nil {
			return fmt.Errorf("live: worker %d: push to shard %d: %w", w.id, ev.shard, ev.err)
		}
	case evRepush:
		if st.inPull && !st.pl.Fresh(ev.shard) && !st.pullFirst {
			r := st.ranges[ev.shard]
			st.pushing[ev.shard] = true
			links[ev.shard].ops <- linkOp{kind: opPush, data: st.grad[r[0]:r[1]], read: st.pushRead[ev.shard], clock: st.clock - 1}
		}
	case evData:
		r := st.ranges[ev.shard]
		if dst := st.params[r[0]:r[1]]; len(ev.floats) == 0 || len(dst) == 0 || &ev.floats[0] != &dst[0] {
			copy(dst, ev.floats) // not read in place (PSP); wlink refused a reply of another size
		}
		ev.done <- struct{}{}
		st.pulling[ev.shard] = false
		st.read[ev.shard] = ev.version
		if !st.inPull {
			return nil // a late PSP response refreshes the copy for the next iteration
		}
		if st.pl.Response(time.Since(st.start), ev.shard, ev.version) {
			return nil
		}
		if !st.pl.Fresh(ev.shard) {
			w.request(st, links, ev.shard) // left over from an earlier pull: ask again
		}
	}
	return nil
}

func (w *Worker) request(st *state, links []*wlink, i int) {
	st.pulling[i] = true
	links[i].ops <- linkOp{kind: opPull, read: st.read[i], min: st.pl.MinVersion(i)}
}
