// Package network models the links of a parameter-server cluster for the
// simulator: what moving a push or a pull through a worker's and a shard's
// network link costs, and how long a shard's apply holds its block. It is
// pure, like timing: no clock, no goroutines, no randomness; the same
// calls in the same order give the same times.
//
// # The model
//
// Every worker and every shard has one full-duplex link to a switch that
// is never the bottleneck: an uplink and a downlink, each with a rate
// (bytes per second) and a one-way latency. A transfer from a to b passes
// a's uplink, then b's downlink. Each direction of a link is a FIFO server:
// a transfer occupies it for bytes/rate, in the order transfers reach it.
// The transfer is cut through (the downlink starts as soon as the uplink
// does), so it ends when both have served it, and arrives one path
// latency (a's plus b's) later.
//
// Why FIFO and not max-min fair sharing (SimGrid's flow model): it costs
// O(1) per transfer, with no rate recomputation when a flow starts or
// ends, so a simulation of 1,000 workers stays fast; and for the question
// the paradigms pose it gives the same answer. K pushes of B bytes into
// one shard (BSP's incast) end, under either model, after K·B/rate at the
// shard's downlink; a fast downlink fed by slow uplinks runs at the sum of
// their rates under either. Its known error is in the order within a burst:
// fair sharing finishes K simultaneous transfers together at K·B/rate,
// FIFO finishes the i-th at i·B/rate, so the mean transfer of a burst is
// about half as long as fair sharing says, while the last (what a barrier
// waits for) is the same. A worker's uplink sends its blocks for several
// shards one after another, where fair sharing would send them at once: the
// last shard hears from it up to one block's time later. Congestion control, packet loss, the switch's
// own buffers and TCP's slow start are not modelled.
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

// Net is a network in use: the links' FIFO queues and the shards' applies.
type Net struct {
	wl, sl              []Link
	wUp, wDown          []time.Duration // when each direction is free again
	sUp, sDown          []time.Duration
	applyRate           float64
	applyFree           []time.Duration
	sBusyIn, sBusyOut   []time.Duration // time each shard's downlink / uplink served
	sBytesIn, sBytesOut []int64
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
	n := &Net{wl: make([]Link, workers), sl: make([]Link, shards), wUp: make([]time.Duration, workers),
		wDown: make([]time.Duration, workers), sUp: make([]time.Duration, shards), sDown: make([]time.Duration, shards),
		applyRate: s.ApplyRate, applyFree: make([]time.Duration, shards),
		sBusyIn: make([]time.Duration, shards), sBusyOut: make([]time.Duration, shards),
		sBytesIn: make([]int64, shards), sBytesOut: make([]int64, shards)}
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
	return nil
}

// serve is the time a link of rate bytes per second takes for bytes,
// rounded up to the nanosecond (bytes·10⁹ first: exact for whole results).
func serve(bytes int64, rate float64) time.Duration {
	return time.Duration(math.Ceil(float64(bytes) * 1e9 / rate))
}

// send reserves one transfer through an uplink and a downlink and returns
// when it ends (before the latency).
func send(now time.Duration, upFree *time.Duration, up float64, downFree *time.Duration, down float64, bytes int64) (end, downBusy time.Duration) {
	t1 := max(now, *upFree)
	upEnd := t1 + serve(bytes, up)
	*upFree = upEnd
	t2 := max(t1, *downFree)
	downBusy = serve(bytes, down)
	downEnd := t2 + downBusy
	*downFree = downEnd
	return max(upEnd, downEnd), downBusy
}

// Push sends bytes from worker p to shard i at now and returns when they
// have all arrived.
func (n *Net) Push(now time.Duration, p, i int, bytes int64) time.Duration {
	end, busy := send(now, &n.wUp[p], n.wl[p].Rate, &n.sDown[i], n.sl[i].Rate, bytes)
	n.sBusyIn[i] += busy
	n.sBytesIn[i] += bytes
	return end + n.Latency(p, i)
}

// Pull sends bytes from shard i to worker p at now (or once the shard's
// apply in progress ends) and returns when they have all arrived.
func (n *Net) Pull(now time.Duration, i, p int, bytes int64) time.Duration {
	start := max(now, n.applyFree[i])
	end, _ := send(start, &n.sUp[i], n.sl[i].Rate, &n.wDown[p], n.wl[p].Rate, bytes)
	n.sBusyOut[i] += serve(bytes, n.sl[i].Rate)
	n.sBytesOut[i] += bytes
	return end + n.Latency(p, i)
}

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
