package live

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// This file: the server's routing. Every request goes through handle, which
// dispatches it by the connection's role (named in its Hello) and the
// frame's type to the shard, the coordinator or the observer's answers;
// the lifecycle (building, running and stopping the server) is server.go.

// connKey names the one connection a role may hold per worker id (-1 for
// the coordinator's link).
type connKey struct {
	role string
	id   int32
}

// controlPayload bounds the frames of every connection but a worker's
// data connection: the largest is a control frame of this job
// (maxControlBytes: the coordinator's membership view), never below what
// a Hello may be.
func controlPayload(p *job.Description) int { return max(wire.MaxHelloPayload, maxControlBytes(p)) }

// maxObservers bounds observer connections per server (pacer train holds
// one per shard; tools a few more).
const maxObservers = 64

// handle serves a request and logs a refusal (rate-limited) with the
// peer's address and role.
func (sv *Server) handle(ctx context.Context, req, resp *wire.Frame) error {
	peer, _ := wire.PeerFrom(ctx)
	start := time.Now()
	err := sv.dispatch(peer, req, resp)
	if err != nil {
		sv.logRefusal(peer, req, err)
	} else if delays(peer, req, resp) {
		if sv.delay != nil {
			sv.delay.hold(ctx, peer.ID())
		}
		// What the worker waited on this shard beyond its reply's bytes
		// (the lock, the log, an emulated delay): pacer profile fits the
		// shard's server delay from it.
		sv.shard.pullServed(time.Since(start))
	}
	return err
}

// logRefusal logs a refused frame; the end of the job is not a refusal.
func (sv *Server) logRefusal(peer *wire.Peer, req *wire.Frame, err error) {
	if wire.CodeOf(err) == wire.CodeShuttingDown {
		return
	}
	msg := "refused request"
	if req.Type == wire.MsgHello {
		msg = "refused hello"
	}
	// A refused Hello has no id yet: the one it asked for is the frame's.
	worker := peer.ID()
	if req.Type == wire.MsgHello {
		worker = req.Worker
	}
	sv.plog.Warn(msg, "peer", peerAddr(peer), "role", peer.Hello().Role, "worker", worker, "type", req.Type.String(), "err", err)
}

// replied is the wire server's hook after a reply is written.
func (sv *Server) replied(p *wire.Peer, resp *wire.Frame) {
	sv.shard.replied(p, resp)
	if sv.endAfter.Load() == p && sv.endAfter.CompareAndSwap(p, nil) {
		go sv.end()
	}
}

func addrString(a net.Addr) string {
	if a == nil {
		return "?"
	}
	return a.String()
}

func peerAddr(p *wire.Peer) string {
	if p == nil || p.RemoteAddr() == nil {
		return "?"
	}
	return p.RemoteAddr().String()
}

// dispatch serves a request by the connection's role.
func (sv *Server) dispatch(peer *wire.Peer, req, resp *wire.Frame) error {
	role := peer.Hello().Role
	if req.Type == wire.MsgHello {
		return sv.hello(peer, role, req, resp)
	}
	if req.Flags != 0 {
		// No request of this protocol sets a flag; only replies do.
		return sv.shard.refuse(wire.CodeProtocol, "%s with flags %#x: requests carry no flags", req.Type, req.Flags)
	}
	switch role {
	case proto.RoleWorker, proto.RoleObserver:
		switch req.Type {
		case wire.MsgPush:
			if role == proto.RoleObserver {
				return sv.shard.refuse(wire.CodeBadRequest, "observers may not push")
			}
			return sv.shard.push(peer, req, resp)
		case wire.MsgPull:
			if role == proto.RoleObserver {
				req.Tag = 0 // an observer's reads never move a restored shard forward
			}
			return sv.shard.pull(peer, req, resp)
		case wire.MsgHeartbeat:
			if role == proto.RoleObserver {
				req.Tag = 0 // as for pulls: an observer never moves a shard forward
			}
			return sv.shard.done(peer, req)
		case wire.MsgControl:
			if role == proto.RoleObserver {
				return sv.observe(peer, req, resp)
			}
			return sv.workerControl(peer, req, resp)
		}
	case proto.RoleControl:
		return sv.control(peer, req, resp)
	case proto.RoleCoordinator:
		if req.Type == wire.MsgControl {
			return sv.coordinatorControl(peer, req, resp)
		}
	}
	return sv.shard.refuse(wire.CodeProtocol, "%s frame not expected on a %s connection", req.Type, role)
}

// coordinatorControl serves the ops the coordinator sends a shard on its
// membership link: members, barrier and end.
func (sv *Server) coordinatorControl(peer *wire.Peer, req, resp *wire.Frame) error {
	c, err := sv.decodeControl(req)
	if err != nil {
		return err
	}
	switch c.Op {
	case proto.OpEnd:
		// The job has ended (shard 0's ExitWhenDone): checkpoint and
		// stop, once this reply is on its way.
		sv.log.Info("the job has ended; stopping", "by", who(peer))
		resp.Type = wire.MsgControl
		sv.endAfter.Store(peer) // the Replied hook stops the server once the reply is out
		return nil
	case proto.OpSwitch:
		if c.Regime == nil {
			return sv.shard.refuse(wire.CodeBadRequest, "switch without a regime")
		}
		if err := sv.shard.switchTo(*c.Regime); err != nil {
			return err
		}
		resp.Type = wire.MsgControl
		return nil
	case proto.OpBarrier:
		if err := sv.shard.barrier(c.Barrier); err != nil {
			return err
		}
		resp.Type = wire.MsgControl
		return nil
	case proto.OpMembers:
		if err := checkView(c.Live, c.Removed, idCap(sv.cfg.Params)); err != nil {
			return sv.shard.refuseErr(err)
		}
		if c.Regime != nil {
			if err := sv.shard.switchTo(*c.Regime); err != nil {
				return err
			}
		}
		sv.shard.setMembers(c.Live, c.Removed, who(peer))
		sv.shard.heardRegime()
		resp.Type = wire.MsgControl
		return nil
	}
	return sv.shard.refuse(wire.CodeBadRequest, "control op %q not expected on a %s connection", c.Op, proto.RoleCoordinator)
}

// decodeControl decodes a Control frame's JSON, refusing one larger than
// any view of this job before decoding it.
func (sv *Server) decodeControl(req *wire.Frame) (proto.Control, error) {
	return sv.decodeControlUpTo(req, maxControlBytes(sv.cfg.Params))
}

// decodeControlUpTo decodes a Control frame's JSON of at most lim bytes.
func (sv *Server) decodeControlUpTo(req *wire.Frame, lim int) (proto.Control, error) {
	var c proto.Control
	if n := len(req.Bytes); n > lim {
		return c, sv.shard.refuse(wire.CodeBadRequest, "control payload of %d bytes exceeds this job's %d", n, lim)
	}
	if err := decodeJSON(req.Bytes, &c); err != nil {
		return c, sv.shard.refuseErr(err)
	}
	return c, nil
}

// who names the peer behind a request, for the log.
func who(p *wire.Peer) string {
	if p == nil {
		return "local"
	}
	return p.Hello().Role + "@" + peerAddr(p)
}

func (sv *Server) hello(peer *wire.Peer, role string, req, resp *wire.Frame) error {
	switch role {
	case proto.RoleWorker:
		if err := sv.checkJob(peer.Hello()); err != nil {
			return sv.shard.refuseErr(err) // logged by handle, with the peer
		}
		if err := sv.shard.admit(req.Worker); err != nil {
			return err
		}
	case proto.RoleObserver, proto.RoleCoordinator:
		if err := sv.checkControl(peer.Hello()); err != nil {
			return sv.shard.refuseErr(err)
		}
		if err := sv.checkJob(peer.Hello()); err != nil {
			return sv.shard.refuseErr(err) // logged by handle, with the peer
		}
		req.Worker = -1 // a control role is no worker
	case proto.RoleControl:
		if sv.coord == nil {
			return sv.shard.refuse(wire.CodeBadRequest, "shard %d does not host the coordinator (shard 0 does)", sv.cfg.Index)
		}
		var hm proto.HelloMeta
		if h := peer.Hello(); len(h.Meta) > 0 {
			if err := decodeJSON(h.Meta, &hm); err != nil {
				return sv.coord.refuse(wire.CodeBadRequest, "worker %d's hello: %v", req.Worker, err)
			}
		}
		info, notify, err := sv.coord.hello(time.Now(), peer, req.Worker, hm.WorkerState)
		if err != nil {
			return err
		}
		if err := setJSON(resp, wire.MsgHelloOK, info.JobInfo); err != nil {
			return err
		}
		resp.Worker = int32(info.ID)
		sv.admit(peer, role, resp.Worker)
		if info.ended {
			// As after the clock report that ends the job: everyone is
			// told, this worker too, and no one released.
			go shutdown(sv.coord.allPeersLocked())
			return nil
		}
		sv.coord.sendRelease(notify)
		return nil
	default:
		return sv.shard.refuse(wire.CodeBadRequest, "unknown role %q", role)
	}
	if err := sv.admit(peer, role, req.Worker); err != nil {
		return err
	}
	if err := setJSON(resp, wire.MsgHelloOK, sv.shard.info()); err != nil {
		return err
	}
	resp.Worker = req.Worker
	return nil
}

// admit bounds a role's connections and the size of the frames they may
// send. A worker id (data or control) and the coordinator's link hold one
// connection each: a newer one replaces the older, which is closed (a
// returning worker reconnects before its old connection times out, and a
// thousand connections under one id pin nothing). Observers are capped at
// maxObservers. Only a worker's data connection may send a whole block.
func (sv *Server) admit(peer *wire.Peer, role string, id int32) error {
	limit := controlPayload(sv.cfg.Params)
	key := connKey{role: role, id: id}
	switch role {
	case proto.RoleObserver:
		sv.connMu.Lock()
		defer sv.connMu.Unlock()
		if len(sv.observers) >= maxObservers {
			return remoteErr(wire.CodeBadRequest, "%d observer connections open already (at most %d)", len(sv.observers), maxObservers)
		}
		sv.observers[peer] = true
		peer.LimitPayload(limit)
		return nil
	case proto.RoleWorker:
		limit = max(limit, sv.shard.maxPush())
	case proto.RoleCoordinator:
		key.id = -1
	}
	peer.LimitPayload(limit)
	sv.connMu.Lock()
	old := sv.conns[key]
	sv.conns[key] = peer
	sv.connMu.Unlock()
	if old != nil && old != peer {
		old.Close()
	}
	return nil
}

// closed is the wire server's hook when a connection ends.
func (sv *Server) closed(peer *wire.Peer) {
	sv.connMu.Lock()
	delete(sv.observers, peer)
	for _, role := range [...]string{proto.RoleWorker, proto.RoleControl, proto.RoleCoordinator} {
		key := connKey{role: role, id: peer.ID()}
		if role == proto.RoleCoordinator {
			key.id = -1
		}
		if sv.conns[key] == peer {
			delete(sv.conns, key)
		}
	}
	sv.connMu.Unlock()
	sv.shard.closed(peer)
}

// control serves a worker's control connection to the coordinator.
func (sv *Server) control(peer *wire.Peer, req, resp *wire.Frame) error {
	p := int(peer.ID())
	if (req.Type == wire.MsgClock || req.Type == wire.MsgHeartbeat) && req.Worker != peer.ID() {
		return sv.coord.refuse(wire.CodeBadRequest, "%s names worker %d on the control connection of worker %d", req.Type, req.Worker, p)
	}
	switch req.Type {
	case wire.MsgClock:
		notify, finished, err := sv.coord.clock(time.Now(), peer, p, clockReportOf(req), resp)
		if err != nil {
			return err
		}
		if finished {
			// The job's last push is counted: the workers this clock would
			// release are told it ended instead. Released, they would
			// compute and push one more round, which the shards (not told
			// yet) could complete and apply after the end.
			go shutdown(sv.coord.allPeersLocked())
			return nil
		}
		sv.coord.sendRelease(notify)
		if now := time.Now(); sv.coord.auto != nil && sv.coord.due(now) {
			// Beside the frame loop: the planner simulates every
			// candidate, and this worker's reply should not wait for it.
			go sv.coord.decide(now)
		}
		return nil
	case wire.MsgHeartbeat:
		sv.coord.heartbeat(time.Now(), peer, p)
		return nil
	}
	return sv.coord.refuse(wire.CodeProtocol, "%s frame not expected on a control connection", req.Type)
}

// observe answers an observer's control request: stats, average (the
// block of the weights' moving average, as a PullResp), or stop.
func (sv *Server) observe(peer *wire.Peer, req, resp *wire.Frame) error {
	c, err := sv.decodeControl(req)
	if err != nil {
		return err
	}
	if len(c.Live) > 0 || len(c.Removed) > 0 {
		return sv.shard.refuse(wire.CodeBadRequest, "an observer's %q request carries a membership view", c.Op)
	}
	switch c.Op {
	case proto.OpStats:
		st := proto.Stats{Shard: sv.shard.Stats()}
		st.Shard.Wire = sv.ws.Stats().Snapshot()
		if sv.coord != nil {
			cs := sv.coord.Stats()
			st.Coord = &cs
		}
		return setJSON(resp, wire.MsgControl, st)
	case proto.OpAverage:
		return sv.average(resp, -1)
	case proto.OpStop:
		if sv.coord == nil {
			return sv.shard.refuse(wire.CodeBadRequest, "stop goes to shard 0")
		}
		sv.plog.Warn("job stopped on request", "by", who(peer))
		shutdown(sv.coord.finish(time.Now()))
		resp.Type = wire.MsgControl
		return nil
	}
	return sv.shard.refuse(wire.CodeBadRequest, "unknown control op %q", c.Op)
}

// workerControl answers the control ops a worker's data connection may
// send: "average" and "buffers". A model pacer does not know (--model
// flat:n=N) is evaluated by its workers, not by shard 0, and they hold the
// job token only; θ̄ tells them no more than the θ they pull anyway. The
// observer's other ops (stats, stop) stay behind the control token.
func (sv *Server) workerControl(peer *wire.Peer, req, resp *wire.Frame) error {
	// A worker's buffers may be larger than any membership view: up to
	// the connection's own frame limit (admit), which bounded the frame.
	c, err := sv.decodeControlUpTo(req, maxWorkerControlBytes(sv.cfg.Params, sv.shard.maxPush()))
	if err != nil {
		return err
	}
	if len(c.Live) > 0 || len(c.Removed) > 0 || c.Barrier != 0 ||
		(c.Op != proto.OpBuffers && (len(c.Buffers) > 0 || len(c.Counters) > 0)) {
		return sv.shard.refuse(wire.CodeBadRequest, "control op %q with fields a worker does not send", c.Op)
	}
	switch c.Op {
	case proto.OpAverage:
		return sv.average(resp, peer.ID())
	case proto.OpBuffers:
		return sv.buffers(peer, c, resp)
	}
	return sv.shard.refuse(wire.CodeBadRequest, "control op %q not expected on a worker connection (a worker may ask for \"average\" and \"buffers\" only)", c.Op)
}

// average answers with the shard's block of the weights' moving average
// (--ema) as a PullResp whose Tag is the shard's version.
func (sv *Server) average(resp *wire.Frame, worker int32) error {
	avg, v, ok := sv.shard.Average()
	if !ok {
		return sv.shard.refuse(wire.CodeBadRequest, "shard %d keeps no moving average: the job runs without --ema", sv.shard.idx)
	}
	// A copy, not the snapshot: nothing for the asker to release.
	resp.Type, resp.Shard, resp.Worker, resp.Tag, resp.Floats = wire.MsgPullResp, uint32(sv.shard.idx), worker, v, avg
	return nil
}

func remoteErr(code wire.ErrorCode, format string, a ...any) error {
	return &wire.RemoteError{Code: code, Message: fmt.Sprintf(format, a...)}
}

func setJSON(f *wire.Frame, t wire.MsgType, v any) error { return f.SetJSON(t, v) }

func decodeJSON(b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return remoteErr(wire.CodeBadRequest, "bad JSON payload: %v", err)
	}
	return nil
}
