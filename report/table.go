package report

import (
	"fmt"
	"strings"

	"github.com/pacer-ps/pacer/runstats"
)

// table is the summary table as strings, shared by summary.md and the HTML
// page so both show the same cells.
type table struct {
	head   []string
	rows   [][]string
	winner int // row index of the winner, -1 when there is none
}

// column is one table column: its heading and how a run fills it.
type column struct {
	head string
	cell func(r *runstats.Run) string
}

// summaryTable builds the table in the order of runs (the order the user
// listed the paradigms). Accuracy columns appear only when some run trained a
// model; the time-to-target column only when a target is known.
func summaryTable(sc Scenario, runs []runstats.Run) table {
	var cols []column
	cols = append(cols, column{"paradigm", func(r *runstats.Run) string { return r.Paradigm }})
	if anyTrained(runs) {
		if t := target(sc, runs); t > 0 {
			cols = append(cols, column{"time to " + pct(t), func(r *runstats.Run) string {
				if !trained(r) {
					return "—"
				}
				if v, ok := timeTo(r, t); ok {
					return secs(v)
				}
				return "not reached"
			}})
		}
		cols = append(cols, column{"final acc", func(r *runstats.Run) string {
			if !trained(r) {
				return "—"
			}
			return pct(finalAcc(r))
		}})
	}
	cols = append(cols,
		column{"throughput (pushes/s)", func(r *runstats.Run) string { return rate(r.Throughput) }},
		column{"wait share", func(r *runstats.Run) string { return pct(r.WaitFraction) }},
		column{"max gap", func(r *runstats.Run) string { return group(r.MaxGap) }},
		column{"staleness mean / max", func(r *runstats.Run) string {
			return fmt.Sprintf("%.2f / %s", r.StalenessMean, group(r.StalenessMax))
		}},
		column{"dropped", func(r *runstats.Run) string { return group(r.Dropped) }},
		column{"updates", func(r *runstats.Run) string { return group(r.Updates) }},
	)
	if anyController(runs) {
		cols = append(cols, column{"controller calls / time", func(r *runstats.Run) string {
			if r.ControllerCalls == 0 {
				return "—"
			}
			return group(r.ControllerCalls) + " / " + ctrlTime(r.ControllerSeconds)
		}})
	}
	tb := table{winner: -1}
	for _, c := range cols {
		tb.head = append(tb.head, c.head)
	}
	win, _ := Winner(sc, runs)
	for i := range runs {
		row := make([]string, len(cols))
		for k, c := range cols {
			row[k] = c.cell(&runs[i])
		}
		tb.rows = append(tb.rows, row)
		if runs[i].Paradigm == win && win != "" {
			tb.winner = i
		}
	}
	return tb
}

// Markdown returns summary.md: a heading, the winner sentence, the scenario
// and the command to rerun it, and the summary table with one row per run in
// the order given (the winner in bold). Columns: paradigm, time to target and
// final accuracy (when runs trained a model), throughput, mean waiting share,
// largest clock gap, staleness mean / max, dropped gradients, updates.
func Markdown(sc Scenario, runs []runstats.Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", mdEscape(title(sc)))
	_, sentence := Winner(sc, runs)
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
	if len(runs) == 0 {
		return b.String()
	}
	tb := summaryTable(sc, runs)
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
	return b.String()
}

// mdEscape keeps user text (paradigm names, descriptions) from being read as
// Markdown syntax or breaking a table row.
func mdEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", "\n", " ")
	return r.Replace(s)
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
