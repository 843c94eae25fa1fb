package worker

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/pacer-ps/pacer/live/membership"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// This file: the worker's control connection to the coordinator (clock
// reports, releases, heartbeats, reconnects).

// reportClock tells the gate about the push. A worker the coordinator had
// removed is admitted again and restarts from a full pull.
func (w *Worker) reportClock(ctx context.Context, st *state) error {
	// Drained before the report: a release can only follow it.
	select {
	case <-w.release:
	default:
	}
	var req, resp wire.Frame
	var b proto.Backoff
	rejoined := false
	for {
		req.Reset()
		req.Type, req.Worker, req.Tag = wire.MsgClock, int32(w.id), st.seq
		// Held until now: the push just made (and its acknowledgements)
		// is otherwise added only when the next compute starts, so the
		// last report of the job, the one its summary keeps, would leave
		// out every worker's last push and count its wait short by one.
		held := st.res.Wait + time.Since(st.waitFrom)
		req.Extra, req.Offset = uint64(held.Microseconds()), uint64(st.res.Busy.Microseconds())
		req.Count = uint32(min(st.iter.Microseconds(), math.MaxUint32)) // for pacer profile
		// The loss is a statistic: one the coordinator would refuse (a
		// diverging model's overflow) is left out rather than failing a
		// push whose gradient was finite.
		if !math.IsNaN(st.loss) && st.loss >= 0 && st.loss <= proto.MaxLoss {
			proto.SetLoss(&req, st.loss)
		}
		w.ctlMu.Lock()
		ctl := w.ctl
		w.ctlMu.Unlock()
		err := ctl.Call(ctx, &req, &resp)
		var re *wire.RemoteError
		switch {
		case err == nil:
			if resp.Flags&proto.FlagRejoined != 0 || rejoined {
				w.log.Warn("rejoined the job after being removed", "worker", w.id, "clock", resp.Tag)
				st.first, st.clock = true, resp.Tag
			}
			w.ws.Acked, w.ws.Clock, w.ws.Held = st.seq, int64(resp.Tag), true
			return nil
		case errors.As(err, &re) && re.Code == wire.CodeShuttingDown:
			return ErrJobDone
		case errors.As(err, &re) || ctx.Err() != nil:
			return fmt.Errorf("live: worker %d: clock: %w", w.id, err)
		}
		// The coordinator's connection broke: redial (same id) and resend;
		// the sequence number keeps the push from counting twice. Removed
		// meanwhile, the worker is admitted again by the redial, which
		// takes this push as counted: the answer names its clock.
		if !proto.Sleep(ctx, b.Next()) {
			return ctx.Err()
		}
		if err := w.redial(ctx); err != nil {
			return err
		}
		rejoined = rejoined || w.info.Rejoined
	}
}

func (w *Worker) redial(ctx context.Context) error {
	w.ctlMu.Lock()
	defer w.ctlMu.Unlock()
	return w.dialControl(ctx, 0)
}

// awaitRelease waits for the gate's release, handling late pull replies
// meanwhile.
func (w *Worker) awaitRelease(ctx context.Context, st *state) error {
	defer func() { w.ws.Held = false }()
	report := startWaitTimer(time.Now())
	defer report.stop()
	for {
		w.ctlMu.Lock()
		dead := w.ctl.Done()
		w.ctlMu.Unlock()
		select {
		case <-w.release:
			return nil
		case now := <-report.C():
			if d, ok := report.fired(now); ok {
				w.log.Warn("still waiting for the gate's release (the coordinator's log names the workers it waits for)",
					"worker", w.id, "clock", st.clock, "waited", d.Round(time.Second))
			}
		case <-w.stop:
			return ErrJobDone
		case ev := <-w.events:
			if err := w.handle(st, w.links, ev); err != nil {
				return err
			}
		case <-dead:
			// The coordinator re-sends the release of a worker that is not
			// held when it reconnects.
			rejoined, err := w.redialWaiting(ctx, st)
			if err != nil {
				return err
			}
			if rejoined {
				// Removed while it waited: released, from a full pull.
				return nil
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// heartbeats tells the coordinator the worker is alive, four times per
// removal timeout (given: w.info is the main loop's, which replaces it on
// a redial), also while it computes.
func (w *Worker) heartbeats(ctx context.Context, timeout time.Duration) {
	proto.Every(ctx, membership.BeatPeriod(timeout), func() {
		w.ctlMu.Lock()
		ctl := w.ctl
		w.ctlMu.Unlock()
		f := wire.Frame{Type: wire.MsgHeartbeat, Worker: w.curID()}
		ctl.Send(ctx, &f)
	})
}

// redialWaiting redials the coordinator for a worker whose control
// connection died while it waited (for a release or a pull), unless the
// job is ending. rejoined: the coordinator had removed it meanwhile and
// admitted it again at the gate's minimum clock, so it restarts from a
// full pull (st says so).
func (w *Worker) redialWaiting(ctx context.Context, st *state) (rejoined bool, err error) {
	if w.stopping() {
		return false, ErrJobDone
	}
	if !proto.Sleep(ctx, w.redials.wait(time.Now())) {
		return false, ctx.Err()
	}
	if err := w.redial(ctx); err != nil {
		return false, err
	}
	if !w.info.Rejoined {
		return false, nil
	}
	w.log.Warn("rejoined the job after being removed", "worker", w.id, "clock", w.info.Clock)
	st.first, st.clock = true, uint64(w.info.Clock)
	w.ws.Clock = w.info.Clock
	return true, nil
}

// youngLife: a control connection that dies sooner died young.
const youngLife = 5 * time.Second

// redialPace spaces the redials of a worker whose control connections die
// young (a coordinator crashing right after it admits the worker): without
// it a waiting worker redials back to back, as fast as the coordinator
// accepts.
type redialPace struct {
	b    proto.Backoff
	last time.Time
}

// wait is the pause before a redial at now: none after a connection that
// lived youngLife, else 10 ms doubling to 1 s.
func (p *redialPace) wait(now time.Time) time.Duration {
	var d time.Duration
	if !p.last.IsZero() && now.Sub(p.last) < youngLife {
		d = p.b.Next()
	} else {
		p.b.Reset()
	}
	p.last = now.Add(d)
	return d
}

// onNotify takes the coordinator's notices (on the control connection's
// goroutine): releases, with the barrier count and a switch's regime,
// and the job's end.
func (w *Worker) onNotify(f *wire.Frame) {
	switch f.Type {
	case wire.MsgRelease:
		w.noteBarrier(f.Tag, f.Extra)
		if f.Flags&proto.FlagSwitch != 0 {
			w.noteSwitch(f.Bytes)
		}
		select {
		case w.release <- struct{}{}:
		default:
		}
	case wire.MsgShutdown:
		w.stopped.Do(func() { close(w.stop) })
	}
}
