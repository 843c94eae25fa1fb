package live

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// waitGuard bounds every wait of these tests for an event: far beyond what
// any takes on an idle machine, so that a busy one only makes a test
// slower, and a hang still ends.
const waitGuard = 2 * time.Minute

// writeSignal lets a test wait for the write that brings a log line
// instead of reading the log on a timer: each write closes the channel
// the waiters hold. Its methods run under the buffer's lock.
type writeSignal struct{ ch chan struct{} }

func (s *writeSignal) wrote() {
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

func (s *writeSignal) next() <-chan struct{} {
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// textWaiter is a log buffer a test can wait on: holds reports whether
// its text satisfies ok and, when not, a channel closed at its next write.
type textWaiter interface {
	holds(ok func(string) bool) (bool, <-chan struct{})
}

// awaitText waits until b's text satisfies ok, woken by b's writes; false
// after waitGuard.
func awaitText(b textWaiter, ok func(string) bool) bool {
	guard := time.NewTimer(waitGuard) // a guard against a hang, not a wait
	defer guard.Stop()
	for {
		done, next := b.holds(ok)
		if done {
			return true
		}
		select {
		case <-next:
		case <-guard.C:
			return false
		}
	}
}

// awaitLog waits until b holds want (false after waitGuard).
func awaitLog(b textWaiter, want string) bool {
	return awaitText(b, func(s string) bool { return strings.Contains(s, want) })
}

// waitUntil waits until cond holds, for state that gives no notice of its
// change: a shard's counters, a listener another goroutine opens, an HTTP
// page, a dial that may be refused. Checking it is the wait; it reports
// false only after waitGuard.
func waitUntil(cond func() bool) bool {
	deadline := time.Now().Add(waitGuard)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		// The interval between checks of a state with no notice, not a
		// guessed duration: the deadline above bounds the wait.
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// syncBuffer is a log destination several goroutines share (a server's,
// a process's output).
type syncBuffer struct {
	mu  sync.Mutex
	b   strings.Builder
	sig writeSignal
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sig.wrote()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) holds(ok func(string) bool) (bool, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ok(s.b.String()) {
		return true, nil
	}
	return false, s.sig.next()
}

// skipUnderRace skips a test whose job runs in separate pacer processes
// under the race detector: those are built without it, so only the test's
// own waiting would be instrumented, and the test has run in the plain go
// test (DECISIONS: slow end-to-end tests need not run twice under it).
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("a job of separate processes: run by the plain go test")
	}
}
