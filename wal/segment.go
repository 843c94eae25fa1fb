package wal

import (
	"bytes"
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
	formatVersion = 2
	headFixed     = 28             // magic, version, flags, seq, crc
	segHeader     = headFixed + 16 // and the synced-end marker
	segSuffix     = ".wal"
)

// Header flags.
const (
	// flagOrigin marks the segment a fresh log began with: a replay
	// without a checkpoint must start at it (anything before it was
	// another job's, deleted on purpose).
	flagOrigin uint32 = 1
)

// A marker's states.
const (
	markOpen   uint32 = 0 // the segment may be the last one
	markSealed uint32 = 1 // a later segment exists (Rotate, Open)
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
	// OpenFile opens a segment for writing (nil: os.OpenFile). Tests pass
	// one whose writes fail, as a full disk's do.
	OpenFile func(name string, flag int, perm os.FileMode) (File, error)
}

// File is what the writer needs of a segment's file.
type File interface {
	WriteAt(b []byte, off int64) (int, error)
	Sync() error
	Truncate(size int64) error
	Close() error
}

func (o Options) openFile(name string, flag int) (File, error) {
	if o.OpenFile != nil {
		return o.OpenFile(name, flag, segPerm)
	}
	f, err := os.OpenFile(name, flag, segPerm)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return f, nil
}

// segPerm: a segment holds gradients, as private as a checkpoint.
const segPerm = 0o600

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

func encodeHeader(seq uint64, flags uint32) []byte {
	b := make([]byte, 0, segHeader)
	b = append(b, magic[:]...)
	b = binary.LittleEndian.AppendUint32(b, formatVersion)
	b = binary.LittleEndian.AppendUint32(b, flags)
	b = binary.LittleEndian.AppendUint64(b, seq)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	return append(b, encodeMark(seq, segHeader, markOpen)...)
}

// encodeMark is the synced-end marker: every byte of the segment before
// end was on disk when it was written (the writer rewrites it in place
// after each fsync). The checksum covers seq too, so that a marker can
// only vouch for its own segment.
func encodeMark(seq uint64, end int64, state uint32) []byte {
	b := make([]byte, 0, 24)
	b = binary.LittleEndian.AppendUint64(b, seq)
	b = binary.LittleEndian.AppendUint64(b, uint64(end))
	b = binary.LittleEndian.AppendUint32(b, state)
	sum := crc32.Checksum(b, castagnoli)
	return binary.LittleEndian.AppendUint32(b[8:], sum) // end, state, crc
}

// header is a segment's decoded header.
type header struct {
	flags uint32
	end   int64 // the synced end
	state uint32
}

// decodeHeader checks a segment header and its marker.
func decodeHeader(b []byte, seq uint64) (header, error) {
	var h header
	if len(b) < segHeader {
		return h, fmt.Errorf("header of %d bytes, %d expected", len(b), segHeader)
	}
	if [8]byte(b[:8]) != magic {
		return h, errors.New("not a pacer log segment (bad magic)")
	}
	if got, want := binary.LittleEndian.Uint32(b[24:]), crc32.Checksum(b[:24], castagnoli); got != want {
		return h, fmt.Errorf("header checksum %08x, computed %08x", got, want)
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != formatVersion {
		return h, fmt.Errorf("format version %d, this build reads %d (a log of format 1 cannot tell a torn tail from damage: restore it with the pacer that wrote it)", v, formatVersion)
	}
	if h.flags = binary.LittleEndian.Uint32(b[12:]); h.flags&^flagOrigin != 0 {
		return h, fmt.Errorf("unknown header flags %#x", h.flags)
	}
	if s := binary.LittleEndian.Uint64(b[16:]); s != seq {
		return h, fmt.Errorf("header says segment %d", s)
	}
	m := b[headFixed:segHeader]
	end, state := binary.LittleEndian.Uint64(m), binary.LittleEndian.Uint32(m[8:])
	if !bytes.Equal(encodeMark(seq, int64(end), state), m) || end < segHeader || end > 1<<62 || state > markSealed {
		return h, errors.New("synced-end marker damaged")
	}
	h.end, h.state = int64(end), state
	return h, nil
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
