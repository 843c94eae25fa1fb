package network

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// This file: links whose rate changes for a window of the cluster's time
// (Link.Degrade, From, To).

// MinDegrade and MaxDegrade bound a link's Degrade (a factor of 1000 speed
// up to one of 10⁶ slow down); MaxWindow bounds From and To, far past any
// run's horizon and far from the clock's limit.
const (
	MinDegrade = 1e-3
	MaxDegrade = 1e6
	MaxWindow  = 10000 * time.Hour
)

// checkWindow refuses a window that cannot be run, naming its field.
func (l Link) checkWindow(what string) error {
	if l.Degrade == 0 {
		if l.From != 0 || l.To != 0 {
			return fmt.Errorf("network: %s: from and to without degrade (degrade=FACTOR divides the rate from the one to the other)", what)
		}
		return nil
	}
	if !(l.Degrade >= MinDegrade && l.Degrade <= MaxDegrade) {
		return fmt.Errorf("network: %s: degrade=%g must be a finite factor from %g to %g", what, l.Degrade, MinDegrade, MaxDegrade)
	}
	if r := l.Rate / l.Degrade; r > MaxRate {
		return fmt.Errorf("network: %s: degrade=%g makes the rate %s, above 1Tbit", what, l.Degrade, FormatRate(r))
	}
	if l.From < 0 || l.From > MaxWindow {
		return fmt.Errorf("network: %s: from=%s must be a duration from 0 to %s", what, l.From, MaxWindow)
	}
	if l.To != 0 && (l.To <= l.From || l.To > MaxWindow) {
		return fmt.Errorf("network: %s: to=%s must come after from=%s, at most %s (left out: to the end of the run)", what, l.To, l.From, MaxWindow)
	}
	return nil
}

// Changes reports whether l's rate changes during a run.
func (l Link) Changes() bool { return l.Degrade != 0 && l.Degrade != 1 }

// Changes reports whether any link of s changes during a run.
func (s *Spec) Changes() bool {
	if s.Default.Changes() {
		return true
	}
	for _, m := range []map[int]Link{s.Workers, s.Shards} {
		for _, l := range m {
			if l.Changes() {
				return true
			}
		}
	}
	return false
}

// At is s as its links are at time t of the cluster's, without windows:
// the network a prediction made at t sees (it measures the links as they
// are, as it measures the workers).
func (s *Spec) At(t time.Duration) *Spec {
	out := *s
	out.Default = s.Default.at(t)
	for _, m := range []*map[int]Link{&out.Workers, &out.Shards} {
		if *m == nil {
			continue
		}
		c := make(map[int]Link, len(*m))
		for i, l := range *m {
			c[i] = l.at(t)
		}
		*m = c
	}
	return &out
}

func (l Link) at(t time.Duration) Link {
	if l.Degrade != 0 && t >= l.From && (l.To == 0 || t < l.To) {
		l.Rate /= l.Degrade
	}
	l.Degrade, l.From, l.To = 0, 0, 0
	return l
}

// schedule lists the changes of the links n.wl and n.sl give, in time
// order (ties: workers before shards, by index), and leaves the links at
// their rates before any.
func (n *Net) schedule() {
	for _, o := range []struct {
		worker bool
		links  []Link
	}{{true, n.wl}, {false, n.sl}} {
		for i, l := range o.links {
			if !l.Changes() {
				continue
			}
			n.changes = append(n.changes, change{at: l.From, worker: o.worker, idx: i, rate: l.Rate / l.Degrade})
			if l.To > 0 {
				n.changes = append(n.changes, change{at: l.To, worker: o.worker, idx: i, rate: l.Rate})
			}
		}
	}
	slices.SortStableFunc(n.changes, func(a, b change) int { return cmp.Compare(a.at, b.at) })
	n.nextChange = noChange
	if len(n.changes) > 0 {
		n.nextChange = n.changes[0].at
	}
}

// applyChange makes the first change left, at its time (not before n.t:
// advance makes every change due before it moves n.t).
func (n *Net) applyChange() {
	c := n.changes[0]
	n.changes = n.changes[1:]
	n.nextChange = noChange
	if len(n.changes) > 0 {
		n.nextChange = n.changes[0].at
	}
	if c.at > n.t {
		n.settle() // the flows ran at the old rates until the change
		n.t = c.at
	}
	var up, down int32
	if c.worker {
		n.wl[c.idx].Rate = c.rate
		up, down = int32(c.idx), int32(n.workers+c.idx)
	} else {
		n.sl[c.idx].Rate = c.rate
		n.sServeIn[c.idx], n.sServeOut[c.idx] = served{}, served{}
		up, down = int32(2*n.workers+c.idx), int32(2*n.workers+n.shards+c.idx)
	}
	n.setRate(up, c.rate)
	n.setRate(down, c.rate)
}

// setRate changes link l's rate at n.t; the next settle re-shares the
// flows connected to it, as after a start or an end.
func (n *Net) setRate(l int32, rate float64) {
	L := &n.links[l]
	L.rate = rate
	if !L.shard && len(L.flows) == 1 {
		// Its flow is a leaf of its shard link, grouped there by this
		// link's rate: regrouped, and placed again by the settle.
		id := L.flows[0]
		n.dropS(id)
		n.addLeaf(id)
		n.releaf = append(n.releaf, id)
		n.dirty = append(n.dirty, n.flows[id].s)
	}
	if len(L.flows) > 0 || L.nLeaf > 0 {
		n.dirty = append(n.dirty, l)
	}
}
