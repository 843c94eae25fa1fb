package sim

import (
	"time"

	"github.com/pacer-ps/pacer/paradigm"
)

// This file: a worker's push, from its gradient to the shards' applies
// (what a paradigm withholds, drops or carries out), and failures.

// pushKey is the key of an event of worker p's push in progress (its
// compute's end, its blocks' arrivals, its report). Pushes at one instant
// (identical workers without jitter) reach a shard in the order of their
// keys, and a partial aggregation (PSP's c, backup workers) takes the
// first: in worker order, the last workers would lose every round by
// construction. So the workers' order rotates, by an offset drawn for
// each round (the worker's pushes so far) from the run's seed: the same
// for every paradigm and with or without a network.
func (e *engine) pushKey(kind evKind, p, i int) uint64 {
	w := &e.ws[p]
	if r := w.pushes; w.rotFor != r+1 {
		// Once a round: its compute's end, its blocks and its report
		// share it (two 64-bit divisions each time otherwise).
		z := e.cfg.Seed + 0x9e3779b97f4a7c15*uint64(r+1) // splitmix64
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		z ^= z >> 31
		w.rot, w.rotFor = (uint64(p)+z%uint64(len(e.ws)))%uint64(len(e.ws)), r+1
	}
	return rotKey(kind, w.rot, p, i)
}

// knownDropped reports whether worker p's block for shard i is one the shard
// is known to drop (paradigm.Spec.KnownDropped: the copy the worker holds
// of the block, refreshed by answers that came in while it computed, is
// newer than its tag).
func (e *engine) knownDropped(p, i int) bool {
	w := &e.ws[p]
	return e.pol.Spec.KnownDropped(w.clock, w.read[i])
}

// withhold counts and releases worker p's block for shard i when it is
// not to be sent, and reports so.
func (e *engine) withhold(p, i int) bool {
	if !e.knownDropped(p, i) {
		return false
	}
	w := &e.ws[p]
	e.unsent++
	if e.cfg.Learner != nil {
		e.cfg.Learner.Drop(e.now, i, w.grad)
	}
	if e.cfg.Trace != nil {
		e.trace(Event{Kind: Withhold, Worker: p, Shard: i, Clock: int64(w.clock), Version: w.read[i]})
	}
	return true
}

// offer hands worker p's gradient block to shard i's aggregator.
func (e *engine) offer(p, i int) {
	w := &e.ws[p]
	g := paradigm.Grad{ID: w.grad, Worker: p, Read: w.used[i], Clock: w.clock}
	if e.cfg.Trace != nil {
		e.trace(Event{Kind: Arrive, Worker: p, Shard: i})
	}
	ok, applied, a := e.pol.Aggs[i].Push(e.now, g)
	if !ok {
		e.dropped++
		if e.cfg.Learner != nil {
			e.cfg.Learner.Drop(e.now, i, w.grad)
		}
		if e.cfg.Trace != nil {
			e.trace(Event{Kind: Drop, Worker: p, Shard: i})
		}
	}
	if applied {
		e.apply(i, a)
	}
	e.armAggTick(i)
}

// pushArrive is worker p's block reaching shard i over the network. Its
// acknowledgement leaves once the shard's apply in progress (its own,
// if it completed an update) is over, as the live shard acknowledges
// under its lock.
func (e *engine) pushArrive(p, i int) {
	w := &e.ws[p]
	if w.dead {
		return // the process is gone: the rest of its push with it
	}
	e.offer(p, i)
	w.ackAt = max(w.ackAt, max(e.now, e.net.ApplyFree(i))+e.net.Latency(p, i))
	if w.acks--; w.acks == 0 {
		e.q.pushLane(lanePushed, event{at: w.ackAt + e.net.Latency(p, 0), key: e.pushKey(evPushed, p, 0)})
	}
}

// pushed is worker p's push counted by the coordinator's gate.
func (e *engine) pushed(p int) {
	w := &e.ws[p]
	if e.net != nil {
		w.enter(phPush, e.now)
	}
	w.pushes++
	e.pushes++
	w.clock++
	w.pushing = false
	g := e.pol.Gate
	if e.cfg.Trace != nil {
		e.trace(Event{Kind: Push, Worker: p, Clock: g.Clock(p) + 1, Min: g.Min()})
	}
	var t0 time.Time
	var calls int64
	charge := e.pol.Spec.Kind == paradigm.Elastic && e.cfg.SearchCost > 0
	timed := e.timed && (e.pol.Spec.Kind == paradigm.DSSP || e.pol.Spec.Kind == paradigm.Elastic)
	if timed || charge {
		calls = g.Stats().ControllerCalls
	}
	if timed {
		t0 = e.cfg.Clock()
	}
	rd := e.pol.Pushed(e.now, p)
	searched := (timed || charge) && g.Stats().ControllerCalls > calls
	if timed && searched {
		e.ctrl += e.cfg.Clock().Sub(t0)
	}
	var hold time.Duration
	if searched && charge {
		// The server searches before it releases anyone: the workers
		// wait for the search (the paper's "a large R lengthens training").
		hold = time.Duration(SearchWork(e.pol.Spec, e.live()) * float64(e.cfg.SearchCost))
		e.search += hold
	}
	e.carryOut(rd, hold)
	if e.target > 0 && e.pushes >= e.target {
		e.stopped = true
	}
	if e.auto.on && !e.auto.draining && (e.pushes >= e.auto.planAt || (e.auto.dueAt > 0 && e.now >= e.auto.dueAt)) {
		e.replan()
	}
	if e.cfg.Progress != nil && e.pushes&0xffff == 0 {
		e.cfg.Progress(e.pushes, e.target, e.now)
	}
}

// carryOut does what the policy decided: the applies, then the pulls of
// the workers it released.
func (e *engine) carryOut(rd paradigm.Ready, hold time.Duration) {
	for _, a := range rd.Applies {
		e.apply(a.Shard, a.Apply)
	}
	for _, q := range rd.Released {
		if e.cfg.Trace != nil {
			e.trace(Event{Kind: Release, Worker: q, Clock: e.pol.Gate.Clock(q), Min: e.pol.Gate.Min(), Live: e.live()})
		}
		switch {
		case e.net != nil:
			e.ws[q].releasing = true
			e.q.pushLane(laneLatency, event{at: e.now + hold + e.net.Latency(q, 0), key: mkKey(evRelease, q, 0)})
			continue
		case hold > 0:
			e.ws[q].releasing = true
			e.q.push(event{at: e.now + hold, key: mkKey(evRelease, q, 0)})
			continue
		}
		e.startPull(q)
	}
}

// live is the number of workers the policy still counts: a dead worker stays
// in every set until the heartbeat timeout removes it.
func (e *engine) live() int { return len(e.ws) - e.removed }

func (e *engine) apply(i int, a paradigm.Apply) {
	e.updates++
	if e.net != nil {
		e.net.Apply(e.now, i, e.floats[i])
	}
	s := &e.ss[i]
	for _, c := range a.Grads {
		for int64(len(s.stale)) <= c.Staleness {
			s.stale = append(s.stale, 0)
		}
		if c.Staleness >= 0 {
			s.stale[c.Staleness]++
		}
	}
	if e.cfg.Learner != nil {
		e.cfg.Learner.Apply(e.now, i, a)
	}
	if e.cfg.Trace != nil {
		e.trace(Event{Kind: Update, Shard: i, Version: a.Version, N: len(a.Grads), Live: e.live()})
	}
	// Serve the pulls this version satisfies; the rest keep waiting.
	keep := s.waiting[:0]
	for _, q := range s.waiting {
		switch {
		case e.ws[q].dead:
		case a.Version >= e.pol.Pullers[q].MinVersion(i):
			e.serve(int(q), i)
		default:
			keep = append(keep, q)
		}
	}
	s.waiting = keep
}

func (e *engine) armAggTick(i int) {
	s := &e.ss[i]
	d, ok := e.pol.Aggs[i].Deadline()
	if ok && (!s.armed || s.tickAt != d) {
		s.armed, s.tickAt = true, d
		e.q.push(event{at: d, key: mkKey(evAggTick, 0, i)})
	}
}

func (e *engine) aggTick(i int) {
	s := &e.ss[i]
	if !s.armed || s.tickAt != e.now {
		return
	}
	s.armed = false
	if ok, a := e.pol.Aggs[i].Tick(e.now); ok {
		e.apply(i, a)
	}
	e.armAggTick(i)
}

func (e *engine) fail(p int) {
	w := &e.ws[p]
	if w.dead {
		return
	}
	if !w.computing {
		w.wait += e.now - w.waitFrom
	}
	w.dead, w.diedAt, w.pulling = true, e.now, false
	e.q.push(event{at: e.now + e.cfg.HeartbeatTimeout, key: mkKey(evRemove, p, 0)})
}

func (e *engine) remove(p int) {
	e.removed++
	e.ws[p].gone = true
	if e.cfg.Trace != nil {
		e.trace(Event{Kind: Remove, Worker: p})
	}
	e.carryOut(e.pol.Leave(e.now, p), 0)
	for i := range e.ss {
		e.armAggTick(i)
	}
}
