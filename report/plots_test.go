package report

import (
	"fmt"
	"testing"
)

// Issue 9: 8+ paradigms are told apart by colour and line style together,
// the first 8 by colour alone (Okabe–Ito) and by style besides.
func TestLineStylesTellParadigmsApart(t *testing.T) {
	seen := map[string]int{}
	for i := range 16 {
		l := runLine(i)
		key := fmt.Sprint(l.Color, l.Dashes)
		if j, ok := seen[key]; ok {
			t.Errorf("paradigms %d and %d share colour and dashes", j, i)
		}
		seen[key] = i
	}
	for i := 0; i < 8; i++ {
		for j := i + 1; j < 8; j++ {
			if runColor(i) == runColor(j) {
				t.Errorf("paradigms %d and %d share a colour", i, j)
			}
		}
		if i > 0 && fmt.Sprint(runLine(i).Dashes) == fmt.Sprint(runLine(i-1).Dashes) {
			t.Errorf("neighbours %d and %d share a dash pattern", i-1, i)
		}
	}
}

// The accuracy axis is zoomed to where the paradigms differ, not to the
// first evaluations (10% in the fixture).
func TestAccuracyAxisZoomed(t *testing.T) {
	s := virtualSummary(0.85, 3)
	_, p, err := accuracyPlot(s, groupsOf(s), timeAxisOf(s))
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Min < 0.4 || p.Y.Max > 0.9 || p.Y.Max < 0.85 {
		t.Errorf("accuracy axis [%v, %v], want it zoomed around the target and the plateau", p.Y.Min, p.Y.Max)
	}
}
