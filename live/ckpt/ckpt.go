// Package ckpt writes and reads shard checkpoints: one file per shard,
// replaced atomically (write to a temporary file, fsync, rename, fsync the
// directory) and guarded by a CRC-32C over every byte, so a crash at any
// point leaves either the old checkpoint or the new one, and a torn or
// corrupted file is refused rather than restored.
//
// File layout (little-endian):
//
//	magic   8 bytes  "PACERCK1"
//	hlen    uint32   length of the header
//	header  hlen     JSON (Meta)
//	weights 4·(Hi−Lo) bytes, float32
//	velocity 4·(Hi−Lo) bytes when Meta.Velocity, float32
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
	Velocity  bool   `json:"velocity"` // the optimizer's momentum buffer follows the weights
}

// State is one shard's checkpoint.
type State struct {
	Meta
	Weights  []float32
	Velocity []float32 // nil without momentum
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
	}
	return nil
}

// Write stores s as dir's checkpoint of its shard, atomically, and returns
// the file's path.
func Write(dir string, s *State) (path string, err error) {
	s.Velocity = nilIfEmpty(s.Velocity)
	s.Meta.Velocity = s.Velocity != nil
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

// Read loads and verifies the checkpoint at path.
func Read(path string) (*State, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ckpt: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("ckpt: %w", err)
	}
	s, err := decode(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	return s, nil
}

func decode(r io.Reader, size int64) (*State, error) {
	if size < 16 {
		return nil, fmt.Errorf("file of %d bytes", size)
	}
	// Everything but the 4-byte trailer goes through the hash; the trailer
	// is read from r afterwards, past the limit bufio can read ahead to.
	h := crc32.New(castagnoli)
	br := bufio.NewReaderSize(io.TeeReader(io.LimitReader(r, size-4), h), 1<<20)
	var m [8]byte
	if _, err := io.ReadFull(br, m[:]); err != nil || m != magic {
		return nil, errors.New("not a pacer checkpoint (bad magic)")
	}
	var n [4]byte
	if _, err := io.ReadFull(br, n[:]); err != nil {
		return nil, err
	}
	hl := binary.LittleEndian.Uint32(n[:])
	if hl > maxHeader {
		return nil, fmt.Errorf("header of %d bytes", hl)
	}
	hdr := make([]byte, hl)
	if _, err := io.ReadFull(br, hdr); err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(hdr, &s.Meta); err != nil {
		return nil, fmt.Errorf("header: %v", err)
	}
	cnt := int64(s.Hi - s.Lo)
	want := int64(8+4+hl+4) + 4*cnt
	if s.Meta.Velocity {
		want += 4 * cnt
	}
	if s.Lo < 0 || cnt < 0 || want != size {
		return nil, fmt.Errorf("file of %d bytes, header says %d (range [%d, %d))", size, want, s.Lo, s.Hi)
	}
	var err error
	if s.Weights, err = readFloats(br, int(cnt)); err != nil {
		return nil, err
	}
	if s.Meta.Velocity {
		if s.Velocity, err = readFloats(br, int(cnt)); err != nil {
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
	return &s, nil
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
