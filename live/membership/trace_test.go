package membership

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/pacer-ps/pacer/internal/tracetest"
	"github.com/pacer-ps/pacer/job"
)

// TestTraces replays the scripts in testdata/: a job's membership, then
// Hellos, clock reports, heartbeats and sweeps at given times, each
// answered by what the table decided (the log below "----"). Each file says
// at its top what it shows; every expected block was checked by hand
// against the rules in membership.go. After a deliberate change of
// behaviour, regenerate with
//
//	go test ./live/membership -run TestTraces -rewrite
//
// and read the diff line by line before committing it.
//
// Commands (times t in seconds since the job's start, never decreasing):
//
//	new workers=K target=N timeout=D [grace=D] [every=D] [cap=N]
//	                            a job of K workers ending at N pushes;
//	                            timeout=default is the job's default; grace
//	                            and every default to Timing(timeout), cap
//	                            to 2K
//	hello w=P inc=I [seq=S] [acked=A] t=T
//	                            a worker's control Hello under id P (−1:
//	                            join), from process I, which has made S
//	                            reports and had A answered
//	push w=P seq=S t=T          P's clock report of its push S
//	beat w=P t=T                P's heartbeat
//	sweep t=T                   one sweep at T
//	tick t=T [beats=P,Q]        sweeps every period from the last sweep up
//	                            to T; the listed workers beat before each
//	finish t=T                  a stop request
//	save                        the state file is written (as by a
//	                            checkpoint)
//	restart t=T [blind]         the coordinator restarts at T from the last
//	                            save (blind: with no file)
//	show t=T                    every id's record and the job's counts
//
// The log:
//
//	admit w=P ...               a Hello admitted: joined (the gate takes the
//	                            id again), returning (another process),
//	                            fresh was=Q (a removed join's process whose
//	                            id Q went to another join, given this one),
//	                            resync (a restored id's own process; gate: its
//	                            clock is adopted), reconnect (the live
//	                            process's new connection), displaced (it
//	                            replaces another process), counted=N
//	                            (pushes this Hello counted), finished
//	refused (code): ...         a frame refused
//	counted w=P seq=S pushes=N/T [finished]
//	retry w=P seq=S             the last counted report again
//	rejoined w=P seq=S          a removed id's report: admitted again, not
//	                            counted
//	after end w=P seq=S counted|not counted
//	removed w=P at=T silent=D   a live id silent beyond its limit
//	removed w=P at=T never connected
//	stalled at=T gap=D          a late sweep, which removes no one
//	ended | already ended       a stop request's outcome
func TestTraces(t *testing.T) {
	tracetest.Run(t, func(t *testing.T, d *datadriven.TestData) tracetest.Driver { return newTracer(t, d) })
}

// t0 is the traces' zero: the job's start.
var t0 = time.Unix(1_000_000, 0)

type tracer struct {
	cfg   Config
	tab   *Table
	now   time.Duration // since t0
	swept time.Duration // the last sweep
	saved *Saved
	log   strings.Builder
}

func secs(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

func newTracer(t *testing.T, d *datadriven.TestData) *tracer {
	var k int
	var target int64
	var timeout string
	d.ScanArgs(t, "workers", &k)
	d.ScanArgs(t, "target", &target)
	d.ScanArgs(t, "timeout", &timeout)
	cfg := Config{Workers: k, IDCap: 2 * k, Target: target}
	if timeout == "default" {
		cfg.Timeout = job.DefaultHeartbeatTimeout
	} else {
		cfg.Timeout = duration(t, d, timeout)
	}
	cfg.Grace, cfg.Every = Timing(cfg.Timeout)
	if d.HasArg("grace") {
		var g string
		d.ScanArgs(t, "grace", &g)
		cfg.Grace = duration(t, d, g)
	}
	if d.HasArg("every") {
		var e string
		d.ScanArgs(t, "every", &e)
		cfg.Every = duration(t, d, e)
	}
	if d.HasArg("cap") {
		d.ScanArgs(t, "cap", &cfg.IDCap)
	}
	h := &tracer{cfg: cfg, tab: New(cfg, t0)}
	fmt.Fprintf(&h.log, "workers=%d cap=%d target=%d timeout=%s grace=%s every=%s startup allowance=%s beat every %s\n",
		k, cfg.IDCap, target, secs(cfg.Timeout), secs(cfg.Grace), secs(cfg.Every),
		secs(max(cfg.Timeout, min(cfg.Grace, StartupTimeouts*cfg.Timeout))), secs(BeatPeriod(cfg.Timeout)))
	return h
}

func duration(t *testing.T, d *datadriven.TestData, s string) time.Duration {
	v, err := time.ParseDuration(s)
	if err != nil {
		d.Fatalf(t, "%v", err)
	}
	return v
}

func (h *tracer) Flush() string {
	s := h.log.String()
	h.log.Reset()
	return s
}

func (h *tracer) at() time.Time { return t0.Add(h.now) }

func (h *tracer) Do(t *testing.T, d *datadriven.TestData) {
	if d.HasArg("t") {
		var at string
		d.ScanArgs(t, "t", &at)
		s, err := strconv.ParseFloat(at, 64)
		if err != nil {
			d.Fatalf(t, "t=%s: %v", at, err)
		}
		now := time.Duration(s * float64(time.Second))
		if now < h.now {
			d.Fatalf(t, "t=%s goes back from %s", at, secs(h.now))
		}
		h.now = now
	} else if d.Cmd != "save" {
		d.Fatalf(t, "%s needs t=", d.Cmd)
	}
	switch d.Cmd {
	case "hello":
		var w int
		var pr Process
		d.ScanArgs(t, "w", &w)
		d.ScanArgs(t, "inc", &pr.Inc)
		if d.HasArg("seq") {
			d.ScanArgs(t, "seq", &pr.Seq)
		}
		if d.HasArg("acked") {
			d.ScanArgs(t, "acked", &pr.Acked)
		}
		a, err := h.tab.Hello(h.at(), w, pr)
		if h.refused(err) {
			return
		}
		fmt.Fprintf(&h.log, "admit w=%d", a.ID)
		for _, f := range []struct {
			on   bool
			name string
		}{{a.Joined, "joined"}, {a.Returning, "returning"}, {a.Resync, "resync"}, {a.ResyncGate, "gate"}, {a.Reconnect, "reconnect"}, {a.Displaced, "displaced"}} {
			if f.on {
				fmt.Fprintf(&h.log, " %s", f.name)
			}
		}
		if a.Fresh {
			fmt.Fprintf(&h.log, " fresh was=%d", a.Was)
		}
		if a.Counted > 0 {
			fmt.Fprintf(&h.log, " counted=%d pushes=%d/%d", a.Counted, h.tab.Pushes(), h.tab.Target())
		}
		if a.Finished {
			h.log.WriteString(" finished")
		}
		h.log.WriteString("\n")
	case "push":
		var w int
		var seq uint64
		d.ScanArgs(t, "w", &w)
		d.ScanArgs(t, "seq", &seq)
		r, err := h.tab.Clock(h.at(), w, seq)
		if h.refused(err) {
			return
		}
		switch r.Kind {
		case Counted:
			fmt.Fprintf(&h.log, "counted w=%d seq=%d pushes=%d/%d", w, seq, h.tab.Pushes(), h.tab.Target())
			if r.Finished {
				h.log.WriteString(" finished")
			}
			h.log.WriteString("\n")
		case AfterEnd:
			what := "not counted"
			if r.Counted {
				what = fmt.Sprintf("counted pushes=%d/%d", h.tab.Pushes(), h.tab.Target())
			}
			fmt.Fprintf(&h.log, "after end w=%d seq=%d %s\n", w, seq, what)
		default:
			fmt.Fprintf(&h.log, "%s w=%d seq=%d\n", r.Kind, w, seq)
		}
	case "beat":
		var w int
		d.ScanArgs(t, "w", &w)
		h.tab.Heartbeat(h.at(), w)
	case "sweep":
		h.sweep(h.now)
	case "tick":
		var beats []int
		if d.HasArg("beats") {
			for _, a := range d.CmdArgs {
				if a.Key == "beats" {
					for _, v := range strings.Split(strings.Join(a.Vals, ","), ",") {
						p, err := strconv.Atoi(v)
						if err != nil {
							d.Fatalf(t, "beats: %v", err)
						}
						beats = append(beats, p)
					}
				}
			}
		}
		end := h.now
		for at := h.swept + h.cfg.Every; at <= end; at += h.cfg.Every {
			for _, p := range beats {
				h.tab.Heartbeat(t0.Add(at), p)
			}
			h.sweep(at)
		}
	case "finish":
		if h.tab.Finish(h.at()) {
			h.log.WriteString("ended\n")
		} else {
			h.log.WriteString("already ended\n")
		}
	case "save":
		s := Saved{Pushes: h.tab.Pushes(), Done: h.tab.Done(), First: h.tab.First()}
		s.Removed, s.Never, s.Joined = h.tab.Counts()
		for p := range h.tab.Len() {
			s.Members = append(s.Members, h.tab.Member(p))
		}
		h.saved = &s
	case "restart":
		h.tab = New(h.cfg, h.at())
		h.swept = h.now
		if d.HasArg("blind") {
			h.tab.RestoreBlind()
			h.log.WriteString("restarted without a file\n")
			break
		}
		if h.saved == nil {
			d.Fatalf(t, "restart before save")
		}
		if err := h.tab.Restore(h.at(), *h.saved, true); err != nil {
			fmt.Fprintf(&h.log, "restore refused: %v\n", err)
			break
		}
		fmt.Fprintf(&h.log, "restored pushes=%d/%d ids=%d\n", h.tab.Pushes(), h.tab.Target(), h.tab.Len())
	case "show":
		for p := range h.tab.Len() {
			m := h.tab.Member(p)
			fmt.Fprintf(&h.log, "w%d %s", p, m.State)
			if !m.LastSeen.IsZero() {
				fmt.Fprintf(&h.log, " seen=%s", secs(m.LastSeen.Sub(t0)))
			}
			fmt.Fprintf(&h.log, " inc=%d seq=%d pushes=%d", m.Inc, m.Seq, m.Pushes)
			if m.Restored {
				h.log.WriteString(" restored")
			}
			if len(m.Displaced) > 0 {
				fmt.Fprintf(&h.log, " displaced=%v", m.Displaced)
			}
			if m.State == Live {
				fmt.Fprintf(&h.log, " limit=%s", secs(h.tab.Limit(p)))
			}
			h.log.WriteString("\n")
		}
		rem, never, joined := h.tab.Counts()
		fmt.Fprintf(&h.log, "pushes=%d/%d done=%v live=%d removed=%d never=%d joined=%d\n",
			h.tab.Pushes(), h.tab.Target(), h.tab.Done(), h.tab.Live(), rem, never, joined)
	default:
		d.Fatalf(t, "unknown command %s", d.Cmd)
	}
}

func (h *tracer) sweep(at time.Duration) {
	h.swept = at
	sw := h.tab.Sweep(t0.Add(at))
	if sw.Stalled {
		fmt.Fprintf(&h.log, "stalled at=%s gap=%s\n", secs(at), secs(sw.Gap))
	}
	for _, r := range sw.Removed {
		if r.Never {
			fmt.Fprintf(&h.log, "removed w=%d at=%s never connected\n", r.ID, secs(at))
		} else {
			fmt.Fprintf(&h.log, "removed w=%d at=%s silent=%s\n", r.ID, secs(at), secs(r.Silent))
		}
	}
}

func (h *tracer) refused(err error) bool {
	if err == nil {
		return false
	}
	var r *Refusal
	if !errors.As(err, &r) {
		fmt.Fprintf(&h.log, "error: %v\n", err)
		return true
	}
	code := map[Code]string{BadRequest: "bad request", Unavailable: "unavailable", Finished: "finished"}[r.Code]
	fmt.Fprintf(&h.log, "refused (%s): %s\n", code, r.Msg)
	return true
}
