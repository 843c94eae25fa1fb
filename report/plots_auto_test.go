package report

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/pacer-ps/pacer/runstats"
)

// A run's decisions read as the stretches between its switches: a
// decision that stays changes nothing, a switch starts its best there.
func TestAutoSpans(t *testing.T) {
	r := &runstats.Run{VirtualSeconds: 600, Decisions: []runstats.Decision{
		{AtSeconds: 100, Current: "bsp", Best: "bsp"},
		{AtSeconds: 228, Current: "bsp", Best: "softsync:n=2", Switch: true},
		{AtSeconds: 300, Current: "softsync:n=2", Best: "bsp", Gain: 0.01},
		{AtSeconds: 402, Current: "softsync:n=2", Best: "bsp", Switch: true},
	}}
	want := []autoSpan{{"bsp", 0, 228}, {"softsync:n=2", 228, 402}, {"bsp", 402, 600}}
	if got := autoSpans(r); !reflect.DeepEqual(got, want) {
		t.Errorf("spans %v, want %v", got, want)
	}
	if autoSpans(&runstats.Run{VirtualSeconds: 10}) != nil {
		t.Error("a run without decisions has spans")
	}
}

// The report draws the paradigm in force when auto ran, and only then: a
// later report without auto removes an earlier one's picture.
func TestAutoPlotOnlyWithAuto(t *testing.T) {
	dir := t.TempDir()
	sum := simSummary(2)
	sum.Runs[0].Decisions = []runstats.Decision{{AtSeconds: 10, Current: "bsp", Best: "asp", Switch: true}}
	if _, err := Write(dir, Scenario{Title: "auto"}, sum); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileAuto)); err != nil {
		t.Fatalf("no %s for a run with decisions: %v", FileAuto, err)
	}
	if _, err := Write(dir, Scenario{Title: "fixed"}, simSummary(2)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileAuto)); !os.IsNotExist(err) {
		t.Errorf("%s left beside a report without auto: %v", FileAuto, err)
	}
}
