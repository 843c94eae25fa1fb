package worker

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/wire"
)

// refusal is the frame of an error reply with code to req.
func refusal(req *wire.Frame, code wire.ErrorCode, msg string) []byte {
	b, _ := wire.AppendFrame(nil, &wire.Frame{Type: wire.MsgError, ReqID: req.ReqID, Worker: req.Worker, Extra: uint64(code), Bytes: []byte(msg)}, 0)
	return b
}

// TestPushRefusalsWorkerSurvives (issue 37): a shard whose log is failing
// refuses pushes "unavailable" and changes nothing until it recovers; the
// worker offers the same push again until it is taken (it exited at the
// first refusal, so a shard that recovered had no workers left). A push a
// shard refuses as non-finite is a dropped push, not the worker's end.
func TestPushRefusalsWorkerSurvives(t *testing.T) {
	const n = 100
	for _, c := range []struct {
		name    string
		code    wire.ErrorCode
		refuse  int64 // refusals before the ack (non_finite: every try)
		dropped bool
	}{
		{"unavailable then taken", wire.CodeUnavailable, 4, false},
		{"non-finite", wire.CodeNonFinite, 1 << 40, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var tries atomic.Int64
			f := newFakeShard(t, n, func(int, *wire.Frame) []byte { return nil })
			f.push = func(req *wire.Frame) []byte {
				if k := tries.Add(1); k <= c.refuse {
					return refusal(req, c.code, "shard 0: refused for the test")
				}
				b, _ := wire.AppendFrame(nil, &wire.Frame{Type: wire.MsgPushAck, ReqID: req.ReqID, Worker: req.Worker, Tag: 9, Extra: 7}, 0)
				return b
			}
			var logs syncBuffer
			w, l := hostileLink(t, f.ln.Addr().String(), n, time.Minute, &logs)
			defer closeLink(l)
			ctx, cancel := context.WithTimeout(context.Background(), waitGuard)
			defer cancel()
			go l.push(ctx, linkOp{kind: opPush, data: make([]float32, n), clock: 1})
			select {
			case ev := <-w.events:
				if ev.kind != evPushed || ev.err != nil || ev.dropped != c.dropped {
					t.Fatalf("push event %+v, want acknowledged (dropped %v)", ev, c.dropped)
				}
			case <-ctx.Done():
				t.Fatalf("the push was never settled (%d tries)", tries.Load())
			}
			if c.code == wire.CodeUnavailable && tries.Load() != c.refuse+1 {
				t.Errorf("%d tries, want %d refused and the one taken", tries.Load(), c.refuse)
			}
			if c.code == wire.CodeNonFinite && tries.Load() != 1 {
				t.Errorf("a non-finite refusal offered again: %d tries", tries.Load())
			}
			if got := strings.Count(logs.String(), "level=WARN"); got != 1 {
				t.Errorf("%d warnings, want the refusal said once:\n%s", got, logs.String())
			}
		})
	}
}
