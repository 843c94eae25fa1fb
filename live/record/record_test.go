package record

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/pacer-ps/pacer/runstats"
)

// Write leaves summary.json whole and no temporary file beside it, and a
// second write replaces the first.
func TestWriteReplacesWhole(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	for _, p := range []string{"bsp", "asp"} {
		path, err := Write(dir, &runstats.Run{Paradigm: p})
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var r runstats.Run
		if err := json.Unmarshal(b, &r); err != nil || r.Paradigm != p {
			t.Fatalf("%s: read back %q, %v", path, r.Paradigm, err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files in %s, want summary.json alone", len(ents), dir)
	}
}
