package proto

import "time"

// WaitReportAfter is how long a wait goes unreported: past it, and every
// WaitReportAfter again, the waiting process logs what it waits for, so a
// stuck shard or worker is named by the processes it holds up (a stopped
// shard froze a job for 43 s without a line anywhere). Far above a healthy
// wait (a round of the slowest worker), far below an operator's patience.
const WaitReportAfter = 10 * time.Second

// WaitWatch decides when a wait that began at start is reported: a pure
// function of the instants it is given, so it is tested without a clock.
type WaitWatch struct {
	start, next time.Time
}

// NewWaitWatch watches a wait that begins at now.
func NewWaitWatch(now time.Time) WaitWatch {
	return WaitWatch{start: now, next: now.Add(WaitReportAfter)}
}

// Due reports whether the wait is to be reported at now, and for how long
// it has lasted; the next report is WaitReportAfter later.
func (w *WaitWatch) Due(now time.Time) (time.Duration, bool) {
	if now.Before(w.next) {
		return 0, false
	}
	w.next = now.Add(WaitReportAfter)
	return now.Sub(w.start), true
}

// Next is when the next report is due.
func (w *WaitWatch) Next() time.Time { return w.next }
