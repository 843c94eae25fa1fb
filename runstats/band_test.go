package runstats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// A centred mean keeps a straight stretch where it is, averages out a
// zigzag, keeps the first evaluation out of every mean and narrows its
// window symmetrically at the ends.
func TestSmoothed(t *testing.T) {
	line := [][2]float64{{0, 0.1}, {1, 0.5}, {2, 0.6}, {3, 0.7}, {4, 0.8}, {5, 0.9}, {6, 1.0}}
	for k, p := range Smoothed(line, 2) {
		if math.Abs(p[1]-line[k][1]) > 1e-12 || p[0] != line[k][0] {
			t.Errorf("line: evaluation %d smoothed to %v, want %v", k, p, line[k])
		}
	}
	zig := [][2]float64{{0, 0.1}, {1, 0.8}, {2, 0.9}, {3, 0.8}, {4, 0.9}, {5, 0.8}, {6, 0.9}, {7, 0.8}}
	s := Smoothed(zig, 2)
	want := []float64{0.1, 0.8, (0.8 + 0.9 + 0.8) / 3, 0.84, 0.86, 0.84, (0.8 + 0.9 + 0.8) / 3, 0.8}
	for k := range s {
		if math.Abs(s[k][1]-want[k]) > 1e-12 {
			t.Errorf("zigzag: evaluation %d smoothed to %.4f, want %.4f", k, s[k][1], want[k])
		}
	}
	if zig[3][1] != 0.8 {
		t.Error("Smoothed changed its input")
	}
}

// On a straight curve BandTime is the geometric mean of the levels'
// crossings; levels never reached count at the horizon; a curve twice as
// slow takes exactly twice as long (the metric is a time, compared as a
// ratio).
func TestBandTime(t *testing.T) {
	var curve [][2]float64
	for k := 0; k <= 20; k++ {
		curve = append(curve, [2]float64{50 * float64(k), 0.001 * 50 * float64(k)}) // accuracy t/1000
	}
	r := Run{Curve: curve}
	got, reached, ok := r.BandTime(0.84, 1000)
	var sum float64
	for i := range BandLevels {
		sum += math.Log(1000 * (0.84 - BandWidth*float64(BandLevels-1-i)/float64(BandLevels-1)))
	}
	if want := math.Exp(sum / BandLevels); !ok || !reached || math.Abs(got-want) > 1e-9 {
		t.Errorf("straight curve: BandTime %v (reached %v, ok %v), want %v", got, reached, ok, want)
	}
	slow := Run{Curve: append([][2]float64(nil), curve...)}
	for k := range slow.Curve {
		slow.Curve[k][0] *= 2
	}
	if t2, _, _ := slow.BandTime(0.84, 2000); math.Abs(t2-2*got) > 1e-9 {
		t.Errorf("twice as slow: %v, want %v", t2, 2*got)
	}
	// A curve that levels off at 0.81: the levels above it count at the
	// 1,000 s horizon, the target is not reached, and the band time is
	// later than the straight curve's.
	var flat Run
	for k := 0; k <= 100; k++ {
		flat.Curve = append(flat.Curve, [2]float64{10 * float64(k), min(0.001*10*float64(k), 0.81)})
	}
	s := Run{Curve: Smoothed(flat.Curve, SmoothSpan)}
	sum = 0
	above := 0
	for i := range BandLevels {
		c, hit := s.TimeTo(0.84 - BandWidth*float64(BandLevels-1-i)/float64(BandLevels-1))
		if !hit {
			c, above = 1000, above+1
		}
		sum += math.Log(c)
	}
	capped, reached, ok := flat.BandTime(0.84, 1000)
	if want := math.Exp(sum / BandLevels); !ok || reached || above < 5 || math.Abs(capped-want) > 1e-9 || !(capped > got) {
		t.Errorf("curve levelling off below the target: BandTime %v (reached %v, %d levels above it), want %v, not reached, later than %v",
			capped, reached, above, want, got)
	}
	// A target just above the untrained model's accuracy: the levels it
	// already reaches at the first evaluation are left out (their time, 0,
	// would make the mean 0); a target it reaches counts at that time.
	low := Run{Curve: [][2]float64{{0, 0.1}, {100, 0.2}, {200, 0.3}, {300, 0.4}}}
	got, reached, ok = low.BandTime(0.13, 1000)
	sum = 0
	for _, l := range []float64{0.105, 0.11, 0.115, 0.12, 0.125, 0.13} {
		sum += math.Log(1000 * (l - 0.1))
	}
	if want := math.Exp(sum / 6); !ok || !reached || math.Abs(got-want) > 1e-9 {
		t.Errorf("low target: BandTime %v (reached %v), want %v", got, reached, want)
	}
	if got, reached, _ := low.BandTime(0.1, 1000); got > 1e-5 || !reached {
		t.Errorf("a target the untrained model reaches: BandTime %v (reached %v), want about 0 as TimeTo", got, reached)
	}
	if _, _, ok := (&Run{}).BandTime(0.84, 1000); ok {
		t.Error("no curve: a band time")
	}
	if _, _, ok := r.BandTime(0, 1000); ok {
		t.Error("no target: a band time")
	}
}

// The point of BandTime: on curves that approach a plateau with the
// evaluation-to-evaluation wandering a constant learning rate leaves (a
// point of accuracy), two runs of the same paradigm differ far less by it
// than by the first crossing of a target near the plateau. Synthetic runs:
// the same underlying curve, independent noise per run, evaluations every
// 1/16 of an epoch.
func TestBandTimeSpreadBelowFirstCrossing(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 2))
	run := func() *Run {
		var c [][2]float64
		for k := 0; k <= 48; k++ {
			x := 40 * float64(k)
			a := 0.855 - 0.3*math.Exp(-x/250) // 84% about 1,050 s in, where the curve climbs 0.5 points per 100 s
			if k == 0 {
				a = 0.1
			} else {
				a += 0.01 * rng.NormFloat64()
			}
			c = append(c, [2]float64{x, a})
		}
		return &Run{Curve: c}
	}
	const horizon, pairs = 1920.0, 200
	var first, band []float64
	for range pairs {
		a, b := run(), run()
		ta, okA := a.TimeTo(0.84)
		tb, okB := b.TimeTo(0.84)
		if !okA {
			ta = horizon
		}
		if !okB {
			tb = horizon
		}
		first = append(first, math.Log(ta/tb))
		ba, _, _ := a.BandTime(0.84, horizon)
		bb, _, _ := b.BandTime(0.84, horizon)
		band = append(band, math.Log(ba/bb))
	}
	sf, sb := sd(first), sd(band)
	t.Logf("paired log SD: first crossing %.3f, band time %.3f", sf, sb)
	if !(sb < sf/2) {
		t.Errorf("paired log SD of the band time %.3f, of the first crossing %.3f: want under half", sb, sf)
	}
}

func sd(xs []float64) float64 {
	var m float64
	for _, x := range xs {
		m += x / float64(len(xs))
	}
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}
