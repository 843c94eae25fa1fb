package auto

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/paradigm"
)

// hindsight is DECISIONS' default among list (PSP needs its shard count).
var hindsight = []string{"bsp", "asp", "ssp:s=3", "dssp:sl=3,su=15", "elastic:r=15", "backup:b=1", "softsync:n=2"}

func specs(t *testing.T, ss ...string) []paradigm.Spec {
	t.Helper()
	var out []paradigm.Spec
	for _, s := range ss {
		sp, err := paradigm.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sp)
	}
	return out
}

// eight workers of 1 s but those slow names (worker: factor).
func eight(slow map[int]float64) Measured {
	m := Measured{Iter: make([]time.Duration, 8), CV: 0.05, Shards: 1}
	for p := range m.Iter {
		m.Iter[p] = time.Second
		if f, ok := slow[p]; ok {
			m.Iter[p] = time.Duration(f * float64(time.Second))
		}
	}
	return m
}

// TestDecisionsFollowTheCluster: a trace of what a coordinator measures as
// its cluster changes (the transient preset's: worker 7 four times as slow
// for a while) and the decisions each step gives, the paradigm in force
// carried from one to the next. BSP waits for the slow worker at every
// round, so the slowdown makes backup workers (which drop the slowest
// gradient) worth a switch; when it is over, BSP's extra gradient per
// round wins again.
func TestDecisionsFollowTheCluster(t *testing.T) {
	among := specs(t, hindsight...)
	r := Rule{Among: among, Horizon: 100 * time.Second, Threshold: 0.05, Lambda: 0.1, Seed: 1}
	current := among[0]
	for i, step := range []struct {
		m       Measured
		switch_ bool
		want    string // the paradigm in force after the step
	}{
		{eight(nil), false, "bsp"},
		{eight(map[int]float64{7: 4}), true, "backup:b=1"},
		{eight(map[int]float64{7: 4}), false, "backup:b=1"},
		{eight(nil), true, "bsp"},
	} {
		d, err := Decide(context.Background(), time.Duration(i)*time.Minute, step.m, current, r)
		if err != nil {
			t.Fatal(err)
		}
		if d.Switch != step.switch_ || (d.Switch && d.Best.String() != step.want) {
			t.Fatalf("step %d from %s: switch %v to %s (%s); want switch %v, %s in force", i, current, d.Switch, d.Best, d.Reason, step.switch_, step.want)
		}
		if d.Best.String() == current.String() && d.Gain != 0 {
			t.Errorf("step %d: %s predicted best while in force, gain %v: want 0 (staying pays no switch)", i, current, d.Gain)
		}
		if d.Switch {
			current = d.Best
		}
		if current.String() != step.want {
			t.Fatalf("step %d: %s in force, want %s", i, current, step.want)
		}
		if len(d.Predictions) != len(among) || !strings.Contains(d.Reason, "progress/s") {
			t.Errorf("step %d: %d predictions, reason %q", i, len(d.Predictions), d.Reason)
		}
	}
}

// TestStalenessPriceDecides: with staleness free (λ = 0) asynchrony's
// extra pushes on equal workers clear the threshold; at λ = 0.1 they do
// not pay for a staleness of about K−1.
func TestStalenessPriceDecides(t *testing.T) {
	among := specs(t, hindsight...)
	for _, tc := range []struct {
		lambda  float64
		switch_ bool
	}{{0, true}, {0.1, false}} {
		d, err := Decide(context.Background(), 0, eight(nil), among[0], Rule{Among: among, Horizon: 100 * time.Second, Threshold: 0.05, Lambda: tc.lambda, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if d.Switch != tc.switch_ {
			t.Errorf("λ=%g: switch %v (%s), want %v", tc.lambda, d.Switch, d.Reason, tc.switch_)
		}
	}
}

// TestThresholdAndCostHoldASwitch: the same predicted gain switches above
// the threshold and not below it; and a gain that the switch's cost eats
// (a horizon barely longer than the barrier) does not switch.
func TestThresholdAndCostHoldASwitch(t *testing.T) {
	among := specs(t, hindsight...)
	r := Rule{Among: among, Horizon: 100 * time.Second, Threshold: 0.05, Lambda: 0, Seed: 1}
	low, err := Decide(context.Background(), 0, eight(nil), among[0], r)
	if err != nil {
		t.Fatal(err)
	}
	r.Threshold = low.Gain + 0.01
	high, err := Decide(context.Background(), 0, eight(nil), among[0], r)
	if err != nil {
		t.Fatal(err)
	}
	if !low.Switch || high.Switch || high.Gain != low.Gain {
		t.Errorf("gain %.3f: switch %v at a 5%% threshold, %v at %.3f; want true then false", low.Gain, low.Switch, high.Switch, r.Threshold)
	}
	r = Rule{Among: among, Horizon: 4500 * time.Millisecond, Threshold: 0.05, Lambda: 0.1, Seed: 1}
	d, err := Decide(context.Background(), 0, eight(map[int]float64{7: 4}), among[0], r)
	if err != nil {
		t.Fatal(err)
	}
	if d.Switch || d.Cost != 4*time.Second || d.Gain >= 0 {
		t.Errorf("a 4.5 s horizon, a 4 s barrier: switch %v, cost %s, gain %.3f (%s); want no switch", d.Switch, d.Cost, d.Gain, d.Reason)
	}
}

// TestSameStateSameDecision: a decision is a function of its inputs, to
// the byte (a tcp job's shards and a virtual run must agree on it).
func TestSameStateSameDecision(t *testing.T) {
	among := specs(t, hindsight...)
	r := Rule{Among: among, Horizon: 60 * time.Second, Threshold: 0.05, Lambda: 0.1, Seed: 3}
	m := eight(map[int]float64{2: 1.7, 5: 3})
	m.CV = 0.2
	var first []byte
	for i := range 3 {
		d, err := Decide(context.Background(), time.Minute, m, among[1], r)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b
		} else if string(b) != string(first) {
			t.Fatalf("two decisions on the same state differ:\n%s\n%s", first, b)
		}
	}
}

// TestPredictionBounded: a prediction simulates at most MaxPushes pushes
// per candidate, whatever the cluster and the horizon.
func TestPredictionBounded(t *testing.T) {
	among := specs(t, "bsp", "asp")
	m := Measured{Iter: make([]time.Duration, 1000), Shards: 1}
	for p := range m.Iter {
		m.Iter[p] = 10 * time.Millisecond
	}
	d, err := Decide(context.Background(), 0, m, among[0], Rule{Among: among, Horizon: time.Hour, Threshold: 0.05, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range d.Predictions {
		if n := p.Pushes * d.Horizon.Seconds(); n > MaxPushes*1.01 {
			t.Errorf("%s: %.0f pushes predicted over %s, above %d", p.Spec, n, d.Horizon, MaxPushes)
		}
	}
	if d.Horizon >= time.Hour || d.Horizon <= 0 {
		t.Errorf("horizon %s: want it cut below the hour asked", d.Horizon)
	}
}

// TestBadInputNamesTheField: a rule or a measurement that cannot decide is
// refused with the field named, before anything is simulated.
func TestBadInputNamesTheField(t *testing.T) {
	among := specs(t, "bsp", "asp")
	ok := Rule{Among: among, Horizon: time.Minute, Threshold: 0.05, Lambda: 0.1}
	for _, tc := range []struct {
		m    Measured
		cur  paradigm.Spec
		r    Rule
		want string
	}{
		{eight(nil), among[0], Rule{Among: among[:1], Horizon: time.Minute}, "among"},
		{eight(nil), among[0], Rule{Among: among, Horizon: 0}, "horizon"},
		{eight(nil), among[0], Rule{Among: among, Horizon: time.Minute, Threshold: -1}, "threshold"},
		{eight(nil), among[0], Rule{Among: among, Horizon: time.Minute, Lambda: -0.5}, "lambda"},
		{Measured{}, among[0], ok, "no worker"},
		{Measured{Iter: []time.Duration{time.Second, 0}}, among[0], ok, "worker 1"},
		{Measured{Iter: []time.Duration{time.Second}, CV: -1}, among[0], ok, "cv"},
		{eight(nil), specs(t, "ssp:s=3")[0], ok, "not among"},
	} {
		_, err := Decide(context.Background(), 0, tc.m, tc.cur, tc.r)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one naming %q", tc.r, err, tc.want)
		}
	}
}

// TestNoiseScaleDiscountsBigSteps: on the pair preset's cluster (two
// workers, one twice as slow) BSP averages two gradients a step and
// backup:b=1 takes one, from the fast worker, twice as often. Counted
// linearly (no noise scale measured) the two make the same progress and
// the job stays on BSP; at a noise scale of one gradient (what virtual
// time measured on that preset: 0.9–1.2) a step of two is worth
// 2/(1+2) = 0.67 against one's 1/2, and backup:b=1 clears the threshold.
func TestNoiseScaleDiscountsBigSteps(t *testing.T) {
	r := Rule{Among: specs(t, "bsp", "backup:b=1"), Horizon: 200 * time.Second, Threshold: 0.05, Lambda: 1, Seed: 1}
	pair := Measured{Iter: []time.Duration{time.Second, 2 * time.Second}, CV: 0.05, Shards: 1}
	for _, c := range []struct {
		noise float64
		want  bool
	}{{0, false}, {1, true}} {
		pair.Noise = c.noise
		d, err := Decide(context.Background(), 0, pair, r.Among[0], r)
		if err != nil {
			t.Fatal(err)
		}
		if d.Switch != c.want || (c.want && d.Best.String() != "backup:b=1") {
			t.Errorf("noise %g: switch %v to %s (%s), want switch %v", c.noise, d.Switch, d.Best, d.Reason, c.want)
		}
	}
}

// TestPredictionDrawsTheMeasuredSpread: sixteen workers of 1 s whose
// window held one iteration in a hundred thirty times as long (the
// heavytail preset's kind of delay). Given the window's multipliers, the
// prediction's BSP waits for the slowest of 16 draws of them each round:
// E[max] = a·0.99¹⁶ + b·(1 − 0.99¹⁶) with a = 1/1.29 and b = 30/1.29 s (the
// draws over their mean), 4.11 s, so 16/4.11 = 3.89 pushes/s. A log-normal
// of the same spread (CV 2.24) has E[max of 16] ≈ 5.83 s, 2.74 pushes/s:
// the shape, not only the spread, decides what BSP waits for.
func TestPredictionDrawsTheMeasuredSpread(t *testing.T) {
	among := specs(t, "bsp", "backup:b=1")
	r := Rule{Among: among, Horizon: 5000 * time.Second, Threshold: 0.15, Lambda: 2, Seed: 3}
	m := Measured{Iter: make([]time.Duration, 16), Shards: 1}
	for p := range m.Iter {
		m.Iter[p] = time.Second
	}
	draws := make([]float64, 100)
	var sq float64
	for i := range draws {
		draws[i] = 1 / 1.29
		if i == 0 {
			draws[i] = 30 / 1.29
		}
	}
	for _, x := range draws {
		sq += (x - 1) * (x - 1)
	}
	m.CV = math.Sqrt(sq / 100)
	bsp := func(m Measured) float64 {
		t.Helper()
		d, err := Decide(context.Background(), 0, m, among[0], r)
		if err != nil {
			t.Fatal(err)
		}
		return d.Predictions[0].Pushes
	}
	logn := bsp(m)
	m.Draws = draws
	got := bsp(m)
	want := 16 / (1/1.29*math.Pow(0.99, 16) + 30/1.29*(1-math.Pow(0.99, 16)))
	if math.Abs(got/want-1) > 0.1 {
		t.Fatalf("BSP predicted at %.2f pushes/s from the measured draws, want %.2f within 10%% (%.2f from a log-normal of CV %.2f)", got, want, logn, m.CV)
	}
	if math.Abs(logn/want-1) < 0.2 {
		t.Fatalf("a log-normal of CV %.2f predicts BSP at %.2f pushes/s, within 20%% of the draws' %.2f: the test shows nothing", m.CV, logn, want)
	}
}
