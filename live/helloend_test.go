package live

import (
	"testing"
	"time"

	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/wire"
)

// A Hello that counts the job's last push (a report outstanding when its
// worker was removed) ends the job there, as the report would have: the
// coordinator is done and the server is told to end it (info.ended: every
// worker gets a Shutdown, none a release). Before, the job ran on to the
// next counted report, one round past its target, and no one was told.
func TestHelloCountingLastPushEndsJob(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := sweepCoordOf(t, 2, t0)
	target := c.ms.Target()
	var resp wire.Frame
	for p := range 2 {
		if _, _, err := c.hello(t0, &wire.Peer{}, int32(p), proto.WorkerState{Inc: uint64(p + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := c.clock(t0, nil, 1, clockReport{seq: 1}, &resp); err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); c.ms.Pushes() < target-1; seq++ {
		if _, finished, err := c.clock(t0, nil, 0, clockReport{seq: seq}, &resp); err != nil || finished {
			t.Fatalf("push %d of worker 0: finished %v, %v", seq, finished, err)
		}
	}
	// Worker 1 pushes its second and is removed before its report lands.
	end := t0.Add(3 * c.timeout)
	for now := t0; !now.After(end); now = now.Add(c.every) {
		c.heartbeat(now, nil, 0)
		c.sweep(now)
	}
	if c.state(1) != removed {
		t.Fatalf("worker 1 not removed: state %d", c.state(1))
	}
	info, _, err := c.hello(end, nil, 1, proto.WorkerState{Inc: 2, Seq: 2, Acked: 1}) // nil: a joining worker is logged with its address, which a test peer lacks
	if err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); !info.ended || !st.Done || st.Pushes != target {
		t.Fatalf("after the Hello that counted push %d of %d: ended %v, done %v, pushes %d", target, target, info.ended, st.Done, st.Pushes)
	}
}
