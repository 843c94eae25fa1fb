package nn

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strings"
	"testing"
)

func TestParseFlat(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n       int
		ok      bool
		wantErr string
	}{
		{"mlp", 0, false, ""},
		{"cnn", 0, false, ""},
		{"flat:n=1", 1, true, ""},
		{"flat:n=77754", 77754, true, ""},
		{FlatName(MaxFlat), MaxFlat, true, ""},
		{"flat", 0, false, "give its size, flat:n=N"},
		{"flat:n=0", 0, false, "want flat:n=N"},
		{"flat:n=-3", 0, false, "want flat:n=N"},
		{"flat:n=1e3", 0, false, "want flat:n=N"},
		{"flat:x=3", 0, false, "want flat:n=N"},
		{FlatName(MaxFlat + 1), 0, false, "want flat:n=N"},
	} {
		n, ok, err := ParseFlat(tc.name)
		if n != tc.n || ok != tc.ok || (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("ParseFlat(%q) = %d, %v, %v; want %d, %v, an error containing %q", tc.name, n, ok, err, tc.n, tc.ok, tc.wantErr)
		}
	}
	if got := FlatName(12); got != "flat:n=12" {
		t.Errorf("FlatName(12) = %q", got)
	}
}

// A flat model is a size, not a network: New says where it trains, and
// NumParams gives its size as it gives pacer's models'.
func TestFlatIsNoGoModel(t *testing.T) {
	if _, err := New("flat:n=10", Image28); err == nil || !strings.Contains(err.Error(), "its workers are your own PyTorch scripts") {
		t.Errorf("New(flat:n=10): %v", err)
	}
	if _, err := New("flat:n=zero", Image28); err == nil || !strings.Contains(err.Error(), "want flat:n=N") {
		t.Errorf("New(flat:n=zero): %v", err)
	}
	for name, want := range map[string]int{"flat:n=10": 10, "mlp": 235146, "cnn": 184586} {
		if n, err := NumParams(name, Image28); n != want || err != nil {
			t.Errorf("NumParams(%s) = %d, %v; want %d", name, n, err, want)
		}
	}
	if _, err := NumParams("resnet", Image28); err == nil {
		t.Error("NumParams(resnet): no error")
	}
}

// FlatDigest is SHA-256 over the values' little-endian bytes, also past
// its 4 KiB chunks.
func TestFlatDigest(t *testing.T) {
	w := make([]float32, 3000)
	b := make([]byte, 4*len(w))
	for i := range w {
		w[i] = float32(i)*0.5 - 7
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(w[i]))
	}
	sum := sha256.Sum256(b)
	if got, want := FlatDigest(w), hex.EncodeToString(sum[:]); got != want {
		t.Errorf("FlatDigest = %s, want %s", got, want)
	}
	w[2999] = 0
	if FlatDigest(w) == hex.EncodeToString(sum[:]) {
		t.Error("a changed value keeps the digest")
	}
}
