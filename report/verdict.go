package report

import (
	"fmt"
	"strings"

	"github.com/pacer-ps/pacer/compare"
)

// Headline is the report's first sentence: the verdict with its
// uncertainty. won is whether it names a winner.
func Headline(s *compare.Summary) (sentence string, won bool) {
	gs := groupsOf(s)
	if len(gs) == 0 {
		return "There are no runs to compare.", false
	}
	if s.Race != nil {
		return raceHeadline(s, gs)
	}
	v := s.Verdict
	n := len(s.Seeds)
	if v.Metric == compare.MetricNone {
		return simSentence(gs, n), false
	}
	byName := map[string]pgroup{}
	for _, g := range gs {
		byName[g.name] = g
	}
	lead := byName[v.Leader]
	over := seedWord(n)
	var b strings.Builder
	timeMetric := v.Metric == compare.MetricTime
	value := func(g pgroup) string {
		if timeMetric {
			return ivText(g.st.TimeToTarget, secs, "not reached")
		}
		return ivText(g.st.AccuracyAtHorizon, pct, "")
	}
	goal := pct(v.Target) + " test accuracy"
	what := "test accuracy at the " + secs(s.HorizonSeconds) + " horizon"
	if s.HorizonSeconds == 0 {
		what = "final test accuracy"
	}
	if !timeMetric && v.Target > 0 {
		fmt.Fprintf(&b, "no paradigm reached %s in most of its %s, so %s decides: ", goal, over, what)
	}
	switch {
	case len(gs) == 1:
		fmt.Fprintf(&b, "only %s ran, so there is nothing to compare; median %s over %s.", lead.name, value(lead), over)
	case n < 2:
		fmt.Fprintf(&b, "no winner can be named from one seed (run --seeds 5 or more); %s did best, %s, ahead of %s, %s.",
			lead.name, value(lead), v.RunnerUp, value(byName[v.RunnerUp]))
	case v.Winner != nil:
		ru := byName[v.RunnerUp]
		if timeMetric {
			fmt.Fprintf(&b, "%s reached %s first: median %s over %s", lead.name, goal, value(lead), over)
			if lt, rt := lead.st.TimeToTarget.Median, ru.st.TimeToTarget.Median; rt != nil && *lt > 0 {
				fmt.Fprintf(&b, ", %s sooner than the runner-up %s at %s", times(*rt / *lt), ru.name, value(ru))
			} else {
				fmt.Fprintf(&b, "; the runner-up %s: %s", ru.name, value(ru))
			}
		} else if v.Target > 0 { // the sentence has named the metric already
			fmt.Fprintf(&b, "%s leads with a median of %s over %s, against the runner-up %s at %s",
				lead.name, value(lead), over, ru.name, value(ru))
		} else {
			fmt.Fprintf(&b, "%s had the highest %s: median %s over %s, against the runner-up %s at %s",
				lead.name, what, value(lead), over, ru.name, value(ru))
		}
		if e := ru.st.LeaderAdvantage; e != nil {
			fmt.Fprintf(&b, "; the paired test separates them (p %s; %s's advantage %s).", pText(*v.P), lead.name, e.Text())
		} else {
			fmt.Fprintf(&b, "; the paired test separates them (p %s).", pText(*v.P))
		}
	default:
		tied := v.Tied
		var parts []string
		for _, name := range tied[:min(len(tied), 3)] { // the table has the rest
			parts = append(parts, name+" at "+value(byName[name]))
		}
		if len(tied) > 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(tied)-3))
		}
		on := goal + " first"
		if !timeMetric {
			on = "the highest " + what
		}
		verb := "reaching "
		if !timeMetric {
			verb = ""
		}
		// Name the tied paradigm the test separates least from the leader:
		// the runner-up by median may itself be separated while a noisier
		// one is not.
		close, closeP := v.RunnerUp, v.P
		var best *float64
		for _, name := range tied {
			if p := byName[name].st.PVsLeader; name != v.Leader && p != nil && (best == nil || *p > *best) {
				close, closeP, best = name, p, p
			}
		}
		why := fmt.Sprintf("the paired test does not separate %s from %s (p %s)", v.Leader, close, pText(*closeP))
		if v.Reason != "" {
			why = v.Reason // every tied paradigm, with why it is tied
		}
		fmt.Fprintf(&b, "no clear winner: %s are tied on %s%s — medians over %s: %s; %s.", andList(tied), verb, on, over,
			strings.Join(parts, "; "), why)
	}
	if v.Target > 0 {
		var never []string
		for _, g := range gs {
			if g.st.Reached != nil && *g.st.Reached == 0 {
				never = append(never, g.name)
			}
		}
		if len(never) > 0 {
			out := strings.TrimSuffix(b.String(), ".")
			b.Reset()
			fmt.Fprintf(&b, "%s; %s never reached it.", out, andList(never))
		}
	}
	return capital(b.String()), v.Winner != nil
}

// simSentence: a timing-only comparison names no winner, since throughput
// bought with staleness or dropped gradients may train slower.
func simSentence(gs []pgroup, n int) string {
	best, calm := 0, 0
	for i, g := range gs {
		if *g.st.Throughput.Median > *gs[best].st.Throughput.Median {
			best = i
		}
		if *g.st.StalenessMean.Median < *gs[calm].st.StalenessMean.Median {
			calm = i
		}
	}
	desc := func(g pgroup) string {
		return fmt.Sprintf("%s pushes/s, waiting %s, staleness %.2f", rate(*g.st.Throughput.Median),
			pct(*g.st.WaitFraction.Median), *g.st.StalenessMean.Median)
	}
	s := fmt.Sprintf("Sim mode measures timing only and names no winner: %s had the highest throughput (%s; medians over %s)",
		gs[best].name, desc(gs[best]), seedWord(n))
	if calm != best {
		s += fmt.Sprintf(", %s the least staleness (%s)", gs[calm].name, desc(gs[calm]))
	}
	return s + ". Which trains fastest needs accuracy: run --mode virtual."
}

func seedWord(n int) string {
	if n == 1 {
		return "1 seed"
	}
	return fmt.Sprintf("%d seeds", n)
}

// ivText is a median with its interval and the interval's coverage, e.g.
// "275 s (260–290 s, 93.8% interval)"; a nil median reads none.
func ivText(iv *compare.Interval, f func(float64) string, none string) string {
	if iv == nil || iv.Median == nil {
		if none == "" {
			none = "—"
		}
		return none
	}
	if iv.Lo == nil || *iv.Lo == *iv.Median && iv.Hi != nil && *iv.Hi == *iv.Median {
		return f(*iv.Median)
	}
	hi := "not reached"
	if iv.Hi != nil {
		hi = f(*iv.Hi)
	}
	return fmt.Sprintf("%s (%s–%s, %s interval)", f(*iv.Median), unitless(f(*iv.Lo)), hi, pct(iv.Coverage))
}

// ivCell is the table's shorter form: "275 s [260–290]".
func ivCell(iv *compare.Interval, f func(float64) string, none string) string {
	if iv == nil || iv.Median == nil {
		return none
	}
	lo, hi := "", "∞"
	if iv.Lo != nil {
		lo = unitless(f(*iv.Lo))
	}
	if iv.Hi != nil {
		hi = unitless(f(*iv.Hi))
	}
	return fmt.Sprintf("%s [%s–%s]", f(*iv.Median), lo, hi)
}

func unitless(s string) string { return strings.TrimSuffix(strings.TrimSuffix(s, " s"), "%") }

func pText(p float64) string {
	if p < 0.001 {
		return "< 0.001"
	}
	return fmt.Sprintf("= %.3g", p)
}

// capital starts the sentence with a capital when it starts with our own
// words; a paradigm's name keeps its case ("asp", not "Asp").
func capital(s string) string {
	if strings.HasPrefix(s, "no ") || strings.HasPrefix(s, "only ") || strings.HasPrefix(s, "undecided ") {
		return strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}
