package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pacer-ps/pacer/compare"
	racing "github.com/pacer-ps/pacer/race"
)

// raceHeadline is the verdict of a race in a sentence or three: the winner,
// the equivalence set with the one to use and why, or undecided with the
// seeds it would take.
func raceHeadline(s *compare.Summary, gs []pgroup) (string, bool) {
	res, v := s.Race, s.Race.Verdict
	byName := map[string]pgroup{}
	for _, g := range gs {
		byName[g.name] = g
	}
	m := raceWords(s)
	seeds := 0
	for _, st := range res.Standings {
		seeds = max(seeds, st.Seeds)
	}
	over := seedWord(seeds)
	var left []string
	for _, st := range res.Standings {
		if st.Left > 0 {
			left = append(left, st.Paradigm)
		}
	}
	var b strings.Builder
	switch v.Kind {
	case racing.Winner:
		lead := byName[v.Leader]
		fmt.Fprintf(&b, "%s %s: median %s over %s; every other paradigm left the race, shown %s than the leader by more than the %s margin",
			v.Leader, m.best, m.value(lead), over, m.worse, m.margin)
		if ru := lastTest(res, s.Verdict.RunnerUp); ru != nil {
			fmt.Fprintf(&b, " (the closest, %s, %s)", ru.Paradigm, behindText(res, ru))
		}
		b.WriteString(".")
	case racing.Equivalent:
		// The set in the order listed: the leader is named by the table.
		var set []string
		for _, st := range res.Standings {
			if slices.Contains(v.Set, st.Paradigm) {
				set = append(set, st.Paradigm)
			}
		}
		fmt.Fprintf(&b, "%s %s here, within %s (two one-sided tests over %s)", andList(set), m.equal, m.margin, over)
		fmt.Fprintf(&b, "; use %s: %s.", v.Recommended, v.Why)
		if len(left) > 0 {
			fmt.Fprintf(&b, " %s left the race, shown %s.", andList(left), m.worse)
		}
	default:
		lead := byName[v.Leader]
		var open []string
		for _, name := range v.Set[1:] {
			open = append(open, name)
		}
		fmt.Fprintf(&b, "undecided after %d runs (the budget): %s leads at %s, but the race showed %s neither %s by more than %s nor within it",
			res.Runs, v.Leader, m.value(lead), andList(open), m.worse, m.margin)
		if v.SeedsNeeded > 0 {
			more := res.Runs + (v.SeedsNeeded-seeds)*len(v.Set)
			fmt.Fprintf(&b, "; at the spread observed, about %s seeds of each would decide (--budget %s)", group(int64(v.SeedsNeeded)), group(int64(more)))
		} else {
			b.WriteString("; the difference sits on the margin, so no number of seeds would decide it")
		}
		b.WriteString(".")
		if len(left) > 0 {
			fmt.Fprintf(&b, " %s left the race, shown %s.", andList(left), m.worse)
		}
	}
	if s.Verdict.Metric == compare.MetricTime {
		// A run that missed the target counts at the horizon: paradigms
		// that never reached it tie there, which the reader must be told.
		var never []string
		for _, g := range gs {
			if g.st.Reached != nil && *g.st.Reached == 0 {
				never = append(never, g.name)
			}
		}
		if len(never) > 0 {
			fmt.Fprintf(&b, " %s never reached %s: each of their runs counts at the horizon, so among them the race compares nothing.",
				andList(never), pct(s.Target))
		}
	}
	if m.note != "" {
		b.WriteString(" " + m.note)
	}
	return capital(b.String()), v.Kind == racing.Winner
}

// words is how a race's metric reads in sentences.
type words struct {
	best, equal, worse, margin, note string
	value                            func(g pgroup) string
}

func raceWords(s *compare.Summary) words {
	res := s.Race
	margin := trimZero(fmt.Sprintf("%.2f", res.Margin*100)) + "%"
	switch s.Verdict.Metric {
	case compare.MetricIteration:
		return words{best: "has the fastest iterations", equal: "have equally fast iterations", worse: "slower", margin: margin,
			note:  "Sim mode times iterations only: which paradigm reaches an accuracy first takes --mode virtual.",
			value: func(g pgroup) string { return rate(*g.st.Throughput.Median) + " pushes/s" }}
	case compare.MetricTime:
		goal := pct(s.Target) + " test accuracy"
		return words{best: "reaches " + goal + " fastest", equal: "reach " + goal + " equally fast", worse: "slower", margin: margin,
			value: func(g pgroup) string { return ivText(g.st.TimeToTarget, secs, "not reached") }}
	}
	what := "test accuracy at the " + secs(s.HorizonSeconds) + " horizon"
	if s.HorizonSeconds == 0 {
		what = "final test accuracy"
	}
	pts := trimZero(fmt.Sprintf("%.2f", res.Margin)) + " points"
	return words{best: "has the highest " + what, equal: "reach the same " + what, worse: "less accurate", margin: pts,
		value: func(g pgroup) string { return ivText(g.st.AccuracyAtHorizon, pct, "") }}
}

// lastTest is name's last test in the race: in the round it left, or the
// last round.
func lastTest(res *racing.Result, name string) *racing.Test {
	var t *racing.Test
	for i := range res.Rounds {
		for k := range res.Rounds[i].Tests {
			if res.Rounds[i].Tests[k].Paradigm == name {
				t = &res.Rounds[i].Tests[k]
			}
		}
	}
	return t
}

// behindText is a test's gap to the leader on the metric's scale.
func behindText(res *racing.Result, t *racing.Test) string {
	if res.Scale == racing.Log {
		return fmt.Sprintf("%.3g× the leader's time (95%% interval %.3g–%.3g×)", t.Behind, t.Lo, t.Hi)
	}
	return fmt.Sprintf("%.2g points behind (95%% interval %.2g to %.2g)", t.Behind, t.Lo, t.Hi)
}

// raceGrid is the race as a picture: a row per paradigm, a column per
// round; ● ran the round, ✕ ran it and left after it.
func raceGrid(s *compare.Summary) (head []string, rows [][]string) {
	res := s.Race
	head = []string{"round"}
	seeds := []string{"seeds"}
	for _, rd := range res.Rounds {
		head = append(head, fmt.Sprint(rd.Round))
		seeds = append(seeds, fmt.Sprint(rd.Seeds))
	}
	head = append(head, "")
	rows = append(rows, append(seeds, ""))
	for _, st := range res.Standings {
		row := []string{st.Paradigm}
		for _, rd := range res.Rounds {
			c := ""
			for _, name := range rd.Ran {
				if name == st.Paradigm {
					c = "●"
				}
			}
			if st.Left == rd.Round {
				c = "✕"
			}
			row = append(row, c)
		}
		row = append(row, standingText(s, st))
		rows = append(rows, row)
	}
	return head, rows
}

// standingText says how a paradigm's race ended.
func standingText(s *compare.Summary, st racing.Standing) string {
	v := s.Race.Verdict
	switch {
	case st.Left > 0:
		return fmt.Sprintf("left in round %d: %s", st.Left, st.Why)
	case st.Paradigm == v.Leader && v.Kind == racing.Winner:
		return "the winner"
	case st.Paradigm == v.Leader:
		return "the leader"
	}
	t := lastTest(s.Race, st.Paradigm)
	if t == nil {
		return ""
	}
	state := "equivalent to the leader"
	if t.Outcome == "open" {
		state = "undecided"
	}
	return fmt.Sprintf("%s: %s (p %s for equivalence)", state, behindText(s.Race, t), pText(t.PEquivalent))
}

// raceLines are the race's picture and figures as plain lines, for the
// text and Markdown reports (indented: a code block in Markdown).
func raceLines(s *compare.Summary) []string {
	head, rows := raceGrid(s)
	all := append([][]string{head}, rows...)
	w0 := 0
	for _, r := range all {
		w0 = max(w0, len([]rune(r[0])))
	}
	var out []string
	for _, r := range all {
		line := "    " + r[0] + strings.Repeat(" ", w0-len([]rune(r[0])))
		for _, c := range r[1 : len(r)-1] {
			line += " " + strings.Repeat(" ", max(0, 2-len([]rune(c)))) + c
		}
		if last := r[len(r)-1]; last != "" {
			line += "  " + last
		}
		out = append(out, strings.TrimRight(line, " "))
	}
	return out
}

// beatLines give, per paradigm, the probability that the leader does
// better on a new seed, with its interval.
func beatLines(s *compare.Summary) string {
	var parts []string
	for _, st := range s.Race.Standings {
		t := lastTest(s.Race, st.Paradigm)
		if t == nil || st.Paradigm == s.Race.Verdict.Leader {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.2f [%.2f–%.2f]", st.Paradigm, t.Beats, t.BeatsLo, t.BeatsHi))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("Probability that the leader (%s, or the leader of the round a paradigm left in) does better on a new seed: %s; %s.",
		s.Race.Verdict.Leader, strings.Join(parts, "; "), racing.BeatsMethod)
}

// raceMethods are the race's notes for the methods section.
func raceMethods(s *compare.Summary) []string {
	res := s.Race
	m := raceWords(s)
	out := []string{fmt.Sprintf("Race: %s. Margin %s, budget %d runs (%d spent), %d seeds each in the first round. "+
		"Among equivalent paradigms the recommendation is the one with the fewest stale gradients (median staleness), then the simplest (%s).",
		res.Method, m.margin, res.Budget, res.Runs, res.First, res.SimplicityOrder)}
	if l := beatLines(s); l != "" {
		out = append(out, l)
	}
	return out
}

// raceLabel is the verdict box's label on the HTML page.
func raceLabel(kind string) string {
	switch kind {
	case racing.Winner:
		return "Winner"
	case racing.Equivalent:
		return "Equivalent"
	}
	return "Undecided"
}

// raceColumns are the table's race columns: how far each paradigm got,
// its gap to the leader and the chance the leader does better.
func raceColumns(s *compare.Summary) []column {
	st := func(g pgroup) *racing.Standing {
		for i := range s.Race.Standings {
			if s.Race.Standings[i].Paradigm == g.name {
				return &s.Race.Standings[i]
			}
		}
		return nil
	}
	test := func(g pgroup) *racing.Test {
		if g.name == s.Race.Verdict.Leader {
			return nil
		}
		return lastTest(s.Race, g.name)
	}
	return []column{
		{"race", func(g pgroup) string {
			x := st(g)
			switch {
			case x == nil:
				return "—"
			case x.Left > 0:
				return fmt.Sprintf("left in round %d, %s", x.Left, seedWord(x.Seeds))
			}
			return "in, " + seedWord(x.Seeds)
		}},
		{"behind leader [95%]", func(g pgroup) string {
			t := test(g)
			switch {
			case t == nil:
				return "leader"
			case s.Race.Scale == racing.Log:
				return fmt.Sprintf("%.3g× [%.3g–%.3g]", t.Behind, t.Lo, t.Hi)
			}
			return fmt.Sprintf("%.2g pt [%.2g to %.2g]", t.Behind, t.Lo, t.Hi)
		}},
		{"P(leader better)", func(g pgroup) string {
			t := test(g)
			if t == nil {
				return "—"
			}
			return fmt.Sprintf("%.2f [%.2f–%.2f]", t.Beats, t.BeatsLo, t.BeatsHi)
		}},
	}
}
