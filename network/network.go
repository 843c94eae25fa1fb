// Package network models the links of a parameter-server cluster for the
// simulator: what moving a push or a pull through a worker's and a shard's
// network link costs, and how long a shard's apply holds its block. It is
// pure, like timing: no clock, no goroutines, no randomness; the model is a
// function of the event times it is given, and the same calls in the same
// order give the same times.
//
// # The model
//
// Every worker and every shard has one full-duplex link to a switch that
// is never the bottleneck: an uplink and a downlink, each with a rate
// (bytes per second) and a one-way latency. A transfer from a to b is a
// flow through a's uplink and b's downlink. The flows in progress share
// the links max-min fairly (SimGrid's flow-level model, by progressive
// filling): a link's capacity is split equally among its flows, except
// that a flow held below its share elsewhere (at its other link) leaves
// the rest to the others. Each start or end of a flow recomputes the rates
// of the flows connected to it through shared links, and nothing else. A
// transfer arrives one path latency (a's plus b's) after its last byte
// leaves.
//
// Its known error: TCP reaches its fair share at once (no slow start, no
// congestion window), loses nothing, and the switch is never the
// bottleneck (no shared buffers, no oversubscribed core).
//
// A link can degrade for a window of the cluster's time (Link.Degrade):
// its rate, both directions, is divided from From to To. A change is one
// more instant at which the shares are recomputed, like a start or an end,
// so a transfer in progress slows down mid-flight; Next gives the change
// instants among the ends while transfers are in progress (the caller
// stops there, as at an end), and a change with none in progress waits for
// the next start. Its known error beyond the above: the link changes at
// the instant given and its flows re-share at once.
//
// A shard applies an update at ApplyRate floats per second, one apply at a
// time; a pull or a push that reaches the shard while it applies waits for
// the apply (as the live shard's lock makes it wait).
package network

import (
	"fmt"
	"math"
	"time"
)

// HeaderBytes is the frame header every push and pull response carries
// (docs/protocol.md: 56 bytes, little-endian).
const HeaderBytes = 56

// Link is one endpoint's link to the switch.
type Link struct {
	Rate    float64       // bytes per second, each direction
	Latency time.Duration // one way, endpoint to switch
	// Degrade, above 0, divides Rate from From to To of the cluster's
	// time (To 0: to the end of the run); the latency stays. Zero, in
	// JSON left out, is a link that never changes.
	Degrade  float64       `json:",omitempty"`
	From, To time.Duration `json:",omitempty"`
}

// Defaults of the stated network: 10 Gbit/s and 50 µs each way, a
// datacenter's top-of-rack link; a shard applies 2·10⁹ floats per second
// (of the order the project's ShardApply benchmark measures for the mean
// of the gradients plus momentum SGD on one core; docs/benchmarks.md).
var (
	DefaultLink      = Link{Rate: 10e9 / 8, Latency: 50 * time.Microsecond}
	DefaultApplyRate = 2e9
)

// Spec describes a cluster's network.
type Spec struct {
	Default Link         // every link not overridden
	Workers map[int]Link // overrides by worker index
	Shards  map[int]Link // overrides by shard index
	// ApplyRate is floats per second a shard applies (0: instant).
	ApplyRate float64
}

// Net is a network in use: the flows in progress on its links and the
// shards' applies.
type Net struct {
	wl, sl              []Link
	workers, shards     int
	links               []link // worker uplinks, worker downlinks, shard uplinks, shard downlinks
	flows               []flow // by id; ids of ended flows are reused
	free                []int32
	ends                endHeap
	t                   time.Duration // the time of the changes not yet solved
	dirty               []int32       // links whose flows changed at t
	pending             []int32       // flows started at t
	releaf              []int32       // flows that became leaves at t
	touched             []int32       // classes whose next end changed
	solve               solver
	applyRate           float64
	applyFree           []time.Duration
	sBusyIn, sBusyOut   []time.Duration // time each shard's downlink / uplink served
	sBytesIn, sBytesOut []int64
	sServeIn, sServeOut []served      // the last serve of each shard's each direction
	changes             []change      // the links' rate changes, in time order
	nextChange          time.Duration // changes[0].at; noChange: none left
}

// change is an endpoint's link changing to rate at at.
type change struct {
	at     time.Duration
	worker bool
	idx    int
	rate   float64
}

// noChange is nextChange with no change left: no time reaches it.
const noChange = time.Duration(math.MaxInt64)

// served is serve(bytes, a shard link's rate): a shard's blocks are one
// size, so a division each transfer is saved.
type served struct {
	bytes int64
	d     time.Duration
}

func (m *served) of(bytes int64, rate float64) time.Duration {
	if m.bytes != bytes { // (0 bytes serve in 0, the zero memo)
		m.bytes, m.d = bytes, serve(bytes, rate)
	}
	return m.d
}

// New builds the network of a job with the given workers and shards. An
// override that names a worker or shard the job does not have is an error.
func New(s Spec, workers, shards int) (*Net, error) {
	if err := s.Default.check("default link"); err != nil {
		return nil, err
	}
	if !(s.ApplyRate >= 0) || math.IsInf(s.ApplyRate, 0) {
		return nil, fmt.Errorf("network: apply rate %g must be a finite number ≥ 0", s.ApplyRate)
	}
	n := &Net{wl: make([]Link, workers), sl: make([]Link, shards), workers: workers, shards: shards,
		applyRate: s.ApplyRate, applyFree: make([]time.Duration, shards),
		sBusyIn: make([]time.Duration, shards), sBusyOut: make([]time.Duration, shards),
		sBytesIn: make([]int64, shards), sBytesOut: make([]int64, shards),
		sServeIn: make([]served, shards), sServeOut: make([]served, shards)}
	for p := range n.wl {
		n.wl[p] = s.Default
	}
	for i := range n.sl {
		n.sl[i] = s.Default
	}
	for _, o := range []struct {
		what  string
		over  map[int]Link
		links []Link
	}{{"worker", s.Workers, n.wl}, {"shard", s.Shards, n.sl}} {
		for idx, l := range o.over {
			if idx < 0 || idx >= len(o.links) {
				return nil, fmt.Errorf("network: a %s link for %s %d, but the job has %s 0–%d", o.what, o.what, idx, o.what+"s", len(o.links)-1)
			}
			if err := l.check(fmt.Sprintf("%s %d's link", o.what, idx)); err != nil {
				return nil, err
			}
			o.links[idx] = l
		}
	}
	n.schedule()
	n.links = make([]link, 2*workers+2*shards)
	for l := range n.links {
		n.links[l].flows = n.links[l].inl[:0]
	}
	n.ends.pos = make([]int32, len(n.links))
	for c := range n.ends.pos {
		n.ends.pos[c] = -1
	}
	for p, l := range n.wl {
		n.links[p].rate, n.links[workers+p].rate = l.Rate, l.Rate
	}
	for i, l := range n.sl {
		n.links[2*workers+i].rate, n.links[2*workers+shards+i].rate = l.Rate, l.Rate
		n.links[2*workers+i].shard, n.links[2*workers+shards+i].shard = true, true
	}
	return n, nil
}

// MaxRate and MaxLatency bound a link (1 Tbit/s; 10 s).
const (
	MaxRate    = 1e12 / 8
	MaxLatency = 10 * time.Second
)

func (l Link) check(what string) error {
	if !(l.Rate > 0) || l.Rate > MaxRate {
		return fmt.Errorf("network: %s: rate %g bytes/s must be positive and at most 1Tbit", what, l.Rate)
	}
	if l.Latency <= 0 || l.Latency > MaxLatency {
		return fmt.Errorf("network: %s: latency %s must be positive and at most %s", what, l.Latency, MaxLatency)
	}
	return l.checkWindow(what)
}

// serve is the time a link of rate bytes per second takes for bytes
// alone, rounded up to the nanosecond (bytes·10⁹ first: exact for whole
// results).
func serve(bytes int64, rate float64) time.Duration {
	return time.Duration(math.Ceil(float64(bytes) * 1e9 / rate))
}

// Push starts a transfer of bytes from worker p to shard i at now and
// returns its id; Next and Done tell when it ends. It arrives Latency(p, i)
// after it ends.
func (n *Net) Push(now time.Duration, p, i int, bytes int64) int32 {
	id := n.start(now, int32(p), int32(2*n.workers+n.shards+i), bytes) // first: a change due at now applies
	n.sBusyIn[i] += n.sServeIn[i].of(bytes, n.sl[i].Rate)
	n.sBytesIn[i] += bytes
	return id
}

// Pull starts a transfer of bytes from shard i to worker p at now and
// returns its id; it arrives Latency(p, i) after it ends. (An apply in
// progress holds the reply: the caller starts it once ApplyFree has
// passed.)
func (n *Net) Pull(now time.Duration, i, p int, bytes int64) int32 {
	id := n.start(now, int32(n.workers+p), int32(2*n.workers+i), bytes)
	n.sBusyOut[i] += n.sServeOut[i].of(bytes, n.sl[i].Rate)
	n.sBytesOut[i] += bytes
	return id
}

// Next is when the first transfer in progress ends or, before it, a link
// changes (false: none is in progress), given no transfer starts before
// then. Done at that time ends the transfers and makes the change.
func (n *Net) Next() (time.Duration, bool) {
	if !n.Settled() {
		n.settle() // kept out of the common case
	}
	t, ok := n.first()
	if n.nextChange < noChange && (!ok || n.nextChange < t) && n.InFlight() > 0 {
		return n.nextChange, true
	}
	return t, ok
}

// Settled reports whether no transfer started or ended since the rates
// were last given out (then Next costs nothing but a look).
func (n *Net) Settled() bool { return len(n.dirty) == 0 && len(n.touched) == 0 }

// first is the first end of a class.
func (n *Net) first() (time.Duration, bool) {
	if len(n.ends.h) == 0 {
		return 0, false
	}
	return n.ends.h[0].at, true
}

// Done ends the transfers that end at now (Next's time), appends their
// ids to ids and returns it, and makes the link changes due at now. The
// rates change once, after all of them.
func (n *Net) Done(now time.Duration, ids []int32) []int32 {
	if !n.Settled() {
		n.settle()
	}
	for {
		at, ok := n.first()
		if !ok || at > now {
			n.advance(now) // the changes due at now, if no end made them
			return ids
		}
		c := n.ends.h[0].link
		n.ends.set(c, 0, false)
		L := &n.links[c]
		// Its first live flow ends at at: refresh computed at from it,
		// and nothing changed the class since (settle refreshed it).
		known := true
		for !L.fin.empty() {
			e := L.fin.top()
			if f := &n.flows[e.id]; !f.live || f.class != c || f.gen != e.gen {
				L.fin.pop()
				continue
			}
			if !known && L.vat+drain(e.fin-L.v, L.level) > now {
				break
			}
			known = false
			L.fin.pop()
			n.stop(now, e.id)
			ids = append(ids, e.id)
		}
		n.touch(c) // its next end, once settle has the new rates
	}
}

// InFlight is the number of transfers in progress.
func (n *Net) InFlight() int { return len(n.flows) - len(n.free) }

// Latency is the one-way latency between worker p and shard i: what a
// control message (a clock report, a release, a pull request) costs.
func (n *Net) Latency(p, i int) time.Duration { return n.wl[p].Latency + n.sl[i].Latency }

// Apply starts an apply of floats values on shard i at now (after the one
// in progress) and returns when it ends.
func (n *Net) Apply(now time.Duration, i int, floats int) time.Duration {
	if n.applyRate == 0 {
		return max(now, n.applyFree[i])
	}
	n.applyFree[i] = max(now, n.applyFree[i]) + serve(int64(floats), n.applyRate)
	return n.applyFree[i]
}

// ApplyFree is when shard i's apply in progress ends (≤ now: none).
func (n *Net) ApplyFree(i int) time.Duration { return n.applyFree[i] }

// ShardLink is what shard i's link carried: bytes in (pushes) and out
// (pulls), and the time each direction was busy serving them.
type ShardLink struct {
	BytesIn, BytesOut int64
	BusyIn, BusyOut   time.Duration
}

// Shard reports shard i's link.
func (n *Net) Shard(i int) ShardLink {
	return ShardLink{BytesIn: n.sBytesIn[i], BytesOut: n.sBytesOut[i], BusyIn: n.sBusyIn[i], BusyOut: n.sBusyOut[i]}
}

// BlockFloats is the values of each shard's block of a model of params
// values cut into shards near-equal ranges (job.Ranges' cut).
func BlockFloats(params, shards int) []int {
	out := make([]int, shards)
	for i := range out {
		out[i] = (i+1)*params/shards - i*params/shards
	}
	return out
}

// FrameBytes is what a push or pull of a block of n values moves: 4 bytes
// a value plus the frame header.
func FrameBytes(n int) int64 { return int64(n)*4 + HeaderBytes }

// BlockBytes is FrameBytes of each of BlockFloats' blocks.
func BlockBytes(params, shards int) []int64 {
	fl := BlockFloats(params, shards)
	out := make([]int64, len(fl))
	for i, n := range fl {
		out[i] = FrameBytes(n)
	}
	return out
}
