package ckpt

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
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

// sampleWant is the shard sample() belongs to.
var sampleWant = Want{Shard: 1, Shards: 2, Lo: 3, Hi: 8, NumParams: 10, Model: "mlp"}

// raw encodes a file with header m and the given value bytes, and a valid
// CRC: what a forged or damaged-then-rechecksummed file looks like.
func raw(m Meta, values []byte) []byte {
	hdr, _ := json.Marshal(m)
	var b bytes.Buffer
	b.Write(magic[:])
	binary.Write(&b, binary.LittleEndian, uint32(len(hdr)))
	b.Write(hdr)
	b.Write(values)
	return withCRC(b.Bytes())
}

// withCRC appends the CRC-32C of b.
func withCRC(b []byte) []byte {
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
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
		if fi, _ := os.Stat(path); fi.Size() != Size(want) {
			t.Errorf("file of %d bytes, Size says %d", fi.Size(), Size(want))
		}
		got, err := Read(path, sampleWant)
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
// damaged file is refused, never restored: as corrupt, or (a flipped
// header key reads as a missing field) as another shard's.
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
		if _, err := Read(bad, sampleWant); !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrMismatch) {
			t.Fatalf("byte %d flipped: err %v, want ErrCorrupt or ErrMismatch", i, err)
		}
	}
	for _, n := range []int{0, 5, len(good) / 2, len(good) - 1} {
		os.WriteFile(bad, good[:n], 0o644)
		if _, err := Read(bad, sampleWant); !errors.Is(err, ErrCorrupt) {
			t.Errorf("truncated to %d: err %v, want ErrCorrupt", n, err)
		}
	}
}

// TestOtherShardRefused: a valid checkpoint read as another shard's, or
// another model's, is refused with both descriptions.
func TestOtherShardRefused(t *testing.T) {
	dir := t.TempDir()
	path, err := Write(dir, sample(false))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []Want{
		{Shard: 0, Shards: 2, Lo: 0, Hi: 3, NumParams: 10, Model: "mlp"},
		{Shard: 1, Shards: 3, Lo: 3, Hi: 8, NumParams: 10, Model: "mlp"},
		{Shard: 1, Shards: 2, Lo: 3, Hi: 9, NumParams: 10, Model: "mlp"},
		{Shard: 1, Shards: 2, Lo: 3, Hi: 8, NumParams: 11, Model: "mlp"},
		{Shard: 1, Shards: 2, Lo: 3, Hi: 8, NumParams: 10, Model: "cnn"},
	} {
		_, err := Read(path, w)
		if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "range [3, 8)") {
			t.Errorf("read as %+v: err %v, want ErrMismatch naming the file's range", w, err)
		}
	}
	if _, err := Read(path, Want{Shard: 2, Shards: 2, Hi: 10, NumParams: 10}); err == nil || errors.Is(err, ErrMismatch) {
		t.Errorf("a Want that is no shard: err %v", err)
	}
}

// TestDeclaredRangeCheckedFirst (issue 20, finding 2): a header whose
// 4·count wraps around int64 once passed the size check and then crashed
// the process in makeslice; a file declaring a range far beyond the shard's
// was read whole before anything compared it. Both are refused from the
// header, before the values are allocated.
func TestDeclaredRangeCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	// 4·(2⁶² + k) ≡ 4k (mod 2⁶⁴): the file's size matches the wrapped sum.
	const k = 8
	m := Meta{Shard: 0, Shards: 1, Lo: 0, Hi: 1<<62 + k, NumParams: 1<<62 + k, Version: 1, Model: "mlp"}
	b := raw(m, make([]byte, 4*k))
	wrap := filepath.Join(dir, "wrap.ckpt")
	os.WriteFile(wrap, b, 0o600)
	_, err := Read(wrap, Want{Shard: 0, Shards: 1, Lo: 0, Hi: 10, NumParams: 10, Model: "mlp"})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "do not hold") {
		t.Errorf("%d-byte file with a wrapping range: err %v, want ErrCorrupt about the values' size", len(b), err)
	}

	// A sparse file of the size its header declares (1 GiB of values),
	// with a valid CRC: read as the 10-parameter shard it is not.
	const n = 1 << 28
	m = Meta{Shard: 0, Shards: 1, Lo: 0, Hi: n, NumParams: n, Version: 1, Model: "mlp"}
	hdr := raw(m, nil)
	hdr = hdr[:len(hdr)-4]
	h := crc32.New(castagnoli)
	h.Write(hdr)
	zeros := make([]byte, 1<<20)
	for i := 0; i < 4*n/len(zeros); i++ {
		h.Write(zeros)
	}
	big := filepath.Join(dir, "big.ckpt")
	f, _ := os.Create(big)
	f.Write(hdr)
	f.Seek(4*n, 1)
	binary.Write(f, binary.LittleEndian, h.Sum32())
	f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = Read(big, Want{Shard: 0, Shards: 1, Lo: 0, Hi: 10, NumParams: 10, Model: "mlp"})
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrMismatch) {
		t.Errorf("1 GiB checkpoint for a 10-parameter shard: err %v, want ErrMismatch", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("refusing a checkpoint that declares 1 GiB allocated %d bytes, want under 1 MiB", got)
	}
}

// TestNonFiniteRefused (issue 20, finding 7): a checkpoint with a valid
// CRC and a NaN or an infinity restored, and every worker then diverged.
func TestNonFiniteRefused(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		vel  bool
		at   int
		bad  float32
		name string
	}{
		{false, 2, float32(math.NaN()), "weight of parameter 5 is NaN"},
		{false, 0, float32(math.Inf(1)), "weight of parameter 3 is +Inf"},
		{true, 4, float32(math.Inf(-1)), "velocity of parameter 7 is -Inf"},
	} {
		s := sample(c.vel)
		if c.vel {
			s.Velocity[c.at] = c.bad
		} else {
			s.Weights[c.at] = c.bad
		}
		path, err := Write(dir, s)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Read(path, sampleWant)
		if !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), c.name) {
			t.Errorf("err %v, want ErrNonFinite naming %q", err, c.name)
		}
	}
}

// TestVersionBounded (issue 20, finding 7): version 2⁶⁴−1 restored and
// wrapped to 0 at the next update.
func TestVersionBounded(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		v  uint64
		ok bool
	}{{0, true}, {MaxVersion, true}, {MaxVersion + 1, false}, {math.MaxUint64, false}} {
		s := sample(false)
		s.Version = c.v
		path, err := Write(dir, s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Read(path, sampleWant)
		if c.ok != (err == nil) || (!c.ok && !errors.Is(err, ErrMismatch)) || (c.ok && got.Version != c.v) {
			t.Errorf("version %d: %v, %v; want ok=%v", c.v, got, err, c.ok)
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
	got, err := Read(Path(dir, 1), sampleWant)
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

// TestRemoveStale (issue 20, finding 11): the temporary files a kill
// leaves mid-write are removed, only this shard's, and never a checkpoint.
func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(dir, sample(false)); err != nil {
		t.Fatal(err)
	}
	keep := []string{Path(dir, 1), filepath.Join(dir, ".shard-10-77.tmp"), filepath.Join(dir, ".shard-2-5.tmp"), filepath.Join(dir, "notes")}
	stale := []string{filepath.Join(dir, ".shard-1-123.tmp"), filepath.Join(dir, ".shard-1-9.tmp")}
	for _, p := range append(keep[1:], stale...) {
		os.WriteFile(p, []byte("x"), 0o600)
	}
	removed, err := RemoveStale(dir, 1)
	if err != nil || len(removed) != len(stale) {
		t.Fatalf("removed %v, %v; want %v", removed, err, stale)
	}
	for _, p := range stale {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still there", p)
		}
	}
	for _, p := range keep {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
	if removed, err := RemoveStale(filepath.Join(dir, "none"), 1); err != nil || len(removed) != 0 {
		t.Errorf("missing directory: %v, %v", removed, err)
	}
}

// A checkpoint directory is a path, not a pattern: a '[' in it made
// RemoveStale fail (filepath.Glob: syntax error in pattern), so the shard
// refused to start, and "ckpt[12]" matched the stale files of the
// directories ckpt1 and ckpt2 instead of its own.
func TestRemoveStaleDirIsNoPattern(t *testing.T) {
	root := t.TempDir()
	bad := filepath.Join(root, "a[b")
	lit := filepath.Join(root, "ckpt[12]")
	other := filepath.Join(root, "ckpt1")
	for _, d := range []string{bad, lit, other} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, ".shard-0-1.tmp"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{bad, lit} {
		removed, err := RemoveStale(d, 0)
		want := filepath.Join(d, ".shard-0-1.tmp")
		if err != nil || len(removed) != 1 || removed[0] != want {
			t.Errorf("RemoveStale(%q): removed %v, %v; want [%s]", d, removed, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(other, ".shard-0-1.tmp")); err != nil {
		t.Errorf("another directory's file removed: %v", err)
	}
	// A file where the directory should be holds no stale files; the
	// first write says what is wrong (TestCheckpointFailureCounted).
	file := filepath.Join(root, "file")
	os.WriteFile(file, nil, 0o600)
	if removed, err := RemoveStale(file, 0); err != nil || len(removed) != 0 {
		t.Errorf("a file as the directory: %v, %v", removed, err)
	}
}

// FuzzRead: no input makes Read panic or allocate beyond the shard, and
// whatever it accepts is sampleWant's shard with finite values. The
// checksum is recomputed over the mutated bytes, so mutations get past it
// and exercise the checks behind it (sizes, ranges, values).
func FuzzRead(f *testing.F) {
	dir := f.TempDir()
	for _, vel := range []bool{false, true} {
		s := sample(vel)
		path, _ := Write(dir, s)
		good, _ := os.ReadFile(path)
		f.Add(good)
	}
	wrap := Meta{Shard: 1, Shards: 2, Lo: 3, Hi: 3 + 1<<62 + 5, NumParams: 10, Model: "mlp"}
	f.Add(raw(wrap, make([]byte, 20)))
	nan := sample(false)
	nan.Weights[1] = float32(math.NaN())
	path, _ := Write(dir, nan)
	b, _ := os.ReadFile(path)
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) >= 4 {
			b = withCRC(b[:len(b)-4])
		}
		// Read's own path but from memory: a file per input would make
		// the file system, not Read, the fuzzer's bottleneck.
		s, err := readFrom(bytes.NewReader(b), int64(len(b)), "x.ckpt", sampleWant)
		if err != nil {
			return
		}
		if s.Shard != 1 || s.Lo != 3 || s.Hi != 8 || len(s.Weights) != 5 || (s.Velocity != nil && len(s.Velocity) != 5) {
			t.Fatalf("accepted %+v with %d weights", s.Meta, len(s.Weights))
		}
		if firstNonFinite(s.Weights) >= 0 || firstNonFinite(s.Velocity) >= 0 || s.Version > MaxVersion {
			t.Fatalf("accepted non-finite values or version %d", s.Version)
		}
	})
}

// TestOptimizerStateRoundTrip: Adam's and RMSProp's state (the squared
// gradients, the step count, the rule's name) comes back as written; a
// file written before the rules (no square, no optimizer) reads as SGD's;
// a header that declares the squared gradients without their bytes, or a
// negative step count, is corrupt; a non-finite squared gradient is refused.
func TestOptimizerStateRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := sample(true)
	s.Square = []float32{1e-8, 2, 0, 4, 5}
	s.Optimizer, s.Step = "adam", 17
	path, err := Write(dir, s)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Size() != Size(s) {
		t.Errorf("file of %d bytes, Size says %d", fi.Size(), Size(s))
	}
	got, err := Read(path, sampleWant)
	if err != nil {
		t.Fatal(err)
	}
	if got.Optimizer != "adam" || got.Step != 17 || !got.Meta.Square || len(got.Square) != 5 || got.Square[0] != 1e-8 || got.Velocity[1] != 0.2 {
		t.Errorf("read back %+v", got)
	}

	old := sample(true).Meta // an SGD file as the earlier build wrote it
	old.Velocity = true
	hdr, _ := json.Marshal(old)
	if strings.Contains(string(hdr), "optimizer") || strings.Contains(string(hdr), "square") || strings.Contains(string(hdr), "step") || strings.Contains(string(hdr), "mean") {
		t.Errorf("an SGD header names the new fields: %s", hdr)
	}
	values := make([]byte, 4*5*2)
	p := filepath.Join(dir, "old.ckpt")
	os.WriteFile(p, raw(old, values), 0o644)
	if got, err := Read(p, sampleWant); err != nil || got.Optimizer != "" || got.Square != nil || got.Step != 0 {
		t.Errorf("an SGD file of the earlier build: %+v, %v", got, err)
	}

	short := old
	short.Square = true // declares 3 vectors, holds 2
	os.WriteFile(p, raw(short, values), 0o644)
	if _, err := Read(p, sampleWant); !errors.Is(err, ErrCorrupt) {
		t.Errorf("square declared without its bytes: %v", err)
	}
	neg := old
	neg.Step = -3
	os.WriteFile(p, raw(neg, values), 0o644)
	if _, err := Read(p, sampleWant); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "step count -3") {
		t.Errorf("negative step count: %v", err)
	}

	s.Square[3] = float32(math.NaN())
	if _, err := Write(dir, s); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(path, sampleWant); !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "squared gradient of parameter 6 is NaN") {
		t.Errorf("NaN squared gradient: %v", err)
	}
}

// The moving average (--ema) is an optional section after the velocity: it
// round-trips with and without momentum, a non-finite value is refused,
// and a file without it is byte for byte what the format wrote before the
// section existed (no "ema" key), so older checkpoints still read.
func TestEMASection(t *testing.T) {
	for _, vel := range []bool{false, true} {
		dir := t.TempDir()
		want := sample(vel)
		want.EMA = []float32{0.5, -1.5, 3, 0.25, 2}
		path, err := Write(dir, want)
		if err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(path); fi.Size() != Size(want) {
			t.Errorf("file of %d bytes, Size says %d", fi.Size(), Size(want))
		}
		got, err := Read(path, sampleWant)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Meta.EMA || len(got.EMA) != 5 || got.EMA[1] != -1.5 || got.EMA[4] != 2 || vel != (got.Velocity != nil) {
			t.Errorf("velocity %v: read back ema %v (flag %v), velocity %v", vel, got.EMA, got.Meta.EMA, got.Velocity)
		}
		want.EMA[2] = float32(math.Inf(1))
		if _, err := Write(dir, want); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(path, sampleWant); !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "moving average") {
			t.Errorf("an infinite average: err %v, want ErrNonFinite naming it", err)
		}
	}
	dir := t.TempDir()
	path, err := Write(dir, sample(true))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if bytes.Contains(b, []byte(`"ema"`)) {
		t.Errorf("a checkpoint without an average names it in its header: %q", b[:80])
	}
	got, err := Read(path, sampleWant)
	if err != nil || got.EMA != nil || got.Meta.EMA {
		t.Errorf("without an average: %v, ema %v", err, got)
	}
	// A header that promises the section over a body without it is refused.
	m := sample(false).Meta
	m.EMA = true
	if _, err := readFrom(bytes.NewReader(raw(m, make([]byte, 20))), int64(len(raw(m, make([]byte, 20)))), "x", sampleWant); !errors.Is(err, ErrCorrupt) {
		t.Errorf("ema promised, absent: err %v, want ErrCorrupt", err)
	}
}

// TestMeanSection: centered RMSProp's mean gradient is an optional section
// between the square and the moving average: it round-trips beside both,
// Size counts it, a header promising it over a body without it is
// corrupt, a non-finite value is refused naming it; and an SGD checkpoint
// (weights and velocity) is byte for byte the file the format wrote before
// the section existed: its header, its values in order, its CRC.
func TestMeanSection(t *testing.T) {
	dir := t.TempDir()
	s := sample(true)
	s.Square = []float32{1, 2, 3, 4, 5}
	s.Mean = []float32{-0.5, 0.25, 0, 1e-20, 2}
	s.EMA = []float32{9, 8, 7, 6, 5}
	s.Optimizer, s.Centered = "rmsprop", true
	path, err := Write(dir, s)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Size() != Size(s) {
		t.Errorf("file of %d bytes, Size says %d", fi.Size(), Size(s))
	}
	got, err := Read(path, sampleWant)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Meta.Mean || !got.Centered || !slices.Equal(got.Mean, s.Mean) || !slices.Equal(got.Square, s.Square) || !slices.Equal(got.EMA, s.EMA) || !slices.Equal(got.Velocity, s.Velocity) {
		t.Errorf("read back square %v, mean %v (flag %v), ema %v", got.Square, got.Mean, got.Meta.Mean, got.EMA)
	}

	m := s.Meta // promises velocity, square, mean and ema: 5 vectors
	m.EMA = false
	body := make([]byte, 4*5*4)
	if _, err := readFrom(bytes.NewReader(raw(m, body)), int64(len(raw(m, body))), "x", sampleWant); err != nil {
		t.Errorf("four vectors promised and present: %v", err)
	}
	body = body[:4*5*3]
	if _, err := readFrom(bytes.NewReader(raw(m, body)), int64(len(raw(m, body))), "x", sampleWant); !errors.Is(err, ErrCorrupt) {
		t.Errorf("mean promised, absent: err %v, want ErrCorrupt", err)
	}
	// Centered with values but no mean section: neither a centered file
	// nor an uncentered one; refused when read and when written.
	m.Mean = false
	if _, err := readFrom(bytes.NewReader(raw(m, body)), int64(len(raw(m, body))), "x", sampleWant); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "no mean gradient") {
		t.Errorf("centered without a mean: err %v, want ErrCorrupt saying so", err)
	}
	noMean := *s
	noMean.Mean = nil
	if _, err := Write(dir, &noMean); err == nil || !strings.Contains(err.Error(), "without its mean gradient") {
		t.Errorf("writing centered state without a mean: err %v", err)
	}
	// A shard whose range is empty has no values, hence no mean section:
	// the header alone says centered.
	empty := &State{Meta: Meta{Shard: 0, Shards: 2, Lo: 0, Hi: 0, NumParams: 1, Paradigm: "bsp", Model: "flat:n=1", Optimizer: "rmsprop", Centered: true},
		Weights: []float32{}, Square: []float32{}, Mean: []float32{}}
	edir := t.TempDir()
	epath, err := Write(edir, empty)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Read(epath, Want{Shard: 0, Shards: 2, Lo: 0, Hi: 0, NumParams: 1, Model: "flat:n=1"}); err != nil || !got.Centered || got.Optimizer != "rmsprop" {
		t.Errorf("an empty range's centered checkpoint read back: %+v, %v", got, err)
	}

	s.Mean[1] = float32(math.Inf(-1))
	if _, err := Write(dir, s); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(path, sampleWant); !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "mean gradient of parameter 4") {
		t.Errorf("an infinite mean gradient: err %v", err)
	}

	sgd := sample(true)
	path, err = Write(dir, sgd)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	// The header as the format wrote it before the optimizer fields.
	hdr := `{"shard":1,"shards":2,"lo":3,"hi":8,"num_params":10,"version":42,"paradigm":"bsp","model":"mlp","velocity":true}`
	want := binary.LittleEndian.AppendUint32([]byte("PACERCK1"), uint32(len(hdr)))
	want = append(want, hdr...)
	for _, v := range append(sample(true).Weights, sample(true).Velocity...) {
		want = binary.LittleEndian.AppendUint32(want, math.Float32bits(v))
	}
	if want = withCRC(want); !bytes.Equal(b, want) {
		t.Errorf("an SGD checkpoint changed:\n got %q\nwant %q", b, want)
	}
}
