package live

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/pacer-ps/pacer/live/membership"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/timing"
	"github.com/pacer-ps/pacer/wire"
)

// This file: --paradigm auto on the live coordinator (issue 36). The
// coordinator measures each worker's iteration times from its clock
// reports; every `every` rounds it asks the planner (package auto's, run
// outside the lock) whether another candidate would train faster. A
// switch then goes in three steps, as the simulator's does (sim/switch.go):
//
//  1. drain: no worker is released any more; each one parks at the gate
//     after its next report (its push acknowledged by every shard first),
//     until every live worker is parked: nothing is in flight.
//  2. the shards: every shard is told the new regime on its membership
//     link (op "switch"): it applies what its rule holds (a partial BSP
//     round, a backup round, a softsync buffer: paradigm.Flusher), and
//     continues under the new rule at the regime's base version.
//  3. the gate: once every shard has acknowledged, the coordinator builds
//     the new rule's gate with every worker at that base clock and
//     releases them all with the regime (proto.FlagSwitch): each takes the
//     new rule's puller and starts from a full pull.
//
// The base is above every version a shard and every clock a worker can
// have reached: the previous base plus the pushes counted under the
// previous rule, plus one for the flush (every version takes at least one
// push). No gradient is applied twice or lost: every pushed gradient was
// acknowledged before its worker parked, and the flush applies what the
// rule held.

// Replanner is auto's decision as the coordinator calls it: package
// auto's Planner, handed in by whoever starts the server (the runtime
// does not import the simulator). iter is each live worker's mean
// iteration time over the window, cv their pooled coefficient of
// variation, draws the window's iterations as multiples of their worker's
// mean (timing.Window), noise the gradient noise scale in gradients that shard 0
// measured (0: none), now the job's time.
type Replanner func(now time.Duration, iter []time.Duration, cv float64, draws []float64, noise float64, current paradigm.Spec) (next paradigm.Spec, sw bool, gain float64, err error)

// autoCoord is the coordinator's part of an auto job (lock held unless
// said).
type autoCoord struct {
	plan  Replanner
	every int
	first int // rounds before the first decision (Spec.FirstDecision)
	cur   paradigm.Spec
	reg   proto.Regime // in force; Gen 0: the first candidate, from the start
	// regPushes and winPushes are the pushes counted when reg began and
	// when the measuring window began; winAt is the window's start.
	regPushes, winPushes int64
	winAt                time.Duration
	dueAt                time.Duration // the next decision's time, if its pushes come later (0: none)
	win                  timing.Window // iteration times in the window, per worker id
	deciding             bool          // a decision runs (outside the lock)
	draining             bool
	next                 paradigm.Spec
	parked               map[int]bool
	switching            *proto.Regime // told to the shards, not yet acknowledged by all
	acked                map[int]bool
	decisions            []runstats.Decision
}

func newAutoCoord(spec paradigm.Spec, plan Replanner) *autoCoord {
	start := spec.Start()
	return &autoCoord{plan: plan, every: spec.Every, first: spec.FirstDecision(), cur: start, reg: proto.Regime{Paradigm: start.String()},
		parked: map[int]bool{}}
}

// window is what was measured since the last decision for the live
// workers, in id order, and starts the next window at now.
func (c *Coordinator) window(now time.Duration) ([]time.Duration, float64, []float64) {
	a := c.auto
	iter, cv, draws := a.win.Read(c.liveIDs(), now-a.winAt)
	a.winAt, a.winPushes = now, c.ms.Pushes()
	return iter, cv, draws
}

// autoDue reports whether a decision is due at t (lock held): every
// rounds of the live workers' pushes since the last, or the horizon the
// last one predicted has passed (when the cluster slows, rounds stretch
// and counting them would see it late); none running and no switch under
// way.
func (c *Coordinator) autoDue(t time.Duration) bool {
	a := c.auto
	if a == nil || a.deciding || a.draining || a.switching != nil || c.ms.Done() {
		return false
	}
	every := a.every
	if len(a.decisions) == 0 {
		every = a.first
	}
	return c.ms.Pushes()-a.winPushes >= int64(every)*int64(max(c.ms.Live(), 1)) || (a.dueAt > 0 && t >= a.dueAt)
}

// due is autoDue at now with the lock taken.
func (c *Coordinator) due(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.autoDue(c.since(now))
}

// decide runs one decision at now if one is due, the planner outside the
// lock (it simulates every candidate: bounded, package auto's MaxPushes),
// and starts a switch when it says so (a drain starts with only the
// workers the gate holds parked, so it releases nobody).
func (c *Coordinator) decide(now time.Time) {
	c.mu.Lock()
	t := c.since(now)
	if !c.autoDue(t) {
		c.mu.Unlock()
		return
	}
	a := c.auto
	iter, cv, draws := c.window(t)
	if len(iter) > 0 {
		a.dueAt = t + time.Duration(a.every)*slices.Max(iter)
	}
	cur := a.cur
	a.deciding = true
	c.mu.Unlock()

	next, sw, gain, err := paradigm.Spec{}, false, 0.0, error(nil)
	noise := 0.0
	if c.noise != nil {
		noise = c.noise()
	}
	if len(iter) > 0 {
		next, sw, gain, err = a.plan(t, iter, cv, draws, noise, cur)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	a.deciding = false
	if err != nil {
		// A decision that cannot be made leaves the job as it runs.
		c.log.Error("auto: no decision", "err", err)
		return
	}
	if len(iter) == 0 {
		return
	}
	sw = sw && next.String() != cur.String()
	a.decisions = append(a.decisions, runstats.Decision{AtSeconds: t.Seconds(), Current: cur.String(), Best: next.String(), Gain: gain, Switch: sw, Noise: noise})
	c.log.Info("auto decision", "current", cur.String(), "best", next.String(), "gain", gain, "switch", sw, "workers", len(iter), "cv", cv, "noise", noise)
	if !sw || c.ms.Done() {
		return
	}
	a.draining, a.next = true, next
	clear(a.parked)
	for _, p := range c.liveIDs() {
		if c.gate.Held(p) {
			a.parked[p] = true // waiting at the gate already: not released from now on
		}
	}
	c.maybeSwitch()
}

// liveIDs are the ids membership counts live (lock held).
func (c *Coordinator) liveIDs() []int {
	live, _ := c.ms.View()
	out := live[:0:0]
	for _, p := range live {
		if c.ms.Member(p).State == membership.Live {
			out = append(out, p)
		}
	}
	return out
}

// parking reports whether a switch is under way (lock held): releases
// wait for it.
func (c *Coordinator) parking() bool {
	return c.auto != nil && (c.auto.draining || c.auto.switching != nil)
}

// hold parks the workers the gate released while a switch is under way
// (lock held): they are not told; the switch releases them. It returns the
// ids to notify now.
func (c *Coordinator) hold(ids []int) []int {
	if !c.parking() {
		return ids
	}
	for _, p := range ids {
		c.auto.parked[p] = true
	}
	return ids[:0]
}

// parkedAt reports whether p is parked for a switch (lock held): a
// reconnection then gets no release.
func (c *Coordinator) parkedAt(p int) bool {
	return c.parking() && c.auto.parked[p]
}

// maybeSwitch tells the shards the new regime once every live worker is
// parked (lock held).
func (c *Coordinator) maybeSwitch() {
	a := c.auto
	if a == nil || !a.draining || a.switching != nil || c.ms.Done() {
		return
	}
	for _, p := range c.liveIDs() {
		if !a.parked[p] {
			return
		}
	}
	r := proto.Regime{Gen: a.reg.Gen + 1, Paradigm: a.next.String(), Base: a.reg.Base + uint64(max(c.ms.Pushes()-a.regPushes, 0)) + 1}
	a.switching, a.acked = &r, map[int]bool{}
	c.log.Info("auto: every worker parked; switching the shards", "to", r.Paradigm, "generation", r.Gen, "base", r.Base)
	if c.onSwitch != nil {
		c.onSwitch(r, c.ms.Pushes())
	}
}

// switched records shard i's acknowledgement of regime gen at now; once
// every shard has it, the gate takes the new rule and the parked workers
// are returned for a switch release (sendSwitch).
func (c *Coordinator) switched(now time.Time, shard int, gen uint64) ([]*wire.Peer, proto.Regime) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := c.auto
	if a == nil || a.switching == nil || a.switching.Gen != gen {
		return nil, proto.Regime{} // a resend after a reconnect
	}
	a.acked[shard] = true
	if len(a.acked) < c.job.Job.Shards {
		return nil, proto.Regime{}
	}
	r := *a.switching
	gate, err := paradigm.NewGate(a.next, paradigm.Config{Workers: c.k, Shards: c.job.Job.Shards})
	if err != nil {
		// Checked when the job was (every candidate is valid for it).
		panic(fmt.Sprintf("live: auto's switch to %s: %v", a.next, err))
	}
	// As a restored coordinator rebuilds its gate (coord_state.go):
	// every id joins (ids past K first), the removed leave again, the
	// others take the base clock.
	t := c.since(now)
	for p := c.k; p < len(c.members); p++ {
		gate.Join(t, p, nil)
	}
	for p := range c.members {
		if c.ms.Member(p).State == membership.Removed {
			gate.Leave(t, p, nil)
		} else {
			gate.SetClock(t, p, int64(r.Base), nil)
		}
	}
	old := c.gate.Stats()
	c.base.Releases += old.Releases
	c.base.ControllerCalls += old.ControllerCalls
	c.base.MaxGap = max(c.base.MaxGap, old.MaxGap)
	c.gate = gate
	a.reg, a.cur, a.regPushes = r, a.next, c.ms.Pushes()
	a.draining, a.switching, a.acked = false, nil, nil
	clear(a.parked)
	c.log.Info("auto: switched", "paradigm", r.Paradigm, "generation", r.Gen, "base", r.Base)
	return c.peersOf(c.liveIDs()), r
}

// sendSwitch releases peers into regime r (outside the lock).
func (c *Coordinator) sendSwitch(peers []*wire.Peer, r proto.Regime) {
	if len(peers) == 0 {
		return
	}
	body, _ := json.Marshal(r) // plain values: cannot fail
	c.mu.Lock()
	b, bp := c.bar, c.barPushes
	c.mu.Unlock()
	for _, p := range peers {
		f := wire.Frame{Type: wire.MsgRelease, Flags: proto.FlagSwitch, Worker: p.ID(), Tag: b, Extra: uint64(max(bp, 0)), Bytes: body}
		p.Send(&f)
	}
}

// regime is the regime a (re)connecting worker is told (lock held): nil
// before the first switch.
func (c *Coordinator) regime() *proto.Regime {
	if c.auto == nil || c.auto.reg.Gen == 0 {
		return nil
	}
	r := c.auto.reg
	return &r
}

// restoreRegime makes a restored coordinator carry on under the regime
// its state file names (lock held): its gate is that rule's, and the
// workers and shards, which hold that regime already, are told it again.
// The regime is the newest of the state file's and auto's regime file's
// (coord_regime.go), so no shard or worker holds a newer one; a switch
// that had reached some shards only is completed by telling it again.
func (c *Coordinator) restoreRegime(st *coordState) error {
	r := st.Regime
	if r == nil {
		return nil
	}
	if c.auto == nil {
		return fmt.Errorf("live: coordinator state names auto's regime %q, and this job's paradigm is %s", r.Paradigm, c.job.Job.Spec)
	}
	sp, err := paradigm.Parse(r.Paradigm)
	if err != nil || !c.job.Job.Spec.HasCandidate(sp) {
		return fmt.Errorf("live: coordinator state: regime %q is not one of the job's auto candidates (%s)", r.Paradigm, c.job.Job.Spec)
	}
	if st.RegimePushes < 0 || (st.RegimePushes > st.Pushes && !st.regimeAhead) {
		return fmt.Errorf("live: coordinator state: regime began at push %d of %d", st.RegimePushes, st.Pushes)
	}
	gate, err := paradigm.NewGate(sp, paradigm.Config{Workers: c.k, Shards: c.job.Job.Shards})
	if err != nil {
		return fmt.Errorf("live: coordinator state: regime %s: %w", sp, err)
	}
	c.gate = gate
	a := c.auto
	a.reg, a.cur, a.regPushes, a.winPushes = *r, sp, st.RegimePushes, st.Pushes
	return nil
}
