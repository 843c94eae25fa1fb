package sim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pacer-ps/pacer/network"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/timing"
)

// ErrStalled reports a run in which no worker could make progress: a
// paradigm waiting forever, which PARADIGMS.md's common rules forbid.
var ErrStalled = errors.New("simulation stalled: no worker can make progress")

type worker struct {
	clock       uint64   // iteration tag: pushes, or under PSP the version it jumped to
	read        []uint64 // version held of each shard
	used        []uint64 // versions the gradient in progress is computed from (read at its start)
	pending     []bool   // a pull to the shard is outstanding
	pulling     bool
	computing   bool
	readyQueued bool
	first       bool
	dead        bool
	grad        uint64
	waitFrom    time.Duration
	wait        time.Duration
	diedAt      time.Duration
	pushes      int64
	tickArmed   time.Duration // puller deadline already scheduled (−1: none)
	acks        int           // with a network: pushes in flight
	ackAt       time.Duration // with a network: the latest acknowledgement so far
	rot         uint64        // pushKey's rotation for the round rotFor−1 (rotFor 0: none yet)
	rotFor      int64
	// With a network, where the worker's time went (phase, indexed by
	// the ph constants) since mark, and the longest a shard held its pull
	// in progress (for a version, an apply, a server delay) since reqAt.
	phase  [nPhases]time.Duration
	mark   time.Duration
	srvMax time.Duration
	reqAt  []time.Duration
	// For auto's switch: a push on its way to the gate (from the end of
	// the compute to the count), a release on its way to the worker, and
	// a worker removed.
	pushing, releasing, gone bool
}

// A worker's phases with a network: computing; pushing (until the
// coordinator counts the push: transfer, acknowledgement, report);
// held by the gate (until its release arrives); pulling (request to
// last answer); of the pulls, held at a shard.
const (
	phCompute = iota
	phPush
	phGate
	phPull
	phServer
	nPhases
)

// enter closes worker w's phase ph at now and starts the next.
func (w *worker) enter(ph int, now time.Duration) {
	w.phase[ph] += now - w.mark
	w.mark = now
}

type shard struct {
	waiting []int32 // workers whose pull waits for a newer version
	tickAt  time.Duration
	armed   bool
	stale   []int64
}

type engine struct {
	ctx     context.Context
	cfg     Config
	timed   bool          // measure the controller's wall time
	search  time.Duration // simulated barrier-search time charged (Config.SearchCost)
	ctrl    time.Duration // its total
	pol     *paradigm.Policy
	times   *timing.Workers
	servers *timing.Servers
	q       queue
	ws      []worker
	ss      []shard
	ask     []int
	now     time.Duration
	pushes  int64
	target  int64
	updates int64
	dropped int64
	unsent  int64 // blocks not sent, the shard known to drop them (PSP)
	nextID  uint64
	removed int
	stopped bool
	net     *network.Net // nil: instant transfers
	floats  []int        // with net: values of each shard's block
	flowEv  []event      // with net: by transfer id, the event its arrival is
	ended   []int32
	auto    autoState // --paradigm auto (cfg.Spec.Kind paradigm.Auto)
	err     error     // what stopped the run early (auto's planner failed)
}

// Run simulates cfg and returns its summary.
func Run(cfg Config) (*runstats.Run, error) { return RunContext(context.Background(), cfg) }

// checkEvery is how many events pass between two looks at the context:
// a few microseconds of simulation, or a few batches' gradients in
// virtual-time training, so a stop takes effect at once.
const checkEvery = 64

// RunContext is Run stopped when ctx is done: it then returns an error
// wrapping ctx's and no summary (a run cut short is no result).
func RunContext(ctx context.Context, cfg Config) (*runstats.Run, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	start := cfg.Spec
	if cfg.Spec.Kind == paradigm.Auto {
		if cfg.Replan == nil {
			return nil, fmt.Errorf("%w: auto needs Config.Replan (package auto)", errConfig)
		}
		start = cfg.Spec.Start()
	}
	pol, err := paradigm.New(start, paradigm.Config{Workers: cfg.Workers, Shards: cfg.Shards})
	if err != nil {
		return nil, err
	}
	tw, err := timing.NewWorkers(cfg.Timing, cfg.Workers, cfg.Seed)
	if err != nil {
		return nil, err
	}
	// One delay stream per (shard, worker) pair: then the order in which a
	// paradigm serves its pulls does not change who gets delayed, and runs of
	// different paradigms see the same server delays (common random numbers).
	ts, err := timing.NewServers(cfg.ServerDelay, cfg.Shards, cfg.Workers, cfg.Seed)
	if err != nil {
		return nil, err
	}
	e := &engine{ctx: ctx, cfg: cfg, pol: pol, times: tw, servers: ts,
		ws: make([]worker, cfg.Workers), ss: make([]shard, cfg.Shards),
		timed: cfg.Clock != nil}
	if cfg.Spec.Kind == paradigm.Auto {
		e.auto.init(cfg.Workers, cfg.Spec.Every, cfg.Spec.FirstDecision())
	}
	e.target = int64(cfg.Iterations) * int64(cfg.Workers)
	if cfg.Network != nil {
		if e.net, err = network.New(*cfg.Network, cfg.Workers, cfg.Shards); err != nil {
			return nil, err
		}
		e.floats = network.BlockFloats(cfg.Params, cfg.Shards)
	}
	for p := range e.ws {
		e.ws[p] = worker{read: make([]uint64, cfg.Shards), used: make([]uint64, cfg.Shards), pending: make([]bool, cfg.Shards), first: true, tickArmed: -1}
		if e.net != nil {
			e.ws[p].reqAt = make([]time.Duration, cfg.Shards)
		}
	}
	for _, f := range cfg.Failures {
		e.q.push(event{at: f.At, key: mkKey(evFail, f.Worker, 0)})
	}
	for p := range e.ws {
		e.startPull(p)
	}
	if err := e.loop(); err != nil {
		return nil, err
	}
	if e.err != nil {
		return nil, e.err
	}
	// Work done before the stop is not lost (ElasticBSP local-only's open
	// superstep).
	for _, a := range e.pol.Finish(e.now) {
		e.apply(a.Shard, a.Apply)
	}
	return e.summary(), nil
}

func (e *engine) loop() error {
	done := e.ctx.Done() // nil for a context that is never done
	for n := 1; !e.stopped; n++ {
		if e.auto.draining && e.drained() {
			if err := e.switchNow(); err != nil {
				return err
			}
		}
		if done != nil && n%checkEvery == 0 {
			select {
			case <-done:
				return fmt.Errorf("stopped at %s of virtual time after %d pushes: %w", e.now, e.pushes, e.ctx.Err())
			default:
			}
		}
		// A transfer that ends before the next event (or with it: the
		// ended flow no longer shares its links) is taken first. While
		// transfers start at this instant the rates wait for the last.
		b := e.q.first()
		if e.net != nil && (e.net.Settled() || b == -2 || e.q.at(b) > e.now) {
			if t, ok := e.net.Next(); ok && (b == -2 || t <= e.q.at(b)) {
				if e.cfg.Duration > 0 && t > e.cfg.Duration {
					e.now = e.cfg.Duration
					break
				}
				e.now = t
				e.transfersEnd()
				continue
			}
		}
		if b == -2 {
			return fmt.Errorf("%w (%s, %d workers, at %s after %d pushes)", ErrStalled,
				e.cfg.Spec, e.cfg.Workers, e.now, e.pushes)
		}
		ev := e.q.take(b)
		if e.cfg.Duration > 0 && ev.at > e.cfg.Duration {
			e.now = e.cfg.Duration
			break
		}
		e.now = ev.at
		switch ev.kind() {
		case evComputeDone:
			e.computeDone(ev.worker())
		case evPullArrive:
			e.arrive(ev.worker(), ev.shard(), ev.v)
		case evAggTick:
			e.aggTick(ev.shard())
		case evPullTick:
			e.pullTick(ev.worker())
		case evReady:
			if w := &e.ws[ev.worker()]; w.pulling && !w.dead {
				e.startCompute(ev.worker())
			}
		case evFail:
			e.fail(ev.worker())
		case evRemove:
			e.remove(ev.worker())
		case evPushArrive:
			e.pushArrive(ev.worker(), ev.shard())
		case evPushed:
			if !e.ws[ev.worker()].dead {
				e.pushed(ev.worker())
			}
		case evRelease:
			e.ws[ev.worker()].releasing = false
			e.startPull(ev.worker())
		case evPullRequest:
			if !e.ws[ev.worker()].dead {
				e.pullRequest(ev.worker(), ev.shard())
			}
		case evReply:
			e.reply(ev.worker(), ev.shard(), ev.v)
		}
	}
	return nil
}

func (e *engine) trace(ev Event) {
	ev.At = e.now
	e.cfg.Trace(ev)
}

func (e *engine) startCompute(p int) {
	w := &e.ws[p]
	pl := e.pol.Pullers[p]
	w.pulling, w.computing, w.readyQueued = false, true, false
	if e.net != nil {
		w.enter(phPull, e.now)
		w.phase[phServer] += w.srvMax
	}
	w.clock = pl.NextClock(w.clock)
	// A PSP answer that lands during the compute updates read for the next
	// iteration; this gradient stays tagged with what it was computed from.
	copy(w.used, w.read)
	w.wait += e.now - w.waitFrom
	if e.cfg.Trace != nil {
		e.trace(Event{Kind: Compute, Worker: p, Fresh: countFresh(pl, len(e.ss)), Clock: int64(w.clock)})
	}
	if e.cfg.Learner != nil {
		w.grad = e.cfg.Learner.Compute(e.now, p)
	} else {
		e.nextID++
		w.grad = e.nextID
	}
	d := e.times.NextAt(p, e.now)
	if e.auto.on {
		e.auto.win.Add(p, d)
	}
	e.q.push(event{at: e.now + d, key: e.pushKey(evComputeDone, p, 0)})
}

func allAnswered(pending []bool) bool {
	for _, p := range pending {
		if p {
			return false
		}
	}
	return true
}

func countFresh(pl *paradigm.Puller, s int) int {
	n := 0
	for i := 0; i < s; i++ {
		if pl.Fresh(i) {
			n++
		}
	}
	return n
}

func (e *engine) computeDone(p int) {
	w := &e.ws[p]
	if w.dead {
		return
	}
	w.computing, w.pushing = false, true
	w.waitFrom = e.now
	if e.net != nil {
		w.enter(phCompute, e.now)
		// The blocks leave together, sharing the worker's uplink; the
		// coordinator hears of the push once every shard has
		// acknowledged its block.
		w.acks, w.ackAt = 0, 0
		for i := range e.ss {
			if !e.withhold(p, i) {
				w.acks++
			}
		}
		if w.acks == 0 { // nothing to send: the report goes at once
			e.q.push(event{at: e.now + e.net.Latency(p, 0), key: e.pushKey(evPushed, p, 0)})
			return
		}
		for i := range e.ss {
			if !e.knownDropped(p, i) {
				e.transfer(e.net.Push(e.now, p, i, network.FrameBytes(e.floats[i])), event{key: e.pushKey(evPushArrive, p, i)})
			}
		}
		return
	}
	for i := range e.ss {
		if !e.withhold(p, i) {
			e.offer(p, i)
		}
	}
	e.pushed(p)
}
