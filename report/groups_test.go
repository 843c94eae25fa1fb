package report

import (
	"testing"

	"github.com/pacer-ps/pacer/runstats"
)

// The staleness plot's legend reads the typical run's mean staleness: it
// must be the table's median over seeds, not left at zero (issue 32).
func TestTypicalStalenessIsTheTables(t *testing.T) {
	var runs []runstats.Run
	for s := 1; s <= 3; s++ {
		for _, r := range simRuns() {
			r.Seed = uint64(s)
			r.StalenessMean *= float64(s) // a different value each seed: the median is the middle one
			runs = append(runs, r)
		}
	}
	s := summarize(runs, 0, 100)
	nonzero := 0
	for _, g := range groupsOf(s) {
		want := *g.st.StalenessMean.Median
		if got := typical(g).StalenessMean; got != want {
			t.Errorf("%s: typical staleness mean %v, the table's median %v", g.name, got, want)
		}
		if want > 0 {
			nonzero++
		}
	}
	if nonzero == 0 {
		t.Fatal("fixture: every paradigm has mean staleness 0, so the test cannot fail")
	}
}
