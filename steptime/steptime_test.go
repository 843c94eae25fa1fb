package steptime

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/nn"
)

func TestRound2(t *testing.T) {
	for _, c := range []struct{ in, want time.Duration }{
		{4234 * time.Microsecond, 4200 * time.Microsecond},
		{771877, 770 * time.Microsecond},
		{16437137, 16 * time.Millisecond},
		{16500000, 17 * time.Millisecond}, // half away from zero
		{995 * time.Millisecond, time.Second},
		{63 * time.Minute, 3800 * time.Second},
		{42, 42},
		{5, 5},
	} {
		if got := Round2(c.in); got != c.want {
			t.Errorf("Round2(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

// clock is a clock the steps drive: each step lasts d, and slow more when
// it starts in the third round (d divides roundTime, so the rounds start
// at d, d+roundTime, d+2·roundTime, …).
type clock struct {
	t, d, slow time.Duration
	steps      int
}

func (c *clock) step() {
	c.steps++
	if third := c.d + 2*roundTime; c.t >= third && c.t < third+roundTime {
		c.t += c.slow
	}
	c.t += c.d
}

func (c *clock) now() time.Duration { return c.t }

func TestMeasureMedianOfRounds(t *testing.T) {
	c := &clock{d: 4 * time.Millisecond, slow: 40 * time.Millisecond}
	got, err := Measure(c.step, c.now)
	if err != nil || got != c.d {
		t.Errorf("Measure = %s, %v; want %s (one slow round is not the median)", got, err, c.d)
	}
	// A clock that never moves ends the rounds at their bound.
	stuck := &clock{}
	if _, err := Measure(stuck.step, stuck.now); err == nil || stuck.steps != 1+maxSteps {
		t.Errorf("a stopped clock: %v after %d steps", err, stuck.steps)
	}
}

func TestResolve(t *testing.T) {
	// The clock advances on its own: every reading 4.234 ms after the last.
	var tick time.Duration
	now := func() time.Duration { tick += 4234 * time.Microsecond; return tick }
	r, err := Resolve(Request{Model: "mlp", Shape: nn.Image28, Batch: 32}, now)
	if err != nil || r.Base != 4200*time.Microsecond || r.Raw != 4234*time.Microsecond {
		t.Fatalf("Resolve = %+v, %v", r, err)
	}
	if want := "base: auto → 4.2ms (measured: the mlp's step at batch 32 on this machine)"; r.String() != want {
		t.Errorf("%q, want %q", r, want)
	}
	// A device's FLOP/s: the MLP's 64,924,948 FLOP at batch 64 (nn's
	// TestStepFLOPs) at 10 GFLOP/s is 6.49 ms.
	r, err = Resolve(Request{Model: "mlp", Shape: nn.Image28, Batch: 64, DeviceRate: 1e10}, nil)
	if err != nil || r.Base != 6500*time.Microsecond || !strings.Contains(r.String(), "6.49e+07 FLOP, at 1e+10 FLOP/s") {
		t.Errorf("Resolve at 1e10 FLOP/s = %v, %v", r, err)
	}
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1), 1e21} {
		if _, err := Resolve(Request{Model: "mlp", Shape: nn.Image28, Batch: 64, DeviceRate: bad}, nil); err == nil || !strings.Contains(err.Error(), "device-rate=") {
			t.Errorf("device rate %g: %v", bad, err)
		}
	}
	if _, err := Resolve(Request{Model: "resnet", Shape: nn.Image28, Batch: 64}, now); err == nil || !strings.Contains(err.Error(), "resnet") {
		t.Errorf("unknown model: %v", err)
	}
	if _, err := Resolve(Request{Model: "mlp", Shape: nn.Image28, Batch: 64, DeviceRate: 1e-9}, nil); err == nil {
		t.Errorf("a step of years: no error")
	}
}
