package sim

import "github.com/pacer-ps/pacer/network"

// This file: a worker's pull, from its requests to each shard through
// the server's (possibly delayed) replies to the transfers that bring the
// blocks back, and the partial pull's deadline.

// startPull begins worker p's pull after a release (or at the start).
func (e *engine) startPull(p int) {
	w := &e.ws[p]
	if w.dead {
		return
	}
	if e.auto.draining {
		return // released under the rule that is ending: it waits for the switch
	}
	w.pulling = true
	if e.net != nil {
		w.enter(phGate, e.now)
		w.srvMax = 0
	}
	pl := e.pol.Pullers[p]
	pl.Start(e.now, w.clock, w.read, w.first)
	w.first = false
	if pl.Ready() {
		e.startCompute(p) // it goes on from its own copy (ElasticBSP local-only)
		return
	}
	// Mark every request outstanding before any is answered inline, so an
	// answer never mistakes the shards not yet asked for answered ones.
	ask := e.ask[:0]
	for i := range e.ss {
		if !w.pending[i] {
			w.pending[i] = true
			ask = append(ask, i)
		}
	}
	e.ask = ask
	for _, i := range ask {
		e.request(p, i)
	}
}

func (e *engine) request(p, i int) {
	e.ws[p].pending[i] = true
	if e.net != nil {
		e.q.pushLane(laneLatency, event{at: e.now + e.net.Latency(p, i), key: mkKey(evPullRequest, p, i)})
		return
	}
	e.pullRequest(p, i)
}

// pullRequest is worker p's pull reaching shard i: answered now, or once
// the version it needs exists.
func (e *engine) pullRequest(p, i int) {
	if e.net != nil {
		e.ws[p].reqAt[i] = e.now
	}
	if e.pol.Aggs[i].Version() >= e.pol.Pullers[p].MinVersion(i) {
		e.serve(p, i)
		return
	}
	e.ss[i].waiting = append(e.ss[i].waiting, int32(p))
}

func (e *engine) serve(p, i int) {
	v := e.pol.Aggs[i].Version()
	if e.cfg.Learner != nil {
		e.cfg.Learner.Serve(e.now, p, i)
	}
	d := e.servers.PullDelay(i*len(e.ws) + p)
	if e.net != nil {
		// The reply waits for the apply in progress (the live shard's
		// lock), then for its own server delay, beside the link: the
		// delay holds this reply only, as the live server holds it
		// outside its lock.
		w := &e.ws[p]
		leave := max(e.now, e.net.ApplyFree(i)) + d
		w.srvMax = max(w.srvMax, e.now-w.reqAt[i]+leave-e.now)
		if leave > e.now {
			e.q.pushLane(laneReply, event{at: leave, key: mkKey(evReply, p, i), v: v})
			return
		}
		e.reply(p, i, v)
		return
	}
	if d > 0 {
		e.q.push(event{at: e.now + d, key: mkKey(evPullArrive, p, i), v: v})
		return
	}
	e.arrive(p, i, v)
}

// reply starts shard i's answer (version v) to worker p on its way.
func (e *engine) reply(p, i int, v uint64) {
	e.transfer(e.net.Pull(e.now, i, p, network.FrameBytes(e.floats[i])), event{key: mkKey(evPullArrive, p, i), v: v})
}

// transfer records the event the arrival of transfer id is.
func (e *engine) transfer(id int32, ev event) {
	for int(id) >= len(e.flowEv) {
		e.flowEv = append(e.flowEv, event{})
	}
	e.flowEv[id] = ev
}

// transfersEnd schedules the arrival of every transfer that ends now, one
// path latency later.
func (e *engine) transfersEnd() {
	e.ended = e.net.Done(e.now, e.ended[:0])
	for _, id := range e.ended {
		ev := e.flowEv[id]
		ev.at = e.now + e.net.Latency(ev.worker(), ev.shard())
		e.q.pushLane(laneLatency, ev)
	}
}

func (e *engine) arrive(p, i int, v uint64) {
	w := &e.ws[p]
	if w.dead {
		return
	}
	w.pending[i] = false
	w.read[i] = v
	if e.cfg.Learner != nil {
		e.cfg.Learner.Deliver(e.now, p, i)
	}
	if !w.pulling {
		return // a late PSP response: it refreshes the copy for the next iteration
	}
	pl := e.pol.Pullers[p]
	if pl.Response(e.now, i, v) {
		if !w.pending[i] && allAnswered(w.pending) {
			e.startCompute(p)
			return
		}
		// Ready on part of its blocks (PSP): the other shards may answer
		// at this same instant, as a real worker would see them, so the
		// compute starts once everything else at this time has run.
		if !w.readyQueued {
			w.readyQueued = true
			e.q.push(event{at: e.now, key: mkKey(evReady, p, 0)})
		}
		return
	}
	if !pl.Fresh(i) {
		e.request(p, i) // left over from an earlier pull: ask again
	}
	e.armPullTick(p)
}

func (e *engine) armPullTick(p int) {
	if d, ok := e.pol.Pullers[p].Deadline(); ok && e.ws[p].tickArmed != d {
		e.ws[p].tickArmed = d
		e.q.push(event{at: d, key: mkKey(evPullTick, p, 0)})
	}
}

func (e *engine) pullTick(p int) {
	w := &e.ws[p]
	if w.dead || !w.pulling {
		return
	}
	if d, ok := e.pol.Pullers[p].Deadline(); !ok || d != e.now {
		return
	}
	if e.pol.Pullers[p].Tick(e.now) {
		e.startCompute(p)
	}
}
