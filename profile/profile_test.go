package profile

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/timing"
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

// draw runs timing's own model (the simulator's) for n iterations of each
// worker and returns what a coordinator would have accumulated.
func draw(t *testing.T, spec timing.WorkerSpec, k, n int, seed uint64) []runstats.IterStats {
	t.Helper()
	w, err := timing.NewWorkers(spec, k, seed)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]runstats.IterStats, k)
	for p := range k {
		var a runstats.IterAcc
		for range n {
			a.Add(w.NextAt(p, 0).Seconds())
		}
		out[p] = a.Stats()
	}
	return out
}

// A straggler tail drawn by timing's heavytail model is found and fitted:
// its spec, given back to timing, puts as many iterations past 2× the
// median as the original did (within a third), and the body's speeds and
// jitter come through it; iterations without a tail show none (over many
// seeds: a false tail would put stragglers into every prediction).
func TestFitFindsTail(t *testing.T) {
	spec := timing.WorkerSpec{Base: 20 * time.Millisecond, Speeds: []float64{1, 1, 2.5}, Jitter: 0.1,
		Straggler: timing.MustStraggler("heavytail:q=0.02,body=1-1,delay=1.5,alpha=1.5,burst=0")}
	ws := draw(t, spec, 3, 3000, 7)
	f, err := FromStats(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fit: base %s speeds %v jitter %g tail %+v → %s", f.Base, f.Speeds, f.Jitter, f.Tail, f.Tail.Straggler())
	if f.Tail.Q == 0 {
		t.Fatalf("no tail found in iterations drawn with %s", spec.Straggler)
	}
	if math.Abs(f.Speeds[2]/2.5-1) > 0.05 || math.Abs(f.Jitter-0.1) > 0.03 || math.Abs(f.Base.Seconds()/0.02-1) > 0.05 {
		t.Errorf("body: base %s, speeds %v, jitter %g; want 20ms, [1 1 2.5], 0.1", f.Base, f.Speeds, f.Jitter)
	}
	past := func(ws []runstats.IterStats) float64 { // share of iterations over twice their worker's median
		var over, n int64
		for _, w := range ws {
			m := quantile(w.Hist, 0.5)
			for _, bc := range w.Hist {
				if runstats.IterBucketLow(int(bc[0])) >= 2*m {
					over += bc[1]
				}
				n += bc[1]
			}
		}
		return float64(over) / float64(n)
	}
	refit := spec
	refit.Base, refit.Speeds, refit.Jitter, refit.Straggler = f.Base, f.Speeds, f.Jitter, timing.MustStraggler(f.Tail.Straggler())
	want, got := past(ws), past(draw(t, refit, 3, 3000, 8))
	t.Logf("iterations past 2× the median: %.4f drawn, %.4f from the fit", want, got)
	if math.Abs(got/want-1) > 1.0/3 {
		t.Errorf("the fitted tail puts %.4f of iterations past 2× the median, the original %.4f", got, want)
	}
	for seed := range uint64(40) {
		plain := timing.WorkerSpec{Base: 20 * time.Millisecond, Speeds: []float64{1, 2}, Jitter: 0.3}
		if f, err := FromStats(draw(t, plain, 2, 2000, seed)); err != nil || f.Tail.Q != 0 {
			t.Fatalf("seed %d: a tail %+v (%v) found in log-normal iterations", seed, f.Tail, err)
		}
	}
}

// replies draws n pull replies per shard as a live shard times them: a
// log-normal body (its own work, median body) plus what timing's
// server-delay model spec adds.
func replies(t *testing.T, spec string, shards, n int, body time.Duration, seed uint64) []runstats.IterStats {
	t.Helper()
	s, err := timing.NewServers(timing.MustServerDelay(spec), shards, 1, seed)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 3))
	out := make([]runstats.IterStats, shards)
	for sh := range shards {
		var a runstats.IterAcc
		for range n {
			a.Add(body.Seconds()*math.Exp(0.3*r.NormFloat64()) + s.PullDelay(sh).Seconds())
		}
		out[sh] = a.Stats()
	}
	return out
}

// The server-delay fit recovers a const delay and a spike, per shard or
// for all, within 10% of the delays and 35% of the spike's probability
// (about 2σ of a count of 64), and writes them as a spec that timing
// accepts; replies of the shards' own work alone (a few percent of the
// base) give none.
func TestFitServers(t *testing.T) {
	const base = 100 * time.Millisecond
	for _, c := range []struct {
		spec           string
		shards         int
		wantConst      []time.Duration
		wantSpike      []time.Duration
		wantP          float64
		wantSpecPrefix string
	}{
		{"const:delay=20ms+spike:p=0.02,delay=400ms", 2, []time.Duration{20e6, 20e6}, []time.Duration{400e6, 400e6}, 0.02, "const:delay=19.9ms+spike:"},
		{"const:delay=8ms,shard=1+spike:p=0.02,delay=1s,shard=0", 3, []time.Duration{0, 8e6, 0}, []time.Duration{1e9, 0, 0}, 0.02, "const:delay=8.23ms,shard=1+spike:p=0.0234,delay=982ms,shard=0"},
		{"", 2, []time.Duration{0, 0}, []time.Duration{0, 0}, 0, ""},
	} {
		ds, err := FitServers(replies(t, c.spec, c.shards, 3200, 200*time.Microsecond, 5), base)
		if err != nil {
			t.Fatal(err)
		}
		spec := ServerSpec(ds)
		t.Logf("%q → %+v → %q", c.spec, ds, spec)
		near := func(got, want time.Duration) bool {
			if want == 0 {
				return got == 0
			}
			// The body's median (200 µs) rides on a const delay.
			return math.Abs(got.Seconds()-want.Seconds()) <= 0.1*want.Seconds()
		}
		for i, d := range ds {
			if !near(d.Const, c.wantConst[i]) || !near(d.Spike, c.wantSpike[i]) {
				t.Errorf("%q shard %d: const %v spike %v, want %v and %v", c.spec, i, d.Const, d.Spike, c.wantConst[i], c.wantSpike[i])
			}
			if c.wantSpike[i] > 0 && math.Abs(d.SpikeP/c.wantP-1) > 0.35 {
				t.Errorf("%q shard %d: spike p %g, want %g", c.spec, i, d.SpikeP, c.wantP)
			}
		}
		// Alike shards as one term, others one term each.
		if !strings.HasPrefix(spec, c.wantSpecPrefix) || (c.wantSpecPrefix == "") != (spec == "") {
			t.Errorf("%q: fitted as %q", c.spec, spec)
		}
		if d, err := timing.ParseServerDelay(spec); err != nil {
			t.Errorf("the fitted spec %q: %v", spec, err)
		} else if _, err := timing.NewServers(d, c.shards, 1, 1); err != nil {
			t.Errorf("the fitted spec %q: %v", spec, err)
		}
	}
	if _, err := FitServers([]runstats.IterStats{{N: 3}}, base); err == nil || !strings.Contains(err.Error(), "shard 0") {
		t.Errorf("a shard of 3 replies: %v", err)
	}
}
