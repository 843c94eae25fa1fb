package report

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/runstats"
)

// TestTimeSplitPlot: runs with a network get the time-split plot, with
// the network named in its caption; a later report of runs without one
// leaves no stale copy of it behind.
func TestTimeSplitPlot(t *testing.T) {
	dir := t.TempDir()
	sum := simSummary(3)
	for i := range sum.Runs {
		c := 0.2 + 0.1*float64(i%3)
		sum.Runs[i].TimeSplit = &runstats.TimeSplit{Compute: c, Push: 0.1, Gate: 0.5 - c, Pull: 0.3, Server: 0.1}
		sum.Runs[i].Network = "rate=1Gbit,latency=50µs; apply 2e+09 floats/s"
		sum.Runs[i].ShardLinkIn, sum.Runs[i].ShardLinkOut = []float64{0.6, 0.4}, []float64{0.5, 0.5}
	}
	paths, err := Write(dir, Scenario{Title: "net"}, sum)
	if err != nil {
		t.Fatal(err)
	}
	files := readAll(t, paths)
	if len(files[FileSplit]) == 0 || len(files[FileLinks]) == 0 {
		t.Fatalf("no %s or %s among %v", FileSplit, FileLinks, paths)
	}
	page := string(files[FileHTML])
	for _, w := range []string{"Where the time went", "rate=1Gbit", "held by the gate", "Shard links", "receiving pushes"} {
		if !strings.Contains(page, w) {
			t.Errorf("report.html does not say %q", w)
		}
	}
	if _, err := Write(dir, Scenario{Title: "no net"}, simSummary(3)); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{FileSplit, FileLinks} {
		if _, err := os.Stat(filepath.Join(dir, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left beside a report without a network: %v", f, err)
		}
	}
}
