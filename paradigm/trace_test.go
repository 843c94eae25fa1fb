package paradigm

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/pacer-ps/pacer/internal/tracetest"
)

// TestTraces replays the scripts in testdata/: a policy, then pushes,
// leaves, joins and timer ticks at given times, each answered by the
// decisions it led to (the log below "----"). Each file says at its top what
// it shows and which section of docs/paradigms.md (PARADIGMS.md) it checks;
// every expected block was checked by hand against it. After a deliberate
// change of behaviour, regenerate with
//
//	go test ./paradigm -run TestTraces -rewrite
//
// and read the diff line by line before committing it.
//
// Commands (times t in seconds since the job's start, never decreasing):
//
//	new workers=K shards=S      the spec string is the input; every worker
//	<spec>                      makes its first (full) pull
//	push w=P t=T                worker P's gradient is offered to every shard
//	                            (read at the versions its last pull got, tagged
//	                            with its clock), then the push is reported to
//	                            the policy
//	leave w=P t=T               P is removed (its heartbeats stopped)
//	join w=P t=T                P (re)joins and makes a full pull
//	slow shard=I until=U t=T    shard I's answers from T on arrive at U (a
//	                            slow server, PSP's delay model)
//	tick t=T                    what is due by T happens, at T: the shards'
//	                            τ1 windows (PSP), the slow shards' answers,
//	                            the pullers' τ2 windows
//
// The log, in the order the driver carries it out:
//
//	drop shard=I w=P gN read=V       a gradient the shard refused
//	apply shard=I v=V [lr×X]: ...    an update, each contribution as
//	                                 w<worker> g<id> τ<staleness> ×<weight>
//	pulled w=P v=[...] fresh=F/S     a pull that waited is complete (F shards
//	                                 answered at a new enough version); under
//	                                 PSP "tag=N" is the worker's iteration tag
//	late answer w=P shard=I v=V      an answer that arrived after its worker
//	                                 started computing (kept for the next
//	                                 iteration)
//	stale answer w=P shard=I v=V ... an answer left over from an earlier pull,
//	                                 too old for this one: asked again
//	release w=P clock=C min=M ...    the gate lets P start its next iteration
//	                                 and P pulls: "pull v=[...]" if every shard
//	                                 answers at once, "waits shard I for v≥N"
//	                                 otherwise, "local" when it goes on from its
//	                                 own copy; under DSSP "r=N" is the grant
//	                                 left, under ElasticBSP "barrier=C" the
//	                                 clock it will be held at
//	hold w=P clock=C min=M until ...  the push left P waiting
func TestTraces(t *testing.T) {
	tracetest.Run(t, func(t *testing.T, d *datadriven.TestData) tracetest.Driver { return newTracer(t, d) })
}

// tracer is a minimal driver, as the simulator is one: it carries out the
// policy's decisions, answers pulls, and logs both.
type tracer struct {
	pol    *Policy
	now    time.Duration
	nextID uint64
	quiet  int // the worker whose completed pull the caller logs (−1: none)
	ws     []traceWorker
	slow   []time.Duration // shard i's answers wait until slow[i] (a slow server)
	late   []delayed       // answers on their way from a slow shard
	log    strings.Builder
}

type delayed struct {
	at   time.Duration
	p, i int
	v    uint64 // the version served
}

type traceWorker struct {
	read      []uint64 // versions its last answers carried
	pending   []bool   // a request to the shard waits for a newer version
	clock     uint64   // iteration tag: pushes, or under PSP the version it jumped to
	pulling   bool
	computing bool
	gone      bool
}

func newTracer(t *testing.T, d *datadriven.TestData) *tracer {
	var k, s int
	d.ScanArgs(t, "workers", &k)
	d.ScanArgs(t, "shards", &s)
	sp, err := Parse(strings.TrimSpace(d.Input))
	if err != nil {
		d.Fatalf(t, "%v", err)
	}
	pol, err := New(sp, Config{Workers: k, Shards: s})
	if err != nil {
		d.Fatalf(t, "%v", err)
	}
	h := &tracer{pol: pol, quiet: -1, slow: make([]time.Duration, s)}
	fmt.Fprintf(&h.log, "%s workers=%d shards=%d\n", sp, k, s)
	for p := 0; p < k; p++ {
		h.ws = append(h.ws, traceWorker{read: make([]uint64, s), pending: make([]bool, s)})
		h.quiet = p
		h.pull(p, true)
		h.quiet = -1
		if !h.ws[p].computing {
			d.Fatalf(t, "worker %d's first pull did not complete", p)
		}
	}
	return h
}

func (h *tracer) Flush() string {
	s := h.log.String()
	h.log.Reset()
	return s
}

func (h *tracer) Do(t *testing.T, d *datadriven.TestData) {
	var at string
	d.ScanArgs(t, "t", &at)
	secs, err := strconv.ParseFloat(at, 64)
	if err != nil {
		d.Fatalf(t, "t=%s: %v", at, err)
	}
	now := time.Duration(math.Round(secs * 1e9))
	if now < h.now {
		d.Fatalf(t, "time goes back: %v after %v", now, h.now)
	}
	h.now = now
	p := -1
	if d.HasArg("w") {
		d.ScanArgs(t, "w", &p)
		if p < 0 || p >= len(h.ws) {
			d.Fatalf(t, "no worker %d", p)
		}
	}
	switch d.Cmd {
	case "push":
		w := &h.ws[p]
		if !w.computing {
			d.Fatalf(t, "worker %d is not computing (held, pulling or gone): it cannot push", p)
		}
		w.computing = false
		h.nextID++
		for i, a := range h.pol.Aggs {
			g := Grad{ID: h.nextID, Worker: p, Read: w.read[i], Clock: w.clock}
			ok, applied, ap := a.Push(now, g)
			if !ok {
				fmt.Fprintf(&h.log, "drop shard=%d w=%d g%d read=%d\n", i, p, g.ID, g.Read)
			}
			if applied {
				h.apply(i, ap)
			}
		}
		w.clock++
		h.carryOut(h.pol.Pushed(now, p))
		if h.pol.Gate.Held(p) {
			fmt.Fprintf(&h.log, "hold w=%d clock=%d min=%d until %s\n", p, h.pol.Gate.Clock(p), h.pol.Gate.Min(), h.until(p))
		}
	case "leave":
		if h.ws[p].gone {
			d.Fatalf(t, "worker %d has already left", p)
		}
		h.ws[p] = traceWorker{read: h.ws[p].read, pending: make([]bool, len(h.pol.Aggs)), gone: true}
		h.carryOut(h.pol.Leave(now, p))
	case "join":
		if !h.ws[p].gone {
			d.Fatalf(t, "worker %d is live: it cannot join", p)
		}
		h.ws[p].gone = false
		for _, q := range h.pol.Join(now, p, nil) {
			h.release(q, true)
		}
	case "slow":
		var i int
		var until string
		d.ScanArgs(t, "shard", &i)
		d.ScanArgs(t, "until", &until)
		secs, err := strconv.ParseFloat(until, 64)
		if err != nil || i < 0 || i >= len(h.slow) {
			d.Fatalf(t, "slow shard=%d until=%s", i, until)
		}
		h.slow[i] = time.Duration(math.Round(secs * 1e9))
	case "tick":
		for i, a := range h.pol.Aggs {
			if dl, ok := a.Deadline(); ok && dl <= now {
				if ok, ap := a.Tick(now); ok {
					h.apply(i, ap)
				}
			}
		}
		due := h.late
		h.late = nil
		for _, a := range due {
			if a.at <= now {
				h.deliver(a.p, a.i, a.v)
			} else {
				h.late = append(h.late, a)
			}
		}
		for q := range h.ws {
			pl := h.pol.Pullers[q]
			if dl, ok := pl.Deadline(); ok && dl <= now && h.ws[q].pulling && pl.Tick(now) {
				h.ready(q)
			}
		}
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
}

func (h *tracer) carryOut(rd Ready) {
	for _, a := range rd.Applies {
		h.apply(a.Shard, a.Apply)
	}
	for _, q := range rd.Released {
		h.release(q, false)
	}
}

func (h *tracer) apply(i int, a Apply) {
	fmt.Fprintf(&h.log, "apply shard=%d v=%d", i, a.Version)
	if a.LRScale != 1 {
		fmt.Fprintf(&h.log, " lr×%s", num(a.LRScale))
	}
	h.log.WriteString(":")
	for j, c := range a.Grads {
		sep := ","
		if j == 0 {
			sep = ""
		}
		fmt.Fprintf(&h.log, "%s w%d g%d τ%d ×%s", sep, c.Worker, c.ID, c.Staleness, num(c.Weight))
	}
	h.log.WriteString("\n")
	// Answer the requests this version satisfies.
	for q := range h.ws {
		w := &h.ws[q]
		if w.pending[i] && a.Version >= h.pol.Pullers[q].MinVersion(i) {
			h.answer(q, i)
		}
	}
}

// release starts q's pull and logs the release with the pull's outcome.
func (h *tracer) release(q int, first bool) {
	fmt.Fprintf(&h.log, "release w=%d clock=%d min=%d", q, h.pol.Gate.Clock(q), h.pol.Gate.Min())
	switch g := h.pol.Gate.(type) {
	case *dsspGate:
		if g.r[q] > 0 {
			fmt.Fprintf(&h.log, " r=%d", g.r[q])
		}
	case *elasticGate:
		fmt.Fprintf(&h.log, " barrier=%d", g.barrier[q])
	}
	h.quiet = q
	local := h.pull(q, first)
	h.quiet = -1
	w := &h.ws[q]
	switch {
	case local:
		h.log.WriteString(" local\n")
	case w.computing:
		fmt.Fprintf(&h.log, " pull v=%v", w.read)
		if h.pol.Spec.Kind == PSP {
			fmt.Fprintf(&h.log, " tag=%d", w.clock)
		}
		h.pending(q)
		h.log.WriteString("\n")
	default:
		h.log.WriteString(" waits")
		h.pending(q)
		h.log.WriteString("\n")
	}
}

// pending logs the requests of q that still wait.
func (h *tracer) pending(q int) {
	for i, pend := range h.ws[q].pending {
		if pend {
			fmt.Fprintf(&h.log, " shard %d for v≥%d", i, h.pol.Pullers[q].MinVersion(i))
		}
	}
}

// pull starts worker p's pull: every shard whose version is new enough
// answers at once, the others when an apply reaches it (the simulator's
// rule). It reports a worker that goes on from its own copy without
// asking. It logs nothing: release and ready do.
func (h *tracer) pull(p int, first bool) bool {
	w := &h.ws[p]
	pl := h.pol.Pullers[p]
	pl.Start(h.now, w.clock, w.read, first)
	w.pulling = true
	if pl.Ready() {
		w.pulling, w.computing = false, true // ElasticBSP local-only inside a superstep
		return true
	}
	ask := []int{}
	for i := range h.pol.Aggs {
		if !w.pending[i] {
			w.pending[i] = true
			ask = append(ask, i)
		}
	}
	for _, i := range ask {
		if h.pol.Aggs[i].Version() >= pl.MinVersion(i) {
			h.answer(p, i)
		}
	}
	return false
}

// answer serves worker p shard i's current version: at once, or from a
// slow shard when its delay ends (tick).
func (h *tracer) answer(p, i int) {
	v := h.pol.Aggs[i].Version()
	if h.now < h.slow[i] {
		h.late = append(h.late, delayed{at: h.slow[i], p: p, i: i, v: v})
		return
	}
	h.deliver(p, i, v)
}

// deliver hands worker p shard i's answer at version v. An answer too old
// for the pull in progress (left over from an earlier pull) is asked again,
// as the simulator does.
func (h *tracer) deliver(p, i int, v uint64) {
	w := &h.ws[p]
	if w.gone {
		return
	}
	w.pending[i], w.read[i] = false, v
	if !w.pulling {
		fmt.Fprintf(&h.log, "late answer w=%d shard=%d v=%d\n", p, i, v)
		return
	}
	pl := h.pol.Pullers[p]
	if pl.Response(h.now, i, v) {
		h.ready(p)
		return
	}
	if !pl.Fresh(i) {
		fmt.Fprintf(&h.log, "stale answer w=%d shard=%d v=%d: asks again for v≥%d\n", p, i, v, pl.MinVersion(i))
		w.pending[i] = true
		if h.pol.Aggs[i].Version() >= pl.MinVersion(i) {
			h.answer(p, i)
		}
	}
}

// ready starts p's compute. A pull that completes inside release is logged
// by release; one that waited logs here.
func (h *tracer) ready(p int) {
	w := &h.ws[p]
	pl := h.pol.Pullers[p]
	w.pulling, w.computing = false, true
	w.clock = pl.NextClock(w.clock)
	if h.quiet == p {
		return // the release's line reports it
	}
	fresh := 0
	for i := range w.read {
		if pl.Fresh(i) {
			fresh++
		}
	}
	fmt.Fprintf(&h.log, "pulled w=%d v=%v fresh=%d/%d", p, w.read, fresh, len(w.read))
	if h.pol.Spec.Kind == PSP {
		fmt.Fprintf(&h.log, " tag=%d", w.clock)
	}
	h.log.WriteString("\n")
}

// until says what ends p's hold.
func (h *tracer) until(p int) string {
	var g *gateBase
	switch gt := h.pol.Gate.(type) {
	case *dsspGate:
		for s, list := range gt.waiters {
			for _, r := range list {
				if int(r.p) == p && gt.gens.live(gt.held, r.p, r.gen) {
					return fmt.Sprintf("w%d's next push", s)
				}
			}
		}
		g = &gt.gateBase
	case *sspGate:
		g = &gt.gateBase
	case *elasticGate:
		return "every live worker reaches its barrier"
	default:
		return "?"
	}
	for _, it := range g.hq {
		if int(it.p) == p && g.gens.live(g.held, it.p, it.gen) {
			return fmt.Sprintf("min≥%d", it.need)
		}
	}
	return "?"
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }
