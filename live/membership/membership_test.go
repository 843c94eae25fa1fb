package membership

import (
	"testing"
	"time"

	"github.com/pacer-ps/pacer/job"
)

// TestBusyMachineFigures: the defaults keep the promise of docs/protocol.md
// "Heartbeats on a busy machine" (DECISIONS: a worker starved of CPU for
// 10 s stays in the job; a dead one is removed within 30 s), each figure
// from the rule the sweep applies (silence strictly beyond the limit, at
// the first sweep after it).
func TestBusyMachineFigures(t *testing.T) {
	const starved, removedBy, stall = 10 * time.Second, 30 * time.Second, 10 * time.Second
	timeout := job.DefaultHeartbeatTimeout
	grace, every := Timing(timeout)
	beat := BeatPeriod(timeout)
	allowance := max(timeout, min(grace, StartupTimeouts*timeout))
	if silent := starved + beat; silent >= timeout {
		t.Errorf("a worker starved %v after its last beat (every %v) is silent %v: the %v timeout removes it", starved, beat, silent, timeout)
	}
	if silent := starved + beat; silent >= allowance {
		t.Errorf("a starting worker starved %v is silent %v: its %v allowance removes it", starved, silent, allowance)
	}
	// A dead worker: the first sweep past the timeout, or with the
	// coordinator stalled meanwhile, the stall and one more period.
	if by := timeout + every + stall + every; by > removedBy {
		t.Errorf("a dead worker is removed %v after its last beat (timeout %v, sweep %v, a %v stall of the coordinator): want ≤ %v", by, timeout, every, stall, removedBy)
	}
	if by := allowance + every; by > removedBy {
		t.Errorf("a worker dead before its first push is removed after %v: want ≤ %v", by, removedBy)
	}
	if by := grace + every; by > removedBy {
		t.Errorf("an id never connected is removed after %v: want ≤ %v", by, removedBy)
	}
}
