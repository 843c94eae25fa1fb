package live

import (
	"time"

	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/wal"
	"github.com/pacer-ps/pacer/wire"
)

// This file: ElasticBSP apply=local on a shard (PARADIGMS.md §5's
// local-only option). Inside a superstep each worker steps its own copy
// and the shard only buffers the gradients (paradigm.Superstep). The
// coordinator tells every shard each barrier its gate passes (the
// "barrier" op on its membership link; shard 0 directly), and the shard
// applies the superstep then. The workers released at that barrier pull
// the barrier's version, so they wait here for the apply and every one
// starts its next superstep from the average. Every gradient of a
// superstep is here before its barrier: a worker reports its push to the
// gate only once every shard has acknowledged it.

// barrier applies the supersteps up to the gate's b-th barrier (b: the
// count the coordinator sent; the latest only, so it may skip).
func (s *Shard) barrier(b uint64) error {
	s.mu.Lock()
	ss, ok := s.agg.(paradigm.Superstep)
	if !ok {
		return s.refuseLocked(remoteErr(wire.CodeBadRequest, "barrier %d sent to shard %d, whose paradigm %s applies without barriers (only elastic apply=local has them)",
			b, s.idx, s.params.Job.Spec))
	}
	if err := s.checkAhead("barrier", b); err != nil {
		return s.refuseLocked(err)
	}
	s.barrierLocked(ss, s.now(), b)
	s.armTick()
	notify, lsn := s.takeNotify(), s.lsn
	s.mu.Unlock()
	s.sendReady(notify)
	return s.syncLog(lsn)
}

// barrierLocked brings the shard to version b (lock held). A shard more
// than one barrier behind (restored from an older checkpoint while the
// job went on) has lost the supersteps between: it skips forward to b−1,
// as when a worker tells it of a version it had reached, and applies what
// it has buffered as the b-th.
func (s *Shard) barrierLocked(ss paradigm.Superstep, now time.Duration, b uint64) {
	v := s.agg.Version()
	if b <= v {
		return // an older count, resent after a reconnect
	}
	if b-1 > v {
		s.fastForward(b - 1)
	}
	s.logEvent(wal.KindBarrier, now, b)
	if a := ss.Barrier(); len(a.Grads) > 0 {
		s.apply(a, 0, nil)
	} else {
		// An empty superstep (the job ended right at a gate barrier):
		// nothing to apply, as virtual time's Policy.Finish applies
		// nothing; the version still counts the barrier.
		s.dirty = true
		s.wake(a.Version)
	}
	s.superEpoch = s.epoch()
}
