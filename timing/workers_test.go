package timing

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func mustWorkers(t *testing.T, spec WorkerSpec, n int, seed uint64) *Workers {
	t.Helper()
	w, err := NewWorkers(spec, n, seed)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// draw returns k iteration times of worker p in seconds.
func draw(w *Workers, p, k int) []float64 {
	out := make([]float64, k)
	for i := range out {
		out[i] = w.NextAt(p, 0).Seconds()
	}
	return out
}

func meanCV(xs []float64) (mean, cv float64) {
	var s, ss float64
	for _, x := range xs {
		s += x
	}
	mean = s / float64(len(xs))
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss/float64(len(xs)-1)) / mean
}

func TestNoModelIsExactAndSpeedsCycle(t *testing.T) {
	w := mustWorkers(t, WorkerSpec{Base: 100 * time.Millisecond, Speeds: []float64{1, 2.2, 0.5}}, 7, 9)
	want := []time.Duration{100e6, 220e6, 50e6, 100e6, 220e6, 50e6, 100e6}
	for round := 0; round < 3; round++ {
		for p, d := range want {
			if got := w.NextAt(p, 0); got != d {
				t.Fatalf("round %d worker %d: %v, want %v", round, p, got, d)
			}
		}
	}
	if w.Base() != 100*time.Millisecond || w.N() != 7 {
		t.Errorf("Base %v N %d", w.Base(), w.N())
	}
	if d := mustWorkers(t, WorkerSpec{}, 1, 0).NextAt(0, 0); d != DefaultBase {
		t.Errorf("zero spec: %v, want DefaultBase %v", d, DefaultBase)
	}
}

func TestSlowWorkerAndSpeedsMultiply(t *testing.T) {
	w := mustWorkers(t, WorkerSpec{Speeds: []float64{1, 2}, Straggler: MustStraggler("slow:worker=3,factor=4+slow:worker=3,factor=1.5")}, 5, 1)
	want := []time.Duration{1e9, 2e9, 1e9, 12e9, 1e9}
	for p, d := range want {
		if got := w.NextAt(p, 0); got != d {
			t.Errorf("worker %d: %v, want %v", p, got, d)
		}
	}
}

func TestSameSeedSameSequenceOtherSeedDiffers(t *testing.T) {
	spec := WorkerSpec{Jitter: 0.2, Straggler: MustStraggler("heavytail")}
	a, b, c := mustWorkers(t, spec, 3, 42), mustWorkers(t, spec, 3, 42), mustWorkers(t, spec, 3, 43)
	same := 0
	for i := 0; i < 1000; i++ {
		p := i % 3
		x, y, z := a.NextAt(p, 0), b.NextAt(p, 0), c.NextAt(p, 0)
		if x != y {
			t.Fatalf("draw %d: same seed gave %v and %v", i, x, y)
		}
		if x == z {
			same++
		}
	}
	if same > 5 {
		t.Errorf("seeds 42 and 43 agree on %d of 1000 draws", same)
	}
}

// Worker p's i-th time must not depend on how other workers' draws interleave
// with it: this is what makes paradigms comparable under the same seed.
func TestWorkerStreamIndependentOfInterleaving(t *testing.T) {
	for _, spec := range []WorkerSpec{
		{Jitter: 0.3},
		{Straggler: MustStraggler("shiftexp+lognormal:cv=0.1")},
		{Straggler: MustStraggler("heavytail:q=0.2,burst=0.3")},
	} {
		const n, k = 6, 400
		ref := make([][]float64, n)
		seq := mustWorkers(t, spec, n, 7)
		for p := n - 1; p >= 0; p-- { // worker by worker, in reverse
			ref[p] = draw(seq, p, k)
		}
		mixed := mustWorkers(t, spec, n, 7)
		got := make([][]float64, n)
		rng := rand.New(rand.NewPCG(1, 2))
		for remaining := n * k; remaining > 0; {
			p := rng.IntN(n)
			if len(got[p]) == k {
				continue
			}
			got[p] = append(got[p], mixed.NextAt(p, 0).Seconds())
			remaining--
		}
		for p := range ref {
			for i := range ref[p] {
				if ref[p][i] != got[p][i] {
					t.Fatalf("%+v: worker %d draw %d: %v in order, %v interleaved", spec, p, i, ref[p][i], got[p][i])
				}
			}
		}
		if ref[0][0] == ref[1][0] && ref[0][1] == ref[1][1] {
			t.Errorf("%+v: workers 0 and 1 share a stream", spec)
		}
	}
}

func TestLogNormalMeanAndCV(t *testing.T) {
	for _, tc := range []struct {
		spec   WorkerSpec
		wantCV float64
	}{
		{WorkerSpec{Jitter: 0.05}, 0.05},
		{WorkerSpec{Jitter: 0.3}, 0.3},
		{WorkerSpec{Straggler: MustStraggler("lognormal:cv=0.2")}, 0.2},
		// Independent log-normals multiply: 1+cv² multiplies.
		{WorkerSpec{Jitter: 0.1, Straggler: MustStraggler("lognormal:cv=0.1")}, math.Sqrt(1.01*1.01 - 1)},
	} {
		xs := draw(mustWorkers(t, tc.spec, 1, 3), 0, 200000)
		mean, cv := meanCV(xs)
		if math.Abs(mean-1) > 0.005 {
			t.Errorf("%+v: mean %.4f, want 1", tc.spec, mean)
		}
		if math.Abs(cv-tc.wantCV) > 0.04*tc.wantCV {
			t.Errorf("%+v: CV %.4f, want %.4f", tc.spec, cv, tc.wantCV)
		}
	}
}

func TestShiftExpMoments(t *testing.T) {
	xs := draw(mustWorkers(t, WorkerSpec{Base: 2 * time.Second, Straggler: MustStraggler("shiftexp:shift=0.8,mean=0.2")}, 1, 5), 0, 200000)
	mean, cv := meanCV(xs)
	// In units of Base = 2 s: 2·(0.8 + Exp(0.2)) has mean 2 and sd 0.4.
	if math.Abs(mean-2) > 0.005 || math.Abs(cv-0.2) > 0.006 {
		t.Errorf("mean %.4f CV %.4f, want 2 and 0.2", mean, cv)
	}
	for _, x := range xs {
		if x < 1.6-1e-9 {
			t.Fatalf("draw %v below the shift 1.6 s", x)
		}
	}
}

func TestHeavyTailBodyAndTail(t *testing.T) {
	body := draw(mustWorkers(t, WorkerSpec{Straggler: MustStraggler("heavytail:q=0,burst=0")}, 1, 1), 0, 100000)
	mean, cv := meanCV(body)
	if math.Abs(mean-1.55) > 0.003 || math.Abs(cv*mean-0.5/math.Sqrt(12)) > 0.003 {
		t.Errorf("body: mean %.4f sd %.4f, want uniform 1.3-1.8 (1.55, 0.1443)", mean, cv*mean)
	}
	// Without bursts every x > 1.8 is a straggler event (the Pareto delay is ≥ 1).
	xs := draw(mustWorkers(t, WorkerSpec{Straggler: MustStraggler("heavytail:burst=0")}, 1, 2), 0, 400000)
	var events, over10 int
	var maxX float64
	for _, x := range xs {
		maxX = max(maxX, x)
		if x > 1.8 {
			events++
			if x > 1.8+10 {
				over10++
			}
		}
	}
	if q := float64(events) / float64(len(xs)); math.Abs(q-0.011) > 0.0008 {
		t.Errorf("straggler events in %.4f of iterations, want q = 0.011", q)
	}
	// Pareto(1, alpha=1): P(delay > 10) = 0.1, tested loosely via x > body max + 10.
	if f := float64(over10) / float64(events); f < 0.06 || f > 0.12 {
		t.Errorf("P(delay > ~10 s | straggler) = %.3f, want about 0.1", f)
	}
	if maxX > 1.8+300+1e-9 {
		t.Errorf("max %v exceeds body + cap", maxX)
	}
	// Bursts alone: with burstdelay=1 every x > 1.8 is a burst iteration.
	bursts := 0
	for _, x := range draw(mustWorkers(t, WorkerSpec{Straggler: MustStraggler("heavytail:q=0,burstdelay=1")}, 1, 4), 0, 100000) {
		if x > 1.8 {
			bursts++
		}
	}
	if f := float64(bursts) / 100000; math.Abs(f-0.1) > 0.005 {
		t.Errorf("burst iterations %.4f, want 0.1", f)
	}
	// E[min(Pareto(1,1), 300)] = 1 + ln 300, so the default mean is 1.55 + q(1+ln 300) + burst·burstdelay.
	wantMean := 1.55 + 0.011*(1+math.Log(300)) + 0.1*0.25
	if m, _ := meanCV(draw(mustWorkers(t, WorkerSpec{Straggler: MustStraggler("heavytail")}, 1, 6), 0, 400000)); math.Abs(m-wantMean) > 0.02 {
		t.Errorf("mean %.4f, want %.4f", m, wantMean)
	}
}

// The burst draw is shared: at the same iteration index every worker is in or
// out of a burst together.
func TestHeavyTailBurstIsSharedAcrossWorkers(t *testing.T) {
	w := mustWorkers(t, WorkerSpec{Straggler: MustStraggler("heavytail:q=0,burst=0.5,burstdelay=10")}, 5, 11)
	bursts := 0
	for i := 0; i < 200; i++ {
		in := w.NextAt(0, 0) > 5*time.Second
		if in {
			bursts++
		}
		for p := 1; p < 5; p++ {
			if (w.NextAt(p, 0) > 5*time.Second) != in {
				t.Fatalf("iteration %d: worker %d disagrees with worker 0 about the burst", i, p)
			}
		}
	}
	if bursts < 70 || bursts > 130 {
		t.Errorf("%d bursts in 200 iterations at burst=0.5", bursts)
	}
}

func TestStringDescribesConfig(t *testing.T) {
	w := mustWorkers(t, WorkerSpec{Speeds: []float64{1, 2.2}, Jitter: 0.1, Straggler: MustStraggler("slow:worker=1")}, 2, 1)
	want := "base=1s speeds=[1 2.2] jitter=0.1 straggler=slow:worker=1,factor=2"
	if w.String() != want {
		t.Errorf("String() = %q, want %q", w, want)
	}
}

func TestHugeTimesSaturate(t *testing.T) {
	w := mustWorkers(t, WorkerSpec{Base: time.Duration(math.MaxInt64 / 2), Speeds: []float64{1e6}}, 1, 1)
	if d := w.NextAt(0, 0); d != math.MaxInt64 {
		t.Errorf("overflowing time %v, want saturation at MaxInt64", d)
	}
}

// TestWindowSlowsOnlyWithinIt: a slow term with from and to multiplies the
// worker's draws by its factor exactly when the iteration starts in
// [from, to), and leaves the stream (the draws' sequence) as it was.
func TestWindowSlowsOnlyWithinIt(t *testing.T) {
	spec := WorkerSpec{Jitter: 0.2}
	plain := mustWorkers(t, spec, 3, 5)
	spec.Straggler = MustStraggler("slow:worker=2,factor=4,from=10,to=20")
	w := mustWorkers(t, spec, 3, 5)
	if !w.Varies() || plain.Varies() {
		t.Fatalf("Varies: %v with a window, %v without", w.Varies(), plain.Varies())
	}
	for i, now := range []time.Duration{0, 9999 * time.Millisecond, 10 * time.Second, 15 * time.Second, 19999 * time.Millisecond, 20 * time.Second, time.Hour} {
		in := now >= 10*time.Second && now < 20*time.Second
		for p := range 3 {
			got, ref := w.NextAt(p, now), plain.NextAt(p, now)
			want := ref
			if p == 2 && in {
				want = time.Duration(float64(ref)*4 + 0.5)
			}
			if d := got - want; d < -1 || d > 1 {
				t.Errorf("draw %d, worker %d at %v: %v, want %v", i, p, now, got, want)
			}
		}
	}
	// Without to, the window lasts to the end.
	open := mustWorkers(t, WorkerSpec{Straggler: MustStraggler("slow:worker=0,factor=2.5,from=50")}, 1, 1)
	if a, b := open.NextAt(0, 49*time.Second), open.NextAt(0, 1000*time.Hour); a != time.Second || b != 2500*time.Millisecond {
		t.Errorf("from=50 without to: %v before, %v long after; want 1s and 2.5s", a, b)
	}
}

// TestRoamingStraggler: in each period one worker, the same for every
// paradigm with the seed, is slowed by the factor; over many periods the
// straggler visits every worker.
func TestRoamingStraggler(t *testing.T) {
	spec := WorkerSpec{Straggler: MustStraggler("roam:factor=3,every=10")}
	a, b := mustWorkers(t, spec, 4, 9), mustWorkers(t, spec, 4, 9)
	visited := map[int]int{}
	for k := range 200 {
		now := time.Duration(k)*10*time.Second + 5*time.Second
		r := a.Roamer(now)
		if r != b.Roamer(now) || r != a.Roamer(now-4*time.Second) || r < 0 || r > 3 {
			t.Fatalf("period %d: roamer %d, another Workers of the seed %d, the period's start %d", k, r, b.Roamer(now), a.Roamer(now-4*time.Second))
		}
		visited[r]++
		for p := range 4 {
			want := time.Second
			if p == r {
				want = 3 * time.Second
			}
			if got := a.NextAt(p, now); got != want {
				t.Fatalf("period %d, worker %d (roamer %d): %v, want %v", k, p, r, got, want)
			}
		}
	}
	for p := range 4 {
		if visited[p] < 25 {
			t.Errorf("worker %d roamed %d of 200 periods: %v", p, visited[p], visited)
		}
	}
	if r := mustWorkers(t, WorkerSpec{}, 4, 9).Roamer(time.Hour); r != -1 {
		t.Errorf("no roam term: Roamer = %d, want -1", r)
	}
}
