package live

import (
	"fmt"
	"strings"
	"time"
)

// waitReportAfter is how long a wait goes unreported: past it, and every
// waitReportAfter again, the waiting process logs what it waits for, so a
// stuck shard or worker is named by the processes it holds up (a stopped
// shard froze a job for 43 s without a line anywhere). Far above a healthy
// wait (a round of the slowest worker), far below an operator's patience.
const waitReportAfter = 10 * time.Second

// waitWatch decides when a wait that began at start is reported: a pure
// function of the instants it is given, so it is tested without a clock.
type waitWatch struct {
	start, next time.Time
}

func newWaitWatch(now time.Time) waitWatch {
	return waitWatch{start: now, next: now.Add(waitReportAfter)}
}

// due reports whether the wait is to be reported at now, and for how long
// it has lasted; the next report is waitReportAfter later.
func (w *waitWatch) due(now time.Time) (time.Duration, bool) {
	if now.Before(w.next) {
		return 0, false
	}
	w.next = now.Add(waitReportAfter)
	return now.Sub(w.start), true
}

// waitTimer is a wait's report clock: the event loop's, reset after each
// report (nil channel until started, so a loop may select on it freely).
type waitTimer struct {
	watch waitWatch
	t     *time.Timer
}

func startWaitTimer(now time.Time) *waitTimer {
	return &waitTimer{watch: newWaitWatch(now), t: time.NewTimer(waitReportAfter)} // the event loop's clock for this wait's reports
}

func (w *waitTimer) C() <-chan time.Time { return w.t.C }

// fired is called when C delivers: it returns how long the wait has
// lasted and arms the next report.
func (w *waitTimer) fired(now time.Time) (time.Duration, bool) {
	d, ok := w.watch.due(now)
	w.t.Reset(w.watch.next.Sub(now))
	return d, ok
}

func (w *waitTimer) stop() { w.t.Stop() }

// shardList names the shards i for which pending(i) holds ("1, 3").
func shardList(n int, pending func(i int) bool) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if pending(i) {
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			fmt.Fprint(&b, i)
		}
	}
	return b.String()
}
