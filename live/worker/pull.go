package worker

import (
	"context"
	"time"
)

// This file: the pull phase of an iteration (asking every shard for its
// block, at the version the puller wants) and the drain of the last pushes.

// pullPhase runs the puller: ask every shard not already asked, then wait
// for enough fresh blocks (PSP: ⌈b·S⌉ and the τ2 grace).
func (w *Worker) pullPhase(ctx context.Context, st *state, links []*wlink) error {
	bar := w.barriers.Load()
	st.pl.SetBarriers(bar)
	w.ws.Barriers = bar
	st.pl.Start(time.Since(st.start), st.clock, st.read, st.first)
	first := st.first
	if st.pl.Ready() && !first {
		// ElasticBSP apply=local inside a superstep: the worker goes on
		// with its own copy, asking no shard.
		return nil
	}
	st.first, st.inPull, st.pullFirst = false, true, first
	defer func() { st.inPull = false }()
	for i := range links {
		if !st.pulling[i] || first {
			w.request(st, links, i)
		}
	}
	var timer *time.Timer
	var tick <-chan time.Time
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	report := startWaitTimer(time.Now())
	defer report.stop()
	for !st.pl.Ready() {
		if d, ok := st.pl.Deadline(); ok && tick == nil {
			// The event loop's timer for the deadline pl chose; pl.Tick
			// takes the time as an input when it fires.
			timer = time.NewTimer(d - time.Since(st.start))
			tick = timer.C
		}
		w.ctlMu.Lock()
		dead := w.ctl.Done()
		w.ctlMu.Unlock()
		select {
		case ev := <-w.events:
			if err := w.handle(st, links, ev); err != nil {
				return err
			}
		case <-tick:
			tick = nil
			st.pl.Tick(time.Since(st.start))
		case now := <-report.C():
			if d, ok := report.fired(now); ok {
				w.log.Warn("still waiting for a pull", "worker", w.id, "clock", st.clock, "waited", d.Round(time.Second),
					"shards", shardList(len(links), func(i int) bool { return !st.pl.Fresh(i) }))
			}
		case <-dead:
			// Shard 0 (the coordinator) went down while this pull waits:
			// redial now, not at the next report. The pull may wait on
			// the restarted coordinator itself: under ElasticBSP
			// apply=local it waits for a barrier the coordinator's state
			// file may not know, which the Hello tells it (ws.Barriers);
			// and heartbeats on the dead connection reach no one, so a
			// worker that waited here until its pull came was removed.
			rejoined, err := w.redialWaiting(ctx, st)
			if err != nil {
				return err
			}
			if rejoined {
				// Removed before it was back: from a full pull.
				return w.pullPhase(ctx, st, links)
			}
		case <-w.stop:
			return ErrJobDone
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	st.clock = st.pl.NextClock(st.clock)
	return nil
}

// drainPushes waits for every outstanding push ack (the gradient buffer is
// read by the links until then).
func (w *Worker) drainPushes(ctx context.Context, st *state) error {
	var report *waitTimer
	defer func() {
		if report != nil {
			report.stop()
		}
	}()
	for {
		busy := false
		for _, p := range st.pushing {
			busy = busy || p
		}
		if !busy {
			return nil
		}
		if report == nil {
			report = startWaitTimer(time.Now())
		}
		w.ctlMu.Lock()
		dead := w.ctl.Done()
		w.ctlMu.Unlock()
		select {
		case ev := <-w.events:
			if err := w.handle(st, w.links, ev); err != nil {
				return err
			}
		case <-dead:
			// Removed while its push was under way (a busy machine's late
			// beats), the worker is refused by the shards as unadmitted
			// and its links offer the push again: only its return to the
			// coordinator, which tells them, lets the push in. A rejoin
			// restarts it from a full pull (redialWaiting sets st so).
			if _, err := w.redialWaiting(ctx, st); err != nil {
				return err
			}
		case now := <-report.C():
			if d, ok := report.fired(now); ok {
				w.log.Warn("still waiting for push acknowledgements", "worker", w.id, "clock", st.clock, "waited", d.Round(time.Second),
					"shards", shardList(len(st.pushing), func(i int) bool { return st.pushing[i] }))
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
