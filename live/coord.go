package live

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pacer-ps/pacer/internal/ratelog"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/membership"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/wire"
)

// member is what the coordinator keeps of one worker id beside its
// membership record (membership.Member): its connection and what its
// clock reports said of its times.
type member struct {
	peer   *wire.Peer
	waitUS uint64
	busyUS uint64
	iters  runstats.IterAcc // iteration times from the clock reports (not kept across a coordinator restart)
	// old: the connections of the processes a newer one displaced under
	// the id (membership.Admit.Displaced), the latest few; what they still
	// send is refused or ignored.
	old []*wire.Peer
}

// maxOldPeers bounds member.old: a displaced process sends on its own
// connection only until the server has closed it.
const maxOldPeers = 4

// displaced reports whether peer is the connection of a process displaced
// under id p (lock held).
func (c *Coordinator) displaced(p int, peer *wire.Peer) bool {
	return peer != nil && p >= 0 && p < len(c.members) && slices.Contains(c.members[p].old, peer)
}

// The membership states, as the state file writes them.
const (
	unseen  = int(membership.Unseen)
	live    = int(membership.Live)
	removed = int(membership.Removed)
)

// Coordinator is the job's gate and membership, hosted by shard 0 (as
// ps-lite's scheduler): it assigns worker ids, counts pushes, releases
// workers as the paradigm's gate decides, and removes a worker whose
// heartbeats stop, from the gate here and from every shard's aggregator.
//
// Its decisions take the time as an argument (now): the server's frame
// dispatch and its sweep loop read the clock and pass it in. Membership
// and the job's count are the membership package's state machine (ms);
// the Coordinator carries its decisions out at the gate and on the
// connections.
type Coordinator struct {
	mu      sync.Mutex
	gate    paradigm.Gate
	ctrl    time.Duration // wall time of the gate's controller calls (DSSP, ElasticBSP)
	ms      *membership.Table
	members []member // beside ms's records, id for id
	k       int
	timeout time.Duration
	graceD  time.Duration // the startup grace: also caps a starting worker's timeout
	every   time.Duration // the sweep's period
	start   time.Time
	target  int64
	// base holds the gate's counters from before a restart (the rebuilt
	// gate counts from zero); restarts counts the coordinator's restarts.
	base     paradigm.GateStats
	restarts int64
	blind    bool  // restarted without a state file (restoreBlind)
	refused  int64 // control frames refused
	idCap    int
	job      *job.Description
	info     proto.JobInfo // the HelloOK's payload, the job's description encoded once
	rel      []int
	log      *slog.Logger
	plog     *ratelog.Logger // lines a worker's frames trigger (rate-limited; nil: none)
	// members changes are pushed to the shards through this (the shard
	// links deliver the latest view, retrying until it lands).
	onMembers func(live, removed []int)
	// ElasticBSP apply=local: bar is the barriers the gate has passed
	// (barBase, from before a restart, plus the rebuilt gate's count) and
	// barPushes the pushes counted at the latest; releases carry both, and
	// onBarrier hands every new count to the shard links.
	bar, barBase uint64
	barPushes    int64
	onBarrier    func(b uint64)
	// auto is --paradigm auto's state (nil otherwise); onSwitch hands a
	// regime to the shard links, noise reads shard 0's (coord_auto.go).
	auto     *autoCoord
	onSwitch func(r proto.Regime, pushes int64)
	noise    func() float64
	stopped  chan struct{}
	stopOnce sync.Once
	// stall watches the count: a job that counts no push for
	// proto.WaitReportAfter is reported with the workers it waits for.
	stall       proto.WaitWatch
	stallPushes int64

	// lossSum and lossN total the mini-batch losses reported with counted
	// pushes (proto.CoordStats.BatchLossSum), carried across a restart by the
	// state file. inc names this coordinator; a restored one keeps the
	// writer's name (from) and the totals the file held (restoredSum,
	// restoredN), so an observer can tell whether its window goes on.
	lossSum     float64
	lossN       int64
	inc, from   uint64
	restoredSum float64
	restoredN   int64
}

// CoordConfig builds a Coordinator.
type CoordConfig struct {
	Params     *job.Description
	ShardAddrs []string
	Logger     *slog.Logger
	// StartupGrace is how long a worker id may stay unseen before it is
	// removed (zero: membership.Timing, four heartbeat timeouts within
	// 20–25 s).
	StartupGrace time.Duration
	// Replan is --paradigm auto's decision (required for it; package
	// auto's Planner).
	Replan Replanner
}

// newCoordinator builds the coordinator of a job starting at now.
func newCoordinator(cfg CoordConfig, now time.Time) (*Coordinator, error) {
	j := &cfg.Params.Job
	desc, err := json.Marshal(cfg.Params)
	if err != nil {
		return nil, err
	}
	gate, err := paradigm.NewGate(j.Spec.Start(), paradigm.Config{Workers: j.Workers, Shards: j.Shards})
	if err != nil {
		return nil, err
	}
	if j.Spec.Kind == paradigm.Auto && cfg.Replan == nil {
		return nil, fmt.Errorf("live: --paradigm auto needs its planner (ServerConfig.Replan: package auto's Planner)")
	}
	grace, every := membership.Timing(j.HeartbeatTimeout)
	if cfg.StartupGrace != 0 {
		grace = cfg.StartupGrace
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Coordinator{gate: gate, members: make([]member, j.Workers), k: j.Workers,
		idCap: idCap(cfg.Params), timeout: j.HeartbeatTimeout, graceD: grace, every: every, start: now, target: cfg.Params.Pushes(),
		log: log.With("role", "coordinator"), stopped: make(chan struct{}), inc: rand.Uint64() | 1,
		job: cfg.Params, info: proto.JobInfo{ShardAddrs: cfg.ShardAddrs, Job: desc}}
	if j.Spec.Kind == paradigm.Auto {
		c.auto = newAutoCoord(j.Spec, cfg.Replan)
	}
	c.ms = membership.New(membership.Config{Workers: j.Workers, IDCap: c.idCap, Timeout: c.timeout, Grace: grace, Every: every, Target: c.target}, now)
	return c, nil
}

// since is now on the gate's clock (the job's start is its zero).
func (c *Coordinator) since(now time.Time) time.Duration { return now.Sub(c.start) }

// refusal maps a membership refusal to the wire's error (counted as a
// refused frame unless it says the job has ended).
func (c *Coordinator) refusal(err error) error {
	r, ok := err.(*membership.Refusal)
	if !ok {
		return err
	}
	switch r.Code {
	case membership.Finished:
		return remoteErr(wire.CodeShuttingDown, "%s", r.Msg)
	case membership.Unavailable:
		return c.refuseLocked(wire.CodeUnavailable, "%s", r.Msg)
	}
	return c.refuseLocked(wire.CodeBadRequest, "%s", r.Msg)
}

// grow keeps members as long as ms's ids (lock held).
func (c *Coordinator) grow() {
	for len(c.members) < c.ms.Len() {
		c.members = append(c.members, member{})
	}
}

// welcome is the coordinator's answer to a worker's Hello: the JobInfo it
// sends, and ended: the Hello counted the job's last push (a report
// answered before a removal or a restart), so the server tells every
// worker the job is over instead of releasing anyone.
type welcome struct {
	proto.JobInfo
	ended bool
}

// hello admits a worker's control connection at now: id < 0 takes the
// first id never seen (then a new id, then a removed join's: a worker
// joining a running job); a known id reconnects, or rejoins if it had been
// removed. membership.Table.Hello decides; hello carries it out at the gate
// and on the connections.
//
// Only ids the coordinator admits are accepted: the job's workers 0..K−1
// and ids it assigned before, below the job's bound (idCap). (The server
// closes an older connection of the id.) A process displaced under its id
// by a newer one is refused, and what it still sends on its connection is
// refused (clock) or ignored (heartbeat).
//
// A removed join's process whose id went to another join is given a
// fresh id (membership.Table.Hello: ids are keyed by incarnation), and
// told to start from a full pull as a rejoining worker is.
//
// ws says which process dials and how far it has got. A process other
// than the one the coordinator knew under the id (a worker killed and
// started again) is a returning worker: its clock reports count from 1
// again, so the count is reset rather than its first reports taken for
// retries of pushes already counted (which left the gate's clock behind
// the rounds it pushed: BSP hung). It keeps the id's gate clock while the
// id is live (its first pull is of the round that clock names; if the gate
// holds the id, it first waits for that release), and joins at the gate's
// minimum once removed.
func (c *Coordinator) hello(now time.Time, peer *wire.Peer, want int32, ws proto.WorkerState) (welcome, []*wire.Peer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, err := c.ms.Hello(now, int(want), membership.Process{Inc: ws.Inc, Seq: ws.Seq, Acked: ws.Acked})
	if err != nil {
		return welcome{}, nil, c.refusal(err)
	}
	id := a.ID
	c.grow()
	m := &c.members[id]
	if a.Displaced && m.peer != nil && m.peer != peer {
		m.old = append(m.old, m.peer)
		if len(m.old) > maxOldPeers {
			m.old = m.old[1:]
		}
	}
	m.peer = peer
	info := welcome{JobInfo: c.info}
	info.ID = id
	c.adoptBarriers(ws.Barriers)
	var notify []*wire.Peer
	if a.Resync {
		c.rel = c.hold(c.resync(now, id, ws, a, c.rel[:0]))
		notify = append(notify, c.peersOf(c.rel)...)
	}
	switch {
	case a.Joined:
		c.rel = c.hold(c.gate.Join(c.since(now), id, c.rel[:0]))
		info.Rejoined = true
		// The joining worker starts (or resumes) without waiting for a
		// release: it is told so here, not by a notice it may take for a
		// later one.
		for _, q := range c.rel {
			if q != id {
				notify = append(notify, c.peersOf([]int{q})...)
			}
		}
		c.plog.Info("worker joined", "worker", id, "peer", peerAddr(peer), "returning", a.Returning)
		c.publish()
	case a.Reconnect:
		if !c.gate.Held(id) && !c.parkedAt(id) {
			// A reconnection: a release sent to the old connection may be lost.
			notify = append(notify, peer)
		}
	case a.Returning:
		c.plog.Info("worker returned", "worker", id, "peer", peerAddr(peer), "held", c.gate.Held(id))
	}
	if a.Fresh && a.Was != id {
		// Said apart from the join: an operator following worker Was's
		// process in the logs finds it again here.
		c.plog.Info("worker given a fresh id: its own went to another join while it was removed", "worker", id, "was", a.Was, "peer", peerAddr(peer))
		info.Rejoined = true
	}
	c.noteBarriers() // a resync's push may pass one
	if a.Finished {
		c.endSuperstep()
		c.log.Info("job finished", "pushes", c.ms.Pushes())
		info.ended = true
	}
	info.Clock = c.gate.Clock(id)
	info.Held = a.Returning && c.gate.Held(id)
	info.Barriers, info.BarrierPushes = c.bar, c.barPushes
	info.Regime = c.regime()
	return info, notify, nil
}

// refuse counts a refused control frame and returns its error.
func (c *Coordinator) refuse(code wire.ErrorCode, format string, a ...any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refuseLocked(code, format, a...)
}

func (c *Coordinator) refuseLocked(code wire.ErrorCode, format string, a ...any) error {
	c.refused++
	return remoteErr(code, format, a...)
}

// peersOf maps released ids to their connections.
func (c *Coordinator) peersOf(ids []int) []*wire.Peer {
	var out []*wire.Peer
	for _, q := range ids {
		if q < len(c.members) && c.members[q].peer != nil {
			out = append(out, c.members[q].peer)
		}
	}
	return out
}

// clockReport is one worker's clock report (a Clock frame).
type clockReport struct {
	// seq is the worker's running push count (so a retried frame is not
	// counted twice); waitUS and busyUS its cumulative time held and
	// computing, in µs; iterUS the pushed iteration's compute time (0: not
	// reported).
	seq, waitUS, busyUS uint64
	iterUS              uint32
	// loss is the frame's payload: the pushed gradient's mini-batch loss,
	// or empty (reportedLoss).
	loss []byte
}

func clockReportOf(f *wire.Frame) clockReport {
	return clockReport{seq: f.Tag, waitUS: f.Extra, busyUS: f.Offset, iterUS: f.Count, loss: f.Bytes}
}

// clock records worker p's push, reported at now on connection peer.
func (c *Coordinator) clock(now time.Time, peer *wire.Peer, p int, rep clockReport, resp *wire.Frame) ([]*wire.Peer, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	seq, waitUS, busyUS, iterUS := rep.seq, rep.waitUS, rep.busyUS, rep.iterUS
	if c.displaced(p, peer) {
		// A report the displaced process sent before its connection was
		// closed: counted, it would move the id's clock a second time.
		return nil, false, c.refuseLocked(wire.CodeBadRequest, "worker id %d was taken over by a newer process (is another worker running with --id %d?): this one stops", p, p)
	}
	if err := c.ms.CheckReport(p, seq); err != nil {
		return nil, false, c.refusal(err)
	}
	// Times are cumulative since the worker joined, which was after this
	// coordinator started (1 s for rounding and clock rates).
	if lim := uint64(c.since(now).Microseconds()) + 1e6; waitUS > lim || busyUS > lim || waitUS+busyUS > lim {
		return nil, false, c.refuseLocked(wire.CodeBadRequest, "clock report of worker %d: %d µs held and %d µs computing exceed the job's %d µs",
			p, waitUS, busyUS, lim)
	}
	loss, hasLoss, err := proto.ReportedLoss(rep.loss)
	if err != nil {
		return nil, false, c.refuseLocked(wire.CodeBadRequest, "clock report of worker %d: %v", p, err)
	}
	r, err := c.ms.Clock(now, p, seq)
	if err != nil {
		return nil, false, c.refusal(err)
	}
	m := &c.members[p]
	if r.Counted {
		// The loss counts with its push, once (not on a retry).
		if iterUS > 0 {
			m.iters.Add(float64(iterUS) / 1e6)
			if c.auto != nil {
				c.auto.win.Add(p, time.Duration(iterUS)*time.Microsecond)
			}
		}
		if hasLoss {
			c.lossSum += loss
			c.lossN++
		}
	}
	resp.Type, resp.Worker = wire.MsgClock, int32(p)
	if r.Kind == membership.AfterEnd {
		return nil, false, remoteErr(wire.CodeShuttingDown, "the job has finished")
	}
	m.waitUS, m.busyUS = max(m.waitUS, waitUS), max(m.busyUS, busyUS)
	switch r.Kind {
	case membership.Rejoined:
		c.rel = c.hold(c.gate.Join(c.since(now), p, c.rel[:0]))
		c.publish()
		resp.Flags = proto.FlagRejoined
		resp.Tag = uint64(c.gate.Clock(p))
		c.plog.Info("worker rejoined", "worker", p, "peer", peerAddr(m.peer))
		return c.peersOf(c.rel), false, nil
	case membership.Retry:
		var notify []*wire.Peer
		if !c.gate.Held(p) && !c.parkedAt(p) {
			notify = append(notify, m.peer)
		}
		resp.Tag = uint64(c.gate.Clock(p))
		return notify, false, nil
	}
	// The controller's cost is measured on the wall clock: it is a figure
	// reported (ControllerSecs), not a decision's input.
	calls, t0 := c.gate.Stats().ControllerCalls, time.Now()
	c.rel = c.gate.Pushed(c.since(now), p, c.rel[:0])
	if c.gate.Stats().ControllerCalls > calls {
		c.ctrl += time.Since(t0)
	}
	c.noteBarriers()
	if c.parking() {
		// Reported during a drain: p parks whether released or held.
		c.auto.parked[p] = true
	}
	c.rel = c.hold(c.rel)
	c.maybeSwitch()
	resp.Tag = uint64(c.gate.Clock(p))
	notify := c.peersOf(c.rel)
	if r.Finished {
		c.endSuperstep()
		c.log.Info("job finished", "pushes", c.ms.Pushes())
	}
	return notify, r.Finished, nil
}

// heartbeat records that p is alive at now (a beat on a displaced
// process's connection says nothing of the id's).
func (c *Coordinator) heartbeat(now time.Time, peer *wire.Peer, p int) {
	c.mu.Lock()
	if !c.displaced(p, peer) {
		c.ms.Heartbeat(now, p)
	}
	c.mu.Unlock()
}

// sweep removes every live worker silent for longer than the timeout (and
// ids never seen after the startup grace), releasing whoever waited on them
// (membership.Table.Sweep decides, and defers when the sweep itself comes
// late).
//
// It also returns the connections of the workers it removed: the server
// closes them. A removed worker may still be alive (slow, or its beats
// late on a loaded machine) and waiting for a release that, removed, it
// would never get; its connection closing makes it redial, and the Hello
// admits it again (with its own account of the reports it has made), so
// it is not left out until the job ends.
func (c *Coordinator) sweep(now time.Time) (notify, cut []*wire.Peer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sw := c.ms.Sweep(now)
	if sw.Stalled {
		c.log.Debug("coordinator stalled; removals wait for the next sweep", "gap", sw.Gap.Round(time.Millisecond))
		return nil, nil
	}
	for _, r := range sw.Removed {
		p := r.ID
		if m := &c.members[p]; m.peer != nil {
			cut = append(cut, m.peer)
		}
		c.rel = c.hold(c.gate.Leave(c.since(now), p, c.rel[:0]))
		c.noteBarriers()
		notify = append(notify, c.peersOf(c.rel)...)
		if r.Never {
			c.log.Warn("worker removed: it never connected", "worker", p, "waited", c.graceD)
		} else {
			c.log.Warn("worker removed after missed heartbeats", "worker", p, "silent", r.Silent.Round(time.Millisecond))
		}
	}
	if len(sw.Removed) > 0 {
		c.publish()
		c.maybeSwitch() // the drain no longer waits for those removed
	}
	c.watchStall(now)
	return notify, cut
}

// watchStall reports a job that has counted no push for proto.WaitReportAfter
// (and every proto.WaitReportAfter again), naming what it waits for (lock
// held): the workers the gate holds, and those it does not, which are
// computing, or held up pushing to or pulling from a shard (their own logs
// name the shard).
func (c *Coordinator) watchStall(now time.Time) {
	if p := c.ms.Pushes(); p != c.stallPushes || c.stall.Next().IsZero() {
		c.stallPushes, c.stall = p, proto.NewWaitWatch(now)
		return
	}
	d, ok := c.stall.Due(now)
	if !ok || c.ms.Done() {
		return
	}
	live, _ := c.ms.View()
	var held, other []string
	for _, p := range live {
		if c.ms.Member(p).State != membership.Live {
			continue
		}
		w := fmt.Sprintf("%d@%d", p, c.gate.Clock(p))
		if c.gate.Held(p) {
			held = append(held, w)
		} else {
			other = append(other, w)
		}
	}
	c.log.Warn("no push counted: the job waits", "for", d.Round(time.Second), "pushes", c.stallPushes,
		"held at the gate (worker@clock)", strings.Join(held, " "),
		"not held: computing, or waiting on a shard (worker@clock)", strings.Join(other, " "))
}
