package membership

import (
	"fmt"
	"slices"
	"time"
)

// This file: a restarted coordinator's table, from its state file or
// blind, from what the workers tell it as they redial.

// Saved is what a restarted coordinator carries over from its state file.
type Saved struct {
	Pushes                 int64
	Done                   bool
	First                  time.Time // zero: no worker had said Hello
	Removed, Never, Joined int64
	Members                []Member // State, Inc, Seq, Pushes and Displaced are read
}

// Restore makes the table carry on from s at now: the counts, each id's
// state and process; every live id is restored (its silence counts from
// now, with the startup allowance). restartGrace: unseen ids get a new
// startup grace from now. A record that cannot be one is refused, and the
// table is left as it was.
func (t *Table) Restore(now time.Time, s Saved, restartGrace bool) error {
	if len(s.Members) < t.cfg.Workers || len(s.Members) > t.cfg.IDCap {
		return fmt.Errorf("it holds %d worker ids (the job has %d, at most %d)", len(s.Members), t.cfg.Workers, t.cfg.IDCap)
	}
	if s.Pushes < 0 {
		return fmt.Errorf("it counts %d pushes", s.Pushes)
	}
	for p, m := range s.Members {
		if m.State < Unseen || m.State > Removed || m.Pushes < 0 || len(m.Displaced) > maxDisplaced {
			return fmt.Errorf("worker %d's record is not one (state %d, pushes %d, %d displaced processes)", p, m.State, m.Pushes, len(m.Displaced))
		}
	}
	t.pushes, t.done = s.Pushes, s.Done
	t.removed, t.never, t.joined = s.Removed, s.Never, s.Joined
	if restartGrace {
		t.graceEnd = now.Add(t.cfg.Grace)
	}
	if !s.First.IsZero() && s.First.Before(now) {
		t.first = s.First
	}
	if t.done {
		t.end = now
	}
	t.ms = t.ms[:0]
	for _, m := range s.Members {
		t.ms = append(t.ms, Member{State: m.State, Inc: m.Inc, Seq: m.Seq, Pushes: m.Pushes, LastSeen: now, Restored: m.State == Live,
			Displaced: slices.Clone(m.Displaced)})
	}
	return nil
}

// RestoreBlind marks every id as restored, for a coordinator restarted
// without its state file: each worker that redials is taken at its word
// (its process's answered reports counted, its clock adopted).
func (t *Table) RestoreBlind() {
	for p := range t.ms {
		t.ms[p].Restored = true
	}
}
