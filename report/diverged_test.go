package report

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run that diverged (its losses NaN from some evaluation on) still
// gets its report: the loss plots leave out the medians it makes
// infinite and say so, and summary.json holds its losses as null.
func TestReportWithDivergedRun(t *testing.T) {
	s := virtualSummary(0.85, 3)
	for i := range s.Runs {
		r := &s.Runs[i]
		r.TrainLoss = make([]float64, len(r.Curve))
		for k := range r.TrainLoss {
			r.TrainLoss[k] = 2 / float64(k+1)
			if r.Paradigm == s.Runs[0].Paradigm && k >= len(r.Curve)/2 {
				r.TrainLoss[k] = math.NaN() // diverged halfway, in every seed
			}
		}
	}
	dir := t.TempDir()
	paths, err := Write(dir, virtualScenario, s)
	if err != nil {
		t.Fatalf("a diverged run's report: %v", err)
	}
	files := readAll(t, paths)
	if _, ok := files[FileLoss]; !ok {
		t.Fatalf("no %s", FileLoss)
	}
	if !strings.Contains(string(files[FileHTML]), "diverged") {
		t.Error("the loss plot's caption does not say runs diverged")
	}
	b, err := os.ReadFile(filepath.Join(dir, FileJSON))
	if err != nil || !strings.Contains(string(b), "null") {
		t.Errorf("summary.json: %v; want the NaN losses as null", err)
	}
}
