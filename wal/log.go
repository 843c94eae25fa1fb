package wal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// LSN numbers the records appended to one Log, from 1; Sync takes one.
type LSN uint64

// Log appends records to a directory's newest segment. Its methods are
// safe for concurrent use.
type Log struct {
	dir string
	o   Options

	mu      sync.Mutex
	cond    sync.Cond
	f       File
	seq     uint64
	off     int64  // the segment's bytes written
	synced  int64  // the segment's bytes on disk (its marker says so once written)
	buf     []byte // appended, not yet written
	spare   []byte
	next    LSN // the last LSN appended
	durable LSN // every LSN up to this one is on disk
	lost    []lsnRange
	busy    bool
	err     error // sticky until Recover: after a failed write or fsync nothing is durable any more
	closed  bool
	stats   Stats
}

// lsnRange is (lo, hi]: records Recover dropped.
type lsnRange struct{ lo, hi LSN }

// Stats counts a log's work.
type Stats struct {
	Records int64 // appended
	Bytes   int64 // written
	Syncs   int64 // fsyncs of a segment
}

// Open starts a new segment in dir (creating dir), numbered after the
// highest one there, and returns the log that appends to it. The highest
// one is sealed (its marker says a later segment exists) once the new one
// is durable; earlier segments are left alone: Replay reads them,
// RemoveBefore deletes them. Open continues a log after Replay; Start
// begins a new one.
func Open(dir string, o Options) (*Log, error) { return open(dir, o, false) }

// Start begins a fresh log in dir: its first segment is marked as the
// log's origin, numbered after any segment already there (which the
// caller removes with RemoveBefore once it no longer needs them). A dir
// that does not exist is created with its first segment in it, all at
// once (a rename), so that a log directory without segments is always
// one whose segments were lost.
func Start(dir string, o Options) (*Log, error) { return open(dir, o, true) }

func open(dir string, o Options, fresh bool) (*Log, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	seqs, err := Segments(dir)
	if err != nil {
		return nil, err
	}
	l := &Log{dir: dir, o: o}
	l.cond.L = &l.mu
	seq, flags := uint64(1), uint32(0)
	if n := len(seqs); n > 0 {
		seq = seqs[n-1] + 1
	}
	if fresh {
		flags = flagOrigin
	}
	_, err = os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if l.f, err = l.createDir(flags); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, fmt.Errorf("wal: %w", err)
	default:
		if l.f, err = l.create(dir, seq, flags); err != nil {
			return nil, err
		}
	}
	l.seq, l.off, l.synced = seq, segHeader, segHeader
	if n := len(seqs); n > 0 && !fresh {
		if err := seal(dir, seqs[n-1], o); err != nil {
			l.f.Close()
			return nil, err
		}
	}
	return l, nil
}

// createDir makes dir with segment 1 in it: built beside it, renamed
// into place.
func (l *Log) createDir(flags uint32) (File, error) {
	tmp := l.dir + ".new"
	if err := os.RemoveAll(tmp); err != nil {
		return nil, fmt.Errorf("wal: %w", err)
	}
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, fmt.Errorf("wal: %w", err)
	}
	f, err := l.create(tmp, 1, flags)
	if err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, l.dir); err != nil {
		f.Close()
		return nil, fmt.Errorf("wal: %w", err)
	}
	if err := syncDir(filepath.Dir(l.dir)); err != nil {
		f.Close()
		return nil, fmt.Errorf("wal: fsync %s: %w", filepath.Dir(l.dir), err)
	}
	return f, nil
}

// create writes segment seq's header (its marker: nothing synced after
// it) durably in dir.
func (l *Log) create(dir string, seq uint64, flags uint32) (File, error) {
	path := SegmentPath(dir, seq)
	f, err := l.o.openFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return nil, fmt.Errorf("wal: %w", err)
	}
	if _, err := f.WriteAt(encodeHeader(seq, flags), 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("wal: %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("wal: fsync %s: %w", path, err)
	}
	if err := syncDir(dir); err != nil {
		f.Close()
		return nil, fmt.Errorf("wal: fsync %s: %w", dir, err)
	}
	return f, nil
}

// seal marks segment seq as followed by another, keeping its synced end.
func seal(dir string, seq uint64, o Options) error {
	path := SegmentPath(dir, seq)
	h, err := readHeader(dir, seq)
	if err != nil {
		return err
	}
	f, err := o.openFile(path, os.O_RDWR)
	if err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	return sealFile(f, path, seq, h.end)
}

// readHeader reads and checks segment seq's header.
func readHeader(dir string, seq uint64) (header, error) {
	hdr := make([]byte, segHeader)
	r, err := os.Open(SegmentPath(dir, seq))
	if err != nil {
		return header{}, fmt.Errorf("wal: %w", err)
	}
	_, err = r.ReadAt(hdr, 0)
	r.Close()
	if err != nil {
		return header{}, fmt.Errorf("%w: %s: header: %v", ErrCorrupt, segName(seq), err)
	}
	h, err := decodeHeader(hdr, seq)
	if err != nil {
		return header{}, fmt.Errorf("%w: %s: %v", ErrCorrupt, segName(seq), err)
	}
	return h, nil
}

// sealFile writes f's sealed marker durably and closes f.
func sealFile(f File, path string, seq uint64, end int64) error {
	_, err := f.WriteAt(encodeMark(seq, end, markSealed), headFixed)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("wal: sealing %s: %w", path, err)
	}
	return nil
}

// Segment is the number of the segment records are appended to.
func (l *Log) Segment() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq
}

// Append buffers r and returns its LSN; it is durable once Sync(lsn)
// returns. Records are written in the order of their LSNs. Append waits
// only when MaxPending bytes are buffered already.
func (l *Log) Append(r *Record) (LSN, error) {
	if len(r.Ints) > l.o.MaxInts || len(r.Floats) > l.o.MaxFloats {
		return 0, fmt.Errorf("%w: %d ints and %d floats, at most %d and %d", ErrTooLarge, len(r.Ints), len(r.Floats), l.o.MaxInts, l.o.MaxFloats)
	}
	if r.Kind == 0 || r.Kind >= kindEnd || r.Flags&^FlagCarried != 0 {
		return 0, fmt.Errorf("wal: append: bad record kind %v or flags %#x", r.Kind, r.Flags)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.buf) >= l.o.MaxPending && l.err == nil && !l.closed {
		if !l.busy {
			l.flushLocked(false)
			continue
		}
		l.cond.Wait()
	}
	if err := l.usable(); err != nil {
		return 0, err
	}
	l.buf = r.appendTo(l.buf)
	l.next++
	l.stats.Records++
	return l.next, nil
}

func (l *Log) usable() error {
	if l.closed {
		return ErrClosed
	}
	return l.err
}

// Sync returns once every record up to lsn is on disk. Concurrent calls
// share the work: one writes and fsyncs everything appended so far while
// the others wait for it (group commit).
func (l *Log) Sync(lsn LSN) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if lsn > l.next {
		return fmt.Errorf("wal: sync of record %d: only %d appended", lsn, l.next)
	}
	for _, r := range l.lost {
		if lsn > r.lo && lsn <= r.hi {
			return fmt.Errorf("%w: record %d", ErrDropped, lsn)
		}
	}
	for l.durable < lsn {
		if err := l.usable(); err != nil {
			return err
		}
		if l.busy {
			l.cond.Wait()
			continue
		}
		l.flushLocked(true)
		if l.err != nil {
			return l.err
		}
	}
	return nil // on disk, even if a later write has failed
}

// Durable is the last LSN on disk.
func (l *Log) Durable() LSN {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.durable
}

// flushLocked writes the buffer (and fsyncs it when sync, then records
// the synced end in the segment's marker) with the lock released
// meanwhile; appends made meanwhile wait for the next flush. Called with
// l.mu held and !l.busy.
//
// The marker is rewritten after the fsync, not before, and not synced by
// itself: it never claims bytes that are not on disk, and the next fsync
// (or the page cache, when only the process died) carries it.
func (l *Log) flushLocked(sync bool) {
	l.busy = true
	buf, upto, f, off, seq := l.buf, l.next, l.f, l.off, l.seq
	l.buf, l.spare = l.spare[:0], nil
	l.mu.Unlock()
	var err error
	n := 0
	if len(buf) > 0 {
		n, err = f.WriteAt(buf, off)
	}
	if err == nil && sync {
		err = f.Sync()
		if err == nil {
			_, err = f.WriteAt(encodeMark(seq, off+int64(n), markOpen), headFixed)
		}
	}
	l.mu.Lock()
	l.busy = false
	l.off = off + int64(n)
	if err != nil && l.err == nil {
		l.err = fmt.Errorf("wal: segment %d: %w", l.seq, err)
	}
	l.stats.Bytes += int64(n)
	if sync {
		l.stats.Syncs++
		if err == nil {
			l.durable, l.synced = upto, l.off
		}
	}
	if cap(buf) <= 2*l.o.MaxPending {
		l.spare = buf[:0]
	}
	l.cond.Broadcast()
}

// Err is the failure that stopped the log, until Recover clears it.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Recover makes a failed log usable again: it cuts the segment back to
// its synced end (what a write or fsync that failed may have left after
// it is never replayed) and drops the records appended since (Sync of
// one returns ErrDropped). It returns the last LSN on disk. It fails, and
// the log stays failed, while the segment cannot be cut and synced.
func (l *Log) Recover() (LSN, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.busy {
		l.cond.Wait()
	}
	if l.closed {
		return 0, ErrClosed
	}
	if l.err == nil {
		return l.durable, nil
	}
	if err := l.f.Truncate(l.synced); err != nil {
		return 0, fmt.Errorf("wal: cutting segment %d back to %d bytes: %w", l.seq, l.synced, err)
	}
	if err := l.f.Sync(); err != nil {
		return 0, fmt.Errorf("wal: fsync segment %d: %w", l.seq, err)
	}
	if l.next > l.durable {
		l.lost = append(l.lost, lsnRange{l.durable, l.next})
	}
	l.off, l.err = l.synced, nil // durable jumps the lost records with the next fsync
	l.buf = l.buf[:0]
	l.cond.Broadcast()
	return l.durable, nil
}

// Rotate makes everything appended so far durable in the current segment
// and starts the next one; it returns the new segment's number. Records
// appended after Rotate returns go to the new segment.
func (l *Log) Rotate() (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.busy {
		l.cond.Wait()
	}
	if err := l.usable(); err != nil {
		return 0, err
	}
	for l.durable < l.next || len(l.buf) > 0 {
		l.flushLocked(true)
		if l.err != nil {
			return 0, l.err
		}
		for l.busy {
			l.cond.Wait()
		}
	}
	f, err := l.create(l.dir, l.seq+1, 0)
	if err != nil {
		return 0, err // the current segment goes on
	}
	old, end := l.f, l.synced
	l.f = f
	l.seq++
	l.off, l.synced = segHeader, segHeader
	// Sealed after its successor exists: a crash in between leaves an
	// unsealed segment followed by another, which Replay accepts.
	if err := sealFile(old, SegmentPath(l.dir, l.seq-1), l.seq-1, end); err != nil {
		return l.seq, err
	}
	return l.seq, nil
}

// RemoveBefore deletes the segments numbered below seq (a durable
// checkpoint covers them). seq may not be beyond the current segment.
func (l *Log) RemoveBefore(seq uint64) error {
	l.mu.Lock()
	cur := l.seq
	l.mu.Unlock()
	if seq > cur {
		return fmt.Errorf("wal: remove before segment %d: the log is at segment %d", seq, cur)
	}
	seqs, err := Segments(l.dir)
	if err != nil {
		return err
	}
	removed := false
	for _, s := range seqs {
		if s >= seq {
			break
		}
		if err := os.Remove(SegmentPath(l.dir, s)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("wal: %w", err)
		}
		removed = true
	}
	if removed {
		if err := syncDir(l.dir); err != nil {
			return fmt.Errorf("wal: fsync %s: %w", l.dir, err)
		}
	}
	return nil
}

// Stats returns the log's counters.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

// Close writes and fsyncs what was appended and closes the segment.
// Waiters still in Sync get ErrClosed if their records were not written.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	for l.busy {
		l.cond.Wait()
	}
	if l.err == nil && (l.durable < l.next || len(l.buf) > 0) {
		l.flushLocked(true)
	}
	l.closed = true
	l.cond.Broadcast()
	if err := l.f.Close(); err != nil && l.err == nil {
		return fmt.Errorf("wal: %w", err)
	}
	return l.err
}
