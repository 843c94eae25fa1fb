package wal

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
)

var small = Options{MaxFloats: 64, MaxInts: 8, MaxPending: 256}

func push(w int32, clock uint64, n int) *Record {
	r := &Record{Kind: KindPush, Worker: w, Clock: clock, Read: clock / 2, Now: int64(clock) * 1000, Floats: make([]float32, n)}
	for i := range r.Floats {
		r.Floats[i] = float32(w) + float32(i)/8
	}
	return r
}

// appendSync appends rs and makes them durable.
func appendSync(t *testing.T, l *Log, rs ...*Record) {
	t.Helper()
	var last LSN
	for _, r := range rs {
		lsn, err := l.Append(r)
		if err != nil {
			t.Fatal(err)
		}
		last = lsn
	}
	if err := l.Sync(last); err != nil {
		t.Fatal(err)
	}
}

// replayAll returns copies of the records Replay reads from segment from.
func replayAll(t *testing.T, dir string, from uint64, o Options) ([]Record, ReplayInfo, error) {
	t.Helper()
	var got []Record
	info, err := Replay(dir, from, o, func(seq uint64, r *Record) error {
		c := *r
		c.Ints = append([]int32(nil), r.Ints...)
		c.Floats = append([]float32(nil), r.Floats...)
		if len(c.Ints) == 0 {
			c.Ints = nil
		}
		if len(c.Floats) == 0 {
			c.Floats = nil
		}
		got = append(got, c)
		return nil
	})
	return got, info, err
}

func TestAppendReplayAcrossSegments(t *testing.T) {
	dir := t.TempDir()
	l, err := Start(dir, small)
	if err != nil {
		t.Fatal(err)
	}
	first := []*Record{push(0, 1, 64), {Kind: KindLeave, Now: 5, Ints: []int32{2, 3}}, push(1, 2, 64)}
	appendSync(t, l, first...)
	seq, err := l.Rotate()
	if err != nil || seq != 2 {
		t.Fatalf("Rotate = %d, %v; want segment 2", seq, err)
	}
	second := []*Record{{Kind: KindBase, Read: 9, Clock: 3, Ints: []int32{0, 1, -3}}, {Kind: KindTick, Now: 77}, {Kind: KindSkip, Read: 12}}
	second[0].Flags = 0
	appendSync(t, l, second...)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		from uint64
		want []*Record
	}{{1, append(append([]*Record(nil), first...), second...)}, {2, second}, {0, append(append([]*Record(nil), first...), second...)}} {
		got, info, err := replayAll(t, dir, tc.from, small)
		if err != nil {
			t.Fatalf("replay from %d: %v", tc.from, err)
		}
		if len(got) != len(tc.want) || info.TornAt != -1 {
			t.Fatalf("replay from %d: %d records (torn at %d), want %d", tc.from, len(got), info.TornAt, len(tc.want))
		}
		for i := range got {
			if !reflect.DeepEqual(&got[i], tc.want[i]) {
				t.Errorf("replay from %d, record %d: %+v, want %+v", tc.from, i, got[i], *tc.want[i])
			}
		}
	}
	// A new log continues after the last segment.
	l2, err := Open(dir, small)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if s := l2.Segment(); s != 3 {
		t.Errorf("reopened log appends to segment %d, want 3", s)
	}
}

// TestGroupCommitSharesFsync: records appended before a Sync are made
// durable by one fsync, and concurrent writers share fsyncs.
func TestGroupCommitSharesFsync(t *testing.T) {
	dir := t.TempDir()
	l, err := Start(dir, Options{MaxFloats: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := 0; i < 3; i++ {
		if _, err := l.Append(push(0, uint64(i), 4)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Sync(3); err != nil {
		t.Fatal(err)
	}
	if st := l.Stats(); st.Syncs != 1 || st.Records != 3 {
		t.Fatalf("3 appends then Sync: %+v, want 1 fsync", st)
	}
	if err := l.Sync(4); err == nil {
		t.Error("Sync of a record never appended returned nil")
	}
	const writers, each = 16, 40
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				lsn, err := l.Append(push(int32(w), uint64(i), 16))
				if err == nil {
					err = l.Sync(lsn)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st := l.Stats()
	if st.Records != 3+writers*each || st.Syncs >= st.Records {
		t.Errorf("%d concurrent writers: %+v; want fewer fsyncs than records", writers, st)
	}
	t.Logf("%d records, %d fsyncs", st.Records, st.Syncs)
	l.Close()
	got, _, err := replayAll(t, dir, 1, Options{MaxFloats: 64})
	if err != nil || len(got) != 3+writers*each {
		t.Fatalf("replay: %d records, %v", len(got), err)
	}
	// Each writer's records are in its own order.
	next := map[int32]uint64{}
	for _, r := range got[3:] {
		if r.Clock != next[r.Worker] {
			t.Fatalf("worker %d: clock %d, want %d", r.Worker, r.Clock, next[r.Worker])
		}
		next[r.Worker]++
	}
}

// TestAppendBounded: Append writes the buffer out once MaxPending is
// reached rather than growing it, and refuses a record the reader would
// refuse.
func TestAppendBounded(t *testing.T) {
	dir := t.TempDir()
	l, err := Start(dir, small)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rec := push(0, 0, 64)
	for i := 0; i < 50; i++ {
		if _, err := l.Append(rec); err != nil {
			t.Fatal(err)
		}
		l.mu.Lock()
		n := len(l.buf)
		l.mu.Unlock()
		if n > small.MaxPending+rec.size() {
			t.Fatalf("after %d appends %d bytes are buffered, bound %d", i+1, n, small.MaxPending+rec.size())
		}
	}
	if _, err := l.Append(push(0, 0, 65)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("65 floats with MaxFloats 64: err %v, want ErrTooLarge", err)
	}
	if _, err := l.Append(&Record{Kind: 99}); err == nil {
		t.Error("unknown kind appended")
	}
}

// writeSegment writes records to a fresh log and returns its one
// segment's path and the offsets at which each record starts.
func writeSegment(t *testing.T, o Options, n int) (dir, path string, offs []int64) {
	return writeTorn(t, o, n, n)
}

// writeTorn writes n records to a fresh log, the first synced of them
// acknowledged (synced one by one), the rest written but never synced,
// and leaves the log as a killed process would.
func writeTorn(t *testing.T, o Options, n, synced int) (dir, path string, offs []int64) {
	t.Helper()
	dir = t.TempDir()
	l, err := Start(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	off := int64(segHeader)
	for i := 0; i < n; i++ {
		r := push(int32(i%3), uint64(i), 8)
		if i == 0 {
			r = &Record{Kind: KindBase, Read: 4, Clock: 2, Ints: []int32{0, 1, -3}}
		}
		offs = append(offs, off)
		off += int64(r.size())
		if i < synced {
			appendSync(t, l, r)
			continue
		}
		if _, err := l.Append(r); err != nil {
			t.Fatal(err)
		}
		l.mu.Lock()
		l.flushLocked(false)
		l.mu.Unlock()
	}
	if err := l.f.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, SegmentPath(dir, 1), offs
}

func TestTornTailTruncated(t *testing.T) {
	for _, tc := range []struct {
		name string
		tear func(path string, offs []int64) int64 // returns where the tail starts
	}{
		{"half a record", func(path string, offs []int64) int64 {
			st, _ := os.Stat(path)
			os.Truncate(path, st.Size()-10)
			return offs[len(offs)-1]
		}},
		{"half a record header", func(path string, offs []int64) int64 {
			os.Truncate(path, offs[len(offs)-1]+5)
			return offs[len(offs)-1]
		}},
		{"garbage after the last record", func(path string, offs []int64) int64 {
			st, _ := os.Stat(path)
			f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			f.Write([]byte("\x30\x00\x00\x00garbage-garbage-garbage"))
			f.Close()
			return st.Size()
		}},
		{"last record's checksum wrong", func(path string, offs []int64) int64 {
			flip(t, path, offs[len(offs)-1]+20)
			return offs[len(offs)-1]
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, path, offs := writeTorn(t, small, 6, 5)
			at := tc.tear(path, offs)
			got, info, err := replayAll(t, dir, 1, small)
			if err != nil {
				t.Fatal(err)
			}
			whole := 0
			for _, o := range offs {
				if o < at {
					whole++
				}
			}
			if len(got) != whole || info.TornAt != at {
				t.Fatalf("%d records, torn at %d; want %d records, torn at %d", len(got), info.TornAt, whole, at)
			}
			if st, _ := os.Stat(path); st.Size() != at {
				t.Errorf("segment is %d bytes after replay, want it cut to %d", st.Size(), at)
			}
			again, info, err := replayAll(t, dir, 1, small)
			if err != nil || len(again) != whole || info.TornAt != -1 {
				t.Errorf("second replay: %d records, torn at %d, %v", len(again), info.TornAt, err)
			}
		})
	}
}

func flip(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := []byte{0}
	f.ReadAt(b, off)
	b[0] ^= 0x40
	f.WriteAt(b, off)
}

// TestCorruptMiddleIsError: damage that a crash cannot have caused (before
// the synced end of the last segment, or in an earlier segment)
// stops the replay with an error naming where, and changes no file.
func TestCorruptMiddleIsError(t *testing.T) {
	dir, path, offs := writeSegment(t, small, 40)
	flip(t, path, offs[3]+20)
	before, _ := os.ReadFile(path)
	_, _, err := replayAll(t, dir, 1, small)
	want := fmt.Sprintf("record 3 at offset %d", offs[3])
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), segName(1)) {
		t.Fatalf("corrupt record 3: err %v, want ErrCorrupt naming %q in %s", err, want, segName(1))
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Error("a failed replay changed the segment")
	}

	// In a segment that is not the last, even the final record is corruption.
	dir, path, offs = writeSegment(t, small, 3)
	l, err := Open(dir, small)
	if err != nil {
		t.Fatal(err)
	}
	appendSync(t, l, push(0, 9, 8))
	l.Close()
	flip(t, path, offs[2]+20)
	if _, _, err := replayAll(t, dir, 1, small); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "record 2") {
		t.Fatalf("damaged last record of segment 1 of 2: err %v, want ErrCorrupt naming record 2", err)
	}
	// A damaged segment header is corruption.
	flip(t, path, 3)
	if _, _, err := replayAll(t, dir, 1, small); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "magic") {
		t.Fatalf("bad magic: err %v", err)
	}
}

func TestRemoveBeforeAndMissingSegment(t *testing.T) {
	dir := t.TempDir()
	l, err := Start(dir, small)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := 0; i < 3; i++ {
		appendSync(t, l, push(0, uint64(i), 4))
		if _, err := l.Rotate(); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.RemoveBefore(5); err == nil {
		t.Error("RemoveBefore past the current segment accepted")
	}
	if err := l.RemoveBefore(3); err != nil {
		t.Fatal(err)
	}
	seqs, _ := Segments(dir)
	if !reflect.DeepEqual(seqs, []uint64{3, 4}) {
		t.Fatalf("segments after RemoveBefore(3): %v, want [3 4]", seqs)
	}
	got, _, err := replayAll(t, dir, 3, small)
	if err != nil || len(got) != 1 || got[0].Clock != 2 {
		t.Fatalf("replay from 3: %v, %v", got, err)
	}
	if _, _, err := replayAll(t, dir, 2, small); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "segment 2 is missing") {
		t.Errorf("replay from a removed segment: err %v, want ErrCorrupt naming segment 2", err)
	}
	os.Remove(SegmentPath(dir, 3))
	os.WriteFile(SegmentPath(dir, 6), encodeHeader(6, 0), 0o600)
	if _, _, err := replayAll(t, dir, 4, small); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "segment 5 is missing") {
		t.Errorf("gap between 4 and 6: err %v, want ErrCorrupt naming segment 5", err)
	}
}

// TestReplayCallbackError: fn's error ends the replay and is returned.
func TestReplayCallbackError(t *testing.T) {
	dir, _, _ := writeSegment(t, small, 4)
	stop := errors.New("enough")
	n := 0
	_, err := Replay(dir, 1, small, func(uint64, *Record) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 2 {
		t.Errorf("callback failing at record 2: %d calls, err %v", n, err)
	}
}
