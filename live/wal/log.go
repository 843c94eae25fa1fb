package wal

import (
	"errors"
	"fmt"
	"os"
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
	f       *os.File
	seq     uint64
	buf     []byte // appended, not yet written
	spare   []byte
	next    LSN // the last LSN appended
	durable LSN // every LSN up to this one is on disk
	busy    bool
	err     error // sticky: after a failed write or fsync nothing is durable any more
	closed  bool
	stats   Stats
}

// Stats counts a log's work.
type Stats struct {
	Records int64 // appended
	Bytes   int64 // written
	Syncs   int64 // fsyncs of a segment
}

// Open starts a new segment in dir (creating dir), numbered after the
// highest one there, and returns the log that appends to it. Earlier
// segments are left alone: Replay reads them, RemoveBefore deletes them.
func Open(dir string, o Options) (*Log, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("wal: %w", err)
	}
	seqs, err := Segments(dir)
	if err != nil {
		return nil, err
	}
	l := &Log{dir: dir, o: o}
	l.cond.L = &l.mu
	seq := uint64(1)
	if n := len(seqs); n > 0 {
		seq = seqs[n-1] + 1
	}
	if l.f, err = l.create(seq); err != nil {
		return nil, err
	}
	l.seq = seq
	return l, nil
}

// create writes segment seq's header durably.
func (l *Log) create(seq uint64) (*os.File, error) {
	path := SegmentPath(l.dir, seq)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("wal: %w", err)
	}
	if _, err := f.Write(encodeHeader(seq, l.o.window())); err != nil {
		f.Close()
		return nil, fmt.Errorf("wal: %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("wal: fsync %s: %w", path, err)
	}
	if err := syncDir(l.dir); err != nil {
		f.Close()
		return nil, fmt.Errorf("wal: fsync %s: %w", l.dir, err)
	}
	return f, nil
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
	for l.durable < lsn {
		if err := l.usable(); err != nil {
			return err
		}
		if l.busy {
			l.cond.Wait()
			continue
		}
		l.flushLocked(true)
	}
	return l.err
}

// flushLocked writes the buffer (and fsyncs it when sync) with the lock
// released meanwhile; appends made meanwhile wait for the next flush.
// Called with l.mu held and !l.busy.
func (l *Log) flushLocked(sync bool) {
	l.busy = true
	buf, upto, f := l.buf, l.next, l.f
	l.buf, l.spare = l.spare[:0], nil
	l.mu.Unlock()
	var err error
	if len(buf) > 0 {
		_, err = f.Write(buf)
	}
	if err == nil && sync {
		err = f.Sync()
	}
	l.mu.Lock()
	l.busy = false
	if err != nil && l.err == nil {
		l.err = fmt.Errorf("wal: segment %d: %w", l.seq, err)
	}
	l.stats.Bytes += int64(len(buf))
	if sync {
		l.stats.Syncs++
		if err == nil {
			l.durable = upto
		}
	}
	if cap(buf) <= 2*l.o.MaxPending {
		l.spare = buf[:0]
	}
	l.cond.Broadcast()
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
	f, err := l.create(l.seq + 1)
	if err != nil {
		return 0, err // the current segment goes on
	}
	old := l.f
	l.f = f
	l.seq++
	if err := old.Close(); err != nil {
		return l.seq, fmt.Errorf("wal: closing segment %d: %w", l.seq-1, err)
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
