package main

import (
	"context"
	"log/slog"
	"os"
	"strings"
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
		go func() { done <- runUntilSignal(stuck, slog.New(slog.DiscardHandler), grace) }()
		<-started
		t0 := time.Now()
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		if second {
			time.Sleep(100 * time.Millisecond)
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
