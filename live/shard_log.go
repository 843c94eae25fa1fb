package live

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/pacer-ps/pacer/live/wal"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/wire"
)

// This file: the shard's durability log (--durability log). Every event
// that changes what the aggregator will decide is logged, under the
// shard's lock and so in the order the shard saw them: each push with its
// gradient (worker, clock, read version, arrival time), each deadline
// that applied, each worker that left or joined, each skip forward. A
// push is acknowledged, and a version handed to a pull, only once the
// records behind it are on disk. Replaying the records through the same
// aggregator code, at their logged times, makes the same decisions, so a
// restored shard reaches the version it last acknowledged, with the same
// weights and the same half-filled round. A checkpoint starts a new
// segment whose head (a base record, then the gradients still buffered)
// lets the older segments go.

// The --durability settings.
const (
	DurabilityCheckpoint = "checkpoint" // updates since the last checkpoint are lost with the process
	DurabilityLog        = "log"        // a push is acknowledged once logged; nothing acknowledged is lost
)

// CheckDurability validates a --durability setting against the checkpoint
// directory the log lives in.
func CheckDurability(d, ckptDir string) error {
	switch d {
	case "", DurabilityCheckpoint:
		return nil
	case DurabilityLog:
		if ckptDir == "" {
			return errors.New("--durability log needs --checkpoint-dir: the log lives beside the checkpoints, which truncate it")
		}
		return nil
	}
	return fmt.Errorf("--durability %q: want %s or %s", d, DurabilityCheckpoint, DurabilityLog)
}

// walDir is shard i's log directory.
func walDir(ckptDir string, i int) string {
	return filepath.Join(ckptDir, fmt.Sprintf("shard-%d.wal", i))
}

// pushMeta is what the log needs to carry a buffered gradient into a new
// segment.
type pushMeta struct {
	worker      int
	clock, read uint64
	now         time.Duration
}

// lastPush is a worker's last logged push: the same push again on another
// connection is a retry (the first was logged, its acknowledgement lost),
// and is acknowledged without being offered twice.
type lastPush struct {
	clock, read uint64
	peer        *wire.Peer // nil: replayed
}

func (s *Shard) walOptions() wal.Options {
	return wal.Options{MaxFloats: s.hi - s.lo, MaxInts: idCap(s.params)}
}

// logRec appends r (lock held). A failure is kept: no push is
// acknowledged after it.
func (s *Shard) logRec(r *wal.Record) {
	if s.wal == nil || s.replaying || s.walErr != nil {
		return
	}
	lsn, err := s.wal.Append(r)
	if err != nil {
		s.walErr = err
		if !errors.Is(err, wal.ErrClosed) { // closed: the server has stopped
			s.log.Error("durability log failed: pushes are refused from now on", "err", err)
		}
		return
	}
	s.lsn = lsn
}

// logEvent logs a record without a gradient (lock held).
func (s *Shard) logEvent(k wal.Kind, now time.Duration, read uint64, ids ...int) {
	if s.wal == nil || s.replaying {
		return
	}
	r := &s.rec
	*r = wal.Record{Kind: k, Now: int64(now), Read: read, Ints: r.Ints[:0]}
	for _, p := range ids {
		r.Ints = append(r.Ints, int32(p))
	}
	s.logRec(r)
}

// logPush logs a push the aggregator was offered (lock held): its
// gradient only if accepted (a dropped one changes only counters).
func (s *Shard) logPush(id uint64, m pushMeta, ok bool, g []float32, carried bool) {
	if s.wal == nil || s.replaying {
		return
	}
	r := &s.rec
	*r = wal.Record{Kind: wal.KindPush, Worker: int32(m.worker), Clock: m.clock, Read: m.read, Now: int64(m.now), Ints: r.Ints[:0]}
	if ok {
		r.Floats = g
	}
	if carried {
		r.Flags = wal.FlagCarried
	}
	s.logRec(r)
	r.Floats = nil
}

// logBase heads a new segment (lock held): the version, the pushes
// counted before the buffered ones, the membership (live ids, then
// −1−id for removed ones), then every gradient still buffered, in
// arrival order.
func (s *Shard) logBase() {
	ids := make([]uint64, 0, len(s.grads))
	for id := range s.grads {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	mem := make([]int, 0, len(s.members))
	for p, live := range s.members {
		if live {
			mem = append(mem, p)
		} else {
			mem = append(mem, -1-p)
		}
	}
	slices.Sort(mem)
	r := &s.rec
	*r = wal.Record{Kind: wal.KindBase, Now: int64(s.now()), Read: s.agg.Version(),
		Clock: uint64(s.stats.Pushes) - uint64(len(ids)), Ints: r.Ints[:0]}
	for _, p := range mem {
		r.Ints = append(r.Ints, int32(p))
	}
	s.logRec(r)
	for _, id := range ids {
		s.logPush(id, s.meta[id], true, s.grads[id], true)
	}
}

// syncLog waits until every record logged up to lsn is durable.
func (s *Shard) syncLog(lsn wal.LSN) error {
	if s.wal == nil {
		return nil
	}
	if err := s.wal.Sync(lsn); err != nil {
		return remoteErr(wire.CodeUnavailable, "shard %d: the durability log failed, nothing can be acknowledged: %v", s.idx, err)
	}
	return nil
}

// isRetry reports a push that repeats the worker's last logged one from
// another connection (lock held).
func (s *Shard) isRetry(peer *wire.Peer, w int, clock, read uint64) bool {
	lp, ok := s.last[w]
	return s.wal != nil && ok && lp.clock == clock && lp.read == read && (lp.peer == nil || lp.peer != peer)
}

// offer gives the aggregator a gradient and carries out its decision (lock
// held). kept says the shard kept g for a later apply (the caller must not
// reuse it).
func (s *Shard) offer(now time.Duration, m pushMeta, g []float32, carried bool) (dropped, kept bool) {
	id := s.nextID
	s.nextID++
	ok, applied, a := s.agg.Push(now, paradigm.Grad{ID: id, Worker: m.worker, Read: m.read, Clock: m.clock})
	s.logPush(id, m, ok, g, carried)
	s.stats.Pushes++
	switch {
	case !ok:
		s.stats.Dropped++
		return true, false
	case applied && len(a.Grads) == 1 && a.Grads[0].ID == id:
		s.apply(a, id, g) // apply on arrival straight from the receive buffer
		delete(s.meta, id)
		return false, false
	default:
		s.grads[id] = g
		if s.logged {
			s.meta[id] = m
		}
		if applied {
			s.apply(a, id, nil)
		}
		return false, true
	}
}

// closeLog closes the durability log, if any (the server has stopped:
// nothing appends any more).
func (s *Shard) closeLog() error {
	if s.wal == nil {
		return nil
	}
	return s.wal.Close()
}

// openLog replays the shard's log when restoring (from the checkpoint's
// segment on, or the whole log when there was no checkpoint) and opens a
// new segment for this incarnation, headed by its base. A fresh start
// begins a new log and deletes an earlier job's.
func (s *Shard) openLog(dir string, restore bool, from uint64, hadCkpt bool) error {
	o := s.walOptions()
	var l *wal.Log
	var err error
	if restore {
		seqs, err := wal.Segments(dir)
		if err != nil {
			return err
		}
		if hadCkpt && from == 0 && len(seqs) > 0 {
			return fmt.Errorf("live: shard %d: the checkpoint was written without a durability log, but %s holds log segments %d–%d: restore with --durability checkpoint, or remove them",
				s.idx, dir, seqs[0], seqs[len(seqs)-1])
		}
		if !hadCkpt || from > 0 {
			if err := s.replay(dir, from, o); err != nil {
				return err
			}
		}
	}
	if seqs, _ := wal.Segments(dir); restore && len(seqs) > 0 {
		l, err = wal.Open(dir, o)
	} else {
		l, err = wal.Start(dir, o)
	}
	if err != nil {
		return err
	}
	if !restore {
		if err := l.RemoveBefore(l.Segment()); err != nil {
			l.Close()
			return err
		}
	}
	s.mu.Lock()
	s.wal = l
	s.logBase()
	lsn := s.lsn
	s.armTick()
	s.mu.Unlock()
	return s.syncLog(lsn)
}
