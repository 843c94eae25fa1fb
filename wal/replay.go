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
// every record (fn's error stops the replay and is returned); from 0 reads
// the whole log, which must begin with its origin segment (Start). A torn
// tail of the last segment, after its synced end, is truncated away (see
// the package doc); damage before it or in an earlier segment, a missing
// segment (before, between or after those present) or a segment that is
// not one is an error wrapping ErrCorrupt, and no file is changed. A
// directory that does not exist holds an empty log (an error when from
// names a segment).
func Replay(dir string, from uint64, o Options, fn func(seq uint64, r *Record) error) (ReplayInfo, error) {
	return replay(dir, from, o, fn, 0, 0)
}

// ReplaySynced is Replay of l's directory that stops at the synced end of
// l's segment and changes no file: what a restore would read if the
// process died now, even while l has failed.
func (l *Log) ReplaySynced(from uint64, fn func(seq uint64, r *Record) error) (ReplayInfo, error) {
	l.mu.Lock()
	for l.busy {
		l.cond.Wait()
	}
	seq, end := l.seq, l.synced
	l.mu.Unlock()
	return replay(l.dir, from, l.o, fn, seq, end)
}

// replay is Replay, stopping at offset stopAt of segment stopSeq when
// stopSeq > 0 (then every segment is read as one that another follows:
// whole, nothing cut).
func replay(dir string, from uint64, o Options, fn func(seq uint64, r *Record) error, stopSeq uint64, stopAt int64) (ReplayInfo, error) {
	info := ReplayInfo{TornAt: -1}
	o, err := o.withDefaults()
	if err != nil {
		return info, err
	}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		if from > 0 {
			return info, fmt.Errorf("%w: %s does not exist; the checkpoint says the log goes on at its segment %d", ErrCorrupt, dir, from)
		}
		return info, nil
	}
	seqs, err := Segments(dir)
	if err != nil {
		return info, err
	}
	if len(seqs) == 0 {
		return info, fmt.Errorf("%w: %s holds no log segments: they were deleted (a log directory is created with its first)", ErrCorrupt, dir)
	}
	var todo []uint64
	for _, s := range seqs {
		if s >= from && (stopSeq == 0 || s <= stopSeq) {
			todo = append(todo, s)
		}
	}
	if from > 0 && (len(todo) == 0 || todo[0] != from) {
		next := "none is"
		if len(todo) > 0 {
			next = fmt.Sprintf("the next present is %d", todo[0])
		}
		return info, fmt.Errorf("%w: %s: segment %d is missing (the checkpoint covers the log up to it; %s)",
			ErrCorrupt, dir, from, next)
	}
	if from == 0 {
		// A fresh start over an earlier log removes it once its own
		// origin is durable: a crash in between leaves both.
		for k := len(todo) - 1; k > 0; k-- {
			if h, err := readHeader(dir, todo[k]); err == nil && h.flags&flagOrigin != 0 {
				todo = todo[k:]
				break
			}
		}
	}
	r := &Record{}
	for i, s := range todo {
		if i > 0 && s != todo[i-1]+1 {
			return info, fmt.Errorf("%w: %s: segment %d is missing between %d and %d", ErrCorrupt, dir, todo[i-1]+1, todo[i-1], s)
		}
		last := i == len(todo)-1 && stopSeq == 0
		stop := int64(-1)
		if s == stopSeq {
			stop = stopAt
		}
		n, tornAt, err := replaySegment(dir, s, last, i == 0 && from == 0, stop, o, r, fn)
		info.Records += n
		info.Segments = append(info.Segments, s)
		if err != nil {
			return info, err
		}
		if tornAt == 0 && i == 0 {
			return info, fmt.Errorf("%w: %s: header cut short (the first segment the replay needs was made durably)", ErrCorrupt, segName(s))
		}
		if tornAt == 0 {
			// Created after the one before it, killed before its header
			// was durable: it never held a record.
			if err := os.Remove(SegmentPath(dir, s)); err != nil {
				return info, fmt.Errorf("wal: %w", err)
			}
			if err := syncDir(dir); err != nil {
				return info, fmt.Errorf("wal: fsync %s: %w", dir, err)
			}
			info.TornAt = 0
			continue
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
func replaySegment(dir string, seq uint64, last, origin bool, stop int64, o Options, r *Record,
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
	size := st.Size()
	if stop >= 0 {
		size = min(size, stop)
	}
	sr := &segReader{br: bufio.NewReaderSize(f, 256<<10), size: size, o: o}
	n, tornAt, err = sr.each(seq, last, origin, r, fn)
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

// each calls fn for every record. A damaged record after the synced end
// of a last segment ends the segment (tornAt); anywhere else it is an
// error naming the record. origin: the segment must be where the log
// began.
func (sr *segReader) each(seq uint64, last, origin bool, r *Record, fn func(uint64, *Record) error) (int64, int64, error) {
	name := segName(seq)
	hdr := make([]byte, segHeader)
	if _, err := io.ReadFull(sr.br, hdr); err != nil {
		if last && !origin && sr.size < segHeader {
			return 0, 0, nil
		}
		return 0, -1, fmt.Errorf("%w: %s: header: %v", ErrCorrupt, name, err)
	}
	h, err := decodeHeader(hdr, seq)
	if err != nil {
		return 0, -1, fmt.Errorf("%w: %s: %v", ErrCorrupt, name, err)
	}
	switch {
	case origin && h.flags&flagOrigin == 0:
		return 0, -1, fmt.Errorf("%w: %s is not where the log began, and no checkpoint covers what came before it: the segments before it are missing", ErrCorrupt, name)
	case last && h.state == markSealed:
		return 0, -1, fmt.Errorf("%w: segment %d is missing (%s was sealed once it existed)", ErrCorrupt, seq+1, name)
	case sr.size < h.end:
		return 0, -1, fmt.Errorf("%w: %s is %d bytes, %d of which were synced (cut short)", ErrCorrupt, name, sr.size, h.end)
	}
	off := int64(segHeader)
	var n int64
	for off < sr.size {
		err := sr.next(r, sr.size-off)
		if err == nil && off < h.end && off+int64(r.size()) > h.end {
			err = fmt.Errorf("record of %d bytes crosses the synced end at %d", r.size(), h.end)
		}
		if err != nil {
			if last && off >= h.end {
				return n, off, nil
			}
			where := fmt.Sprintf("before the synced end at %d", h.end)
			if !last {
				where = "in a segment that another follows"
			}
			return n, -1, fmt.Errorf("%w: %s: record %d at offset %d: %v (%s)", ErrCorrupt, name, n, off, err, where)
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
