package membership

import "time"

// This file: what the table says of the job: its members, counts and view.

// Len is the number of ids admitted so far.
func (t *Table) Len() int { return len(t.ms) }

// Member returns id p's record.
func (t *Table) Member(p int) Member { return t.ms[p] }

// Pushes is the job's count of pushes; Target the count that ends it.
func (t *Table) Pushes() int64 { return t.pushes }
func (t *Table) Target() int64 { return t.cfg.Target }

// Done reports whether the job has ended.
func (t *Table) Done() bool { return t.done }

// First is when the first worker said Hello (zero: none yet).
func (t *Table) First() time.Time { return t.first }

// Seconds is the job's duration at now: from the first Hello to its end
// (or now, while it runs).
func (t *Table) Seconds(now time.Time) float64 {
	if t.first.IsZero() {
		return 0
	}
	end := t.end
	if end.IsZero() {
		end = now
	}
	return end.Sub(t.first).Seconds()
}

// Counts returns the removals, those of ids never connected, and the
// (re)joins.
func (t *Table) Counts() (removed, never, joined int64) { return t.removed, t.never, t.joined }

// View lists the removed ids and the others (live or not yet seen: the
// shards wait for both).
func (t *Table) View() (live, removed []int) {
	for p, m := range t.ms {
		if m.State == Removed {
			removed = append(removed, p)
		} else {
			live = append(live, p)
		}
	}
	return live, removed
}

// Live counts the live ids.
func (t *Table) Live() int {
	n := 0
	for _, m := range t.ms {
		if m.State == Live {
			n++
		}
	}
	return n
}
