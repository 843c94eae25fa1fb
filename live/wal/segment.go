package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

var magic = [8]byte{'P', 'A', 'C', 'E', 'R', 'W', 'L', '1'}

const (
	formatVersion = 1
	segHeader     = 36
	segSuffix     = ".wal"
)

// Options bounds a log. The reader needs the same bounds as the writer
// (they are the job's: its block size and its worker ids).
type Options struct {
	// MaxFloats is the most floats a record may carry (required: a
	// shard's block).
	MaxFloats int
	// MaxInts is the most ints a record may carry (0: 1<<16).
	MaxInts int
	// MaxPending is how many bytes Append buffers before it waits for a
	// write to take them (0: 32 MiB; never below one record).
	MaxPending int
}

func (o Options) withDefaults() (Options, error) {
	if o.MaxFloats < 0 || o.MaxInts < 0 || o.MaxPending < 0 {
		return o, fmt.Errorf("wal: negative bound in %+v", o)
	}
	if o.MaxInts == 0 {
		o.MaxInts = 1 << 16
	}
	if o.MaxPending == 0 {
		o.MaxPending = 32 << 20
	}
	if o.MaxFloats > (1<<31-bodyFixed)/4-o.MaxInts {
		return o, fmt.Errorf("wal: MaxFloats %d does not fit a record's 32-bit length", o.MaxFloats)
	}
	return o, nil
}

// maxRecord is the largest frame o admits.
func (o Options) maxRecord() int64 {
	return frameHeader + bodyFixed + 4*int64(o.MaxInts) + 4*int64(o.MaxFloats)
}

// window is what the writer may have in flight unsynced: MaxPending and
// the record that crossed it.
func (o Options) window() int64 { return int64(o.MaxPending) + o.maxRecord() }

func segName(seq uint64) string { return fmt.Sprintf("%016x%s", seq, segSuffix) }

// SegmentPath is the file of segment seq in dir.
func SegmentPath(dir string, seq uint64) string { return filepath.Join(dir, segName(seq)) }

// Segments lists dir's segment numbers in order (none when dir does not
// exist). Files that are not segments are ignored.
func Segments(dir string) ([]uint64, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("wal: %w", err)
	}
	var seqs []uint64
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), segSuffix)
		if !ok || len(name) != 16 || e.IsDir() {
			continue
		}
		seq, err := strconv.ParseUint(name, 16, 64)
		if err != nil || seq == 0 {
			continue
		}
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	return seqs, nil
}

func encodeHeader(seq uint64, window int64) []byte {
	b := make([]byte, 0, segHeader)
	b = append(b, magic[:]...)
	b = binary.LittleEndian.AppendUint32(b, formatVersion)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint64(b, seq)
	b = binary.LittleEndian.AppendUint64(b, uint64(window))
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// decodeHeader checks a segment header and returns its window.
func decodeHeader(b []byte, seq uint64) (int64, error) {
	if len(b) < segHeader {
		return 0, fmt.Errorf("header of %d bytes, %d expected", len(b), segHeader)
	}
	if [8]byte(b[:8]) != magic {
		return 0, errors.New("not a pacer log segment (bad magic)")
	}
	if got, want := binary.LittleEndian.Uint32(b[32:]), crc32.Checksum(b[:32], castagnoli); got != want {
		return 0, fmt.Errorf("header checksum %08x, computed %08x", got, want)
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != formatVersion {
		return 0, fmt.Errorf("format version %d, this build reads %d", v, formatVersion)
	}
	if s := binary.LittleEndian.Uint64(b[16:]); s != seq {
		return 0, fmt.Errorf("header says segment %d", s)
	}
	w := binary.LittleEndian.Uint64(b[24:])
	if w > 1<<40 {
		return 0, fmt.Errorf("torn-tail window of %d bytes", w)
	}
	return int64(w), nil
}

// syncDir makes a directory's entries (a created or removed segment)
// durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
