package live

import (
	"cmp"

	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// This file: the shard's data plane: pushes, pulls and the ready notices
// of pulls that waited for a version.

// push serves a gradient block. It may take ownership of req.Floats (the
// gradient waits in the aggregator's buffer) and give the connection a
// recycled buffer instead, so a buffered push costs no copy.
func (s *Shard) push(peer *wire.Peer, req, resp *wire.Frame) error {
	if err := s.pushShape(peer, req); err != nil {
		return s.refuseErr(err)
	}
	n, w := s.hi-s.lo, int(req.Worker)
	// Over the wire the server's Floats hook (screenPush) has checked the
	// block as it arrived; a direct call is checked here.
	var large bool
	if peer == nil || !s.screened {
		var err error
		if large, err = screen(req.Floats, 0); err != nil {
			return s.refuse(wire.CodeNonFinite, "shard %d: gradient of worker %d refused: %v", s.idx, w, err)
		}
	} else {
		_, large = s.screenLarge.LoadAndDelete(peer)
	}
	s.mu.Lock()
	if err := s.logReady(); err != nil {
		// Before anything changes: a refused push changes nothing.
		return s.refuseLocked(err)
	}
	if s.awaitRegime {
		// The worker offers the push again until it is taken.
		return s.refuseLocked(remoteErr(wire.CodeUnavailable, "shard %d restarted: waiting for the coordinator to say auto's rule in force", s.idx))
	}
	if err := s.checkHeld("read version", req.Extra); err != nil {
		return s.refuseLocked(err)
	}
	if err := s.checkAhead("clock", req.Tag); err != nil {
		return s.refuseLocked(err)
	}
	s.fastForward(req.Extra)
	if s.isRetry(peer, w, req.Tag, req.Extra) {
		// Logged before its acknowledgement was lost: acknowledge it now,
		// once durable, without offering it twice.
		s.stats.Retries++
	} else {
		m := pushMeta{worker: w, clock: req.Tag, read: req.Extra, now: s.now(), large: large}
		dropped, kept, bad := s.offer(m.now, m, req.Floats, false)
		if dropped {
			resp.Flags = proto.FlagDropped
		}
		if kept {
			req.Floats = s.takeBuf(n)
		}
		if s.logged {
			s.last[w] = lastPush{clock: m.clock, read: m.read, peer: peer}
		}
		if bad {
			// Checked before the acknowledgement: refused. Its version
			// passed as an empty update, which the log replays alike.
			s.armTick()
			notify, lsn := s.takeNotify(), s.lsn
			err := s.refuseLocked(remoteErr(wire.CodeNonFinite, "shard %d: gradient of worker %d refused: applied, it would make the weights non-finite (the update of version %d was skipped)",
				s.idx, w, s.agg.Version()))
			s.sendReady(notify)
			return cmp.Or(s.syncLog(lsn), err) // the skipped version is logged like any other
		}
	}
	if err := s.walErr; err != nil {
		s.logFailed() // undoes this push with the rest
		return s.refuseLocked(s.logRefusal(err))
	}
	s.armTick()
	resp.Type, resp.Shard, resp.Worker = wire.MsgPushAck, uint32(s.idx), req.Worker
	resp.Tag, resp.Extra = s.agg.Version(), s.inc
	notify, lsn := s.takeNotify(), s.lsn
	s.mu.Unlock()
	s.sendReady(notify)
	// The acknowledgement waits for the record (group commit: concurrent
	// pushes share the fsync).
	return s.syncLog(lsn)
}

// pushShape is the error (not yet counted) refusing a push that is not a
// whole block of this shard from the connection's own worker.
func (s *Shard) pushShape(peer *wire.Peer, req *wire.Frame) error {
	if int(req.Shard) != s.idx {
		return remoteErr(wire.CodeBadRequest, "unknown shard %d (this server holds shard %d of %d)", req.Shard, s.idx, s.shards)
	}
	n := s.hi - s.lo
	if req.Offset != 0 || len(req.Floats) != n {
		return remoteErr(wire.CodeBadRequest, "push of %d floats at offset %d: shard %d takes whole blocks of %d",
			len(req.Floats), req.Offset, s.idx, n)
	}
	w := int(req.Worker)
	if w < 0 || w >= maxWorkers || (peer != nil && peer.ID() != req.Worker) {
		return remoteErr(wire.CodeBadRequest, "push names worker %d on a connection of worker %d", w, peerID(peer))
	}
	return nil
}

func peerID(p *wire.Peer) int32 {
	if p == nil {
		return -1
	}
	return p.ID()
}

// pull serves a block read. A pull below its minimum version is answered
// at once as pending; the shard sends a ready notice when the version
// exists, and the worker asks again (a handler never blocks, so one
// connection carries a worker's pushes and pulls alike).
func (s *Shard) pull(peer *wire.Peer, req, resp *wire.Frame) error {
	if int(req.Shard) != s.idx {
		return s.refuse(wire.CodeBadRequest, "unknown shard %d (this server holds shard %d of %d)", req.Shard, s.idx, s.shards)
	}
	n := uint64(s.hi - s.lo)
	off, cnt := req.Offset, uint64(req.Count)
	if cnt == 0 && off == 0 {
		cnt = n
	}
	if off > n || cnt > n-off {
		return s.refuse(wire.CodeBadRequest, "pull of [%d, %d) outside shard %d's block of %d", off, off+cnt, s.idx, n)
	}
	if peer != nil && req.Worker != peer.ID() {
		return s.refuse(wire.CodeBadRequest, "pull names worker %d on a connection of worker %d", req.Worker, peer.ID())
	}
	s.mu.Lock()
	if err := s.checkHeld("held version", req.Tag); err != nil {
		return s.refuseLocked(err)
	}
	if err := s.checkAhead("minimum version", req.Extra); err != nil {
		return s.refuseLocked(err)
	}
	s.pullLocked(peer, req, resp, off, cnt)
	lsn := s.lsn
	s.mu.Unlock()
	// A version is handed out only once the records that made it are
	// durable: a worker never holds a version the log cannot restore.
	return s.syncLog(lsn)
}

// pullLocked answers a checked pull (lock held).
func (s *Shard) pullLocked(peer *wire.Peer, req, resp *wire.Frame, off, cnt uint64) {
	s.fastForward(req.Tag)
	v := s.agg.Version()
	resp.Type, resp.Shard, resp.Worker, resp.Offset = wire.MsgPullResp, uint32(s.idx), req.Worker, off
	resp.Tag, resp.Extra = v, s.inc
	if v < req.Extra {
		resp.Flags = proto.FlagPending
		if peer != nil {
			s.waiters[peer] = req.Extra
		}
		return
	}
	resp.Floats = s.cur.buf[off : off+cnt]
	if peer != nil {
		// Until the reply is written (Shard.replied).
		s.release(peer)
		s.cur.refs++
		s.held[peer] = s.cur
	} else {
		// No connection to release it later (a direct call): copy.
		resp.Floats = append([]float32(nil), resp.Floats...)
	}
}

// done serves a worker's one-way Heartbeat: held is the version the
// worker now holds (it acknowledges each pull reply once it has it all). A
// worker also sends one after reconnecting to a restarted shard, so the
// shard learns how far it had got even from workers that have nothing to
// push or pull yet (held at a BSP gate by a worker that waits for this
// very shard: without it the restored shard waits for their lost
// gradients at an older version, and they wait for the gate).
func (s *Shard) done(peer *wire.Peer, req *wire.Frame) error {
	if int(req.Shard) != s.idx {
		return s.refuse(wire.CodeBadRequest, "heartbeat for shard %d (this server holds shard %d of %d)", req.Shard, s.idx, s.shards)
	}
	if peer != nil && req.Worker != peer.ID() {
		return s.refuse(wire.CodeBadRequest, "heartbeat names worker %d on a connection of worker %d", req.Worker, peer.ID())
	}
	s.mu.Lock()
	if err := s.checkHeld("held version", req.Tag); err != nil {
		return s.refuseLocked(err)
	}
	s.fastForward(req.Tag)
	notify := s.takeNotify()
	s.mu.Unlock()
	s.sendReady(notify)
	return nil
}

func (s *Shard) takeNotify() []waiter {
	if len(s.notifyCh) == 0 {
		return nil
	}
	n := s.notifyCh
	s.notifyCh, s.notifySpare = s.notifySpare[:0], nil
	return n
}

// sendReady tells waiting pulls that their version exists (outside the
// lock). Peer.Send only queues the notice, so a waiter that stopped
// reading delays no one: not the shard, not the push that woke it.
func (s *Shard) sendReady(ws []waiter) {
	if len(ws) == 0 {
		return
	}
	var f wire.Frame
	for _, w := range ws {
		f = wire.Frame{Type: wire.MsgPullResp, Flags: proto.FlagReady, Shard: uint32(s.idx), Worker: w.peer.ID(), Tag: w.min, Extra: s.inc}
		w.peer.Send(&f)
	}
	// The slice takes turns with notifyCh, so rounds allocate none.
	clear(ws)
	s.mu.Lock()
	s.notifySpare = ws[:0]
	s.mu.Unlock()
}
