package ckpt

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func sample(vel bool) *State {
	s := &State{Meta: Meta{Shard: 1, Shards: 2, Lo: 3, Hi: 8, NumParams: 10, Version: 42, Paradigm: "bsp", Model: "mlp"},
		Weights: []float32{1, -2, 3.5, 0, 1e-30}}
	if vel {
		s.Velocity = []float32{0.1, 0.2, 0.3, 0.4, 0.5}
	}
	return s
}

func TestRoundTrip(t *testing.T) {
	for _, vel := range []bool{false, true} {
		dir := t.TempDir()
		want := sample(vel)
		path, err := Write(dir, want)
		if err != nil {
			t.Fatal(err)
		}
		if path != Path(dir, 1) {
			t.Errorf("path %s, want %s", path, Path(dir, 1))
		}
		got, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		if got.Meta != want.Meta {
			t.Errorf("meta %+v, want %+v", got.Meta, want.Meta)
		}
		for i := range want.Weights {
			if got.Weights[i] != want.Weights[i] {
				t.Errorf("weight %d: %v, want %v", i, got.Weights[i], want.Weights[i])
			}
		}
		if vel != (got.Velocity != nil) || (vel && got.Velocity[4] != 0.5) {
			t.Errorf("velocity %v, want present=%v", got.Velocity, vel)
		}
		// No temporary file is left behind.
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 {
			t.Errorf("directory holds %d entries, want only the checkpoint", len(ents))
		}
	}
}

// TestCorruptionRefused flips every byte in turn, and truncates: each
// damaged file is refused with ErrCorrupt, never restored.
func TestCorruptionRefused(t *testing.T) {
	dir := t.TempDir()
	path, err := Write(dir, sample(true))
	if err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	bad := filepath.Join(dir, "bad.ckpt")
	for i := range good {
		b := append([]byte(nil), good...)
		b[i] ^= 0x41
		os.WriteFile(bad, b, 0o644)
		if _, err := Read(bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("byte %d flipped: err %v, want ErrCorrupt", i, err)
		}
	}
	for _, n := range []int{0, 5, len(good) / 2, len(good) - 1} {
		os.WriteFile(bad, good[:n], 0o644)
		if _, err := Read(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("truncated to %d: err %v, want ErrCorrupt", n, err)
		}
	}
}

func TestOverwriteIsAtomicReplace(t *testing.T) {
	dir := t.TempDir()
	s := sample(false)
	Write(dir, s)
	s.Version, s.Weights[0] = 43, 9
	if _, err := Write(dir, s); err != nil {
		t.Fatal(err)
	}
	got, err := Read(Path(dir, 1))
	if err != nil || got.Version != 43 || got.Weights[0] != 9 {
		t.Fatalf("after overwrite: %+v, %v", got, err)
	}
}

func TestWriteRefusesInconsistentState(t *testing.T) {
	s := sample(false)
	s.Weights = s.Weights[:2]
	if _, err := Write(t.TempDir(), s); err == nil {
		t.Fatal("wrote 2 weights for a range of 5")
	}
}

func FuzzRead(f *testing.F) {
	dir := f.TempDir()
	path, _ := Write(dir, sample(true))
	good, _ := os.ReadFile(path)
	f.Add(good)
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "x.ckpt")
		os.WriteFile(p, b, 0o644)
		Read(p) // must not panic
	})
}
