package live

import (
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/wire"
)

// This file: --paradigm auto's switch on a shard (coord_auto.go says how
// the coordinator drives it). Every worker is parked at the gate with its
// pushes acknowledged when the switch arrives, so the aggregator holds
// all that it will ever get under its rule.

// switchTo continues the shard under regime r: what the old rule holds is
// applied as that rule would apply it (paradigm.Flusher: a partial BSP or
// backup round, a softsync buffer), then the new rule's aggregator takes
// over at r's base version with the shard's membership. A regime the
// shard has (resent after a reconnect) changes nothing.
func (s *Shard) switchTo(r proto.Regime) error {
	if s.params.Job.Spec.Kind != paradigm.Auto {
		return s.refuse(wire.CodeBadRequest, "switch sent to shard %d, whose paradigm %s is not auto", s.idx, s.params.Job.Spec)
	}
	spec, err := paradigm.Parse(r.Paradigm)
	if err != nil || !s.params.Job.Spec.HasCandidate(spec) {
		return s.refuse(wire.CodeBadRequest, "switch to %q: not one of this job's auto candidates (%s)", r.Paradigm, s.params.Job.Spec)
	}
	s.mu.Lock()
	if r.Gen <= s.gen {
		s.mu.Unlock()
		return nil
	}
	if err := s.checkAhead("switch base", r.Base); err != nil {
		return s.refuseLocked(err)
	}
	agg, err := paradigm.NewAggregator(spec, paradigm.Config{Workers: s.params.Job.Workers, Shards: s.shards}, s.idx)
	if err != nil {
		s.mu.Unlock()
		return s.refuse(wire.CodeBadRequest, "switch to %s: %v", spec, err)
	}
	now := s.now()
	if f, ok := s.agg.(paradigm.Flusher); ok {
		if applied, a := f.Flush(now); applied {
			s.apply(a, 0, nil)
		}
	}
	v := max(s.agg.Version(), r.Base)
	// What the old rule could not flush (none among the candidates live
	// modes take) is dropped and counted.
	n := s.stats.Dropped
	s.discard(s.agg.Reset(v, s.dropIDs[:0]))
	s.stats.SwitchDropped += s.stats.Dropped - n
	for p, live := range s.members {
		switch {
		case !live && p < s.params.Job.Workers:
			agg.Leave(now, p)
		case live && p >= s.params.Job.Workers:
			agg.Join(now, p)
		}
	}
	agg.Reset(v, nil)
	from := s.spec
	s.agg, s.spec, s.gen = agg, spec, r.Gen
	s.stats.Switches++
	s.dirty = true
	s.wake(v)
	s.armTick()
	notify := s.takeNotify()
	s.mu.Unlock()
	s.sendReady(notify)
	s.plog.Info("paradigm switched", "shard", s.idx, "from", from.String(), "to", spec.String(), "version", v, "generation", r.Gen)
	return nil
}

// heardRegime records that the coordinator's view came, with auto's
// regime if one was in force: a restarted shard takes pushes from now.
func (s *Shard) heardRegime() {
	s.mu.Lock()
	s.awaitRegime = false
	s.mu.Unlock()
}

// discard frees the gradients an aggregator's Reset dropped and counts
// them (lock held).
func (s *Shard) discard(ids []uint64) {
	s.dropIDs = ids
	for _, id := range ids {
		delete(s.split.large, id)
		if b, ok := s.grads[id]; ok {
			delete(s.grads, id)
			delete(s.meta, id)
			s.recycle(b)
		}
	}
	s.stats.Dropped += int64(len(ids))
}

// readNoise is the gradient noise scale shard 0 measured since the last
// reading (gradnoise: its block alone, a sample of the coordinates), in
// gradients.
func (s *Shard) readNoise() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.noise.Read()
}
