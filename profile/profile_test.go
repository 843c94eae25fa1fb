package profile

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/runstats"
)

// sample draws n log-normal iteration times of mean base×speed and CV cv.
func sample(r *rand.Rand, n int, base time.Duration, speed, cv float64) runstats.IterStats {
	sigma := math.Sqrt(math.Log1p(cv * cv))
	mu := math.Log(base.Seconds()*speed) - sigma*sigma/2
	var a runstats.IterAcc
	for range n {
		a.Add(math.Exp(mu + sigma*r.NormFloat64()))
	}
	return a.Stats()
}

// The fit recovers the speeds, the base and the jitter that drew the
// iterations.
func TestFitRecoversTiming(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		speeds []float64
		cv     float64
		n      int
	}{
		{[]float64{1, 1, 2.5}, 0.1, 200},
		{[]float64{1, 2}, 0.3, 400},
		{[]float64{1.5, 1, 1, 4}, 0, 50},
	} {
		var ws []runstats.IterStats
		for _, s := range c.speeds {
			ws = append(ws, sample(r, c.n, 20*time.Millisecond, s, c.cv))
		}
		f, err := FromStats(ws)
		if err != nil {
			t.Fatal(err)
		}
		lo := math.Inf(1)
		for _, s := range c.speeds {
			lo = min(lo, s)
		}
		for i, s := range c.speeds {
			if math.Abs(f.Speeds[i]/(s/lo)-1) > 0.05 {
				t.Errorf("speeds %v, cv %g: fitted speeds %v", c.speeds, c.cv, f.Speeds)
				break
			}
		}
		if math.Abs(f.Jitter-c.cv) > 0.02 {
			t.Errorf("speeds %v, cv %g: fitted jitter %g", c.speeds, c.cv, f.Jitter)
		}
		if b := f.Base.Seconds() / (0.02 * lo); math.Abs(b-1) > 0.05 {
			t.Errorf("speeds %v: base %s, want about %v", c.speeds, f.Base, time.Duration(lo*20e6))
		}
		sc := f.Scenario("fit", 2, "mlp")
		if err := sc.Validate(); err != nil {
			t.Errorf("the fitted scenario does not validate: %v", err)
		}
	}
}

func TestFitRefusesTooLittle(t *testing.T) {
	if _, err := FromStats(nil); err == nil || !strings.Contains(err.Error(), "worker_iterations") {
		t.Errorf("no figures: %v", err)
	}
	ws := []runstats.IterStats{{N: 50, Mean: 0.02, LogSD: 0.1}, {N: 3, Mean: 0.04, LogSD: 0.1}}
	if _, err := FromStats(ws); err == nil || !strings.Contains(err.Error(), "worker 1") {
		t.Errorf("a worker with 3 iterations: %v", err)
	}
}
