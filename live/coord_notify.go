package live

import (
	"slices"
	"time"

	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// This file: what the coordinator tells others (releases, the shards'
// membership view, the end of the job) and its counters.

// sendRelease sends Release notices (outside the lock), carrying the
// barrier count and the pushes at it.
func (c *Coordinator) sendRelease(peers []*wire.Peer) {
	if len(peers) == 0 {
		return
	}
	c.mu.Lock()
	b, bp := c.bar, c.barPushes
	c.mu.Unlock()
	release(peers, b, bp)
}

// publish hands the current membership to the shard links (lock held).
func (c *Coordinator) publish() {
	if c.onMembers == nil {
		return
	}
	c.onMembers(c.ms.View())
}

// finish marks the job done at now (a stop request) and returns every
// worker's connection so they can be told.
func (c *Coordinator) finish(now time.Time) []*wire.Peer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ms.Finish(now) {
		c.endSuperstep()
	}
	return c.allPeers()
}

func (c *Coordinator) allPeers() []*wire.Peer {
	var out []*wire.Peer
	for _, m := range c.members {
		if m.peer != nil {
			out = append(out, m.peer)
		}
	}
	return out
}

// Stats returns the coordinator's counters; a running job's Seconds run to
// the time of the call (the one clock read here: a report, decided
// nothing by).
func (c *Coordinator) Stats() proto.CoordStats { return c.statsAt(time.Now()) }

func (c *Coordinator) statsAt(now time.Time) proto.CoordStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	gs := c.gate.Stats()
	nRem, nNever, nJoin := c.ms.Counts()
	st := proto.CoordStats{Pushes: c.ms.Pushes(), Target: c.target, Done: c.ms.Done(), Releases: c.base.Releases + gs.Releases, MaxGap: max(c.base.MaxGap, gs.MaxGap),
		ControllerCalls: c.base.ControllerCalls + gs.ControllerCalls, Restarts: c.restarts, Barriers: c.bar, ControllerSecs: c.ctrl.Seconds(), Removed: nRem, NeverConnected: nNever, Joined: nJoin, Refused: c.refused,
		BatchLossSum: c.lossSum, BatchLosses: c.lossN, Incarnation: c.inc, RestoredFrom: c.from, RestoredLossSum: c.restoredSum, RestoredLosses: c.restoredN,
		Seconds: c.ms.Seconds(now), Live: c.ms.Live()}
	if c.auto != nil {
		st.Decisions, st.Paradigm = slices.Clone(c.auto.decisions), c.auto.cur.String()
	}
	for p, m := range c.members {
		st.WorkerPushes = append(st.WorkerPushes, c.ms.Member(p).Pushes)
		st.WorkerWait = append(st.WorkerWait, float64(m.waitUS)/1e6)
		st.WorkerBusy = append(st.WorkerBusy, float64(m.busyUS)/1e6)
		st.WorkerIter = append(st.WorkerIter, m.iters.Stats())
	}
	return st
}

// release sends Release notices (outside the lock): Tag = the barriers
// ElasticBSP's gate has passed, Extra = the pushes counted at the latest
// (0 and 0 for every other paradigm).
func release(peers []*wire.Peer, barriers uint64, pushes int64) {
	for _, p := range peers {
		f := wire.Frame{Type: wire.MsgRelease, Worker: p.ID(), Tag: barriers, Extra: uint64(max(pushes, 0))}
		p.Send(&f)
	}
}

// shutdown tells workers the job is over.
func shutdown(peers []*wire.Peer) {
	for _, p := range peers {
		f := wire.Frame{Type: wire.MsgShutdown, Worker: p.ID()}
		p.Send(&f)
	}
}

func (c *Coordinator) allPeersLocked() []*wire.Peer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.allPeers()
}
