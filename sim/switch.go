package sim

import (
	"fmt"
	"slices"
	"time"

	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/timing"
)

// autoState is --paradigm auto's part of a run: what the simulator
// measures between decisions (as a coordinator would: each worker's
// compute times), when the next decision is due, and a switch in
// progress.
type autoState struct {
	on        bool
	every     int           // rounds between decisions
	planAt    int64         // the push count at which the next decision is due
	dueAt     time.Duration // or the time, whichever comes first (0: none yet)
	from      time.Duration
	win       timing.Window // compute times since from
	draining  bool
	next      paradigm.Spec
	gates     paradigm.GateStats // the gates before the current one, summed
	decisions []runstats.Decision
}

func (a *autoState) init(workers, every, first int) {
	a.on, a.every = true, every
	a.planAt = int64(first) * int64(workers)
}

// window is what was measured since the last decision, and starts the next.
func (e *engine) window() Window {
	a := &e.auto
	var live []int
	for p := range e.ws {
		if !e.ws[p].dead {
			live = append(live, p)
		}
	}
	var w Window
	w.Iter, w.CV, w.Draws = a.win.Read(live, e.now-a.from)
	a.from = e.now
	if m, ok := e.cfg.Learner.(NoiseMeter); ok {
		w.Noise = m.Noise()
	}
	return w
}

// replan asks the planner; a switch drains the job first.
func (e *engine) replan() {
	a := &e.auto
	a.planAt = e.pushes + int64(a.every)*int64(max(e.live(), 1))
	w := e.window()
	if len(w.Iter) == 0 {
		return
	}
	// The next decision also comes when the horizon it predicts (every
	// rounds of the slowest worker as measured) has passed: when the
	// cluster slows, rounds stretch and counting them would see it late.
	a.dueAt = e.now + time.Duration(a.every)*slices.Max(w.Iter)
	plan, err := e.cfg.Replan(e.now, w, e.pol.Spec)
	if err != nil {
		e.err, e.stopped = fmt.Errorf("auto at %s: %w", e.now, err), true
		return
	}
	sw := plan.Switch && plan.Next.String() != e.pol.Spec.String()
	a.decisions = append(a.decisions, runstats.Decision{AtSeconds: e.now.Seconds(), Current: e.pol.Spec.String(),
		Best: plan.Best, Gain: plan.Gain, Switch: sw, Noise: w.Noise})
	if sw {
		a.draining, a.next = true, plan.Next
	}
}

// drained reports whether every live worker is still: no pull, compute,
// push or release under way (held by the gate, or parked by the drain).
func (e *engine) drained() bool {
	for p := range e.ws {
		w := &e.ws[p]
		if w.dead {
			continue
		}
		if w.pulling || w.computing || w.pushing || w.releasing || !allAnswered(w.pending) {
			return false
		}
	}
	return true
}

// switchNow replaces the policy once the job is drained: every gradient
// the old aggregators hold is applied (paradigm.Policy.Drain), the new
// rule starts level (every shard at one version, every worker at that
// clock, so no bound starts violated and no gradient is counted twice),
// and every live worker starts a full pull.
func (e *engine) switchNow() error {
	a := &e.auto
	a.draining = false
	old := e.pol
	for _, ap := range old.Drain(e.now) {
		e.apply(ap.Shard, ap.Apply)
	}
	st := old.Gate.Stats()
	a.gates.Releases += st.Releases
	a.gates.ControllerCalls += st.ControllerCalls
	a.gates.MaxGap = max(a.gates.MaxGap, st.MaxGap)
	next, err := paradigm.New(a.next, paradigm.Config{Workers: len(e.ws), Shards: len(e.ss)})
	if err != nil {
		return fmt.Errorf("auto's switch to %s: %w", a.next, err)
	}
	var c uint64
	for _, ag := range old.Aggs {
		c = max(c, ag.Version())
	}
	for p := range e.ws {
		c = max(c, e.ws[p].clock)
	}
	for i := range old.Aggs {
		// What an aggregator could not flush is dropped and counted.
		for _, id := range old.Aggs[i].Reset(c, nil) {
			e.dropped++
			if e.cfg.Learner != nil {
				e.cfg.Learner.Drop(e.now, i, id)
			}
		}
		next.Aggs[i].Reset(c, nil)
		e.ss[i].armed, e.ss[i].waiting = false, e.ss[i].waiting[:0]
	}
	var out []int
	for p := range e.ws {
		if e.ws[p].gone {
			next.Leave(e.now, p)
			continue
		}
		out = next.Gate.SetClock(e.now, p, int64(c), out[:0])
	}
	e.pol = next
	if s, ok := e.cfg.Learner.(Switcher); ok {
		s.Switched(e.now, a.next)
	}
	for p := range e.ws {
		w := &e.ws[p]
		if w.dead {
			continue
		}
		w.clock, w.first, w.tickArmed = c, true, -1
		e.startPull(p)
	}
	return nil
}
