package job

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/pacer-ps/pacer/internal/filecap"
)

// Issue 37: a --job file is checked against its stat size before it is
// read. One padded to exactly MaxDescriptionBytes is read; a sparse one a
// byte above is refused by its size (filecap.TooLarge, not read first),
// naming it.
func TestReadDescriptionBounded(t *testing.T) {
	dir := t.TempDir()
	d, err := Describe(Config{Workers: 2, Dataset: "synthetic"}, 100)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	at := filepath.Join(dir, "at.json")
	if err := os.WriteFile(at, append(b, bytes.Repeat([]byte(" "), MaxDescriptionBytes-len(b))...), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadDescription(at); err != nil || got.Job.Workers != 2 {
		t.Fatalf("a description of exactly %d bytes: %+v, %v", MaxDescriptionBytes, got.Job, err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxDescriptionBytes+1); err != nil {
		t.Fatal(err)
	}
	_, err = ReadDescription(big)
	var tl *filecap.TooLarge
	if !errors.As(err, &tl) || tl.Unsized || tl.Path != big || tl.Size != MaxDescriptionBytes+1 {
		t.Fatalf("a sparse description a byte above the limit: %v; want it refused by its stat size", err)
	}
}
