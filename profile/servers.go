package profile

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/pacer-ps/pacer/runstats"
)

// ServerDelay is one shard's pull replies as timing's server-delay models
// draw them: every reply Const longer, and with probability SpikeP a
// further Spike. Replies and Events are the replies fitted from and those
// read as spikes.
type ServerDelay struct {
	Const          time.Duration
	SpikeP         float64
	Spike          time.Duration
	Replies, Event int64
}

// Server-delay fit: a delay shorter than ServerNegligible of the base
// iteration changes a prediction by less than that share, so it is left
// out (exported for the CLI's account of it); a reply is a spike when it exceeds its shard's median by that much
// and by spikeSigmas of the replies' log-spread, and spikes are fitted when
// there are at least spikeEvents of them. Shards whose fits lie within
// serverSame of their median are written as one term for all.
const (
	ServerNegligible = 0.01
	spikeSigmas      = 3.5
	spikeEvents      = 3
	serverSame       = 0.1
	// MinReplies is the fewest pull replies a shard must have answered for
	// its delay to be fitted.
	MinReplies = 10
)

// FitServers fits each shard's pull-reply times (a live run's
// shard_pull_replies) against base, the fitted speed-1 iteration. The
// simulator answers a pull at once; whatever a live shard took is its
// server delay: the median reply is the constant part, replies far above
// it are spikes, whose delay is their median excess over it.
func FitServers(shards []runstats.IterStats, base time.Duration) ([]ServerDelay, error) {
	out := make([]ServerDelay, len(shards))
	floor := ServerNegligible * base.Seconds()
	for i, s := range shards {
		if s.N < MinReplies || len(s.Hist) == 0 {
			return nil, fmt.Errorf("profile: shard %d answered %d pulls; at least %d are needed to fit its server delay", i, s.N, MinReplies)
		}
		m := quantile(s.Hist, 0.5)
		d := ServerDelay{Replies: s.N}
		if m >= floor {
			d.Const = seconds(m)
		}
		q1, q3 := quantile(s.Hist, 0.25), quantile(s.Hist, 0.75)
		sigma := math.Log(q3/q1) / 1.349 // as the straggler tail's body
		thr := max(m*math.Exp(spikeSigmas*sigma), m+floor)
		var excess []ratioCount // the spikes' excess over the median, with counts
		for _, bc := range s.Hist {
			mid := runstats.IterBucketLow(int(bc[0])) * math.Exp2(0.5/runstats.IterBucketsPerOctave)
			if mid > thr {
				excess = append(excess, ratioCount{mid - m, bc[1]})
				d.Event += bc[1]
			}
		}
		slices.SortFunc(excess, func(a, b ratioCount) int { return cmp.Compare(a.r, b.r) })
		excess, d.Event = aboveGap(excess)
		if d.Event >= spikeEvents {
			d.Spike = seconds(pooledQuantile(excess, d.Event, 0.5))
			d.SpikeP = round3(float64(d.Event) / float64(s.N))
		} else {
			d.Event = 0
		}
		out[i] = d
	}
	return out, nil
}

// spikeGap: a spike model's delays are one fixed length, a loaded
// machine's slow replies a continuum near the body. Where the excesses
// over the threshold fall into groups apart by this factor or more, the
// highest group is the spikes and the rest the machine's.
const spikeGap = 2

// aboveGap keeps the excesses (sorted, with counts) above their widest
// gap when that gap is spikeGap or wider, and reports their count.
func aboveGap(xs []ratioCount) ([]ratioCount, int64) {
	cut, widest := 0, 1.0
	for i := 1; i < len(xs); i++ {
		if g := xs[i].r / xs[i-1].r; g > widest {
			cut, widest = i, g
		}
	}
	if widest < spikeGap {
		cut = 0
	}
	var n int64
	for _, x := range xs[cut:] {
		n += x.c
	}
	return xs[cut:], n
}

func seconds(s float64) time.Duration {
	return time.Duration(round3(s) * float64(time.Second)).Round(time.Microsecond)
}

// ServerSpec is the shards' delays as a --server-delay spec ("" : none): a
// term for every shard where the shards agree (within serverSame), else a
// term per shard (shard=N).
func ServerSpec(ds []ServerDelay) string {
	if len(ds) == 0 {
		return ""
	}
	var terms []string
	consts := make([]float64, len(ds))
	for i, d := range ds {
		consts[i] = d.Const.Seconds()
	}
	if c, ok := alike(consts); ok {
		if c > 0 {
			terms = append(terms, fmt.Sprintf("const:delay=%s", seconds(c)))
		}
	} else {
		for i, d := range ds {
			if d.Const > 0 {
				terms = append(terms, fmt.Sprintf("const:delay=%s,shard=%d", d.Const, i))
			}
		}
	}
	spikes := make([]float64, len(ds))
	var events, replies int64
	for i, d := range ds {
		spikes[i] = d.Spike.Seconds()
		events += d.Event
		replies += d.Replies
	}
	if s, ok := alike(spikes); ok {
		if s > 0 {
			terms = append(terms, fmt.Sprintf("spike:p=%g,delay=%s", round3(float64(events)/float64(replies)), seconds(s)))
		}
	} else {
		for i, d := range ds {
			if d.Spike > 0 {
				terms = append(terms, fmt.Sprintf("spike:p=%g,delay=%s,shard=%d", d.SpikeP, d.Spike, i))
			}
		}
	}
	return strings.Join(terms, "+")
}

// alike is the median of xs and whether every x lies within serverSame of
// it (all zero counts as alike; some zero and some not does not).
func alike(xs []float64) (float64, bool) {
	s := slices.Sorted(slices.Values(xs))
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	for _, x := range xs {
		if math.Abs(x-m) > serverSame*m || (x == 0) != (m == 0) {
			return m, false
		}
	}
	return m, true
}
