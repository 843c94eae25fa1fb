package wal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

// byteClasses are the places a flip can land in record i (at off): its
// length (low and high byte), its checksum, the body's fixed part, and
// its payload (ints or floats).
func byteClasses(off int64) map[string]int64 {
	return map[string]int64{
		"length low byte":  off,
		"length high byte": off + 3,
		"checksum":         off + 5,
		"body kind":        off + frameHeader,
		"body fixed part":  off + frameHeader + 17,
		"payload":          off + frameHeader + bodyFixed + 2,
	}
}

// TestDamageTellsSyncedFromTorn flips one bit in every byte class of
// every record of a segment: before the synced end (the record was
// acknowledged) the replay refuses, names the segment and the record's
// offset and changes no file; from the synced end on (written, never
// acknowledged) it is a torn tail, cut off where the damage begins.
func TestDamageTellsSyncedFromTorn(t *testing.T) {
	const n = 6
	_, _, offs := writeSegment(t, small, n)
	for i := range n {
		for class, at := range byteClasses(offs[i]) {
			t.Run(fmt.Sprintf("record %d %s synced", i, class), func(t *testing.T) {
				dir, path, _ := writeSegment(t, small, n)
				flip(t, path, at)
				before, _ := os.ReadFile(path)
				got, info, err := replayAll(t, dir, 0, small)
				want := fmt.Sprintf("%s: record %d at offset %d", segName(1), i, offs[i])
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), want) {
					t.Fatalf("err %v (%d records, torn at %d); want ErrCorrupt naming %q", err, len(got), info.TornAt, want)
				}
				if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
					t.Error("a refused replay changed the segment")
				}
			})
			// Acknowledged up to record k ≤ i: the damage lies after the
			// synced end, whatever came between.
			for _, k := range []int{i, max(0, i-2)} {
				t.Run(fmt.Sprintf("record %d %s after %d synced", i, class, k), func(t *testing.T) {
					dir, path, _ := writeTorn(t, small, n, k)
					flip(t, path, at)
					got, info, err := replayAll(t, dir, 0, small)
					if err != nil || len(got) != i || info.TornAt != offs[i] {
						t.Fatalf("%d records, torn at %d, err %v; want %d records, torn at %d", len(got), info.TornAt, err, i, offs[i])
					}
					if st, _ := os.Stat(path); st.Size() != offs[i] {
						t.Errorf("segment is %d bytes, want it cut to %d", st.Size(), offs[i])
					}
				})
			}
		}
	}
	// The segment's header and its marker: refused wherever the flip is.
	for _, at := range []int64{0, 9, 13, 17, 25, headFixed + 1, headFixed + 9, headFixed + 13} {
		dir, path, _ := writeTorn(t, small, n, 2)
		flip(t, path, at)
		if _, _, err := replayAll(t, dir, 0, small); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), segName(1)) {
			t.Errorf("header byte %d flipped: err %v, want ErrCorrupt naming %s", at, err, segName(1))
		}
	}
	// A segment cut short before its synced end lost acknowledged records.
	dir, path, _ := writeSegment(t, small, n)
	os.Truncate(path, offs[n-1]+3)
	if _, _, err := replayAll(t, dir, 0, small); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "cut short") {
		t.Errorf("segment truncated before its synced end: err %v", err)
	}
}

// TestMissingSegmentIsError: a segment missing before, between or after
// those present is an error, as is a log directory without any; only a
// directory that was never made is an empty log.
func TestMissingSegmentIsError(t *testing.T) {
	build := func(t *testing.T) string {
		dir := t.TempDir() + "/log"
		l, err := Start(dir, small)
		if err != nil {
			t.Fatal(err)
		}
		appendSync(t, l, push(0, 1, 4))
		if _, err := l.Rotate(); err != nil {
			t.Fatal(err)
		}
		appendSync(t, l, push(0, 2, 4))
		if err := l.f.Close(); err != nil { // killed
			t.Fatal(err)
		}
		return dir
	}
	for _, tc := range []struct {
		name   string
		remove []uint64
		from   uint64
		want   string
	}{
		{"the last of two", []uint64{2}, 0, "segment 2 is missing"},
		{"the first of two", []uint64{1}, 0, "segments before it are missing"},
		{"the checkpoint's", []uint64{2}, 2, "segment 2 is missing"},
		{"every one", []uint64{1, 2}, 0, "holds no log segments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := build(t)
			want := 2
			if tc.from == 2 {
				want = 1
			}
			if got, _, err := replayAll(t, dir, tc.from, small); err != nil || len(got) != want {
				t.Fatalf("intact log from %d: %d records, %v", tc.from, len(got), err)
			}
			for _, s := range tc.remove {
				if err := os.Remove(SegmentPath(dir, s)); err != nil {
					t.Fatal(err)
				}
			}
			if _, _, err := replayAll(t, dir, tc.from, small); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want ErrCorrupt saying %q", err, tc.want)
			}
		})
	}
	missing := t.TempDir() + "/never"
	if got, _, err := replayAll(t, missing, 0, small); err != nil || len(got) != 0 {
		t.Errorf("a log directory never made: %d records, %v; want an empty log", len(got), err)
	}
	if _, _, err := replayAll(t, missing, 3, small); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a checkpoint naming segment 3 of a log directory never made: err %v", err)
	}
}

// TestSegmentsArePrivate: segments hold gradients and are as private as
// a checkpoint (0600).
func TestSegmentsArePrivate(t *testing.T) {
	dir := t.TempDir() + "/log"
	l, err := Start(dir, small)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Rotate(); err != nil {
		t.Fatal(err)
	}
	l.Close()
	for _, s := range []uint64{1, 2} {
		st, err := os.Stat(SegmentPath(dir, s))
		if err != nil {
			t.Fatal(err)
		}
		if p := st.Mode().Perm(); p != 0o600 {
			t.Errorf("segment %d has mode %o, want 600", s, p)
		}
	}
}

// fullFile fails every write with ENOSPC (after half its bytes) while
// full is set.
type fullFile struct {
	*os.File
	full *bool
}

func (f fullFile) WriteAt(b []byte, off int64) (int, error) {
	if *f.full {
		n, _ := f.File.WriteAt(b[:len(b)/2], off)
		return n, syscall.ENOSPC
	}
	return f.File.WriteAt(b, off)
}

// TestRecoverAfterFailedWrite: a failed write stops the log; what was
// synced stays readable (ReplaySynced, changing no file) while it is
// down; Recover cuts the half-written bytes off, the dropped records'
// Sync says so, and the log goes on in the same segment.
func TestRecoverAfterFailedWrite(t *testing.T) {
	full := false
	o := small
	o.OpenFile = func(name string, flag int, perm os.FileMode) (File, error) {
		f, err := os.OpenFile(name, flag, perm)
		if err != nil {
			return nil, err
		}
		return fullFile{f, &full}, nil
	}
	dir := t.TempDir() + "/log"
	l, err := Start(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	appendSync(t, l, push(0, 1, 8), push(1, 2, 8))
	full = true
	lsn, err := l.Append(push(0, 3, 8))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(lsn); !errors.Is(err, syscall.ENOSPC) || l.Err() == nil {
		t.Fatalf("sync on a full disk: %v (log err %v)", err, l.Err())
	}
	if _, err := l.Append(push(1, 4, 8)); err == nil {
		t.Error("a failed log took an append")
	}
	got := 0
	if _, err := l.ReplaySynced(0, func(uint64, *Record) error { got++; return nil }); err != nil || got != 2 {
		t.Fatalf("ReplaySynced of a failed log: %d records, %v; want the 2 synced", got, err)
	}
	full = false
	if _, err := l.Recover(); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(lsn); !errors.Is(err, ErrDropped) {
		t.Errorf("sync of a dropped record: %v, want ErrDropped", err)
	}
	appendSync(t, l, push(0, 5, 8))
	l.Close()
	recs, info, err := replayAll(t, dir, 0, small)
	if err != nil || len(recs) != 3 || recs[2].Clock != 5 || info.TornAt != -1 {
		t.Fatalf("replay after recovery: %d records, torn at %d, %v; want clocks 1, 2, 5", len(recs), info.TornAt, err)
	}
}

// TestTornCreationRemoved: a last segment whose header never became
// durable (killed while Rotate made it) held nothing and is removed; the
// same in the first segment a replay needs is corruption.
func TestTornCreationRemoved(t *testing.T) {
	dir := t.TempDir() + "/log"
	l, err := Start(dir, small)
	if err != nil {
		t.Fatal(err)
	}
	appendSync(t, l, push(0, 1, 4))
	l.Close()
	os.WriteFile(SegmentPath(dir, 2), encodeHeader(2, 0)[:20], 0o600)
	got, _, err := replayAll(t, dir, 0, small)
	if err != nil || len(got) != 1 {
		t.Fatalf("a torn new segment after a whole one: %d records, %v", len(got), err)
	}
	if _, err := os.Stat(SegmentPath(dir, 2)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the torn new segment is still there: %v", err)
	}
	os.WriteFile(SegmentPath(dir, 2), encodeHeader(2, 0)[:20], 0o600)
	if _, _, err := replayAll(t, dir, 2, small); !errors.Is(err, ErrCorrupt) {
		t.Errorf("the checkpoint's own segment cut short: err %v, want ErrCorrupt", err)
	}
}
