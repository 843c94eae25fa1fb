package report

import (
	"math"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/compare"
	racing "github.com/pacer-ps/pacer/race"
	"github.com/pacer-ps/pacer/runstats"
)

// raced is a race of paradigms whose runs rise linearly to target at
// rate(paradigm, seed index) over a 100 s horizon, with the summary's
// verdict taken from the race as compare takes it.
func raced(t *testing.T, names []string, rate func(p, s int) float64, target float64, budget int) *compare.Summary {
	t.Helper()
	var runs []runstats.Run
	cands := make([]racing.Candidate, len(names))
	for i, n := range names {
		cands[i] = racing.Candidate{Name: n, Simplicity: i}
	}
	res, err := racing.Run(racing.Config{Scale: racing.Log, Margin: 0.05, Budget: budget, SimplicityOrder: "as listed"}, cands,
		func(ps []int, from, to int) ([][]racing.Outcome, error) {
			out := make([][]racing.Outcome, len(ps))
			for i, p := range ps {
				for s := from; s < to; s++ {
					r := runstats.Run{Paradigm: names[p], Mode: "virtual", Seed: uint64(s + 1), Seconds: 100, Throughput: 1}
					if names[p] == "asp" {
						r.StalenessMean = 1
					}
					var c [][2]float64
					for x := 0.0; x <= 100; x += 0.5 {
						c = append(c, [2]float64{x, min(0.95, rate(p, s)*x)})
					}
					r.SetCurve(c, target)
					runs = append(runs, r)
					tt, ok := r.TimeTo(target)
					if !ok {
						tt = 100 // at the horizon, as compare counts it
					}
					out[i] = append(out[i], racing.Outcome{Value: math.Min(tt, 100), Stale: r.StalenessMean})
				}
			}
			return out, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	s := summarize(runs, target, 100)
	s.Race = res
	v := &s.Verdict
	rv := res.Verdict
	v.Kind, v.Leader, v.Recommended, v.Reason, v.Winner, v.Tied = rv.Kind, rv.Leader, rv.Recommended, rv.Why, nil, rv.Set
	v.Metric = compare.MetricTime
	if rv.Kind == racing.Winner {
		v.Winner, v.Tied = &rv.Leader, []string{}
	}
	last := res.Rounds[len(res.Rounds)-1].Tests[0]
	v.RunnerUp, v.P = last.Paradigm, &last.PWorse
	return s
}

// The three verdicts, said plainly, with the race as a picture.
func TestRaceHeadlines(t *testing.T) {
	// Equal within 1% but for asp, twice as slow.
	equal := func(p, s int) float64 {
		r := 0.02 * (1 + 0.005*float64((s*7+p*3)%5-2))
		if p == 1 {
			r /= 2
		}
		return r
	}
	s := raced(t, []string{"bsp", "asp", "backup:b=1", "elastic:r=15"}, equal, 0.5, 40)
	h, won := Headline(s)
	for _, w := range []string{"bsp, backup:b=1 and elastic:r=15 reach 50% test accuracy equally fast here, within 5%",
		"use bsp: bsp, backup:b=1 and elastic:r=15 share the fewest stale gradients", "asp left the race, shown slower."} {
		if !strings.Contains(h, w) || won {
			t.Errorf("equivalence headline\n%s\nlacks\n%s", h, w)
		}
	}
	md := Markdown(Scenario{}, s)
	if !strings.Contains(md, "    asp           ✕  left in round 1: behind elastic:r=15 by") || !strings.Contains(md, "| left in round 1, 3 seeds |") {
		t.Errorf("Markdown lacks the race's picture or column:\n%s", md)
	}
	page, err := htmlPage(Scenario{}, s, nil)
	if err != nil || !strings.Contains(string(page), "<small>Equivalent</small>") || !strings.Contains(string(page), `<h2 id="race">`) {
		t.Errorf("HTML page lacks the verdict's label or the race (err %v)", err)
	}

	// asp 1.5× faster: the winner.
	fast := func(p, s int) float64 { return []float64{0.02, 0.03}[p] * (1 + 0.01*float64(s%3)) }
	s = raced(t, []string{"bsp", "asp"}, fast, 0.5, 20)
	if h, won := Headline(s); !won || !strings.Contains(h, "asp reaches 50% test accuracy fastest") || !strings.Contains(h, "every other paradigm left the race") {
		t.Errorf("winner headline: %s", h)
	}

	// 4% apart with a spread of 4%: 10 runs decide nothing.
	close := func(p, s int) float64 { return 0.02 * (1 + 0.04*float64(p)) * (1 + 0.04*float64((s*5+p)%3-1)) }
	s = raced(t, []string{"bsp", "asp"}, close, 0.5, 10)
	h, won = Headline(s)
	if won || !strings.Contains(h, "Undecided after 10 runs (the budget)") || !strings.Contains(h, "seeds of each would decide (--budget") {
		t.Errorf("undecided headline: %s", h)
	}
}

// Paradigms that never reached the target tie at the horizon: the headline
// says so rather than calling them equally fast.
func TestRaceHeadlineNeverReached(t *testing.T) {
	slow := func(p, s int) float64 { return 0.001 * (1 + 0.1*float64(p+s%2)) }
	s := raced(t, []string{"bsp", "asp"}, slow, 0.5, 6)
	if h, _ := Headline(s); !strings.Contains(h, "bsp and asp never reached 50%") {
		t.Errorf("headline: %s", h)
	}
}
