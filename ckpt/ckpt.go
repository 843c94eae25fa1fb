// Package ckpt writes and reads shard checkpoints: one file per shard,
// replaced atomically (write to a temporary file, fsync, rename, fsync the
// directory) and guarded by a CRC-32C over every byte, so a crash at any
// point leaves either the old checkpoint or the new one, and a torn or
// corrupted file is refused rather than restored. Read takes the shard the
// caller expects and compares the header with it before the values are
// read, so a file can never make the reader allocate more than that
// shard's block; values must be finite and the version at most MaxVersion.
//
// File layout (little-endian):
//
//	magic   8 bytes  "PACERCK1"
//	hlen    uint32   length of the header
//	header  hlen     JSON (Meta)
//	weights 4·(Hi−Lo) bytes, float32
//	velocity 4·(Hi−Lo) bytes when Meta.Velocity, float32
//	square  4·(Hi−Lo) bytes when Meta.Square, float32
//	mean    4·(Hi−Lo) bytes when Meta.Mean, float32
//	ema     4·(Hi−Lo) bytes when Meta.EMA, float32
//	crc     uint32   CRC-32C (Castagnoli) of everything above
package ckpt

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"syscall"
)

var magic = [8]byte{'P', 'A', 'C', 'E', 'R', 'C', 'K', '1'}

// maxHeader bounds the JSON header so a corrupt length cannot make Read
// allocate without limit.
const maxHeader = 1 << 20

// ErrCorrupt is wrapped by every error about a file that is not a valid
// checkpoint (bad magic, bad lengths, checksum mismatch, truncation).
var ErrCorrupt = errors.New("ckpt: corrupt checkpoint")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Meta describes the shard a checkpoint belongs to.
type Meta struct {
	Shard     int    `json:"shard"`
	Shards    int    `json:"shards"`
	Lo        int    `json:"lo"` // the shard's key range [Lo, Hi) in the full vector
	Hi        int    `json:"hi"`
	NumParams int    `json:"num_params"`
	Version   uint64 `json:"version"` // the shard's version (applies) when written
	Paradigm  string `json:"paradigm"`
	Model     string `json:"model"`
	Velocity  bool   `json:"velocity"` // the optimizer's momentum buffer (Adam's first moment) follows the weights
	// Optimizer is the update rule that wrote the state (optim.RuleKind's
	// name), "" for SGD: a file written before rules existed is SGD's.
	Optimizer string `json:"optimizer,omitempty"`
	// Square says the adaptive rules' mean of squared gradients follows
	// the velocity; Step is Adam's (and AdamW's) step count.
	Square bool  `json:"square,omitempty"`
	Step   int64 `json:"step,omitempty"`
	// Mean says centered RMSProp's mean gradient follows the square: an
	// optional section, absent from every other rule's file (and from
	// files written before it existed), so those are unchanged.
	Mean bool `json:"mean,omitempty"`
	// Centered says the rule is centered RMSProp. The mean section alone
	// cannot say it for a shard whose range is empty (more shards than
	// parameters): no values, so no section. Files written before this
	// field have a mean section exactly when they are centered.
	Centered bool `json:"centered,omitempty"`
	// EMA: the weights' moving average (--ema) follows the optimizer's
	// state; a file without it (written before it existed, or without
	// --ema) restores the average from the weights.
	EMA bool `json:"ema,omitempty"`
	// LogSegment is the first segment of the shard's durability log
	// (package wal) that the checkpoint does not cover: a restore replays
	// the log from there. 0: written without a log.
	LogSegment uint64 `json:"log_segment,omitempty"`
}

// State is one shard's checkpoint.
type State struct {
	Meta
	Weights  []float32
	Velocity []float32 // nil without momentum
	Square   []float32 // nil for SGD
	Mean     []float32 // centered RMSProp's mean gradient; nil for every other rule
	EMA      []float32 // the weights' moving average; nil without --ema
}

// Path is the checkpoint file of shard i in dir.
func Path(dir string, shard int) string {
	return filepath.Join(dir, fmt.Sprintf("shard-%d.ckpt", shard))
}

func (s *State) validate() error {
	n := s.Hi - s.Lo
	switch {
	case s.Lo < 0 || s.Hi < s.Lo || s.Hi > s.NumParams:
		return fmt.Errorf("range [%d, %d) outside %d parameters", s.Lo, s.Hi, s.NumParams)
	case len(s.Weights) != n:
		return fmt.Errorf("%d weights for a range of %d", len(s.Weights), n)
	case s.Velocity != nil && len(s.Velocity) != n:
		return fmt.Errorf("%d velocity values for a range of %d", len(s.Velocity), n)
	case s.Square != nil && len(s.Square) != n:
		return fmt.Errorf("%d squared-gradient values for a range of %d", len(s.Square), n)
	case s.Mean != nil && len(s.Mean) != n:
		return fmt.Errorf("%d mean-gradient values for a range of %d", len(s.Mean), n)
	case s.Centered && s.Mean == nil && n > 0:
		return fmt.Errorf("centered RMSProp's state without its mean gradient for a range of %d", n)
	case s.Step < 0:
		return fmt.Errorf("step count %d", s.Step)
	case s.EMA != nil && len(s.EMA) != n:
		return fmt.Errorf("%d moving-average values for a range of %d", len(s.EMA), n)
	}
	return nil
}

// Write stores s as dir's checkpoint of its shard, atomically, and returns
// the file's path.
func Write(dir string, s *State) (path string, err error) {
	s.Velocity = nilIfEmpty(s.Velocity)
	s.Meta.Velocity = s.Velocity != nil
	s.Square = nilIfEmpty(s.Square)
	s.Meta.Square = s.Square != nil
	s.Mean = nilIfEmpty(s.Mean)
	s.Meta.Mean = s.Mean != nil
	s.EMA = nilIfEmpty(s.EMA)
	s.Meta.EMA = s.EMA != nil
	if err := s.validate(); err != nil {
		return "", fmt.Errorf("ckpt: write: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("ckpt: %w", err)
	}
	path = Path(dir, s.Shard)
	f, err := os.CreateTemp(dir, fmt.Sprintf(".shard-%d-*.tmp", s.Shard))
	if err != nil {
		return "", fmt.Errorf("ckpt: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = encode(f, s); err != nil {
		return "", fmt.Errorf("ckpt: writing %s: %w", tmp, err)
	}
	if err = f.Sync(); err != nil {
		return "", fmt.Errorf("ckpt: fsync %s: %w", tmp, err)
	}
	if err = f.Close(); err != nil {
		return "", fmt.Errorf("ckpt: %w", err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("ckpt: %w", err)
	}
	// The rename is durable only once the directory entry is.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return path, nil
}

// RemoveStale deletes the temporary files Write left in dir for shard
// when a process was killed mid-write (they are never renamed, so only
// their space is lost). Call it before the shard writes its first
// checkpoint: it returns the paths it removed.
func RemoveStale(dir string, shard int) ([]string, error) {
	// Only the names are matched: dir is a path, and a '[' or '*' in it
	// must neither fail the match nor reach into other directories.
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil // nothing written yet; a write will say what is wrong
	}
	if err != nil {
		return nil, fmt.Errorf("ckpt: %w", err)
	}
	pattern := fmt.Sprintf(".shard-%d-*.tmp", shard)
	var removed []string
	for _, e := range ents {
		if ok, _ := filepath.Match(pattern, e.Name()); !ok || e.IsDir() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return removed, fmt.Errorf("ckpt: removing a stale temporary file: %w", err)
		}
		removed = append(removed, p)
	}
	return removed, nil
}

// Size is the number of bytes a checkpoint of s takes on disk. Write
// needs twice that free while it runs: the new file is complete before
// it replaces the old one.
func Size(s *State) int64 {
	m := s.Meta
	m.Velocity, m.Square, m.Mean, m.EMA = len(s.Velocity) > 0, len(s.Square) > 0, len(s.Mean) > 0, len(s.EMA) > 0
	hdr, _ := json.Marshal(m)
	return int64(16+len(hdr)) + 4*int64(len(s.Weights)+len(s.Velocity)+len(s.Square)+len(s.Mean)+len(s.EMA))
}

func nilIfEmpty(v []float32) []float32 {
	if len(v) == 0 {
		return nil
	}
	return v
}

func encode(w io.Writer, s *State) error {
	h := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(w, h), 1<<20)
	hdr, err := json.Marshal(s.Meta)
	if err != nil {
		return err
	}
	bw.Write(magic[:])
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(hdr)))
	bw.Write(n[:])
	bw.Write(hdr)
	writeFloats(bw, s.Weights)
	writeFloats(bw, s.Velocity)
	writeFloats(bw, s.Square)
	writeFloats(bw, s.Mean)
	writeFloats(bw, s.EMA)
	if err := bw.Flush(); err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(n[:], h.Sum32())
	_, err = w.Write(n[:])
	return err
}

func writeFloats(w *bufio.Writer, v []float32) {
	var b [4]byte
	for _, x := range v {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
		w.Write(b[:])
	}
}

// Want is the shard a checkpoint must belong to, as the restoring process
// derives it from its job (model, shards, index). Read compares the file's
// header with it before reading the body, so a file cannot make the
// process allocate more than the shard itself holds.
type Want struct {
	Shard, Shards int
	Lo, Hi        int // the shard's key range
	NumParams     int
	Model         string
}

// MaxVersion bounds a restorable version. No job applies 2⁵³ updates
// (285 years at a million a second), so a larger version is a damaged or
// forged header; the bound also keeps every version exact where it is a
// float (JSON readers, Prometheus) and far from wrapping when the shard
// counts on from it.
const MaxVersion = 1 << 53

// ErrMismatch is wrapped by the errors about a well-formed checkpoint that
// cannot be this shard's: another shard, range, model or parameter count,
// or a version no job reaches.
var ErrMismatch = errors.New("ckpt: checkpoint does not fit this shard")

// ErrNonFinite is wrapped by the error about a checkpoint holding NaN or
// ±Inf: restored, it would make every worker's first gradient diverge.
var ErrNonFinite = errors.New("ckpt: checkpoint holds non-finite values")

// Read loads and verifies the checkpoint at path, which must be want's
// shard's: the header is checked against want before the body is read.
func Read(path string, want Want) (*State, error) {
	if err := want.validate(); err != nil {
		return nil, fmt.Errorf("ckpt: read %s: %w", path, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ckpt: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("ckpt: %w", err)
	}
	return readFrom(f, st.Size(), path, want)
}

// readFrom decodes size bytes of r (the file at path), classifying errors.
func readFrom(r io.Reader, size int64, path string, want Want) (*State, error) {
	s, err := decode(r, size, want)
	if err != nil {
		if errors.Is(err, ErrMismatch) || errors.Is(err, ErrNonFinite) {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	return s, nil
}

func (w Want) validate() error {
	if w.Shards < 1 || w.Shard < 0 || w.Shard >= w.Shards || w.Lo < 0 || w.Hi < w.Lo || w.Hi > w.NumParams {
		return fmt.Errorf("shard %d of %d with range [%d, %d) of %d parameters is not a shard", w.Shard, w.Shards, w.Lo, w.Hi, w.NumParams)
	}
	return nil
}

func (m *Meta) describe() string {
	return fmt.Sprintf("shard %d of %d, range [%d, %d) of %d parameters, model %q", m.Shard, m.Shards, m.Lo, m.Hi, m.NumParams, m.Model)
}

// check compares the header with want, before anything is allocated.
func (m *Meta) check(want Want) error {
	w := Meta{Shard: want.Shard, Shards: want.Shards, Lo: want.Lo, Hi: want.Hi, NumParams: want.NumParams, Model: want.Model}
	if m.Shard != w.Shard || m.Shards != w.Shards || m.Lo != w.Lo || m.Hi != w.Hi || m.NumParams != w.NumParams ||
		(w.Model != "" && m.Model != w.Model) {
		return fmt.Errorf("%w: the file is %s; this is %s", ErrMismatch, m.describe(), w.describe())
	}
	if m.Version > MaxVersion {
		return fmt.Errorf("%w: version %d is beyond any job's (at most %d)", ErrMismatch, m.Version, uint64(MaxVersion))
	}
	return nil
}

// bodyFits reports whether the bytes after the header hold exactly the
// header's range: per bytes a parameter, compared by division so that no
// declared count can overflow the arithmetic.
func bodyFits(body int64, m *Meta) bool {
	if m.Lo < 0 || m.Hi < m.Lo || body < 0 {
		return false
	}
	per := int64(4)
	if m.Velocity {
		per += 4
	}
	if m.Square {
		per += 4
	}
	if m.Mean {
		per += 4
	}
	if m.EMA {
		per += 4
	}
	return body%per == 0 && body/per == int64(m.Hi-m.Lo)
}

func decode(r io.Reader, size int64, want Want) (*State, error) {
	if size < 16 {
		return nil, fmt.Errorf("file of %d bytes", size)
	}
	// Everything but the 4-byte trailer goes through the hash; the trailer
	// is read from r afterwards, past the limit bufio can read ahead to.
	h := crc32.New(castagnoli)
	br := bufio.NewReaderSize(io.TeeReader(io.LimitReader(r, size-4), h), 64<<10)
	var m [8]byte
	if _, err := io.ReadFull(br, m[:]); err != nil || m != magic {
		return nil, errors.New("not a pacer checkpoint (bad magic)")
	}
	var n [4]byte
	if _, err := io.ReadFull(br, n[:]); err != nil {
		return nil, err
	}
	hl := int64(binary.LittleEndian.Uint32(n[:]))
	if hl > maxHeader || 16+hl > size {
		return nil, fmt.Errorf("header of %d bytes in a file of %d", hl, size)
	}
	hdr := make([]byte, hl)
	if _, err := io.ReadFull(br, hdr); err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(hdr, &s.Meta); err != nil {
		return nil, fmt.Errorf("header: %v", err)
	}
	if !bodyFits(size-16-hl, &s.Meta) {
		return nil, fmt.Errorf("%d bytes of values do not hold the header's range [%d, %d) (velocity %v, square %v, mean %v, ema %v)",
			size-16-hl, s.Lo, s.Hi, s.Meta.Velocity, s.Meta.Square, s.Meta.Mean, s.Meta.EMA)
	}
	if s.Meta.Centered && !s.Meta.Mean && s.Hi > s.Lo {
		return nil, fmt.Errorf("the header says centered RMSProp but holds no mean gradient for the range [%d, %d)", s.Lo, s.Hi)
	}
	if err := s.Meta.check(want); err != nil {
		return nil, err
	}
	// The range is want's now: what the shard holds anyway bounds the
	// allocation.
	cnt := s.Hi - s.Lo
	var err error
	if s.Weights, err = readFloats(br, cnt); err != nil {
		return nil, err
	}
	if s.Meta.Velocity {
		if s.Velocity, err = readFloats(br, cnt); err != nil {
			return nil, err
		}
	}
	if s.Meta.Square {
		if s.Square, err = readFloats(br, cnt); err != nil {
			return nil, err
		}
	}
	if s.Meta.Mean {
		if s.Mean, err = readFloats(br, cnt); err != nil {
			return nil, err
		}
	}
	if s.Meta.EMA {
		if s.EMA, err = readFloats(br, cnt); err != nil {
			return nil, err
		}
	}
	if _, err := br.Peek(1); err != io.EOF {
		return nil, errors.New("trailing bytes before the checksum")
	}
	sum := h.Sum32()
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	if got := binary.LittleEndian.Uint32(n[:]); got != sum {
		return nil, fmt.Errorf("checksum %08x, computed %08x", got, sum)
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	for _, v := range [...]struct {
		name string
		x    []float32
	}{{"weight", s.Weights}, {"velocity", s.Velocity}, {"squared gradient", s.Square}, {"mean gradient", s.Mean}, {"moving average", s.EMA}} {
		if i := firstNonFinite(v.x); i >= 0 {
			return nil, fmt.Errorf("%w: %s of parameter %d is %v", ErrNonFinite, v.name, s.Lo+i, v.x[i])
		}
	}
	return &s, nil
}

// firstNonFinite is the index of the first NaN or ±Inf in x, or -1.
func firstNonFinite(x []float32) int {
	for i, v := range x {
		if math.Float32bits(v)&0x7f800000 == 0x7f800000 {
			return i
		}
	}
	return -1
}

func readFloats(r io.Reader, n int) ([]float32, error) {
	out := make([]float32, n)
	buf := make([]byte, 64<<10)
	for i := 0; i < n; {
		k := min(len(buf)/4, n-i)
		if _, err := io.ReadFull(r, buf[:4*k]); err != nil {
			return nil, err
		}
		for j := 0; j < k; j++ {
			out[i+j] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*j:]))
		}
		i += k
	}
	return out, nil
}
