package wal

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
)

// ReplayInfo says what Replay read.
type ReplayInfo struct {
	Segments []uint64 // the segments read, in order
	Records  int64
	// TornAt is the offset at which the last segment was cut back to its
	// last whole record (−1: it ended cleanly); TornBytes were dropped.
	TornAt    int64
	TornBytes int64
}

// Replay reads dir's segments numbered from on, in order, calling fn with
// every record (fn's error stops the replay and is returned). A torn tail
// of the last segment is truncated away (see the package doc); damage
// elsewhere, a missing segment or a segment that is not one is an error
// wrapping ErrCorrupt. Segments below from are not read.
func Replay(dir string, from uint64, o Options, fn func(seq uint64, r *Record) error) (ReplayInfo, error) {
	info := ReplayInfo{TornAt: -1}
	o, err := o.withDefaults()
	if err != nil {
		return info, err
	}
	seqs, err := Segments(dir)
	if err != nil {
		return info, err
	}
	var todo []uint64
	for _, s := range seqs {
		if s >= from {
			todo = append(todo, s)
		}
	}
	if len(todo) > 0 && from > 0 && todo[0] != from {
		return info, fmt.Errorf("%w: %s: segment %d is missing (the checkpoint covers the log up to it; the next present is %d)",
			ErrCorrupt, dir, from, todo[0])
	}
	r := &Record{}
	for i, s := range todo {
		if i > 0 && s != todo[i-1]+1 {
			return info, fmt.Errorf("%w: %s: segment %d is missing between %d and %d", ErrCorrupt, dir, todo[i-1]+1, todo[i-1], s)
		}
		last := i == len(todo)-1
		n, tornAt, err := replaySegment(dir, s, last, o, r, fn)
		info.Records += n
		info.Segments = append(info.Segments, s)
		if err != nil {
			return info, err
		}
		if tornAt >= 0 {
			path := SegmentPath(dir, s)
			st, err := os.Stat(path)
			if err != nil {
				return info, fmt.Errorf("wal: %w", err)
			}
			info.TornAt, info.TornBytes = tornAt, st.Size()-tornAt
			if err := truncate(path, tornAt); err != nil {
				return info, err
			}
		}
	}
	return info, nil
}

func truncate(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return fmt.Errorf("wal: truncating the torn tail of %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("wal: fsync %s: %w", path, err)
	}
	return nil
}

// replaySegment reads one segment; tornAt ≥ 0 is where its torn tail
// begins (only in the last segment).
func replaySegment(dir string, seq uint64, last bool, o Options, r *Record,
	fn func(uint64, *Record) error) (n int64, tornAt int64, err error) {
	path := SegmentPath(dir, seq)
	f, err := os.Open(path)
	if err != nil {
		return 0, -1, fmt.Errorf("wal: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, -1, fmt.Errorf("wal: %w", err)
	}
	sr := &segReader{br: bufio.NewReaderSize(f, 256<<10), size: st.Size(), o: o}
	n, tornAt, err = sr.each(seq, last, r, fn)
	if err != nil && !errors.Is(err, errStop) {
		return n, -1, err
	}
	if err != nil {
		err = sr.stopErr
	}
	return n, tornAt, err
}

var errStop = errors.New("stopped by the callback")

// segReader reads one segment's records from br, size bytes in all.
type segReader struct {
	br      *bufio.Reader
	size    int64
	o       Options
	body    []byte
	stopErr error
}

// each calls fn for every record; a damaged record within the torn-tail
// window of a last segment's end ends the segment (tornAt), anywhere else
// it is an error naming the record.
func (sr *segReader) each(seq uint64, last bool, r *Record, fn func(uint64, *Record) error) (int64, int64, error) {
	name := segName(seq)
	hdr := make([]byte, segHeader)
	if _, err := io.ReadFull(sr.br, hdr); err != nil {
		if last && sr.size < segHeader {
			return 0, 0, nil // created, killed before its header was whole: empty
		}
		return 0, -1, fmt.Errorf("%w: %s: header: %v", ErrCorrupt, name, err)
	}
	window, err := decodeHeader(hdr, seq)
	if err != nil {
		return 0, -1, fmt.Errorf("%w: %s: %v", ErrCorrupt, name, err)
	}
	off := int64(segHeader)
	var n int64
	for off < sr.size {
		err := sr.next(r, sr.size-off)
		if err != nil {
			if last && sr.size-off <= window {
				return n, off, nil
			}
			return n, -1, fmt.Errorf("%w: %s: record %d at offset %d: %v (%d bytes follow it, beyond the %d a crash can tear)",
				ErrCorrupt, name, n, off, err, sr.size-off, window)
		}
		off += int64(r.size())
		n++
		if err := fn(seq, r); err != nil {
			sr.stopErr = err
			return n, -1, errStop
		}
	}
	return n, -1, nil
}

// next reads and checks one record.
func (sr *segReader) next(r *Record, rem int64) error {
	var h [frameHeader]byte
	if _, err := io.ReadFull(sr.br, h[:]); err != nil {
		return fmt.Errorf("incomplete record header: %v", err)
	}
	n := int64(binary.LittleEndian.Uint32(h[:]))
	if n < bodyFixed || n > sr.o.maxRecord()-frameHeader {
		return fmt.Errorf("record length %d outside [%d, %d]", n, bodyFixed, sr.o.maxRecord()-frameHeader)
	}
	if n > rem-frameHeader {
		return fmt.Errorf("record of %d bytes cut short at %d", n, rem-frameHeader)
	}
	if int64(cap(sr.body)) < n {
		sr.body = make([]byte, n)
	}
	body := sr.body[:n]
	if _, err := io.ReadFull(sr.br, body); err != nil {
		return fmt.Errorf("record of %d bytes cut short: %v", n, err)
	}
	if got, want := binary.LittleEndian.Uint32(h[4:]), crc32.Checksum(body, castagnoli); got != want {
		return fmt.Errorf("checksum %08x, computed %08x", got, want)
	}
	return r.decode(body, sr.o.MaxInts, sr.o.MaxFloats)
}
