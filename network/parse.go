package network

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ParseLink reads a link as the --link flag writes it:
// "rate=10Gbit,latency=50us", and for a link that degrades for a window
// of the cluster's time ",degrade=10,from=180s,to=360s" (its rate divided
// by 10 from 180 s to 360 s; to left out: to the end). A field left out
// keeps base's value. Rates are bits per second with a decimal unit (bit,
// Kbit, Mbit, Gbit, Tbit); latencies, from and to are Go durations.
func ParseLink(s string, base Link) (Link, error) {
	l := base
	s = strings.TrimSpace(s)
	if s == "" {
		return l, fmt.Errorf("network: empty link; want rate=RATE,latency=DURATION (e.g. rate=10Gbit,latency=50us)")
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		if !ok || v == "" {
			return l, fmt.Errorf("network: link field %q is not key=value (rate=RATE,latency=DURATION)", kv)
		}
		if seen[k] {
			return l, fmt.Errorf("network: link field %q given twice", k)
		}
		seen[k] = true
		switch k {
		case "rate":
			r, err := parseRate(v)
			if err != nil {
				return l, fmt.Errorf("network: rate=%s: %v", v, err)
			}
			l.Rate = r
		case "latency":
			d, err := time.ParseDuration(v)
			if err != nil {
				return l, fmt.Errorf("network: latency=%s: not a duration (e.g. 50us, 2ms)", v)
			}
			l.Latency = d
		case "degrade":
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || !(x > 0) {
				return l, fmt.Errorf("network: degrade=%s: not a number above 0 (the factor the rate is divided by, e.g. 10)", v)
			}
			l.Degrade = x
		case "from", "to":
			d, err := time.ParseDuration(v)
			if err != nil {
				return l, fmt.Errorf("network: %s=%s: not a duration of the cluster's time (e.g. 180s, 3m)", k, v)
			}
			if k == "from" {
				l.From = d
			} else {
				l.To = d
			}
		default:
			return l, fmt.Errorf("network: a link has no field %q (it takes rate, latency, and degrade, from, to)", k)
		}
	}
	return l, l.check("link")
}

var rateUnits = []struct {
	suffix string
	bits   float64
}{{"tbit", 1e12}, {"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1}}

// parseRate reads "10Gbit" (per second) as bytes per second.
func parseRate(v string) (float64, error) {
	low := strings.ToLower(v)
	low = strings.TrimSuffix(low, "/s")
	if b, ok := strings.CutSuffix(low, "bps"); ok {
		low = b + "bit" // 10Gbps = 10Gbit/s
	}
	for _, u := range rateUnits {
		if num, ok := strings.CutSuffix(low, u.suffix); ok {
			x, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
			if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
				return 0, fmt.Errorf("%q is not a number", num)
			}
			return x * u.bits / 8, nil
		}
	}
	return 0, fmt.Errorf("want a number and a unit of bits per second: bit, Kbit, Mbit, Gbit or Tbit (e.g. 10Gbit)")
}

// ParseOverride reads one per-index link, "1:rate=1Gbit" (--worker-link,
// --shard-link); the fields left out keep base's.
func ParseOverride(s string, base Link) (int, Link, error) {
	idx, rest, ok := strings.Cut(s, ":")
	if !ok {
		return 0, base, fmt.Errorf("network: %q: want INDEX:rate=RATE,latency=DURATION (e.g. 1:rate=1Gbit)", s)
	}
	i, err := strconv.Atoi(strings.TrimSpace(idx))
	if err != nil || i < 0 {
		return 0, base, fmt.Errorf("network: %q: index %q is not a whole number ≥ 0", s, idx)
	}
	l, err := ParseLink(rest, base)
	return i, l, err
}

// String writes l as ParseLink reads it.
func (l Link) String() string {
	s := "rate=" + FormatRate(l.Rate) + ",latency=" + l.Latency.String()
	if l.Degrade != 0 {
		s += ",degrade=" + strconv.FormatFloat(l.Degrade, 'g', -1, 64) + ",from=" + l.From.String()
		if l.To != 0 {
			s += ",to=" + l.To.String()
		}
	}
	return s
}

// FormatRate writes bytes per second in the largest bit unit that keeps
// the number at least 1.
func FormatRate(bytesPerSec float64) string {
	bits := bytesPerSec * 8
	for _, u := range rateUnits {
		if bits >= u.bits {
			name := strings.ToUpper(u.suffix[:1]) + u.suffix[1:]
			if u.suffix == "bit" {
				name = "bit"
			}
			return strconv.FormatFloat(bits/u.bits, 'g', -1, 64) + name
		}
	}
	return strconv.FormatFloat(bits, 'g', -1, 64) + "bit"
}

// ParseSpec builds a network from the flags' values: link is --link (""
// keeps DefaultLink), workers and shards the --worker-link and
// --shard-link overrides ("INDEX:fields", the fields left out keep the
// default link's), applyRate --apply-rate in floats per second.
func ParseSpec(link string, workers, shards []string, applyRate float64) (Spec, error) {
	s := Spec{Default: DefaultLink, ApplyRate: applyRate}
	if link != "" {
		l, err := ParseLink(link, DefaultLink)
		if err != nil {
			return s, fmt.Errorf("--link: %w", err)
		}
		s.Default = l
	}
	for _, o := range []struct {
		flag string
		in   []string
		out  *map[int]Link
	}{{"--worker-link", workers, &s.Workers}, {"--shard-link", shards, &s.Shards}} {
		for _, v := range o.in {
			i, l, err := ParseOverride(v, s.Default)
			if err != nil {
				return s, fmt.Errorf("%s: %w", o.flag, err)
			}
			if *o.out == nil {
				*o.out = map[int]Link{}
			}
			if _, dup := (*o.out)[i]; dup {
				return s, fmt.Errorf("%s: index %d given twice", o.flag, i)
			}
			(*o.out)[i] = l
		}
	}
	if !(applyRate >= 0) || math.IsInf(applyRate, 0) {
		return s, fmt.Errorf("--apply-rate=%g must be a finite number of floats per second ≥ 0 (0: instant)", applyRate)
	}
	return s, nil
}

// Overrides writes m's links as ParseOverride reads them ("I:fields"),
// in index order.
func Overrides(m map[int]Link) []string {
	var out []string
	for _, i := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%d:%s", i, m[i]))
	}
	return out
}

// String describes s in one line, overrides in index order.
func (s *Spec) String() string {
	var b strings.Builder
	b.WriteString(s.Default.String())
	for _, o := range []struct {
		what string
		m    map[int]Link
	}{{"worker", s.Workers}, {"shard", s.Shards}} {
		for _, i := range slices.Sorted(maps.Keys(o.m)) {
			fmt.Fprintf(&b, "; %s %d %s", o.what, i, o.m[i])
		}
	}
	if s.ApplyRate > 0 {
		fmt.Fprintf(&b, "; apply %g floats/s", s.ApplyRate)
	} else {
		b.WriteString("; instant applies")
	}
	return b.String()
}
