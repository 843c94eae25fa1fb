package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/pacer-ps/pacer/runstats"
)

// Winner names the paradigm that did best and says so in one plain sentence.
//
// When the runs trained a model and a target is known (sc.Target, else the
// runs' own target), the winner is the run that reached the target first;
// the sentence gives how many times sooner it was than each other run that
// reached it, and names the runs that never did. If nobody reached the target
// the name is empty and the sentence says which run came closest. Training
// runs without a target are ranked by final accuracy. Simulated runs (no
// accuracy) are ranked by throughput.
//
// Ties are broken by the higher final accuracy, then by order in runs, and the
// sentence states the tie. An empty runs gives an empty name and a sentence
// saying there is nothing to compare.
func Winner(sc Scenario, runs []runstats.Run) (name string, sentence string) {
	if len(runs) == 0 {
		return "", "There are no runs to compare."
	}
	if anyTrained(runs) {
		if t := target(sc, runs); t > 0 {
			return byTarget(t, runs)
		}
		return byValue(runs, finalAcc, "ended with the highest test accuracy", pct, "", "")
	}
	return byValue(runs, func(r *runstats.Run) float64 { return r.Throughput },
		"had the highest throughput", func(v float64) string { return rate(v) + " pushes/s" },
		"that of ", "made no pushes")
}

// target is the accuracy the race is run to: the scenario's, else the one the
// runs were trained against (pacer compare gives all runs the same).
func target(sc Scenario, runs []runstats.Run) float64 {
	if sc.Target > 0 {
		return sc.Target
	}
	for i := range runs {
		if t := runs[i].Target; t > 0 && !bad(t) {
			return t
		}
	}
	return 0
}

// timeTo is when r first reached acc: from its curve when it has one, else
// from its recorded time_to_target when that was measured against acc.
func timeTo(r *runstats.Run, acc float64) (float64, bool) {
	if len(r.Curve) > 0 {
		return r.TimeTo(acc)
	}
	if r.TimeToTarget != nil && (r.Target == acc || r.Target == 0) {
		return *r.TimeToTarget, true
	}
	return 0, false
}

// bestAcc is the highest accuracy a run ever showed.
func bestAcc(r *runstats.Run) float64 {
	best := max(r.BestAccuracy, r.FinalAccuracy)
	for _, p := range r.Curve {
		best = max(best, p[1])
	}
	return best
}

// finalAcc is the accuracy at the end of the run: the recorded value, else the
// curve's last point.
func finalAcc(r *runstats.Run) float64 {
	if r.FinalAccuracy > 0 || len(r.Curve) == 0 {
		return r.FinalAccuracy
	}
	return r.Curve[len(r.Curve)-1][1]
}

// same treats values within a relative 1e-9 as equal, so a tie that is one
// only up to rounding is still called a tie.
func same(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// rankTies orders the indices idx (all tied on the primary key) by final
// accuracy, then by input order, so the returned name is deterministic.
func rankTies(runs []runstats.Run, idx []int) {
	slices.SortStableFunc(idx, func(a, b int) int {
		fa, fb := finalAcc(&runs[a]), finalAcc(&runs[b])
		switch {
		case fa > fb:
			return -1
		case fa < fb:
			return 1
		}
		return a - b
	})
}

func byTarget(acc float64, runs []runstats.Run) (string, string) {
	type hit struct {
		i int
		t float64
	}
	var hits []hit
	var missed []string
	for i := range runs {
		if t, ok := timeTo(&runs[i], acc); ok {
			hits = append(hits, hit{i, t})
		} else {
			missed = append(missed, runs[i].Paradigm)
		}
	}
	goal := pct(acc) + " test accuracy"
	if len(hits) == 0 {
		best := 0
		for i := range runs {
			if bestAcc(&runs[i]) > bestAcc(&runs[best]) {
				best = i
			}
		}
		if bestAcc(&runs[best]) == 0 {
			return "", fmt.Sprintf("No paradigm reached %s.", goal)
		}
		return "", fmt.Sprintf("No paradigm reached %s; the closest was %s, with a best of %s.",
			goal, runs[best].Paradigm, pct(bestAcc(&runs[best])))
	}
	slices.SortStableFunc(hits, func(a, b hit) int {
		if same(a.t, b.t) {
			return 0
		}
		if a.t < b.t {
			return -1
		}
		return 1
	})
	t0 := hits[0].t
	var tied []int
	var slower []string
	for _, h := range hits {
		if same(h.t, t0) {
			tied = append(tied, h.i)
			continue
		}
		if t0 > 0 {
			slower = append(slower, times(h.t/t0)+" sooner than "+runs[h.i].Paradigm)
		} else {
			slower = append(slower, "before "+runs[h.i].Paradigm)
		}
	}
	rankTies(runs, tied)
	names := make([]string, len(tied))
	for k, i := range tied {
		names[k] = runs[i].Paradigm
	}
	var s string
	switch {
	case len(tied) > 1:
		s = fmt.Sprintf("%s tied, each reaching %s at %s", andList(names), goal, secs(t0))
	case len(runs) == 1:
		s = fmt.Sprintf("%s reached %s at %s", names[0], goal, secs(t0))
	case len(slower) == 0:
		s = fmt.Sprintf("%s was the only paradigm to reach %s, at %s", names[0], goal, secs(t0))
	default:
		s = fmt.Sprintf("%s reached %s first, at %s", names[0], goal, secs(t0))
	}
	if len(slower) > 0 {
		s += " — " + compared(slower)
	}
	if len(missed) > 0 {
		verb := "never reached it"
		s += "; " + andList(missed) + " " + verb
	}
	return names[0], s + "."
}

// byValue ranks runs by key (higher is better) and writes the sentence:
// "<name> <claim>, <value> — 1.9× <ratioPrefix><other> ...". Runs whose key
// is zero cannot be compared by ratio and are said to have <zeroSaying>.
func byValue(runs []runstats.Run, key func(*runstats.Run) float64, claim string,
	format func(float64) string, ratioPrefix, zeroSaying string) (string, string) {
	idx := make([]int, len(runs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		ka, kb := key(&runs[a]), key(&runs[b])
		if same(ka, kb) {
			return 0
		}
		if ka > kb {
			return -1
		}
		return 1
	})
	top := key(&runs[idx[0]])
	if top == 0 {
		if zeroSaying == "" {
			return "", "No paradigm recorded any test accuracy."
		}
		return "", "Every paradigm " + zeroSaying + "."
	}
	var tied, others []int
	for _, i := range idx {
		if same(key(&runs[i]), top) {
			tied = append(tied, i)
		} else {
			others = append(others, i)
		}
	}
	rankTies(runs, tied)
	names := make([]string, len(tied))
	for k, i := range tied {
		names[k] = runs[i].Paradigm
	}
	s := fmt.Sprintf("%s %s, %s", names[0], claim, format(top))
	if len(tied) > 1 {
		s = fmt.Sprintf("%s tied: each %s, %s", andList(names), claim, format(top))
	}
	var cmp, zero []string
	for _, i := range others {
		v := key(&runs[i])
		switch {
		case v == 0 && zeroSaying != "":
			zero = append(zero, runs[i].Paradigm)
		case ratioPrefix == "":
			cmp = append(cmp, fmt.Sprintf("%s (%s)", runs[i].Paradigm, format(v)))
		default:
			cmp = append(cmp, times(top/v)+" "+ratioPrefix+runs[i].Paradigm)
		}
	}
	if len(cmp) > 0 {
		if ratioPrefix == "" {
			s += ", ahead of " + compared(cmp)
		} else {
			s += " — " + compared(cmp)
		}
	}
	if len(zero) > 0 {
		s += "; " + andList(zero) + " " + zeroSaying
	}
	return names[0], s + "."
}

// compared lists the comparisons with the other runs, best first. Past three
// the sentence would stop being read at a glance, so only the next best and
// the last are named; the table has the rest.
func compared(items []string) string {
	if len(items) <= 3 {
		return andList(items)
	}
	return fmt.Sprintf("%s, the next best, and %s, the last of the %d others", items[0], items[len(items)-1], len(items))
}
