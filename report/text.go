package report

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/pacer-ps/pacer/compare"
)

// Text is summary.md for a terminal: the same heading, verdict, scenario,
// command, table and notes, with the table's columns aligned as plain text
// (the winner marked with a *) instead of Markdown syntax.
func Text(sc Scenario, s *compare.Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", title(sc))
	sentence, _ := Headline(s)
	fmt.Fprintf(&b, "%s\n\n", sentence)
	if sc.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", sc.Description)
	}
	if sc.Command != "" {
		fmt.Fprintf(&b, "Rerun with:\n\n    %s\n\n", sc.Command)
	}
	if len(s.Runs) == 0 {
		return b.String()
	}
	tb := summaryTable(s)
	// tabwriter aligns every column one way: the paradigms, on the left,
	// are padded here; the figures align right.
	first := make([]string, 1+len(tb.rows))
	first[0] = "  " + tb.head[0]
	for i, row := range tb.rows {
		mark := "  "
		if i == tb.winner {
			mark = "* "
		}
		first[1+i] = mark + row[0]
	}
	w := 0
	for _, c := range first {
		w = max(w, utf8.RuneCountInString(c))
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	for i, cells := range append([][]string{tb.head}, tb.rows...) {
		fmt.Fprintf(tw, "%s%s\t", first[i], strings.Repeat(" ", w-utf8.RuneCountInString(first[i])))
		for _, c := range cells[1:] {
			fmt.Fprintf(tw, "%s\t", c)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if tb.winner >= 0 {
		b.WriteString("(* the winner)\n")
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
		fmt.Fprintf(&b, "%s\n", m)
	}
	return b.String()
}
