package main

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

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
		grace := 2 * time.Second
		if second {
			grace = time.Minute
		}
		done := make(chan error, 1)
		stopping := make(chan struct{})
		log := slog.New(&notifyHandler{msg: "stopping", seen: stopping})
		go func() { done <- runUntilSignal(stuck, log, grace) }()
		<-started
		t0 := time.Now()
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		if second {
			// The second signal only after the first was taken: the kernel
			// merges two SIGTERMs still pending together (a loaded machine
			// may not run the process between them).
			select {
			case <-stopping:
			case <-time.After(20 * time.Second):
				t.Fatal("the first signal was not taken within 20 s")
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
			if el := time.Since(t0); el > grace+5*time.Second {
				t.Errorf("second signal %v: returned after %s", second, el)
			}
		case <-time.After(grace + 20*time.Second):
			t.Fatalf("second signal %v: still running %s after SIGTERM", second, grace+20*time.Second)
		}
		close(release)
	}
	// A run that honours its context returns its own result.
	done := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		done <- runUntilSignal(func(ctx context.Context) error { close(started); <-ctx.Done(); return nil }, slog.New(slog.DiscardHandler), time.Minute)
	}()
	<-started
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("a clean stop: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a clean stop did not return")
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
