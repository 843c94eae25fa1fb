package job

import (
	"strings"
	"testing"
	"time"
)

// TestCommandPushesBounded (issue 37): the push limit holds for a whole
// command, not only per run: ten runs at the per-run limit were accepted.
func TestCommandPushesBounded(t *testing.T) {
	one := Size{Workers: 1000, Iterations: MaxPushes / 1000}
	if err := one.Check("--"); err != nil {
		t.Fatalf("one run at the per-run limit: %v", err)
	}
	many := one
	many.Runs = 40
	err := many.Check("--")
	if err == nil || !strings.Contains(err.Error(), "40 runs") || !strings.Contains(err.Error(), "--iterations") {
		t.Errorf("40 runs at the per-run limit: %v, want a refusal naming --iterations and the 40 runs", err)
	}
	timed := Size{Workers: 1000, Duration: 100 * time.Second, Runs: 20000}
	if err := timed.Check("--"); err == nil || !strings.Contains(err.Error(), "--duration") {
		t.Errorf("a duration over 20,000 runs: %v, want a refusal naming --duration", err)
	}
	timed.Runs = 1
	if err := timed.Check("--"); err != nil {
		t.Errorf("a duration over one run: %v", err)
	}
}
