package live

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/live/proto"
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
		{name: "float32's largest", b: lossPayload(math.MaxFloat32), ok: true, want: math.MaxFloat32},
		// Two of these would make the coordinator's total infinite.
		{name: "beyond float32", b: lossPayload(math.MaxFloat64), err: "at most 3.4028234663852886e+38"},
		{name: "a float32", b: []byte{0, 0, 0x80, 0x3f}, err: "8 bytes (or none), not 4"},
		{name: "too long", b: append(lossPayload(1), 0), err: "not 9"},
	} {
		loss, ok, err := proto.ReportedLoss(c.b)
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
	proto.SetLoss(&f, 1.5)
	if loss, ok, err := proto.ReportedLoss(f.Bytes); err != nil || !ok || loss != 1.5 {
		t.Fatalf("setLoss then reportedLoss: %v %v %v, want 1.5", loss, ok, err)
	}
}

// TestCoordinatorBatchLoss: the coordinator totals the losses reported
// with counted pushes, once each (not a retry's), leaves out reports
// without one, and refuses a bad one without counting its push; the
// evaluations take the mean over each window between them.
func TestCoordinatorBatchLoss(t *testing.T) {
	c := stateCoord(t, "asp", 2)
	c.setTarget(1000)
	for p := range 2 {
		if _, _, err := c.hello(c.start, &wire.Peer{}, int32(p), proto.WorkerState{Inc: uint64(p + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	var resp wire.Frame
	report := func(p int, seq uint64, loss []byte) error {
		t.Helper()
		_, _, err := c.clock(c.start, nil, p, clockReport{seq: seq, loss: loss}, &resp)
		return err
	}
	var ev proto.Evaluations
	window := func() *float64 { return lossWindow(&ev, c.Stats()) }

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
}

// TestBatchLossAcrossRestart: the coordinator's loss totals are in its
// state file, so the first evaluation after a restart averages every
// report since the previous evaluation that the file holds, not only
// those since the restart; a file older than the previous evaluation
// starts the window at the restart; a file of the previous format
// restores with zero totals; bad totals are refused, changing nothing.
func TestBatchLossAcrossRestart(t *testing.T) {
	var resp wire.Frame
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	report := func(c *Coordinator, p int, seq uint64, loss float64) {
		t.Helper()
		_, _, err := c.clock(c.start, nil, p, clockReport{seq: seq, loss: lossPayload(loss)}, &resp)
		must(err)
	}
	newCoord := func() *Coordinator {
		c := stateCoord(t, "asp", 2)
		c.setTarget(1000)
		return c
	}
	// restart restores a coordinator from dir; each worker then says how
	// many of its reports were answered.
	restart := func(dir string, acked ...uint64) *Coordinator {
		t.Helper()
		st, err := readCoordState(dir)
		if err != nil || st == nil {
			t.Fatalf("read: %v %v", st, err)
		}
		r := newCoord()
		must(r.restore(r.start, st))
		for p, a := range acked {
			_, _, err := r.hello(r.start, &wire.Peer{}, int32(p), proto.WorkerState{Inc: uint64(p + 1), Seq: a, Acked: a, Clock: int64(a)})
			must(err)
		}
		return r
	}
	within := func(what string, l *float64, want float64) {
		t.Helper()
		if l == nil || math.Abs(*l-want) > 1e-15 {
			t.Fatalf("%s: batch loss %s, want %g", what, lossText(l), want)
		}
	}

	c := newCoord()
	for p := range 2 {
		_, _, err := c.hello(c.start, &wire.Peer{}, int32(p), proto.WorkerState{Inc: uint64(p + 1)})
		must(err)
	}
	var ev proto.Evaluations
	report(c, 0, 1, 2)
	report(c, 1, 1, 3)
	within("the first evaluation", lossWindow(&ev, c.Stats()), 2.5)
	// Reports after that evaluation and before the file, then one after
	// the file (answered, then the crash: its push comes back from the
	// worker, its loss is lost).
	report(c, 0, 2, 1)
	report(c, 1, 2, 0.5)
	dir := t.TempDir()
	must(c.saveState(dir))
	report(c, 0, 3, 7)

	r := restart(dir, 3, 2)
	if cs := r.Stats(); cs.Pushes != 5 || cs.BatchLosses != 4 || cs.BatchLossSum != 6.5 || cs.Restarts != 1 || cs.RestoredFrom != c.Stats().Incarnation {
		t.Fatalf("restored: %d pushes, %d losses summing to %g, %d restarts, from %x; want 5, 4, 6.5, 1, from %x",
			cs.Pushes, cs.BatchLosses, cs.BatchLossSum, cs.Restarts, cs.RestoredFrom, c.Stats().Incarnation)
	}
	report(r, 1, 3, 0.25)
	within("the first evaluation after the restart", lossWindow(&ev, r.Stats()), (1+0.5+0.25)/3)
	report(r, 0, 4, 4)
	within("the next one", lossWindow(&ev, r.Stats()), 4)

	// The file written before the previous evaluation: the reports it
	// lacks are lost, so the window is the reports since the restart.
	must(r.saveState(dir))
	report(r, 1, 4, 9)
	within("the evaluation after the file", lossWindow(&ev, r.Stats()), 9)
	report(r, 0, 5, 100) // after that evaluation, after the file: lost
	r2 := restart(dir, 5, 4)
	report(r2, 1, 5, 0.125)
	report(r2, 0, 6, 0.375)
	within("restored from a file older than the previous evaluation", lossWindow(&ev, r2.Stats()), 0.25)

	// A file of the previous format (no totals, no writer's name)
	// restores with zero totals; the window is the reports since.
	b, err := os.ReadFile(coordFile(dir))
	must(err)
	var m map[string]any
	must(json.Unmarshal(b, &m))
	for _, k := range []string{"batch_loss_sum", "batch_losses", "incarnation"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("the state file has no %q: %s", k, b)
		}
		delete(m, k)
	}
	b, err = json.Marshal(m)
	must(err)
	must(os.WriteFile(coordFile(dir), b, 0o644))
	old := restart(dir, 5, 4)
	if cs := old.Stats(); cs.BatchLosses != 0 || cs.BatchLossSum != 0 || cs.RestoredFrom != 0 || cs.Pushes != 9 {
		t.Fatalf("a file of the previous format restored %d losses summing to %g, from %x, %d pushes; want 0, 0, none, 9", cs.BatchLosses, cs.BatchLossSum, cs.RestoredFrom, cs.Pushes)
	}
	report(old, 1, 5, 0.75)
	within("restored from a file of the previous format", lossWindow(&ev, old.Stats()), 0.75)

	// A coordinator of an older binary names no incarnation: whether its
	// totals go on from the previous evaluation's cannot be told, so each
	// window starts at what it restored (none here: all its reports).
	var older proto.Evaluations
	cs := proto.CoordStats{BatchLossSum: 3, BatchLosses: 2}
	within("an older coordinator's first evaluation", lossWindow(&older, cs), 1.5)
	cs.BatchLossSum, cs.BatchLosses = 4, 3 // or a restarted one's 4 over 3
	within("an older coordinator's next evaluation", lossWindow(&older, cs), 4.0/3)

	// Bad totals are refused, naming them, and the coordinator is as it
	// was.
	st, err := readCoordState(dir)
	must(err)
	for _, bad := range []struct {
		sum float64
		n   int64
	}{{math.NaN(), 3}, {math.Inf(1), 3}, {-1, 3}, {1, -1}, {0, -2}, {0.5, 0}} {
		b := *st
		b.BatchLossSum, b.BatchLosses = bad.sum, bad.n
		x := newCoord()
		before := x.Stats()
		if err := x.restore(x.start, &b); err == nil || !strings.Contains(err.Error(), "batch loss totals") {
			t.Errorf("totals of %d losses summing to %g: %v, want them refused", bad.n, bad.sum, err)
		}
		after := x.Stats()
		after.Seconds, before.Seconds = 0, 0
		if !reflect.DeepEqual(before, after) {
			t.Errorf("a refused state file changed the coordinator: %+v, then %+v", before, after)
		}
	}
}

func lossText(l *float64) string {
	if l == nil {
		return "none"
	}
	return strconv.FormatFloat(*l, 'g', -1, 64)
}

// lossWindow records an evaluation as of cs in ev and returns the mean
// mini-batch loss it read since the previous one.
func lossWindow(ev *proto.Evaluations, cs proto.CoordStats) *float64 {
	ev.Add(cs, 0, 1, 0)
	return ev.BatchLoss[len(ev.BatchLoss)-1]
}
