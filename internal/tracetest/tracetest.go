// Package tracetest replays trace scripts, the tests of pacer's pure
// decision cores (paradigm's policies, live/membership's table): each file
// of testdata/ starts with a "new" command that builds a driver, then
// commands the driver carries out at given times, each answered by the
// log of what it decided (datadriven's expected block below "----").
package tracetest

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// Driver carries out one script's commands after its "new".
type Driver interface {
	// Do carries out one command, logging its decisions.
	Do(t *testing.T, d *datadriven.TestData)
	// Flush returns what was logged since the last Flush.
	Flush() string
}

// Run replays every testdata/*.txt as a subtest named for its file: start
// builds the driver from the "new" command, which answers with what the
// driver logged as it started.
func Run(t *testing.T, start func(t *testing.T, d *datadriven.TestData) Driver) {
	t.Helper()
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no trace scripts in testdata/: %v", err)
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			var h Driver
			datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
				if d.Cmd == "new" {
					h = start(t, d)
					return h.Flush()
				}
				if h == nil {
					d.Fatalf(t, "%s before new", d.Cmd)
				}
				h.Do(t, d)
				return h.Flush()
			})
		})
	}
}
