// Package profile fits the timing models of a cluster to what a live job
// measured (each worker's iteration times, from its summary.json or its
// coordinator) and writes them as a scenario that pacer compare accepts:
// the first half of pacer advise. It is pure: no I/O, no clocks.
package profile

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/scenario"
)

// MinIterations is the fewest iterations a worker must have reported for
// its speed and jitter to be fitted.
const MinIterations = 10

// Fit is the timing the iterations show: a speed-1 worker's mean iteration
// (Base, the fastest worker's), each worker's speed (its mean iteration over
// Base) and the jitter (the coefficient of variation of a mean-1 log-normal,
// timing's jitter model, pooled over the workers).
type Fit struct {
	Base   time.Duration
	Speeds []float64
	Jitter float64
	// Tail is the straggler tail beyond the log-normal, if the iterations
	// show one (zero when they do not, or when they carry no histogram).
	Tail Tail
	// Workers are the figures fitted from, per worker.
	Workers []runstats.IterStats
	// Servers are the shards' fitted pull-reply delays (nil: the run
	// reported none).
	Servers []ServerDelay
}

// Tail is a straggler tail as timing's heavytail model draws it: with
// probability Q an iteration takes Delay·x longer (x ≥ 1 Pareto with index
// Alpha), Delay in units of Base. Events are the iterations it was fitted
// from.
type Tail struct {
	Q, Delay, Alpha float64
	Events          int64
}

// Straggler is the tail as a --straggler spec ("" without one): the
// heavytail model with a body of exactly 1 (the jitter gives the body its
// spread) and no bursts.
func (t Tail) Straggler() string {
	if t.Q == 0 {
		return ""
	}
	return fmt.Sprintf("heavytail:q=%g,body=1-1,delay=%g,alpha=%g,burst=0", t.Q, t.Delay, t.Alpha)
}

// FromRun fits a live run's worker_iterations and, where it reports them,
// its shards' pull replies (shard_pull_replies).
func FromRun(r *runstats.Run) (Fit, error) {
	f, err := FromStats(r.WorkerIterations)
	if err != nil || len(r.ShardPullReplies) == 0 {
		return f, err
	}
	f.Servers, err = FitServers(r.ShardPullReplies, f.Base)
	return f, err
}

// FromStats fits per-worker iteration figures.
func FromStats(ws []runstats.IterStats) (Fit, error) {
	if len(ws) == 0 {
		return Fit{}, fmt.Errorf("profile: no iteration times (worker_iterations): profile a live run of pacer train or compare --mode inproc|tcp, or a hand-run job, made by this version")
	}
	fastest := math.Inf(1)
	var df, ss float64
	for i, w := range ws {
		if w.N < MinIterations || !(w.Mean > 0) {
			return Fit{}, fmt.Errorf("profile: worker %d reported %d iterations; at least %d are needed to fit its speed and jitter", i, w.N, MinIterations)
		}
		fastest = min(fastest, w.Mean)
		// Pooled log-variance: each worker's spread about its own mean,
		// so different speeds do not read as jitter.
		df += float64(w.N - 1)
		ss += float64(w.N-1) * w.LogSD * w.LogSD
	}
	f := Fit{Base: time.Duration(fastest * float64(time.Second)).Round(time.Microsecond), Workers: ws}
	for _, w := range ws {
		f.Speeds = append(f.Speeds, round3(w.Mean/fastest))
	}
	// A log-normal with log-variance σ² has CV √(e^σ² − 1).
	f.Jitter = round3(math.Sqrt(math.Expm1(ss / df)))
	if t, sigma, medians, ok := fitTail(ws); ok {
		// The tail inflates the means and the log-spread: the body is read
		// from the medians and quartiles instead. A mean-1 log-normal's
		// median is e^(−σ²/2).
		f.Tail = t
		f.Jitter = round3(math.Sqrt(math.Expm1(sigma * sigma)))
		slowest := math.Inf(1)
		for _, m := range medians {
			slowest = min(slowest, m)
		}
		f.Base = time.Duration(slowest * math.Exp(sigma*sigma/2) * float64(time.Second)).Round(time.Microsecond)
		for i, m := range medians {
			f.Speeds[i] = round3(m / slowest)
		}
	}
	return f, nil
}

// Tail detection: an iteration is a straggler event when it is more than
// tailSigmas log-standard-deviations of the body (and at least tailMin
// times) above its worker's median; the tail is there when such events
// outnumber what the log-normal alone gives by tailZ standard deviations
// and at least tailEvents.
const (
	tailSigmas = 3.5
	tailMin    = 1.25
	tailZ      = 4
	tailEvents = 5
)

// fitTail reads the workers' histograms: each worker's times over its own
// median (so speeds do not read as spread), pooled; the body's log-spread
// from the pooled quartiles; the events above the threshold; and the
// Pareto scale and index of their excess over the median by maximum
// likelihood (each event at its bucket's middle). It reports the
// tail, the body's σ and each worker's median (seconds).
func fitTail(ws []runstats.IterStats) (Tail, float64, []float64, bool) {
	var medians []float64
	var pooled []ratioCount // time over its worker's median, with counts
	var n int64
	for _, w := range ws {
		if len(w.Hist) == 0 {
			return Tail{}, 0, nil, false
		}
		m := quantile(w.Hist, 0.5)
		medians = append(medians, m)
		for _, bc := range w.Hist {
			mid := runstats.IterBucketLow(int(bc[0])) * math.Exp2(0.5/runstats.IterBucketsPerOctave)
			pooled = append(pooled, ratioCount{mid / m, bc[1]})
			n += bc[1]
		}
	}
	slices.SortFunc(pooled, func(a, b ratioCount) int { return cmp.Compare(a.r, b.r) })
	q1, q3 := pooledQuantile(pooled, n, 0.25), pooledQuantile(pooled, n, 0.75)
	sigma := math.Log(q3/q1) / 1.349 // a normal's interquartile range is 1.349σ
	if !(sigma >= 0) || math.IsInf(sigma, 0) {
		return Tail{}, 0, nil, false
	}
	thr := max(math.Exp(tailSigmas*sigma), tailMin)
	var events int64
	var logSum float64
	var excess []ratioCount
	for _, rc := range pooled {
		if rc.r > thr {
			events += rc.c
			excess = append(excess, rc)
		}
	}
	// What the log-normal alone puts above the threshold.
	expect := float64(n) * 0.5 * math.Erfc(math.Log(thr)/sigma/math.Sqrt2)
	if sigma == 0 {
		expect = 0
	}
	if float64(events) < expect+tailZ*math.Sqrt(expect) || events < tailEvents {
		return Tail{}, 0, nil, false
	}
	// The Pareto's scale is the smallest excess seen (its maximum
	// likelihood estimate), at least the threshold's: an excess below
	// that is hidden in the body.
	u := math.Inf(1)
	for _, rc := range excess {
		u = min(u, rc.r-1)
	}
	for _, rc := range excess {
		logSum += float64(rc.c) * math.Log((rc.r-1)/u)
	}
	alpha := 10.0
	if logSum > 0 {
		alpha = min(10, max(0.5, float64(events)/logSum))
	}
	// The events' probability, less the log-normal's share of them.
	q := (float64(events) - expect) / float64(n)
	return Tail{Q: round3(q), Delay: round3(u), Alpha: round3(alpha), Events: events}, sigma, medians, true
}

type ratioCount struct {
	r float64
	c int64
}

// quantile is the p-quantile (seconds) of a histogram, interpolated
// log-linearly inside its bucket.
func quantile(h [][2]int64, p float64) float64 {
	var n int64
	for _, bc := range h {
		n += bc[1]
	}
	target := p * float64(n)
	var seen float64
	for _, bc := range h {
		if seen+float64(bc[1]) >= target {
			frac := (target - seen) / float64(bc[1])
			return runstats.IterBucketLow(int(bc[0])) * math.Exp2(frac/runstats.IterBucketsPerOctave)
		}
		seen += float64(bc[1])
	}
	return runstats.IterBucketLow(int(h[len(h)-1][0]) + 1)
}

// pooledQuantile is the p-quantile of sorted ratios with counts n in all,
// interpolated log-linearly between neighbours.
func pooledQuantile(rs []ratioCount, n int64, p float64) float64 {
	target := p * float64(n)
	var seen float64
	for i, rc := range rs {
		if seen+float64(rc.c) >= target {
			if i == 0 {
				return rc.r
			}
			prev := rs[i-1].r
			frac := (target - seen) / float64(rc.c)
			return prev * math.Pow(rc.r/prev, frac)
		}
		seen += float64(rc.c)
	}
	return rs[len(rs)-1].r
}

// round3 keeps three significant digits: more than the fit can tell.
func round3(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 3, 64), 64)
	return v
}

// Paradigms are the paradigms a profiled cluster of k workers is compared
// on: one of each kind that applies without server delays.
func Paradigms(k int) []string {
	ps := []string{"bsp", "asp", "ssp:s=3", "dssp:sl=3,su=15", "elastic:r=15"}
	if k >= 2 {
		ps = append(ps, "backup:b=1", fmt.Sprintf("softsync:n=%d", k))
	}
	return ps
}

// Scenario is the fitted cluster as a scenario file: name, the job's
// shards and model, every paradigm of Paradigms.
func (f Fit) Scenario(name string, shards int, model string) scenario.Scenario {
	desc := fmt.Sprintf("Profiled from a live job: %d workers, mean iteration of the fastest %s, speeds %v, jitter CV %g.",
		len(f.Speeds), f.Base, f.Speeds, f.Jitter)
	if s := f.Tail.Straggler(); s != "" {
		desc += fmt.Sprintf(" A straggler tail: %d iterations of %d took over %.3g× their worker's median (%s).",
			f.Tail.Events, f.iterations(), 1+f.Tail.Delay, s)
	}
	sd := ServerSpec(f.Servers)
	if sd != "" {
		desc += fmt.Sprintf(" Server delays from the shards' pull replies: %s.", sd)
	}
	return scenario.Scenario{Name: name, Description: desc, Paradigms: Paradigms(len(f.Speeds)),
		Workers: len(f.Speeds), Shards: shards, Speeds: f.Speeds, Jitter: f.Jitter, Straggler: f.Tail.Straggler(),
		ServerDelay: sd, Base: f.Base.String(), Model: model}
}

func (f Fit) iterations() int64 {
	var n int64
	for _, w := range f.Workers {
		n += w.N
	}
	return n
}
