package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestQueueOrder: whether an event waits in the heap or in a lane, each
// pop is the first of the events queued then by (time, key), as a scan of
// them all finds it. The pushes mimic the simulator's: a lane mostly gets
// events in order (now plus one latency), sometimes one that comes before
// its last (which must go to the heap), and ties of time and of key.
func TestQueueOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var q queue
	var ref []event // what the queue holds
	now := time.Duration(0)
	for step := 0; step < 100000; step++ {
		if r.IntN(10) < 5 || len(ref) == 0 {
			e := event{key: uint64(r.IntN(50))}
			if l := r.IntN(nLanes + 1); l == nLanes {
				e.at = now + time.Duration(r.IntN(100))
				q.push(e)
			} else {
				e.at = now + time.Duration(10*(l+1)-r.IntN(3)) // mostly in order, at times not
				q.pushLane(l, e)
			}
			ref = append(ref, e)
		} else {
			m := 0
			for i := range ref {
				if ref[i].before(&ref[m]) {
					m = i
				}
			}
			want := ref[m]
			ref = slices.Delete(ref, m, m+1)
			if got := q.pop(); got != want {
				t.Fatalf("step %d: popped %+v, want %+v", step, got, want)
			}
			now = want.at
		}
		if q.len() != len(ref) {
			t.Fatalf("step %d: the queue holds %d events, want %d", step, q.len(), len(ref))
		}
	}
}
