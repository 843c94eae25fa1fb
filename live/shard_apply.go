package live

import (
	"github.com/pacer-ps/pacer/internal/hugemem"
	"github.com/pacer-ps/pacer/optim"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/wal"
	"github.com/pacer-ps/pacer/wire"
)

// This file: how a shard applies updates: copy-on-write snapshots that
// pull replies point into, gradient buffers, and skipping the version
// forward after a restore.

// release drops the snapshot reference of peer's pull reply (the wire
// server has written it, or the connection closed); an unreferenced old
// snapshot becomes a spare for the next copy on write.
func (s *Shard) release(peer *wire.Peer) {
	sn := s.held[peer]
	if sn == nil {
		return
	}
	delete(s.held, peer)
	sn.refs--
	if sn.refs == 0 && sn != s.cur && len(s.spare) < 2 {
		s.spare = append(s.spare, sn)
	}
}

// replied is the wire server's hook after a reply has been written: a
// pull reply's snapshot is free again, and the connection's reply frame
// lets go of it (it would otherwise keep the old block reachable).
func (s *Shard) replied(peer *wire.Peer, resp *wire.Frame) {
	if resp.Type != wire.MsgPullResp || cap(resp.Floats) == 0 {
		return
	}
	resp.Floats = nil
	s.mu.Lock()
	s.release(peer)
	s.mu.Unlock()
}

// closed forgets a connection that has ended: its snapshot reference (a
// reply whose write failed) and its pending pull.
func (s *Shard) closed(peer *wire.Peer) {
	s.screenLarge.Delete(peer)
	s.mu.Lock()
	s.release(peer)
	delete(s.waiters, peer)
	s.mu.Unlock()
}

// writable returns the block to apply into: the current snapshot, or a
// fresh copy of it when a pull reply is being written from it.
func (s *Shard) writable() []float32 {
	if s.cur.refs == 0 {
		return s.cur.buf
	}
	s.stats.CopyOnWrite++
	var ns *snapshot
	if k := len(s.spare); k > 0 {
		ns, s.spare = s.spare[k-1], s.spare[:k-1]
	} else {
		ns = &snapshot{buf: hugemem.Floats(len(s.cur.buf))}
	}
	copy(ns.buf, s.cur.buf)
	s.cur = ns
	return ns.buf
}

func (s *Shard) takeBuf(n int) []float32 {
	if k := len(s.free); k > 0 {
		b := s.free[k-1]
		s.free = s.free[:k-1]
		return b[:0]
	}
	return nil
}

// apply carries out an aggregator's apply; self/g name the gradient that
// is still in the receive buffer (not stored), if any. An update that
// would make a weight (or the optimizer's state) NaN or ±Inf is skipped:
// the version moves, the weights stay; it is counted and logged, and
// apply returns false. A replay skips the same updates, the apply being
// deterministic.
func (s *Shard) apply(a paradigm.Apply, self uint64, g []float32) bool {
	s.gs, s.ws = s.gs[:0], s.ws[:0]
	large := false
	for _, c := range a.Grads {
		large = large || s.split.large[c.ID]
		if g != nil && c.ID == self {
			s.gs = append(s.gs, g)
		} else {
			s.gs = append(s.gs, s.grads[c.ID])
		}
		s.ws = append(s.ws, float32(c.Weight))
		if c.Staleness >= 0 {
			// The histogram grows with the staleness seen, never past
			// maxStaleness, whatever version a gradient names.
			st := min(c.Staleness, maxStaleness)
			for int64(len(s.stats.Staleness)) <= st {
				s.stats.Staleness = append(s.stats.Staleness, 0)
			}
			s.stats.Staleness[st]++
		}
	}
	if s.noise != nil {
		s.noise.Add(s.gs)
	}
	j := &s.params.Job
	epoch := s.epoch()
	if s.spec.LocalSteps() {
		// The superstep's rate is the one its workers' local steps used:
		// the rate at its start (virtual time's rule).
		epoch = s.superEpoch
	}
	lr := j.StepSizeUnder(s.spec, a, epoch)
	prev := s.cur
	w := s.writable()
	s.split.kept = s.cur != prev
	// Nothing to save when no input can overflow: the last apply left
	// every value below 2⁴⁰, and so are the gradients (screened).
	s.split.fast = s.split.small && !large && s.opt.FastOK(s.ws, float32(lr))
	ok := s.applyWeighted(w, s.gs, s.ws, float32(lr))
	if !ok {
		if s.cur != prev {
			// The copy is dropped; the pulls still sending prev keep it.
			if len(s.spare) < 2 {
				s.spare = append(s.spare, s.cur)
			}
			s.cur = prev
		}
		s.stats.NonFiniteUpdates++
		workers := make([]int, len(a.Grads))
		for i, c := range a.Grads {
			workers[i] = c.Worker
		}
		s.plog.Warn("update skipped: it would make the weights non-finite", "shard", s.idx, "version", a.Version,
			"workers", workers, "skipped", s.stats.NonFiniteUpdates)
	} else if s.ema != nil {
		now := s.now()
		optim.EMA(s.ema, s.cur.buf, j.EMADecay(now-s.emaAt))
		s.emaAt = now
	}
	for _, c := range a.Grads {
		delete(s.split.large, c.ID)
		if b, ok := s.grads[c.ID]; ok {
			delete(s.grads, c.ID)
			delete(s.meta, c.ID)
			s.recycle(b)
		}
	}
	if ok {
		s.stats.Updates++
	}
	s.stats.Applied += int64(len(a.Grads))
	s.dirty = true
	s.wake(a.Version)
	return ok
}

// wake readies the pulls waiting for version v or older (lock held).
func (s *Shard) wake(v uint64) {
	for p, m := range s.waiters {
		if m <= v {
			s.notifyCh = append(s.notifyCh, waiter{p, v})
			delete(s.waiters, p)
		}
	}
}

// epoch is how far the job is, in epochs (fractional), by the pushes this
// shard has counted (lock held).
func (s *Shard) epoch() float64 {
	if s.params.TrainN <= 0 {
		return 0
	}
	return float64(s.stats.Pushes*int64(s.params.Job.Batch)) / float64(s.params.TrainN)
}

func (s *Shard) recycle(b []float32) {
	if len(s.free) < s.maxFree {
		s.free = append(s.free, b)
	}
}

// fastForward moves the version past what a worker has read: a shard that
// restarted from an older checkpoint learns this way how far it had got
// before it died (within one incarnation a worker never holds a version the
// shard has not reached). The lost updates are gone; the weights stay.
func (s *Shard) fastForward(read uint64) {
	v := s.agg.Version()
	if read <= v {
		return
	}
	s.logEvent(wal.KindSkip, s.now(), read)
	s.discard(s.agg.Reset(read, s.dropIDs[:0]))
	s.stats.Skipped += read - v
	s.plog.Warn("version skipped forward after a restart", "shard", s.idx, "from", v, "to", read)
	for p, m := range s.waiters {
		if m <= read {
			s.notifyCh = append(s.notifyCh, waiter{p, read})
			delete(s.waiters, p)
		}
	}
}
