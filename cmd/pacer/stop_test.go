package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// guard bounds each wait of these tests: an event that has not come by
// then never will (they assert what happens, never how soon).
const guard = 2 * time.Minute

// TestStopPromptWhateverTheState (issue 14): after SIGTERM a server gets a
// grace to finish (its final checkpoint); one that does not return in it,
// stuck in any state, is left behind and the process exits, and a second
// signal exits at once.
func TestStopPromptWhateverTheState(t *testing.T) {
	for _, second := range []bool{false, true} {
		started := make(chan struct{})
		release := make(chan struct{})
		stuck := func(ctx context.Context) error {
			close(started)
			<-release // ignores ctx: a handler stuck in a loop
			return nil
		}
		// With a second signal the grace never ends within the test: only
		// that signal can stop the wait.
		grace := 2 * time.Second
		if second {
			grace = time.Hour
		}
		done := make(chan error, 1)
		stopping := make(chan struct{})
		log := slog.New(&notifyHandler{msg: "stopping", seen: stopping})
		go func() { done <- runUntilSignal(stuck, log, grace, 0) }()
		<-started
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		if second {
			// The second signal only after the first was taken: the kernel
			// merges two SIGTERMs still pending together (a loaded machine
			// may not run the process between them).
			select {
			case <-stopping:
			case <-time.After(guard): // a guard: the event above never came, so the test fails rather than hangs
				t.Fatal("the first signal was not taken")
			}
			syscall.Kill(os.Getpid(), syscall.SIGTERM)
		}
		select {
		case err := <-done:
			want := "did not stop within"
			if second {
				want = "second signal"
			}
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("second signal %v: %v, want an error saying %q", second, err, want)
			}
		case <-time.After(guard): // a guard: the event above never came, so the test fails rather than hangs
			t.Fatalf("second signal %v: still running after SIGTERM", second)
		}
		close(release)
	}
	// A run that honours its context returns its own result.
	done := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		done <- runUntilSignal(func(ctx context.Context) error { close(started); <-ctx.Done(); return nil }, slog.New(slog.DiscardHandler), time.Hour, 0)
	}()
	<-started
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("a clean stop: %v", err)
		}
	case <-time.After(guard): // a guard: the event above never came, so the test fails rather than hangs
		t.Fatal("a clean stop did not return")
	}
}

// TestTwoSignalsAtOnceAreOneStop (issue 37): timeout(1) sends SIGTERM to its
// child and then to the child's process group, so the server gets it twice
// at once; that is one stop, which still waits for the shutdown (a large
// final checkpoint was skipped as if an operator had asked to hurry).
func TestTwoSignalsAtOnceAreOneStop(t *testing.T) {
	started := make(chan struct{})
	twice := make(chan struct{})
	run := func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		<-twice // the shutdown is still under way when the repeat comes
		return nil
	}
	log := slog.New(&notifyHandler{msg: "the stop signal came twice at once (as timeout(1) sends it to the process and its group): still stopping", seen: twice})
	done := make(chan error, 1)
	// The window outlasts the test: any second signal is a repeat.
	go func() { done <- runUntilSignal(run, log, time.Hour, time.Hour) }()
	<-started
	// Signals sent after the server stopped listening are this test's:
	// without a listener of its own SIGTERM's default action would end it.
	keep := make(chan os.Signal, 64)
	signal.Notify(keep, syscall.SIGTERM)
	defer signal.Stop(keep)
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	// Sent until the server has taken one as a repeat: the kernel merges
	// two SIGTERMs still pending (bounded by the guard).
	deadline := time.After(guard) // a guard on the loop below: it ends on the event, this only bounds it
	for sent := false; !sent; {
		select {
		case <-twice:
			sent = true
		case <-deadline:
			t.Fatal("the repeated signal was never taken")
		case <-time.After(50 * time.Millisecond): // resend pace: a SIGTERM merged with a pending one gives no event to wait for
			syscall.Kill(os.Getpid(), syscall.SIGTERM)
		}
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("one stop delivered twice: %v, want the shutdown's own result", err)
		}
	case <-time.After(guard): // a guard: the event above never came, so the test fails rather than hangs
		t.Fatal("the stop did not return")
	}
	if !sameDelivery(time.Unix(100, 0), time.Unix(100, 0).Add(repeatWindow-time.Nanosecond), repeatWindow) ||
		sameDelivery(time.Unix(100, 0), time.Unix(100, 0).Add(repeatWindow), repeatWindow) {
		t.Errorf("sameDelivery: want a repeat strictly within %s of the first signal", repeatWindow)
	}
}

// notifyHandler closes seen when a record with message msg is logged.
type notifyHandler struct {
	msg  string
	seen chan struct{}
	once sync.Once
}

func (h *notifyHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *notifyHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.once.Do(func() { close(h.seen) })
	}
	return nil
}
func (h *notifyHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *notifyHandler) WithGroup(string) slog.Handler      { return h }
