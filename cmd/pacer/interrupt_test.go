package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a stderr the test reads while the command writes it.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	started chan struct{}
	once    sync.Once
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if bytes.Contains(p, []byte("compare:")) { // compare.Run's progress: the signal handler is in place
		s.once.Do(func() { close(s.started) })
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Ctrl-C stops a comparison's runs in flight (each here would train for
// hours of virtual time): the command returns within seconds, says so,
// and leaves no output directory behind.
func TestCompareInterruptedWritesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	errb := &syncBuffer{started: make(chan struct{})}
	done := make(chan int, 1)
	go func() {
		var out bytes.Buffer
		done <- run([]string{"compare", "--paradigms", "bsp;asp", "--workers", "2", "--seeds", "2", "--dataset", "synthetic",
			"--train-limit", "400", "--test-limit", "100", "--horizon", "1000h", "--out", dir}, &out, errb)
	}()
	select {
	case <-errb.started:
	case code := <-done:
		t.Fatalf("exit %d before any progress: %s", code, errb.String())
	case <-time.After(60 * time.Second):
		t.Fatal("no progress within 60 s")
	}
	time.Sleep(200 * time.Millisecond) // the runs are under way
	t0 := time.Now()
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	select {
	case code := <-done:
		if el := time.Since(t0); el > 15*time.Second {
			t.Errorf("returned %s after the signal", el)
		}
		errs := errb.String()
		if code != exitFailure || !strings.Contains(errs, "stopped by a signal") || !strings.Contains(errs, "nothing was written") {
			t.Errorf("exit %d: %s", code, errs)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%s was left behind", dir)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("still running 60 s after SIGINT")
	}
}
