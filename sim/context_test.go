package sim

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/paradigm"
)

// A stopped context stops a long simulation within moments, with an
// error saying so and no summary (pacer compare's Ctrl-C used to wait for
// every run in flight to finish).
func TestRunContextStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	t0 := time.Now()
	// 10^9 pushes: hours of work if the context were not observed.
	r, err := RunContext(ctx, Config{Spec: paradigm.Spec{Kind: paradigm.ASP}, Workers: 100, Iterations: 10_000_000, Seed: 1})
	if !errors.Is(err, context.Canceled) || r != nil {
		t.Fatalf("run %v, err %v: want context.Canceled and no summary", r, err)
	}
	if el := time.Since(t0); el > 5*time.Second {
		t.Errorf("stopped after %s", el)
	}
	// A context never done changes nothing.
	cfg := Config{Spec: paradigm.Spec{Kind: paradigm.SSP, S: 2}, Workers: 3, Iterations: 50, Seed: 4}
	a, err1 := Run(cfg)
	b, err2 := RunContext(context.Background(), cfg)
	if err1 != nil || err2 != nil || a.Pushes != b.Pushes || a.VirtualSeconds != b.VirtualSeconds {
		t.Errorf("Run and RunContext differ: %+v %v, %+v %v", a, err1, b, err2)
	}
}
