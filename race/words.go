package race

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// This file: the race's verdict in words, and the small statistics its
// tests share.

func (r *racer) marginText() string {
	if r.cfg.Scale == Log {
		return trimG(r.cfg.Margin*100) + "%"
	}
	return trimG(r.cfg.Margin)
}

// effect is a Behind with its interval in words.
func (r *racer) effect(v, lo, hi float64) string {
	if r.cfg.Scale == Log {
		return fmt.Sprintf("%.3g× (95%% interval %.3g–%.3g×)", v, lo, hi)
	}
	return fmt.Sprintf("%.3g (95%% interval %.3g to %.3g)", v, lo, hi)
}

func pText(p float64) string {
	if p < 0.001 {
		return "< 0.001"
	}
	return fmt.Sprintf("= %.3g", p)
}

func trimG(v float64) string { return fmt.Sprintf("%.4g", v) }

func andList(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func stddev(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m := mean(xs)
	ss := 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// round6 keeps derived figures short and identical across platforms in
// summary.json.
func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }
