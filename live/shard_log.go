package live

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/pacer-ps/pacer/ckpt"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/wal"
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

// CheckAutoDurability refuses --durability log for a --paradigm auto job:
// the log does not record auto's switches, so a replay would run the
// first candidate's rule over another's events.
func CheckAutoDurability(sp paradigm.Spec, d string) error {
	if sp.Kind == paradigm.Auto && d == DurabilityLog {
		return fmt.Errorf("--durability log with --paradigm auto: the log does not record auto's switches yet; use --durability %s", DurabilityCheckpoint)
	}
	return nil
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
	large       bool // a value of 2⁴⁰ or more: its apply saves what it overwrites
}

// lastPush is a worker's last logged push: the same push again on another
// connection is a retry (the first was logged, its acknowledgement lost),
// and is acknowledged without being offered twice.
type lastPush struct {
	clock, read uint64
	peer        *wire.Peer // nil: replayed
}

func (s *Shard) walOptions() wal.Options {
	return wal.Options{MaxFloats: s.hi - s.lo, MaxInts: idCap(s.params), OpenFile: s.dur.openFile}
}

// logRec appends r (lock held). A failure is kept until the shard has
// rolled back to what the log holds (logFailed). While the log is down
// nothing is appended: the change r records is rolled back with the rest.
func (s *Shard) logRec(r *wal.Record) {
	if s.wal == nil || s.replaying {
		return
	}
	if s.walErr != nil || s.dur.down {
		s.dur.stale = true
		return
	}
	lsn, err := s.wal.Append(r)
	if err != nil {
		s.walErr = err
		s.dur.stale = true
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

// syncLog waits until every record logged up to lsn is durable. A
// failure rolls the shard back to what the log holds (the refused
// request changed nothing); the first success after one ends the outage.
func (s *Shard) syncLog(lsn wal.LSN) error {
	if s.wal == nil {
		return nil
	}
	if err := s.wal.Sync(lsn); err != nil {
		s.mu.Lock()
		if (s.walErr != nil || s.wal.Err() != nil) && !s.dur.down {
			s.logFailed()
		}
		s.mu.Unlock()
		return remoteErr(wire.CodeUnavailable, "shard %d: the durability log failed, nothing can be acknowledged: %v", s.idx, err)
	}
	if s.dur.probing.Load() {
		s.mu.Lock()
		if s.dur.probing.Load() && !s.dur.down {
			s.dur.probing.Store(false)
			s.dur.backoff = 0
			s.log.Info("durability log recovered: pushes are accepted again", "failures", s.stats.LogFailures)
		}
		s.mu.Unlock()
	}
	return nil
}

// durState is how a shard lives through a failing log (a full disk): it
// refuses pushes, rolls its state back to what the log holds, and lets a
// push through now and then to find out whether the disk takes writes
// again.
type durState struct {
	dir string    // the log's directory
	w0  []float32 // the block's w⁰: what a roll back starts from until a checkpoint exists
	// down: pushes are refused until retryAt (the shard's clock); stale:
	// the state may hold changes the log does not (roll back first).
	down, stale bool
	retryAt     time.Duration
	backoff     time.Duration
	// view: the coordinator's membership as the shard last had it before
	// a roll back (base: what the roll back left), applied once the log
	// takes writes again.
	view, base map[int]bool
	// probing: a push was let through after a failure; its sync's
	// success ends the outage.
	probing atomic.Bool
	// retryMin and retryMax bound the wait between probes (0: the
	// defaults; retryMin < 0: none; tests set them).
	retryMin, retryMax time.Duration
	// openFile opens the log's segments (nil: the OS's; tests inject
	// failing writes).
	openFile func(string, int, os.FileMode) (wal.File, error)
}

const (
	logRetryMin = 50 * time.Millisecond
	logRetryMax = 5 * time.Second
)

// logRefusal is the error a push gets while the log is down.
func (s *Shard) logRefusal(cause error) error {
	return remoteErr(wire.CodeUnavailable, "shard %d: the durability log failed, nothing can be acknowledged: %v", s.idx, cause)
}

// logReady is nil when the shard may accept a push (lock held): the log
// works, or the outage's backoff has passed and the log, cut back to its
// synced end, takes this push as the probe. A failure noticed here is
// handled as syncLog's are.
func (s *Shard) logReady() error {
	if s.wal == nil {
		return nil
	}
	if s.walErr != nil || s.wal.Err() != nil {
		if !s.dur.down {
			s.logFailed()
		}
	}
	if !s.dur.down {
		return nil
	}
	now := s.now()
	if now < s.dur.retryAt {
		return s.logRefusal(errors.New("waiting to retry it"))
	}
	if s.dur.stale {
		if err := s.rollBack(); err != nil {
			s.dur.retryAt = now + s.nextBackoff()
			return s.logRefusal(err)
		}
	}
	lsn, err := s.wal.Recover()
	if err != nil {
		s.dur.retryAt = now + s.nextBackoff()
		return s.logRefusal(err)
	}
	s.lsn, s.walErr, s.dur.down = lsn, nil, false
	// The coordinator's membership since the log failed, logged now.
	for p, live := range s.dur.view {
		isLive, in := s.members[p]
		switch {
		case live && !isLive:
			s.join(now, p)
		case !live && (!in || isLive):
			s.join(now, p)
			s.leave(now, p)
		}
	}
	s.dur.view = nil
	s.armTick()
	s.dur.probing.Store(true)
	return nil
}

// logFailed handles a failed write or fsync (lock held): it is counted
// and logged, and the shard rolls back to what the log holds at once, so
// the pushes refused for it change nothing.
func (s *Shard) logFailed() {
	err := cmp.Or(s.walErr, s.wal.Err())
	if errors.Is(err, wal.ErrClosed) {
		return // the server has stopped
	}
	if !s.dur.down && !s.dur.probing.Load() { // a probe that fails is the same outage
		s.stats.LogFailures++
		s.log.Error("durability log failed: pushes are refused until it takes writes again", "failures", s.stats.LogFailures, "err", err)
	}
	s.dur.down, s.dur.stale = true, true
	s.dur.probing.Store(false)
	s.dur.retryAt = s.now() + s.nextBackoff()
	if err := s.rollBack(); err != nil {
		s.log.Error("durability log: rolling back to what it holds failed; retrying", "err", err)
	}
}

func (s *Shard) nextBackoff() time.Duration {
	if s.dur.retryMin < 0 {
		return 0
	}
	lo, hi := cmp.Or(s.dur.retryMin, logRetryMin), cmp.Or(s.dur.retryMax, logRetryMax)
	s.dur.backoff = min(max(2*s.dur.backoff, lo), hi)
	return s.dur.backoff
}

// rollBack brings the shard's state back to what its log holds on disk
// (lock held; it reads, never writes): rebuilt from the checkpoint (or
// w⁰) and the log's synced part, as a restore would. The coordinator's
// membership views received since are kept to be applied, and logged,
// once the log takes writes again: they are not the shard's to forget.
func (s *Shard) rollBack() error {
	ns, err := s.rebuilt()
	if err != nil {
		return err
	}
	if s.dur.view == nil {
		s.dur.view = maps.Clone(s.members)
	} else {
		for p, live := range s.members { // views since the last roll back
			if was, ok := s.dur.base[p]; !ok || was != live {
				s.dur.view[p] = live
			}
		}
	}
	s.adopt(ns)
	s.lsn = s.wal.Durable() // pulls are served what the log holds
	s.dur.base = maps.Clone(s.members)
	s.dur.stale = false
	s.armTick()
	s.log.Warn("durability log: the shard rolled back to what the log holds", "version", s.agg.Version())
	return nil
}

// rebuilt is the shard restored from its checkpoint (or w⁰) and the log's
// synced part.
func (s *Shard) rebuilt() (*Shard, error) {
	cfg := ShardConfig{Index: s.idx, Params: s.params, Restarted: true, Logger: s.log}
	var from uint64
	path := ckpt.Path(filepath.Dir(s.dur.dir), s.idx)
	st, err := ckpt.Read(path, CheckpointWant(s.params, s.idx, s.nparams))
	switch {
	case err == nil:
		cfg.Restore, from = st, st.LogSegment
	case errors.Is(err, os.ErrNotExist) && s.dur.w0 != nil:
		cfg.Init = make([]float32, s.nparams)
		copy(cfg.Init[s.lo:s.hi], s.dur.w0)
	default:
		return nil, fmt.Errorf("live: shard %d: rolling back to the log: %w", s.idx, err)
	}
	ns, err := newShard(cfg)
	if err != nil {
		return nil, err
	}
	ns.logged = true
	err = ns.replayWith(s.dur.dir, func(fn func(uint64, *wal.Record) error) (wal.ReplayInfo, error) {
		return s.wal.ReplaySynced(from, fn)
	})
	if err != nil {
		return nil, err
	}
	return ns, nil
}

// adopt takes ns's state (lock held): what the aggregator decided, the
// weights and the optimizer's state, the buffered gradients, membership
// and the counters a replay rebuilds. Connections, pulls in flight and
// the other counters stay.
func (s *Shard) adopt(ns *Shard) {
	s.agg, s.opt, s.split = ns.agg, ns.opt, splitApply{large: ns.split.large}
	if s.cur.refs == 0 {
		copy(s.cur.buf, ns.cur.buf)
	} else {
		s.cur = ns.cur // the old one goes to the spares once its replies are out
	}
	s.ema, s.superEpoch = ns.ema, ns.superEpoch
	for _, b := range s.grads {
		s.recycle(b)
	}
	s.grads, s.meta, s.last, s.nextID, s.members = ns.grads, ns.meta, ns.last, ns.nextID, ns.members
	s.stats.Pushes, s.stats.Updates, s.stats.Dropped = ns.stats.Pushes, ns.stats.Updates, ns.stats.Dropped
	s.stats.Skipped, s.stats.Staleness = ns.stats.Skipped, ns.stats.Staleness
	s.dirty = true
	if s.tick != nil {
		s.tick.Stop()
	}
	s.tickOn = false
}

// isRetry reports a push that repeats the worker's last logged one from
// another connection (lock held).
func (s *Shard) isRetry(peer *wire.Peer, w int, clock, read uint64) bool {
	lp, ok := s.last[w]
	return s.wal != nil && ok && lp.clock == clock && lp.read == read && (lp.peer == nil || lp.peer != peer)
}

// offer gives the aggregator a gradient and carries out its decision (lock
// held). kept says the shard kept g for a later apply (the caller must not
// reuse it); bad that g was applied on arrival and the update skipped, as
// it would have made the weights non-finite (the push is refused).
func (s *Shard) offer(now time.Duration, m pushMeta, g []float32, carried bool) (dropped, kept, bad bool) {
	if !s.logged {
		s.dur.w0 = nil // only a log rolls back
	}
	id := s.nextID
	s.nextID++
	ok, applied, a := s.agg.Push(now, paradigm.Grad{ID: id, Worker: m.worker, Read: m.read, Clock: m.clock})
	s.logPush(id, m, ok, g, carried)
	s.stats.Pushes++
	if ok && m.large {
		if s.split.large == nil {
			s.split.large = map[uint64]bool{}
		}
		s.split.large[id] = true
	}
	switch {
	case !ok:
		s.stats.Dropped++
		return true, false, false
	case applied && len(a.Grads) == 1 && a.Grads[0].ID == id:
		ok := s.apply(a, id, g) // apply on arrival straight from the receive buffer
		delete(s.meta, id)
		return false, false, !ok
	default:
		s.grads[id] = g
		if s.logged {
			s.meta[id] = m
		}
		if applied {
			s.apply(a, id, nil)
		}
		return false, true, false
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
	s.wal, s.dur.dir = l, dir
	s.logBase()
	lsn := s.lsn
	s.armTick()
	s.mu.Unlock()
	return s.syncLog(lsn)
}
