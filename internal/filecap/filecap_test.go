package filecap

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// AllocatedBy is the bytes fn allocates on the heap (runtime.MemStats's
// TotalAlloc before and after): a refusal that read its file first shows
// there, whatever the garbage collector freed since.
func allocatedBy(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

func sparse(t *testing.T, size int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, size); err != nil {
		t.Fatal(err)
	}
	return p
}

// At the limit a file is read; a byte above it is refused, by its stat
// size, naming the file, its size and the limit, before anything is
// allocated for it (a sparse GiB costs what a small file's refusal does).
func TestReadAtTheLimit(t *testing.T) {
	dir := t.TempDir()
	at := filepath.Join(dir, "at")
	want := bytes.Repeat([]byte("x"), 1000)
	if err := os.WriteFile(at, want, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Read(at, "test file", 1000)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("a file at the limit: %d bytes, %v", len(got), err)
	}
	if _, err := Read(at, "test file", 999); err == nil {
		t.Fatal("a file a byte above the limit was read")
	} else if msg := err.Error(); !strings.Contains(msg, at) || !strings.Contains(msg, "1000 bytes") || !strings.Contains(msg, "999 bytes a test file") {
		t.Fatalf("the refusal does not name the file, its size and the limit: %v", err)
	}

	big := sparse(t, 1<<30+1)
	var rerr error
	alloc := allocatedBy(func() { _, rerr = Read(big, "test file", 1<<30) })
	var tl *TooLarge
	if !errors.As(rerr, &tl) || tl.Size != 1<<30+1 || tl.Limit != 1<<30 || tl.Unsized {
		t.Fatalf("a sparse file a byte above 1 GiB: %v", rerr)
	}
	if alloc > 1<<20 {
		t.Fatalf("refusing a sparse file above the limit allocated %d bytes: it was read", alloc)
	}
}

// A file the stat cannot size (a pipe) is read up to the limit and refused
// past it, holding at most the limit and a byte.
func TestReadUnsized(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		defer w.Close()
		w.Write(bytes.Repeat([]byte("y"), 64<<10)) // fails once the reader has refused and closed: nothing to do
	}()
	path := fmt.Sprintf("/proc/self/fd/%d", r.Fd())
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no /proc/self/fd here: %v", err)
	}
	_, err = Read(path, "test file", 10<<10)
	var tl *TooLarge
	if !errors.As(err, &tl) || !tl.Unsized || !strings.Contains(err.Error(), "more than the 10240 bytes") {
		t.Fatalf("a pipe of 64 KiB read with a limit of 10 KiB: %v", err)
	}
}

// A file that fits is returned whole, also one with no stat size.
func TestReadSmall(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() { defer w.Close(); w.Write([]byte("hello")) }()
	path := fmt.Sprintf("/proc/self/fd/%d", r.Fd())
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no /proc/self/fd here: %v", err)
	}
	if b, err := Read(path, "test file", 5); err != nil || string(b) != "hello" {
		t.Fatalf("a pipe of 5 bytes at the limit: %q, %v", b, err)
	}
	if _, err := Read(filepath.Join(t.TempDir(), "none"), "test file", 5); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
}
