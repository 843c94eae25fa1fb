package report

import (
	"fmt"
	"strings"

	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/runstats"
)

// table is the summary table as strings, shared by summary.md and the HTML
// page so both show the same cells.
type table struct {
	head   []string
	rows   [][]string
	winner int // row index of the winner, -1 when there is none
}

// column is one table column: its heading and how a paradigm fills it.
type column struct {
	head string
	cell func(g pgroup) string
}

// summaryTable has one row per paradigm, in the order listed: medians over
// seeds with their intervals in brackets. Accuracy columns appear only
// when the runs trained a model, time to target only with a target. It
// stays narrow enough for a 1,400-pixel window.
func summaryTable(s *compare.Summary) table {
	gs := groupsOf(s)
	n := len(s.Seeds)
	var cols []column
	cols = append(cols, column{"paradigm", func(g pgroup) string { return g.name }})
	if trainedAny(s) {
		if s.Target > 0 {
			cols = append(cols,
				column{"time to " + pct(s.Target), func(g pgroup) string { return ivCell(g.st.TimeToTarget, secs, "not reached") }},
				column{"reached", func(g pgroup) string {
					if g.st.Reached == nil {
						return "—"
					}
					return fmt.Sprintf("%d/%d", *g.st.Reached, g.st.Runs)
				}})
		}
		acc := "accuracy at horizon"
		if s.HorizonSeconds == 0 {
			acc = "final accuracy"
		}
		cols = append(cols, column{acc, func(g pgroup) string { return ivCell(g.st.AccuracyAtHorizon, pct, "—") }})
		if n > 1 && s.Race == nil {
			cols = append(cols,
				column{"wins", func(g pgroup) string { return fmt.Sprintf("%d/%d", g.st.Wins, n) }},
				column{"p vs leader", func(g pgroup) string {
					if g.st.PVsLeader == nil {
						return "leader"
					}
					return strings.TrimPrefix(strings.TrimPrefix(pText(*g.st.PVsLeader), "= "), "")
				}},
				column{"leader's edge", func(g pgroup) string {
					e := g.st.LeaderAdvantage
					switch {
					case e == nil:
						return "—"
					case e.Lo == nil:
						return fmt.Sprintf("%.3g×", e.Ratio)
					}
					return fmt.Sprintf("%.3g× [%.3g–%.3g]", e.Ratio, *e.Lo, *e.Hi)
				}})
		}
	}
	if s.Race != nil {
		cols = append(cols, raceColumns(s)...)
	}
	cols = append(cols,
		column{"pushes/s", func(g pgroup) string { return rate(*g.st.Throughput.Median) }},
		column{"wait share", func(g pgroup) string { return pct(*g.st.WaitFraction.Median) }},
		column{"staleness mean / max", func(g pgroup) string {
			t := typical(g)
			return fmt.Sprintf("%.2f / %s", *g.st.StalenessMean.Median, group64(t.StalenessMax))
		}},
		column{"dropped", func(g pgroup) string { return group64(typical(g).Dropped) }},
	)
	if anyLinks(s) {
		cols = append(cols, column{"links busy / transfers", linkCell})
	}
	if anyController(s.Runs) {
		cols = append(cols, column{"controller calls / time", func(g pgroup) string {
			t := typical(g)
			if t.ControllerCalls == 0 {
				return "—"
			}
			return group64(t.ControllerCalls) + " / " + ctrlTime(t.ControllerSeconds)
		}})
	}
	tb := table{winner: -1}
	for _, c := range cols {
		tb.head = append(tb.head, c.head)
	}
	for i, g := range gs {
		row := make([]string, len(cols))
		for k, c := range cols {
			row[k] = c.cell(g)
		}
		tb.rows = append(tb.rows, row)
		if w := s.Verdict.Winner; w != nil && *w == g.name {
			tb.winner = i
		}
	}
	return tb
}

func group64(n int64) string { return group(n) }

// methods are the report's notes on how its figures were obtained.
func methods(s *compare.Summary) []string {
	m := append(linkNotes(s), unlearnt(s)...)
	m = append(m, targetLines(s)...)
	if s.Race != nil {
		m = append(m, fmt.Sprintf("The race ran %s (%s); a paradigm that left it ran fewer. Data order, initial weights and timing draws differ between seeds, and runs of the same seed share them.",
			seedWord(len(s.Seeds)), seedRange(s.Seeds)))
	} else {
		m = append(m, fmt.Sprintf("Every paradigm ran with %s (%s): data order, initial weights and timing draws differ between seeds, and runs of the same seed share them.",
			seedWord(len(s.Seeds)), seedRange(s.Seeds)))
	}
	if s.HorizonSeconds > 0 && s.Mode == runstats.Virtual {
		m = append(m, fmt.Sprintf("Equal horizons: every run trained for the same %s of virtual time.", secs(s.HorizonSeconds)))
	}
	m = append(m, "Intervals: "+s.IntervalMethod+".")
	if s.TimeToTargetMethod != "" {
		m = append(m, "Time to target: "+s.TimeToTargetMethod+".")
	}
	if s.Verdict.Metric == compare.MetricTime {
		m = append(m, "Smoothed time to target (what the verdict ranks and tests): "+runstats.SmoothedTimeMethod+
			"; far less noisy over seeds than the first crossing near a plateau.")
	}
	if s.Race != nil {
		m = append(m, raceMethods(s)...)
	} else if s.TestMethod != "" {
		m = append(m, "Verdict: "+s.TestMethod+"; "+compare.WinRule+"; otherwise the paradigms not separated from the leader are tied. Wins: seeds on which a paradigm did best.")
	}
	return m
}

func seedRange(seeds []uint64) string {
	if len(seeds) == 1 {
		return fmt.Sprintf("seed %d", seeds[0])
	}
	return fmt.Sprintf("seeds %d–%d", seeds[0], seeds[len(seeds)-1])
}

// Markdown returns summary.md: a heading, the verdict, the scenario and the
// command to rerun it, the summary table (the winner in bold) and how the
// figures were obtained.
func Markdown(sc Scenario, s *compare.Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", mdEscape(title(sc)))
	sentence, _ := Headline(s)
	fmt.Fprintf(&b, "**%s**\n\n", mdEscape(sentence))
	if sc.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", mdEscape(sc.Description))
	}
	if sc.Command != "" {
		fence := "```"
		for strings.Contains(sc.Command, fence) {
			fence += "`"
		}
		fmt.Fprintf(&b, "Rerun with:\n\n%ssh\n%s\n%s\n\n", fence, sc.Command, fence)
	}
	if len(s.Runs) == 0 {
		return b.String()
	}
	tb := summaryTable(s)
	b.WriteString("|")
	for _, h := range tb.head {
		fmt.Fprintf(&b, " %s |", mdEscape(h))
	}
	b.WriteString("\n|")
	for k := range tb.head {
		if k == 0 {
			b.WriteString(" :--- |")
		} else {
			b.WriteString(" ---: |")
		}
	}
	b.WriteString("\n")
	for i, row := range tb.rows {
		b.WriteString("|")
		for k, c := range row {
			c = mdEscape(c)
			if k == 0 && i == tb.winner {
				c = "**" + c + "**"
			}
			fmt.Fprintf(&b, " %s |", c)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	if s.Race != nil {
		b.WriteString("The race (paradigms × rounds: ● ran the round, ✕ ran it and left after it):\n\n")
		for _, l := range raceLines(s) {
			fmt.Fprintf(&b, "%s\n", l)
		}
		b.WriteString("\n")
	}
	for _, m := range methods(s) {
		fmt.Fprintf(&b, "%s\n", mdEscape(m))
	}
	return b.String()
}

// mdEscape keeps user text (paradigm names, descriptions) from being read as
// Markdown syntax or breaking a table row. A '<' opens HTML or an autolink
// only when something other than a space follows it (the text's end is
// followed by Markdown's own syntax), so "p < 0.001" stays
// as it reads in a file; any other '<' is backslash-escaped, which a
// renderer shows as '<' too (an entity would show as "&lt;" in the file).
func mdEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "\n", " ")
	s = r.Replace(s)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '<' && (i+1 == len(s) || s[i+1] != ' ' && s[i+1] != '\t') {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// title is the report heading, defaulting when the scenario has none.
func title(sc Scenario) string {
	if t := strings.TrimSpace(sc.Title); t != "" {
		return t
	}
	return "Paradigm comparison"
}

func anyController(runs []runstats.Run) bool {
	for i := range runs {
		if runs[i].ControllerCalls > 0 {
			return true
		}
	}
	return false
}

// ctrlTime is the controller's wall time; "not measured" when the run did
// not measure it (a summary.json read back has no wall times).
func ctrlTime(s float64) string {
	switch {
	case s <= 0:
		return "not measured"
	case s < 1e-3:
		return fmt.Sprintf("%.0f µs", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.1f ms", s*1e3)
	}
	return fmt.Sprintf("%.2f s", s)
}

// unlearnt warns of paradigms whose runs left part of the training set out
// of every applied gradient (virtual time measures it): with each worker
// sampling its own shard, a worker whose gradients are always dropped (a
// persistently slow one under backup workers) takes its shard with it.
func unlearnt(s *compare.Summary) []string {
	var out []string
	for _, g := range groupsOf(s) {
		worst, global := 1.0, false
		for _, r := range g.runs {
			if r.SamplesLearnt != nil {
				worst = min(worst, *r.SamplesLearnt)
			}
			global = global || r.Sampling == "global"
		}
		if worst >= 0.99 {
			continue
		}
		w := fmt.Sprintf("Warning: %s left %s of the training samples out of every applied gradient (in its worst run).", g.name, pct(1-worst))
		if !global {
			w += " Each worker samples its own shard, so a worker whose gradients are always dropped takes its shard with it: its data is never learnt from. --sampling global draws every worker's mini-batches from the whole set."
		} else {
			w += " The run was too short for the workers whose gradients were applied to draw every sample."
		}
		out = append(out, w)
	}
	return out
}

// targetLines say, per paradigm, when it reached each of --targets: the
// median time (and epochs, where recorded) over the seeds with the cell's
// interval.
func targetLines(s *compare.Summary) []string {
	var out []string
	var targets []float64
	if len(s.Runs) > 0 {
		targets = s.Runs[0].Targets
	}
	for _, st := range s.Paradigms {
		if len(st.TimesToTargets) != len(targets) || len(targets) == 0 {
			continue
		}
		var parts []string
		for j, a := range targets {
			part := pct(a) + " not reached"
			if st.TimesToTargets[j].Median != nil {
				part = pct(a) + " at " + ivCell(&st.TimesToTargets[j], secs, "")
			}
			if j < len(st.EpochsToTargets) && st.EpochsToTargets[j].Median != nil {
				part += " (epoch " + ivCell(&st.EpochsToTargets[j], func(v float64) string { return trimZero(fmt.Sprintf("%.2f", v)) }, "") + ")"
			}
			parts = append(parts, part)
		}
		out = append(out, fmt.Sprintf("Targets, %s: %s.", st.Paradigm, strings.Join(parts, "; ")))
	}
	return out
}
