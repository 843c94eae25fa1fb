package paradigm

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// This file: the options of a paradigm spec (k=v after the name), each
// parsed with its bounds and the first error kept.

// optParser consumes options from kv, keeping the first error.
type optParser struct {
	spec string
	kv   map[string]string
	err  error
}

func (p *optParser) take(k string) (string, bool) {
	v, ok := p.kv[k]
	delete(p.kv, k)
	return v, ok && p.err == nil
}

// The largest option values a spec may state (docs/paradigms.md, "Limits").
// A staleness bound beyond MaxStaleness is ASP in all but name, and DSSP's
// controller walks su − sl candidates on every call; ElasticBSP predicts r
// pushes per worker at every barrier, and interval=mean:k keeps k
// intervals per worker. b, c and n count workers, which the
// job bounds (job.MaxWorkers); the parser caps them at the same figure so a
// huge number is refused here, where the option is named.
//
// delay's d is bounded by MaxDelay: every shard holds d gradients (each a
// copy of its block), and the paper's Figure 2 stops at 50.
//
// PSP's grace times t1, t2 are bounded by MaxGrace: a deadline is now plus
// the grace, and near the int64 limit that sum wrapped negative, so a grace
// meant as "wait for everyone" ended at once.
const (
	MaxStaleness   = 10_000
	MaxElasticR    = 10_000
	MaxElasticMean = 100
	MaxDelay       = 1_000
	maxWorkerCount = 100_000
	MaxGrace       = 24 * time.Hour
	MaxAutoEvery   = 100_000
)

// intv reads an integer option in [lo, hi]; def < 0 makes it required.
func (p *optParser) intv(k string, def, lo, hi int) int {
	v, ok := p.take(k)
	if !ok {
		if def < 0 && p.err == nil {
			p.err = specErr(p.spec, "missing %s=", k)
		}
		return max(def, 0)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		p.err = specErr(p.spec, "%s=%q must be an integer ≥ %d and ≤ %d (docs/paradigms.md, Limits)", k, v, lo, hi)
	}
	return n
}

// num reads a number option in [lo, hi].
func (p *optParser) num(k string, def, lo, hi float64) float64 {
	v, ok := p.take(k)
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || f < lo || f > hi {
		p.err = specErr(p.spec, "%s=%q must be a number in [%g, %g]", k, v, lo, hi)
	}
	return f
}

func (p *optParser) frac(k string, def float64) float64 {
	v, ok := p.take(k)
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
	if err == nil && strings.HasSuffix(v, "%") {
		f /= 100
	}
	if err != nil || math.IsNaN(f) || f <= 0 || f > 1 {
		p.err = specErr(p.spec, "%s=%q must be a fraction in (0, 1] (or a percentage)", k, v)
	}
	return f
}

// dur reads a grace time in [0, MaxGrace]. A bare number is seconds; it is
// range-checked before the conversion, whose result Go leaves to the
// platform for NaN, ±Inf and values past an int64 (amd64 happened to give
// a negative duration, arm64 saturates, so "t1=NaN" read as 0 there).
func (p *optParser) dur(k string) time.Duration {
	v, ok := p.take(k)
	if !ok || v == "0" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		f, ferr := strconv.ParseFloat(v, 64) // bare numbers are seconds
		err = ferr
		if !(f >= 0 && f <= MaxGrace.Seconds()) {
			err = strconv.ErrRange
		} else {
			d = time.Duration(f * float64(time.Second))
		}
	}
	if err != nil || d < 0 || d > MaxGrace {
		p.err = specErr(p.spec, "%s=%q must be a non-negative duration (e.g. 50ms, 0.5) of at most %s (docs/paradigms.md, Limits)", k, v, MaxGrace)
	}
	return d
}

// meanOf reads ElasticBSP's interval option: "last" (0) or "mean:k", the
// mean of the last k intervals, 1 ≤ k ≤ MaxElasticMean (mean:1 is last).
func (p *optParser) meanOf(key string) int {
	v, ok := p.take(key)
	if !ok || strings.EqualFold(v, "last") {
		return 0
	}
	ks, isMean := strings.CutPrefix(strings.ToLower(v), "mean:")
	k, err := strconv.Atoi(ks)
	if !isMean || err != nil || k < 1 || k > MaxElasticMean {
		p.err = specErr(p.spec, "%s=%q must be last or mean:k with an integer k ≥ 1 and ≤ %d (docs/paradigms.md, Limits)", key, v, MaxElasticMean)
		return 0
	}
	if k == 1 {
		return 0
	}
	return k
}

func (p *optParser) choice(k string, names []string, def int) int {
	v, ok := p.take(k)
	if !ok {
		return def
	}
	for i, n := range names {
		if strings.EqualFold(n, v) {
			return i
		}
	}
	p.err = specErr(p.spec, "%s=%q must be one of %s", k, v, strings.Join(names, "|"))
	return def
}
