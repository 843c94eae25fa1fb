package live

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// memberLink delivers the coordinator's latest membership view to one
// shard, redialling and resending until it lands. Views are complete, so
// delivering only the latest one is enough. At the end of a job that ends
// by itself it also tells the shard so (endJob), on the same connection:
// a second coordinator connection would replace this one.
type memberLink struct {
	sv    *Server
	shard int
	addr  string
	wake  chan struct{}

	mu        sync.Mutex
	live, rem []int
	gen       uint64
	bar       uint64        // the gate's barrier count (elastic apply=local), delivered after the view
	reg       proto.Regime  // auto's regime in force, delivered after the view (Gen 0: none yet)
	end       bool          // the job has ended: tell the shard
	ended     chan struct{} // closed once the shard has acknowledged the end
}

func (l *memberLink) set(live, rem []int) {
	l.mu.Lock()
	l.live, l.rem = append([]int(nil), live...), append([]int(nil), rem...)
	l.gen++
	l.mu.Unlock()
	l.poke()
}

// setBarrier records the gate's barrier count for delivery (run sends
// the counts in turn).
func (l *memberLink) setBarrier(b uint64) {
	l.mu.Lock()
	l.bar = max(l.bar, b)
	l.mu.Unlock()
	l.poke()
}

// setRegime records auto's latest regime for delivery.
func (l *memberLink) setRegime(r proto.Regime) {
	l.mu.Lock()
	if r.Gen > l.reg.Gen {
		l.reg = r
	}
	l.mu.Unlock()
	l.poke()
}

func (l *memberLink) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// endJob tells the shard the job has ended and waits for its
// acknowledgement (the shard then checkpoints and stops) or ctx.
func (l *memberLink) endJob(ctx context.Context) error {
	l.mu.Lock()
	l.end = true
	if l.ended == nil {
		l.ended = make(chan struct{})
	}
	ended := l.ended
	l.mu.Unlock()
	l.poke()
	select {
	case <-ended:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *memberLink) run(ctx context.Context) {
	var conn *wire.Conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	// The Hello presents shard 0's job: a shard started with other job
	// flags refuses the link, naming the field.
	desc, _ := json.Marshal(l.sv.cfg.Params) // plain values: cannot fail
	var sent, barSent, regSent uint64
	var b proto.Backoff
	var req, resp wire.Frame
	var setupErr string
	endSent := false
	call := func(c proto.Control) error {
		var err error
		if conn == nil {
			cc := wire.ClientConfig{Config: l.sv.cfg.Wire, Hello: proto.ControlHello(proto.RoleCoordinator, l.sv.cfg.ControlToken, desc)}
			cc.Token = l.sv.cfg.Token
			if conn, err = wire.Dial(ctx, l.sv.cfg.Transport, l.addr, cc); err != nil {
				return err
			}
		}
		if err = req.SetJSON(wire.MsgControl, c); err == nil {
			err = conn.Call(ctx, &req, &resp)
		}
		return err
	}
	for {
		l.mu.Lock()
		gen, live, rem, end, ended, bar, reg := l.gen, l.live, l.rem, l.end, l.ended, l.bar, l.reg
		l.mu.Unlock()
		if barSent > 0 && bar > barSent+1 {
			// On one connection every barrier goes in turn: two can pass
			// at once (the gate's last and the job's end), and the
			// shard must apply each, not skip one. A new connection
			// (barSent 0: perhaps a restarted shard that lost some) gets
			// the latest.
			bar = barSent + 1
		}
		if gen != sent || reg.Gen != regSent || bar != barSent || (end && !endSent) {
			var err error
			switch {
			case l.shard == 0 && gen != sent:
				l.sv.shard.setMembers(live, rem, "coordinator@local")
			case l.shard == 0 && reg.Gen != regSent:
				err = l.sv.shard.switchTo(reg)
			case l.shard == 0 && bar != barSent:
				err = l.sv.shard.barrier(bar)
			case l.shard == 0: // shard 0 ends itself
			case gen != sent:
				// The regime goes with the view: a restarted shard takes
				// no push before it (Shard.awaitRegime).
				var r *proto.Regime
				if reg.Gen > 0 {
					r = &reg
				}
				err = call(proto.Control{Op: proto.OpMembers, Live: live, Removed: rem, Regime: r})
			case reg.Gen != regSent:
				err = call(proto.Control{Op: proto.OpSwitch, Regime: &reg})
			case bar != barSent:
				err = call(proto.Control{Op: proto.OpBarrier, Barrier: bar})
			default:
				err = call(proto.Control{Op: proto.OpEnd})
			}
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				fatal := proto.TLSSetupError(err)
				if fatal == nil && wire.CodeOf(err) == wire.CodeBadRequest {
					fatal = err // a shard of another job (checkJob): a setting as well
				}
				if fatal != nil && fatal.Error() != setupErr {
					// A setting, not a fault: no retry fixes it, so it is
					// said once at ERROR (retries go on, should the
					// shard be restarted with the right one).
					setupErr = fatal.Error()
					l.sv.log.Error("membership link to shard cannot connect", "shard", l.shard, "err", fatal)
				}
				l.sv.log.Debug("membership link to shard failed; retrying", "shard", l.shard, "err", err)
				if conn != nil {
					conn.Close()
					conn = nil
				}
				if !proto.Sleep(ctx, b.Next()) {
					return
				}
				continue
			}
			b.Reset()
			if gen != sent {
				sent = gen
				continue // the end, if asked for, goes after the latest view
			}
			if reg.Gen != regSent {
				regSent = reg.Gen
				peers, r := l.sv.coord.switched(time.Now(), l.shard, reg.Gen)
				l.sv.coord.sendSwitch(peers, r)
				continue
			}
			if bar != barSent {
				barSent = bar
				continue // and after the latest barrier
			}
			endSent = true
			close(ended)
			return // the shard is stopping: nothing more to deliver
		}
		// A restarted shard has forgotten the view: resend on reconnect,
		// which the closed connection tells us about.
		var dead <-chan struct{}
		if conn != nil {
			dead = conn.Done()
		}
		select {
		case <-ctx.Done():
			return
		case <-l.wake:
		case <-dead:
			conn.Close()
			conn, sent, barSent, regSent = nil, 0, 0, 0
		}
	}
}
