package report

import (
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/runstats"
)

// race is a comparison whose runs rise linearly at the given rates (per
// paradigm, one rate per seed) over a 100 s horizon.
func race(rates map[string][]float64, order []string, target float64) *compare.Summary {
	var runs []runstats.Run
	for _, name := range order {
		for k, r := range rates[name] {
			run := runstats.Run{Paradigm: name, Mode: "virtual", Seed: uint64(k + 1), Seconds: 100, Throughput: 1}
			var c [][2]float64
			for t := 0.0; t <= 100; t += 10 {
				c = append(c, [2]float64{t, min(0.95, r*t)})
			}
			run.SetCurve(c, target)
			runs = append(runs, run)
		}
	}
	return summarize(runs, target, 100)
}

func TestHeadline(t *testing.T) {
	for _, c := range []struct {
		name  string
		sum   *compare.Summary
		won   bool
		wants []string
	}{
		{"clear win", race(map[string][]float64{
			"bsp": {0.010, 0.011, 0.012, 0.010, 0.011},
			"asp": {0.020, 0.021, 0.019, 0.022, 0.020},
		}, []string{"bsp", "asp"}, 0.5), true, []string{
			"asp reached 50% test accuracy first: median 25 s (22.7–26.3 s, 93.8% interval) over 5 seeds, 1.8× sooner than the runner-up bsp at 45.5 s (41.7–50 s, 93.8% interval); the paired test separates them (p < 0.001; asp's advantage 1.86×, 95% interval 1.6–2.17×).",
		}},
		{"tie", race(map[string][]float64{
			"bsp": {0.020, 0.010, 0.020, 0.010, 0.015},
			"asp": {0.010, 0.020, 0.010, 0.020, 0.016},
		}, []string{"bsp", "asp"}, 0.5), false, []string{
			"No clear winner: asp and bsp are tied on reaching 50% test accuracy first — medians over 5 seeds: asp at 31.2 s (25–50 s, 93.8% interval); bsp at 33.3 s (25–50 s, 93.8% interval); the paired test does not separate asp from bsp (p = ",
		}},
		{"runner-up separated, a noisier one not", race(map[string][]float64{
			"asp": {0.020, 0.021, 0.019, 0.022, 0.020},
			"bsp": {0.015, 0.0155, 0.0145, 0.016, 0.015},
			"ssp": {0.030, 0.008, 0.030, 0.009, 0.012},
		}, []string{"asp", "bsp", "ssp"}, 0.5), false, []string{
			"asp and ssp are tied", "the paired test does not separate asp from ssp (p = ",
		}},
		{"identical", race(map[string][]float64{
			"bsp":        {0.020, 0.010, 0.020},
			"backup:b=0": {0.020, 0.010, 0.020},
		}, []string{"bsp", "backup:b=0"}, 0.5), false, []string{"No clear winner: bsp and backup:b=0 are tied", "(p = 1)."}},
		{"one seed", race(map[string][]float64{"bsp": {0.01}, "asp": {0.02}}, []string{"bsp", "asp"}, 0.5), false,
			[]string{"No winner can be named from one seed (run --seeds 5 or more); asp did best, 25 s, ahead of bsp, 50 s."}},
		{"never reached", race(map[string][]float64{
			"bsp": {0.001, 0.0011, 0.0012},
			"asp": {0.006, 0.0061, 0.0062},
		}, []string{"bsp", "asp"}, 0.9), true, []string{
			"No paradigm reached 90% test accuracy in most of its 3 seeds, so test accuracy at the 100 s horizon decides: asp leads " +
				"with a median of 61% (60–62%, 75% interval) over 3 seeds, against the runner-up bsp at 11% (10–12%, 75% interval); " +
				"the paired test separates them (p < 0.001; asp's advantage 5.56×, 95% interval 4.62–6.7×); bsp and asp never reached it.",
		}},
		{"no target", race(map[string][]float64{
			"bsp": {0.001, 0.0011, 0.0012},
			"asp": {0.006, 0.0061, 0.0062},
		}, []string{"bsp", "asp"}, 0), true, []string{"asp had the highest test accuracy at the 100 s horizon: median 61% (60–62%, 75% interval) over 3 seeds"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, won := Headline(c.sum)
			if won != c.won {
				t.Errorf("won = %v, want %v: %s", won, c.won, s)
			}
			for _, w := range c.wants {
				if !strings.Contains(s, w) {
					t.Errorf("headline\n%s\nlacks\n%s", s, w)
				}
			}
		})
	}
}
