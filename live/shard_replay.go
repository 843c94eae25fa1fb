package live

import (
	"fmt"
	"time"

	"github.com/pacer-ps/pacer/ckpt"
	"github.com/pacer-ps/pacer/internal/kernel"
	"github.com/pacer-ps/pacer/optim"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/wal"
)

// This file: a restoring shard replays its durability log through the
// code that made the decisions the first time (offer, leave, join, the
// aggregator's Tick, fastForward), at the times the records carry.

// replay applies dir's log from segment from on top of the restored
// checkpoint (or w⁰). Every segment begins with its base; the first one
// read sets the membership and the push count, later ones must agree
// with the version the replay has reached, and their carried gradients
// were replayed already.
func (s *Shard) replay(dir string, from uint64, o wal.Options) error {
	return s.replayWith(dir, func(fn func(uint64, *wal.Record) error) (wal.ReplayInfo, error) {
		return wal.Replay(dir, from, o, fn)
	})
}

// replayWith is replay with the reader given (a live log's synced part
// when the shard rolls back to it).
func (s *Shard) replayWith(dir string, read func(func(uint64, *wal.Record) error) (wal.ReplayInfo, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replaying = true
	defer func() { s.replaying = false }()
	var last time.Duration
	var firstSeq, seq uint64
	v0 := s.agg.Version()
	info, err := read(func(sq uint64, r *wal.Record) error {
		now := time.Duration(r.Now)
		last = max(last, now)
		if sq != seq {
			seq = sq
			if firstSeq == 0 {
				firstSeq = sq
			}
			if r.Kind != wal.KindBase {
				return fmt.Errorf("segment %d begins with a %s record, not its base", sq, r.Kind)
			}
		}
		s.stats.Replayed++
		return s.replayRecord(r, now, sq == firstSeq)
	})
	if err != nil {
		return fmt.Errorf("live: shard %d: replaying the durability log in %s (record %d): %w", s.idx, dir, s.stats.Replayed, err)
	}
	// The shard's clock goes on from the last logged time: deadlines
	// replayed (PSP's τ1) keep their meaning.
	s.start = time.Now().Add(-last)
	s.log.Info("durability log replayed", "dir", dir, "segments", info.Segments, "records", info.Records,
		"from_version", v0, "version", s.agg.Version(), "torn_bytes", info.TornBytes)
	if info.TornAt >= 0 {
		s.log.Warn("durability log: torn tail cut off (records never acknowledged)", "dir", dir, "at", info.TornAt, "bytes", info.TornBytes)
	}
	return nil
}

func (s *Shard) replayRecord(r *wal.Record, now time.Duration, first bool) error {
	switch r.Kind {
	case wal.KindBase:
		if v := s.agg.Version(); r.Read != v {
			return fmt.Errorf("a segment begins at version %d, the replay is at %d", r.Read, v)
		}
		if !first {
			return nil
		}
		s.stats.Pushes = int64(r.Clock)
		for _, x := range r.Ints {
			p := int(x)
			if p < 0 {
				p = -1 - p
			}
			if p >= idCap(s.params) {
				return fmt.Errorf("base names worker %d outside [0, %d)", p, idCap(s.params))
			}
			if x >= 0 {
				s.join(now, p)
			} else {
				s.leave(now, p)
			}
		}
	case wal.KindPush:
		if r.Flags&wal.FlagCarried != 0 && !first {
			return nil
		}
		m := pushMeta{worker: int(r.Worker), clock: r.Clock, read: r.Read, now: now,
			large: kernel.FirstAtLeast(r.Floats, optim.SmallBits) >= 0}
		if m.worker < 0 || m.worker >= idCap(s.params) {
			return fmt.Errorf("push of worker %d outside [0, %d)", m.worker, idCap(s.params))
		}
		var g []float32
		if n := s.hi - s.lo; len(r.Floats) > 0 {
			if len(r.Floats) != n {
				return fmt.Errorf("push of %d floats to a block of %d", len(r.Floats), n)
			}
			g = append(s.takeBuf(n), r.Floats...)
		}
		dropped, kept, _ := s.offer(now, m, g, false)
		if dropped != (g == nil) {
			return fmt.Errorf("worker %d's push (clock %d, read %d) was %s when logged and is %s now", m.worker, m.clock, m.read,
				acceptedIf(g != nil), acceptedIf(!dropped))
		}
		if g != nil && !kept {
			s.recycle(g)
		}
		s.last[m.worker] = lastPush{clock: m.clock, read: m.read}
	case wal.KindTick:
		ok, a := s.agg.Tick(now)
		if !ok {
			return fmt.Errorf("a deadline at %s applied when logged and does not now", now)
		}
		s.apply(a, 0, nil)
	case wal.KindLeave, wal.KindJoin:
		for _, x := range r.Ints {
			if x < 0 || int(x) >= idCap(s.params) {
				return fmt.Errorf("%s of worker %d outside [0, %d)", r.Kind, x, idCap(s.params))
			}
			if r.Kind == wal.KindLeave {
				s.leave(now, int(x))
			} else {
				s.join(now, int(x))
			}
		}
	case wal.KindBarrier:
		ss, ok := s.agg.(paradigm.Superstep)
		if !ok || r.Read != s.agg.Version()+1 {
			return fmt.Errorf("barrier %d logged; the replay is at version %d (local steps %v)", r.Read, s.agg.Version(), ok)
		}
		s.barrierLocked(ss, now, r.Read)
	case wal.KindSkip:
		if r.Read > ckpt.MaxVersion {
			return fmt.Errorf("skip to version %d, beyond any job's (at most %d)", r.Read, uint64(ckpt.MaxVersion))
		}
		s.fastForward(r.Read)
	}
	return nil
}

func acceptedIf(ok bool) string {
	if ok {
		return "accepted"
	}
	return "dropped"
}
