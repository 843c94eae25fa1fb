package live

import (
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/pacer-ps/pacer/internal/ratelog"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/wire"
)

// member is the coordinator's record of one worker id.
type member struct {
	state    int // unseen, live or removed
	peer     *wire.Peer
	lastSeen time.Time
	inc      uint64 // the worker process (workerState.Inc)
	seq      uint64 // the process's last counted push (deduplicates a retried Clock)
	pushes   int64
	waitUS   uint64
	busyUS   uint64
	iters    runstats.IterAcc // iteration times from the clock reports (not kept across a coordinator restart)
	// restored: carried over by a restarted coordinator and not heard
	// from since; its first Hello says where it stands (resync).
	restored bool
}

// startupTimeouts is a starting worker's silence allowance, in heartbeat
// timeouts.
const startupTimeouts = 4

const (
	unseen = iota
	live
	removed
)

// Coordinator is the job's gate and membership, hosted by shard 0 (as
// ps-lite's scheduler): it assigns worker ids, counts pushes, releases
// workers as the paradigm's gate decides, and removes a worker whose
// heartbeats stop, from the gate here and from every shard's aggregator.
type Coordinator struct {
	mu       sync.Mutex
	gate     paradigm.Gate
	ctrl     time.Duration // wall time of the gate's controller calls (DSSP, ElasticBSP)
	members  []member
	k        int
	timeout  time.Duration
	grace    time.Time     // workers never seen are removed after this
	graceD   time.Duration // the startup grace: also a starting worker's timeout
	every    time.Duration // the sweep's period
	swept    time.Time     // the last sweep
	deferred bool          // the last sweep came late and removed no one
	start    time.Time
	first    time.Time // the first worker's hello
	end      time.Time
	target   int64
	pushes   int64
	done     bool
	nRem     int64
	nNever   int64 // removed without ever connecting
	// base holds the gate's counters from before a restart (the rebuilt
	// gate counts from zero); restarts counts the coordinator's restarts.
	base     paradigm.GateStats
	restarts int64
	blind    bool // restarted without a state file (restoreBlind)
	nJoin    int64
	refused  int64 // control frames refused
	idCap    int
	info     JobInfo
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
	stopped      chan struct{}
	stopOnce     sync.Once

	// lossSum and lossN total the mini-batch losses reported with counted
	// pushes (CoordStats.BatchLossSum), carried across a restart by the
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
	// removed (zero: 4 heartbeat timeouts, at least 20 s).
	StartupGrace time.Duration
}

func newCoordinator(cfg CoordConfig) (*Coordinator, error) {
	j := &cfg.Params.Job
	gate, err := paradigm.NewGate(j.Spec, paradigm.Config{Workers: j.Workers, Shards: j.Shards})
	if err != nil {
		return nil, err
	}
	now := time.Now()
	grace := cfg.StartupGrace
	if grace == 0 {
		grace = max(4*j.HeartbeatTimeout, 20*time.Second)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Coordinator{gate: gate, members: make([]member, j.Workers), k: j.Workers,
		idCap: idCap(cfg.Params), timeout: j.HeartbeatTimeout, grace: now.Add(grace), graceD: grace, every: max(j.HeartbeatTimeout/8, 10*time.Millisecond), start: now, target: cfg.Params.Pushes(),
		log: log.With("role", "coordinator"), stopped: make(chan struct{}), inc: rand.Uint64() | 1,
		info: JobInfo{ShardAddrs: cfg.ShardAddrs, Job: *cfg.Params}}
	return c, nil
}

func (c *Coordinator) now() time.Duration { return time.Since(c.start) }

// hello admits a worker's control connection: id < 0 takes the first id
// never seen (then a new id: a worker joining a running job); a known id
// reconnects, or rejoins if it had been removed.
//
// Only ids the coordinator admits are accepted: the job's workers 0..K−1
// and ids it assigned before; a join takes a new id up to the job's bound
// (idCap). (The server closes an older connection of the id.)
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
func (c *Coordinator) hello(peer *wire.Peer, want int32, ws workerState) (JobInfo, []*wire.Peer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return JobInfo{}, nil, remoteErr(wire.CodeShuttingDown, "the job has finished")
	}
	id := int(want)
	switch {
	case id < -1:
		return JobInfo{}, nil, c.refuseLocked(wire.CodeBadRequest, "worker id %d: give an id of the job, or −1 to join", id)
	case id == -1:
		id = len(c.members)
		for p := range c.members {
			if c.members[p].state == unseen && c.members[p].peer == nil {
				id = p
				break
			}
		}
		if id >= c.idCap {
			return JobInfo{}, nil, c.refuseLocked(wire.CodeUnavailable, "the job has admitted its maximum of %d worker ids", c.idCap)
		}
	case id >= len(c.members):
		return JobInfo{}, nil, c.refuseLocked(wire.CodeBadRequest, "worker id %d was never admitted: this job's ids are 0..%d (--id −1 joins as a new one)", id, len(c.members)-1)
	}
	if id == len(c.members) {
		c.members = append(c.members, member{state: removed}) // a new id joins below
	}
	m := &c.members[id]
	info := c.info
	info.ID = id
	c.adoptBarriers(ws.Barriers)
	var notify []*wire.Peer
	returning := m.inc != 0 && m.inc != ws.Inc
	if m.restored {
		m.restored = false
		if returning && ws.Inc != 0 && ws.Acked > 0 {
			// A process that returned after the state file was written
			// and was answered by the coordinator before its restart:
			// the file does not know it, but its reports count from its
			// own first, as a process the file had seen at none.
			m.seq, returning = 0, false
		}
		if !returning && ws.Inc != 0 {
			// The same process as before the coordinator's restart.
			m.peer = peer
			c.rel = c.resync(id, ws, c.rel[:0])
			notify = append(notify, c.peersOf(c.rel)...)
		}
	}
	if m.inc != ws.Inc {
		m.inc, m.seq = ws.Inc, 0
	} else if ws.Seq > m.seq && m.state == removed {
		// The same process, removed while its last report was
		// outstanding: that push reached the shards before the removal
		// and counts toward the job, but not at the gate, where the
		// worker joins afresh below (its resent report is then answered
		// as a retry).
		m.pushes += int64(ws.Seq - m.seq)
		c.pushes += int64(ws.Seq - m.seq)
		m.seq = ws.Seq
	}
	if m.state == removed {
		c.rel = c.gate.Join(c.now(), id, c.rel[:0])
		m.state = live
		c.nJoin++
		info.Rejoined = true
		// The joining worker starts (or resumes) without waiting for a
		// release: it is told so here, not by a notice it may take for a
		// later one.
		for _, q := range c.rel {
			if q != id {
				notify = append(notify, c.peersOf([]int{q})...)
			}
		}
		c.plog.Info("worker joined", "worker", id, "peer", peerAddr(peer), "returning", returning)
		c.publish()
	} else if m.state == live && !c.gate.Held(id) && m.peer != nil && !returning {
		// A reconnection: a release sent to the old connection may be lost.
		notify = append(notify, peer)
	} else if returning {
		c.plog.Info("worker returned", "worker", id, "peer", peerAddr(peer), "held", c.gate.Held(id))
	}
	if m.state == unseen {
		m.state = live
	}
	if c.first.IsZero() {
		c.first = time.Now()
	}
	m.peer, m.lastSeen = peer, time.Now()
	c.noteBarriers() // a resync's push may pass one
	info.Clock = c.gate.Clock(id)
	info.Held = returning && c.gate.Held(id)
	info.Barriers, info.BarrierPushes = c.bar, c.barPushes
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

// clock records worker p's push.
func (c *Coordinator) clock(p int, rep clockReport, resp *wire.Frame) ([]*wire.Peer, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	seq, waitUS, busyUS, iterUS := rep.seq, rep.waitUS, rep.busyUS, rep.iterUS
	if p < 0 || p >= len(c.members) {
		return nil, false, c.refuseLocked(wire.CodeBadRequest, "clock from unknown worker %d", p)
	}
	m := &c.members[p]
	// A worker counts its pushes one by one and repeats a report until it
	// is answered, so a report is the last one counted or the next.
	if seq == 0 || seq > m.seq+1 {
		return nil, false, c.refuseLocked(wire.CodeBadRequest, "clock report %d of worker %d: the last one counted is %d", seq, p, m.seq)
	}
	// Times are cumulative since the worker joined, which was after this
	// coordinator started (1 s for rounding and clock rates).
	if lim := uint64(time.Since(c.start).Microseconds()) + 1e6; waitUS > lim || busyUS > lim || waitUS+busyUS > lim {
		return nil, false, c.refuseLocked(wire.CodeBadRequest, "clock report of worker %d: %d µs held and %d µs computing exceed the job's %d µs",
			p, waitUS, busyUS, lim)
	}
	loss, hasLoss, err := reportedLoss(rep.loss)
	if err != nil {
		return nil, false, c.refuseLocked(wire.CodeBadRequest, "clock report of worker %d: %v", p, err)
	}
	// The loss counts with its push, once (not on a retry).
	count := func() {
		m.pushes++
		c.pushes++
		if iterUS > 0 {
			m.iters.Add(float64(iterUS) / 1e6)
		}
		if hasLoss {
			c.lossSum += loss
			c.lossN++
		}
	}
	resp.Type, resp.Worker = wire.MsgClock, int32(p)
	if c.done {
		// A push that raced the end: its gradient reached the shards and
		// was applied, so it is counted (pushes then match the shards'
		// updates), but it releases no one.
		if m.state == live && seq > m.seq {
			m.seq = seq
			count()
		}
		return nil, false, remoteErr(wire.CodeShuttingDown, "the job has finished")
	}
	m.lastSeen = time.Now()
	m.waitUS, m.busyUS = max(m.waitUS, waitUS), max(m.busyUS, busyUS)
	var notify []*wire.Peer
	if m.state != live {
		// Removed while it was slow or cut off: admit it again; it restarts
		// from a full pull at the gate's minimum clock.
		c.rel = c.gate.Join(c.now(), p, c.rel[:0])
		m.state = live
		c.nJoin++
		c.publish()
		resp.Flags = flagRejoined
		resp.Tag = uint64(c.gate.Clock(p))
		m.seq = seq
		c.plog.Info("worker rejoined", "worker", p, "peer", peerAddr(m.peer))
		return c.peersOf(c.rel), false, nil
	}
	if seq <= m.seq {
		if !c.gate.Held(p) {
			notify = append(notify, m.peer)
		}
		resp.Tag = uint64(c.gate.Clock(p))
		return notify, false, nil
	}
	m.seq = seq
	count()
	calls, t0 := c.gate.Stats().ControllerCalls, time.Now()
	c.rel = c.gate.Pushed(c.now(), p, c.rel[:0])
	if c.gate.Stats().ControllerCalls > calls {
		c.ctrl += time.Since(t0)
	}
	c.noteBarriers()
	resp.Tag = uint64(c.gate.Clock(p))
	notify = c.peersOf(c.rel)
	finished := false
	if c.pushes >= c.target {
		c.done, finished = true, true
		c.end = time.Now()
		c.endSuperstep()
		c.log.Info("job finished", "pushes", c.pushes)
	}
	return notify, finished, nil
}

// heartbeat records that p is alive.
func (c *Coordinator) heartbeat(p int) {
	c.mu.Lock()
	if p >= 0 && p < len(c.members) && c.members[p].state == live {
		c.members[p].lastSeen = time.Now()
	}
	c.mu.Unlock()
}

// sweep removes every live worker silent for longer than the timeout (and
// ids never seen after the startup grace), releasing whoever waited on them.
//
// It also returns the connections of the workers it removed: the server
// closes them. A removed worker may still be alive (slow, or its beats
// late on a loaded machine) and waiting for a release that, removed, it
// would never get; its connection closing makes it redial, and the Hello
// admits it again (with its own account of the reports it has made), so
// it is not left out until the job ends.
func (c *Coordinator) sweep() (notify, cut []*wire.Peer) { return c.sweepAt(time.Now()) }

func (c *Coordinator) sweepAt(now time.Time) (notify, cut []*wire.Peer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// A sweep that comes late measures a stall of the coordinator itself
	// (a loaded machine, a long GC pause): heartbeats that arrived
	// meanwhile may not have been read yet, so it removes no one and
	// leaves the decision to the next sweep, by which time the
	// connections have been served. Only one sweep in a row defers, so a
	// coordinator that is always late still removes dead workers, one
	// period later.
	if c.done {
		// The job has ended: workers stop beating as they exit, which is
		// not a failure (counted as one, a finished worker read as removed).
		return nil, nil
	}
	gap := now.Sub(c.swept)
	late := !c.swept.IsZero() && gap > 2*c.every && !c.deferred
	c.swept, c.deferred = now, late
	if late {
		c.log.Debug("coordinator stalled; removals wait for the next sweep", "gap", gap.Round(time.Millisecond))
		return nil, nil
	}
	changed := false
	for p := range c.members {
		m := &c.members[p]
		// Until its first push a worker is still starting: loading its
		// data set on a busy machine can starve its heartbeats for longer
		// than the timeout, so it gets four timeouts (within the startup
		// grace): a worker that dies while loading still holds the job
		// only briefly.
		limit := c.timeout
		if m.pushes == 0 || m.restored {
			limit = max(limit, min(c.graceD, startupTimeouts*c.timeout))
		}
		// A restored id that has not redialled has no connection; its
		// silence counts from the restore (lastSeen): a worker that died
		// while shard 0 was down never redials, and BSP would wait for
		// it forever.
		late := m.state == live && (m.peer != nil || m.restored) && now.Sub(m.lastSeen) > limit
		never := m.state == unseen && now.After(c.grace)
		if !late && !never {
			continue
		}
		m.state = removed
		if m.peer != nil {
			cut = append(cut, m.peer)
		}
		c.nRem++
		changed = true
		c.rel = c.gate.Leave(c.now(), p, c.rel[:0])
		c.noteBarriers()
		notify = append(notify, c.peersOf(c.rel)...)
		if never {
			// No connection ever came under this id: there is no silence
			// to measure (lastSeen is zero), only the startup grace.
			c.nNever++
			c.log.Warn("worker removed: it never connected", "worker", p, "waited", c.graceD)
		} else {
			c.log.Warn("worker removed after missed heartbeats", "worker", p, "silent", now.Sub(m.lastSeen).Round(time.Millisecond))
		}
	}
	if changed {
		c.publish()
	}
	return notify, cut
}

// noteBarriers takes the barriers the gate has passed since the last call
// (lock held): ElasticBSP apply=local's shards apply each one, so every new
// count goes to the shard links.
func (c *Coordinator) noteBarriers() {
	if !c.info.Job.Job.Spec.LocalSteps() {
		return // apply=arrival's shards have no barrier to apply
	}
	b := c.barBase + paradigm.Barriers(c.gate)
	if b <= c.bar {
		return
	}
	c.bar, c.barPushes = b, c.pushes
	if c.onBarrier != nil {
		c.onBarrier(b)
	}
}

// tellBarriers hands the barrier count so far to the shard links (lock
// held). A restarted coordinator's count comes from its state file and no
// barrier has passed since to send it: a shard 0 restored from a
// checkpoint written before the last barrier's apply would wait for the
// next barrier, and the workers released at this one wait for its
// version, so there would be no next one.
func (c *Coordinator) tellBarriers() {
	if c.bar > 0 && c.onBarrier != nil {
		c.onBarrier(c.bar)
	}
}

// endSuperstep ends the job's last superstep (lock held): under ElasticBSP
// apply=local its gradients, which the workers have stepped their copies
// with, are applied by one more barrier rather than left in the shards'
// buffers (virtual time's Policy.Finish). Pushes that race the end land
// after it and stay buffered.
func (c *Coordinator) endSuperstep() {
	if !c.info.Job.Job.Spec.LocalSteps() {
		return
	}
	c.barBase++
	c.noteBarriers()
}

// adoptBarriers takes a worker's word for the barriers it has been released
// at (lock held): a coordinator restarted from an older state file lost the
// ones since, and the shards' versions and the workers' copies count them.
// A count no job of this length reaches is ignored.
func (c *Coordinator) adoptBarriers(b uint64) {
	if !c.info.Job.Job.Spec.LocalSteps() || b <= c.bar || b > inFlight(&c.info.Job) {
		return
	}
	c.barBase += b - c.bar
	c.bar = b
	if c.onBarrier != nil {
		c.onBarrier(b)
	}
}

// sendRelease sends Release notices (outside the lock), carrying the
// barrier count and the pushes at it.
func (c *Coordinator) sendRelease(peers []*wire.Peer) {
	if len(peers) == 0 {
		return
	}
	c.mu.Lock()
	b, bp := c.bar, c.barPushes
	c.mu.Unlock()
	release(peers, b, bp)
}

// publish hands the current membership to the shard links (lock held).
func (c *Coordinator) publish() {
	if c.onMembers == nil {
		return
	}
	live, rem := c.view()
	c.onMembers(live, rem)
}

func (c *Coordinator) view() (live, rem []int) {
	for p, m := range c.members {
		switch m.state {
		case removed:
			rem = append(rem, p)
		default:
			live = append(live, p)
		}
	}
	return live, rem
}

// finish marks the job done (a stop request) and returns every worker's
// connection so they can be told.
func (c *Coordinator) finish() []*wire.Peer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.done {
		c.done = true
		c.end = time.Now()
		c.endSuperstep()
	}
	return c.allPeers()
}

func (c *Coordinator) allPeers() []*wire.Peer {
	var out []*wire.Peer
	for _, m := range c.members {
		if m.peer != nil {
			out = append(out, m.peer)
		}
	}
	return out
}

// Stats returns the coordinator's counters.
func (c *Coordinator) Stats() CoordStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	gs := c.gate.Stats()
	st := CoordStats{Pushes: c.pushes, Target: c.target, Done: c.done, Releases: c.base.Releases + gs.Releases, MaxGap: max(c.base.MaxGap, gs.MaxGap),
		ControllerCalls: c.base.ControllerCalls + gs.ControllerCalls, Restarts: c.restarts, Barriers: c.bar, ControllerSecs: c.ctrl.Seconds(), Removed: c.nRem, NeverConnected: c.nNever, Joined: c.nJoin, Refused: c.refused,
		BatchLossSum: c.lossSum, BatchLosses: c.lossN, Incarnation: c.inc, RestoredFrom: c.from, RestoredLossSum: c.restoredSum, RestoredLosses: c.restoredN}
	if !c.first.IsZero() {
		end := c.end
		if end.IsZero() {
			end = time.Now()
		}
		st.Seconds = end.Sub(c.first).Seconds()
	}
	for _, m := range c.members {
		if m.state == live {
			st.Live++
		}
		st.WorkerPushes = append(st.WorkerPushes, m.pushes)
		st.WorkerWait = append(st.WorkerWait, float64(m.waitUS)/1e6)
		st.WorkerBusy = append(st.WorkerBusy, float64(m.busyUS)/1e6)
		st.WorkerIter = append(st.WorkerIter, m.iters.Stats())
	}
	return st
}

// release sends Release notices (outside the lock): Tag = the barriers
// ElasticBSP's gate has passed, Extra = the pushes counted at the latest
// (0 and 0 for every other paradigm).
func release(peers []*wire.Peer, barriers uint64, pushes int64) {
	for _, p := range peers {
		f := wire.Frame{Type: wire.MsgRelease, Worker: p.ID(), Tag: barriers, Extra: uint64(max(pushes, 0))}
		p.Send(&f)
	}
}

// shutdown tells workers the job is over.
func shutdown(peers []*wire.Peer) {
	for _, p := range peers {
		f := wire.Frame{Type: wire.MsgShutdown, Worker: p.ID()}
		p.Send(&f)
	}
}

func (c *Coordinator) allPeersLocked() []*wire.Peer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.allPeers()
}
