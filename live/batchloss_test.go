package live

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/wire"
)

func lossPayload(loss float64) []byte {
	return binary.LittleEndian.AppendUint64(nil, math.Float64bits(loss))
}

func TestReportedLoss(t *testing.T) {
	for _, c := range []struct {
		name string
		b    []byte
		ok   bool
		want float64
		err  string
	}{
		{name: "none (an older client)", b: nil},
		{name: "a loss", b: lossPayload(2.25), ok: true, want: 2.25},
		{name: "zero", b: lossPayload(0), ok: true, want: 0},
		{name: "NaN", b: lossPayload(math.NaN()), err: "finite and non-negative"},
		{name: "+Inf", b: lossPayload(math.Inf(1)), err: "finite and non-negative"},
		{name: "-Inf", b: lossPayload(math.Inf(-1)), err: "finite and non-negative"},
		{name: "negative", b: lossPayload(-0.5), err: "finite and non-negative"},
		{name: "a float32", b: []byte{0, 0, 0x80, 0x3f}, err: "8 bytes (or none), not 4"},
		{name: "too long", b: append(lossPayload(1), 0), err: "not 9"},
	} {
		loss, ok, err := reportedLoss(c.b)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one saying %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || ok != c.ok || loss != c.want {
			t.Errorf("%s: %v %v %v, want %v %v", c.name, loss, ok, err, c.want, c.ok)
		}
	}
	var f wire.Frame
	setLoss(&f, 1.5)
	if loss, ok, err := reportedLoss(f.Bytes); err != nil || !ok || loss != 1.5 {
		t.Fatalf("setLoss then reportedLoss: %v %v %v, want 1.5", loss, ok, err)
	}
}

// TestCoordinatorBatchLoss: the coordinator totals the losses reported
// with counted pushes, once each (not a retry's), leaves out reports
// without one, and refuses a bad one without counting its push; the
// evaluations take the mean over each window between them.
func TestCoordinatorBatchLoss(t *testing.T) {
	c := stateCoord(t, "asp", 2)
	c.target = 1000
	for p := range 2 {
		if _, _, err := c.hello(&wire.Peer{}, int32(p), workerState{Inc: uint64(p + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	var resp wire.Frame
	report := func(p int, seq uint64, loss []byte) error {
		t.Helper()
		_, _, err := c.clock(p, clockReport{seq: seq, loss: loss}, &resp)
		return err
	}
	var ev Evaluations
	window := func() *float64 { return ev.batchLoss(c.Stats()) }

	if l := window(); l != nil {
		t.Fatalf("before any report: batch loss %v, want none", *l)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(report(0, 1, lossPayload(2)))
	must(report(1, 1, lossPayload(3)))
	must(report(0, 1, lossPayload(2))) // a retry: its push and loss count once
	must(report(0, 2, nil))            // no loss: its push counts, not in the mean
	if l := window(); l == nil || *l != 2.5 {
		t.Fatalf("first window: %s, want the mean of 2 and 3", lossText(l))
	}
	if l := window(); l != nil {
		t.Fatalf("an evaluation with no report since the previous: %v, want none", *l)
	}
	// A bad loss is refused and changes nothing: its push is not counted,
	// and the same report with a good loss is the next one.
	st := c.Stats()
	for _, bad := range [][]byte{lossPayload(math.NaN()), lossPayload(math.Inf(1)), lossPayload(-1), {1, 2, 3}} {
		err := report(1, 2, bad)
		var re *wire.RemoteError
		if !errors.As(err, &re) || re.Code != wire.CodeBadRequest || !strings.Contains(re.Message, "worker 1") {
			t.Fatalf("a bad loss %x: error %v, want bad_request naming the worker", bad, err)
		}
	}
	after := c.Stats()
	if after.Pushes != st.Pushes || after.BatchLosses != st.BatchLosses || after.BatchLossSum != st.BatchLossSum || after.Refused != st.Refused+4 {
		t.Fatalf("refused reports changed the counts: %+v then %+v", st, after)
	}
	must(report(1, 2, lossPayload(1)))
	must(report(0, 3, lossPayload(0.5)))
	must(report(1, 3, lossPayload(0.25)))
	if l := window(); l == nil || math.Abs(*l-(1+0.5+0.25)/3) > 1e-15 {
		t.Fatalf("second window: %s, want the mean of 1, 0.5 and 0.25", lossText(l))
	}
	if got := c.Stats().Pushes; got != 6 {
		t.Fatalf("%d pushes counted, want 6", got)
	}

	// A restarted coordinator totals from zero: the window is the reports
	// since the restart, not a difference with the old totals.
	must(report(0, 4, lossPayload(9)))
	cs := c.Stats()
	cs.Restarts, cs.BatchLossSum, cs.BatchLosses = 1, 0.75, 1
	if l := ev.batchLoss(cs); l == nil || *l != 0.75 {
		t.Fatalf("after a restart: %s, want 0.75", lossText(l))
	}
}

func lossText(l *float64) string {
	if l == nil {
		return "none"
	}
	return strconv.FormatFloat(*l, 'g', -1, 64)
}
