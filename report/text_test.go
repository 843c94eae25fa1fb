package report

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// The terminal's summary says what summary.md says, its table aligned as
// plain text.
func TestTextAlignsTheTable(t *testing.T) {
	sum := virtualSummary(0.85, 5)
	txt := Text(virtualScenario, sum)
	md := Markdown(virtualScenario, sum)
	if strings.Contains(txt, "|") || strings.Contains(txt, "**") || strings.Contains(txt, "```") {
		t.Errorf("Markdown syntax on a terminal:\n%s", txt)
	}
	for _, want := range []string{"Heterogeneous pair <1 : 2>\n", "No clear winner: dssp:sl=3,su=15 and asp are tied",
		"    pacer compare --paradigms 'bsp;asp;ssp:s=3' --target 0.85 --out out\n", "Equal horizons: every run trained"} {
		if !strings.Contains(txt, want) {
			t.Errorf("text lacks %q:\n%s", want, txt)
		}
	}
	var table []string
	for _, l := range strings.Split(txt, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "paradigm ") || len(table) > 0 && l != "" {
			table = append(table, l)
		} else if len(table) > 0 {
			break
		}
	}
	if want := strings.Count(md, "\n| ") - 1; len(table) != want {
		t.Fatalf("%d table lines, want %d (header and rows):\n%s", len(table), want, txt)
	}
	head := table[0]
	for _, col := range []string{"time to 85%", "p vs leader", "controller calls / time"} {
		if !strings.Contains(head, col) {
			t.Errorf("header %q lacks %q", head, col)
		}
	}
	for _, l := range table[1:] {
		if utf8.RuneCountInString(l) != utf8.RuneCountInString(head) {
			t.Errorf("row not aligned with the header:\n%s\n%s", head, l)
		}
	}
	if !strings.Contains(txt, "  bsp ") || strings.Contains(txt, "* ") {
		t.Errorf("a tie has a winner marked:\n%s", txt)
	}
}
