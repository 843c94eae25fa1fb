package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/pacer-ps/pacer/internal/filecap"
)

// Issue 37: a scenario file is checked against its stat size before it is
// read: a sparse one a byte above MaxFileBytes is refused by its size
// (filecap.TooLarge, not read first), by Load and by Get, naming it.
func TestLoadBounded(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxFileBytes+1); err != nil {
		t.Fatal(err)
	}
	for name, load := range map[string]func(string) (*Scenario, error){"Load": Load, "Get": Get} {
		_, err := load(big)
		var tl *filecap.TooLarge
		if !errors.As(err, &tl) || tl.Unsized || tl.Path != big || tl.Size != MaxFileBytes+1 {
			t.Errorf("%s of a sparse file a byte above the limit: %v; want it refused by its stat size", name, err)
		}
	}
}
