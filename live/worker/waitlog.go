package worker

import (
	"fmt"
	"strings"
	"time"

	"github.com/pacer-ps/pacer/live/proto"
)

// waitTimer is a wait's report clock: the event loop's, reset after each
// report (nil channel until started, so a loop may select on it freely).
type waitTimer struct {
	watch proto.WaitWatch
	t     *time.Timer
}

func startWaitTimer(now time.Time) *waitTimer {
	return &waitTimer{watch: proto.NewWaitWatch(now), t: time.NewTimer(proto.WaitReportAfter)} // the event loop's clock for this wait's reports
}

func (w *waitTimer) C() <-chan time.Time { return w.t.C }

// fired is called when C delivers: it returns how long the wait has
// lasted and arms the next report.
func (w *waitTimer) fired(now time.Time) (time.Duration, bool) {
	d, ok := w.watch.Due(now)
	w.t.Reset(w.watch.Next().Sub(now))
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
