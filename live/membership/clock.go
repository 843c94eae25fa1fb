package membership

import "time"

// This file: clock reports and heartbeats, the events of a live member.

// Report is what a clock report was taken as.
type Report int

const (
	Counted  Report = iota // a new push: counted, and the gate told of it
	Retry                  // the last one counted, again (its answer was lost)
	Rejoined               // from a removed id: admitted again at the gate, not counted
	AfterEnd               // the job had ended: counted if new, releasing no one
)

func (r Report) String() string {
	return [...]string{"counted", "retry", "rejoined", "after-end"}[r]
}

// ClockResult is a clock report's outcome.
type ClockResult struct {
	Kind    Report
	Counted bool // the push counts toward the job
	// Finished: this push ended the job.
	Finished bool
}

// CheckReport refuses a report that is neither the last one counted for
// id p's process nor the next: a worker counts its pushes one by one and
// repeats a report until it is answered.
func (t *Table) CheckReport(p int, seq uint64) error {
	if p < 0 || p >= len(t.ms) {
		return refuse(BadRequest, "clock from unknown worker %d", p)
	}
	if m := &t.ms[p]; seq == 0 || seq > m.Seq+1 {
		return refuse(BadRequest, "clock report %d of worker %d: the last one counted is %d", seq, p, m.Seq)
	}
	return nil
}

// Clock takes id p's report of its push seq.
func (t *Table) Clock(now time.Time, p int, seq uint64) (ClockResult, error) {
	if err := t.CheckReport(p, seq); err != nil {
		return ClockResult{}, err
	}
	m := &t.ms[p]
	if t.done {
		// A push that raced the end: its gradient reached the shards and
		// was applied, so it is counted (pushes then match the shards'
		// updates), but it releases no one.
		r := ClockResult{Kind: AfterEnd}
		if m.State == Live && seq > m.Seq {
			m.Seq = seq
			t.count(m)
			r.Counted = true
		}
		return r, nil
	}
	m.LastSeen = now
	if m.State != Live {
		// Removed while it was slow or cut off: admit it again; it restarts
		// from a full pull at the gate's minimum clock.
		m.State = Live
		t.joined++
		m.Seq = seq
		return ClockResult{Kind: Rejoined}, nil
	}
	if seq <= m.Seq {
		return ClockResult{Kind: Retry}, nil
	}
	m.Seq = seq
	t.count(m)
	r := ClockResult{Kind: Counted, Counted: true}
	if t.pushes >= t.cfg.Target {
		t.done, t.end, r.Finished = true, now, true
	}
	return r, nil
}

func (t *Table) count(m *Member) {
	m.Pushes++
	t.pushes++
}

// Heartbeat records that live id p was heard.
func (t *Table) Heartbeat(now time.Time, p int) {
	if p >= 0 && p < len(t.ms) && t.ms[p].State == Live {
		t.ms[p].LastSeen = now
	}
}
