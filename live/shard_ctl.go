package live

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/pacer-ps/pacer/ckpt"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/optim"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/wal"
)

// This file: the shard's timers, membership, counters and checkpoints.

// armTick schedules the aggregator's τ1 deadline (PSP), if any.
func (s *Shard) armTick() {
	d, ok := s.agg.Deadline()
	if !ok || (s.tickOn && s.tickAt == d) {
		return
	}
	s.tickOn, s.tickAt = true, d
	wait := d - s.now()
	if s.tick == nil {
		// The shard's timer for the deadline agg chose; agg.Tick takes
		// the time as an input when it fires (onTick).
		s.tick = time.AfterFunc(wait, s.onTick)
	} else {
		s.tick.Reset(wait)
	}
}

func (s *Shard) onTick() {
	s.mu.Lock()
	s.tickOn = false
	if d, ok := s.agg.Deadline(); ok && s.now() < d {
		s.armTick() // fired early or the deadline moved
		s.mu.Unlock()
		return
	}
	if now := s.now(); true {
		if ok, a := s.agg.Tick(now); ok {
			s.logEvent(wal.KindTick, now, 0)
			s.apply(a, 0, nil)
		}
	}
	s.armTick()
	notify := s.takeNotify()
	s.mu.Unlock()
	s.sendReady(notify)
}

// setMembers applies the coordinator's view of membership (checked by
// checkView): removed workers leave the aggregator (which may complete a
// round), new ones join. Every change is logged with who sent the view.
func (s *Shard) setMembers(live, removed []int, who string) {
	s.mu.Lock()
	now := s.now()
	var left, joined []int
	for _, p := range removed {
		if s.leave(now, p) {
			left = append(left, p)
		}
	}
	for _, p := range live {
		if s.join(now, p) {
			joined = append(joined, p)
		}
	}
	s.armTick()
	notify := s.takeNotify()
	s.mu.Unlock()
	s.sendReady(notify)
	if len(left) > 0 {
		s.plog.Warn("workers removed from the shard", "shard", s.idx, "workers", left, "by", who)
	}
	if len(joined) > 0 {
		s.plog.Info("workers joined the shard", "shard", s.idx, "workers", joined, "by", who)
	}
}

// leave takes p out of the aggregator, which may complete a round (lock
// held); false if p had left already.
func (s *Shard) leave(now time.Duration, p int) bool {
	if was, ok := s.members[p]; ok && !was {
		return false
	}
	s.members[p] = false
	s.bufs.forget(p)
	s.logEvent(wal.KindLeave, now, 0, p)
	if ok, a := s.agg.Leave(now, p); ok {
		s.apply(a, 0, nil)
	}
	return true
}

// join adds p to the aggregator (lock held); false if it was live.
func (s *Shard) join(now time.Duration, p int) bool {
	if s.members[p] {
		return false
	}
	s.members[p] = true
	s.logEvent(wal.KindJoin, now, 0, p)
	s.agg.Join(now, p)
	return true
}

// Stats returns a copy of the shard's counters.
func (s *Shard) Stats() proto.ShardStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Version = s.agg.Version()
	st.Held = int64(len(s.grads))
	if s.params.Job.Spec.Kind == paradigm.Auto {
		st.Rule = s.spec.String()
	}
	st.Staleness = append([]int64(nil), s.stats.Staleness...)
	if s.wal != nil {
		ws := s.wal.Stats()
		st.LogRecords, st.LogBytes, st.LogFsyncs = ws.Records, ws.Bytes, ws.Syncs
	}
	s.repliesMu.Lock()
	st.PullReplies = s.replies.Stats()
	s.repliesMu.Unlock()
	return st
}

// pullServed counts a worker's pull answered with its block in d.
func (s *Shard) pullServed(d time.Duration) {
	s.repliesMu.Lock()
	s.replies.Add(d.Seconds())
	s.repliesMu.Unlock()
}

// state copies the shard's checkpoint state; nil when nothing changed
// since the last one. Under the durability log it also starts a new
// segment, headed by the state's base, and returns the LSN that makes
// the head durable: the checkpoint covers every earlier segment.
func (s *Shard) state(force bool) (*ckpt.State, wal.LSN, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.dirty && !force {
		return nil, 0, nil
	}
	if s.dur.stale {
		return &ckpt.State{}, 0, errors.New("the durability log failed and the shard could not roll back to it yet: its state is not the log's")
	}
	if err := finiteState(s.cur.buf, s.opt.State(), s.ema); err != nil {
		return &ckpt.State{}, 0, err // a restore would refuse it
	}
	st := &ckpt.State{Meta: ckpt.Meta{Shard: s.idx, Shards: s.shards, Lo: s.lo, Hi: s.hi, NumParams: s.nparams,
		Version: s.agg.Version(), Paradigm: s.params.Job.Spec.String(), Model: s.params.Job.Model},
		Weights: append([]float32(nil), s.cur.buf...)}
	o := s.opt.State()
	st.Velocity, st.Square, st.Mean, st.Step = slices.Clone(o.Velocity), slices.Clone(o.Square), slices.Clone(o.Mean), o.Step
	if k := s.params.Job.Optimizer.Kind; k != optim.SGD {
		st.Optimizer = k.String() // SGD's stays "", as files written before the rules read
	}
	st.Centered = s.params.Job.Optimizer.Centered
	if s.ema != nil {
		st.EMA = append([]float32(nil), s.ema...)
	}
	if s.wal != nil {
		seq, err := s.wal.Rotate()
		if err != nil {
			return st, 0, err
		}
		s.logBase()
		st.LogSegment = seq
	}
	s.dirty = false
	return st, s.lsn, nil
}

// checkpoint writes the shard's state to dir if it changed (or force),
// counting and logging a failure: the previous checkpoint stays intact
// (writes are atomic), but every update since it is at risk until a write
// succeeds (under --durability checkpoint; the log keeps them otherwise).
// Once the checkpoint is durable the log segments it covers are deleted.
func (s *Shard) checkpoint(dir string, force bool) error {
	st, lsn, err := s.state(force)
	if st == nil {
		return nil
	}
	path := ""
	if err == nil {
		err = s.syncLog(lsn) // the new segment's head, before the file that points at it
	}
	if err == nil {
		path, err = ckpt.Write(dir, st)
	}
	s.mu.Lock()
	if err != nil {
		s.dirty = true
		s.stats.CheckpointFailures++
		n, kept := s.stats.CheckpointFailures, "none"
		if s.stats.Checkpoints > 0 || s.stats.Restored {
			kept = fmt.Sprintf("version %d", s.stats.CheckpointVersion)
		}
		s.mu.Unlock()
		// A write needs the old file and the new one side by side.
		s.log.Error("checkpoint failed", "dir", dir, "version", st.Version, "kept_on_disk", kept,
			"failures", n, "needs_bytes", 2*ckpt.Size(st), "err", err)
		return err
	}
	s.stats.Checkpoints++
	s.stats.CheckpointVersion = st.Version
	s.dur.w0 = nil // a roll back starts from the checkpoint now
	s.mu.Unlock()
	s.log.Info("checkpoint written", "path", path, "version", st.Version)
	if s.wal != nil {
		// A failure only leaves old segments behind: replay starts at
		// the checkpoint's segment, and the next checkpoint retries.
		if err := s.wal.RemoveBefore(st.LogSegment); err != nil {
			s.log.Warn("durability log: could not delete segments the checkpoint covers", "err", err)
		}
	}
	return nil
}

// Average copies the shard's block of the weights' moving average (--ema)
// and the version it follows; false when the job keeps none.
func (s *Shard) Average() ([]float32, uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ema == nil {
		return nil, 0, false
	}
	return append([]float32(nil), s.ema...), s.agg.Version(), true
}

// Weights copies the shard's current block (tests and tools).
func (s *Shard) Weights() ([]float32, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]float32(nil), s.cur.buf...), s.agg.Version()
}

// CheckpointWant is what shard index of job p must find in its checkpoint:
// the range the job's model and shard count give it.
func CheckpointWant(p *job.Description, index, nparams int) ckpt.Want {
	r := job.Ranges(nparams, p.Job.Shards)[index]
	return ckpt.Want{Shard: index, Shards: p.Job.Shards, Lo: r[0], Hi: r[1], NumParams: nparams, Model: p.Job.Model}
}
