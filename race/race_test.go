package race

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// The synthetic checks of issue 32's acceptance: a synthetic outcome model
// whose paired log standard deviation is sdPaired (what the noise
// reduction should reach), a budget of 40 seeds, many simulated base
// seeds.
const (
	sdPaired = 0.05
	seedsCap = 40
	races    = 1000
)

// synth is a runner whose candidate c has true log time truth[c]. Seed s
// moves every candidate alike (a shared effect the pairing removes) and
// each one by its own noise, so a paired log difference has SD sdPaired.
// Each draw depends only on (base, c, s): a candidate's outcomes do not
// change when another leaves the race.
func synth(base uint64, truth []float64, calls *int) Runner {
	return func(cands []int, from, to int) ([][]Outcome, error) {
		*calls++
		out := make([][]Outcome, len(cands))
		for i, c := range cands {
			for s := from; s < to; s++ {
				shared := rand.New(rand.NewPCG(base, uint64(s)<<20))
				own := rand.New(rand.NewPCG(base, uint64(s)<<20|uint64(c+1)))
				v := math.Exp(5 + 0.3*shared.NormFloat64() + truth[c] + sdPaired/math.Sqrt2*own.NormFloat64())
				out[i] = append(out[i], Outcome{Value: v})
			}
		}
		return out, nil
	}
}

func cands(names ...string) []Candidate {
	cs := make([]Candidate, len(names))
	for i, n := range names {
		cs[i] = Candidate{Name: n, Simplicity: i}
	}
	return cs
}

// tally races truth over races base seeds with margin and counts the
// verdicts: kinds["winner:a"], kinds["equivalent"], kinds["undecided"];
// seeds[k] is the seeds the race ran when it ended.
func tally(t *testing.T, truth []float64, margin float64) (kinds map[string]int, seeds []int) {
	t.Helper()
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h"}[:len(truth)]
	kinds = map[string]int{}
	for base := uint64(1); base <= races; base++ {
		calls := 0
		res, err := Run(Config{Scale: Log, Margin: margin, Budget: seedsCap * len(truth)}, cands(names...), synth(base, truth, &calls))
		if err != nil {
			t.Fatal(err)
		}
		k := res.Verdict.Kind
		if k == Winner {
			k += ":" + res.Verdict.Set[0]
		}
		kinds[k]++
		seeds = append(seeds, res.Rounds[len(res.Rounds)-1].Seeds)
	}
	return kinds, seeds
}

// A true 1.3× winner is decided within 10 seeds in at least 95% of races.
func TestRaceTrueWinnerDecidedWithinTenSeeds(t *testing.T) {
	kinds, seeds := tally(t, []float64{0, math.Log(1.3), math.Log(1.5), math.Log(1.3)}, 0.05)
	quick := 0
	for _, n := range seeds {
		if n <= 10 {
			quick++
		}
	}
	t.Logf("1.3× winner: %v; decided by seed 10 in %d of %d", kinds, quick, races)
	if kinds["winner:a"] != races {
		t.Errorf("verdicts %v, want a the winner in every race", kinds)
	}
	if quick < races*95/100 {
		t.Errorf("decided within 10 seeds in %d of %d races, want ≥ 95%%", quick, races)
	}
}

// Two copies of one paradigm end equivalent, never with a winner: both
// with the same outcomes (bsp against backup:b=0 in a deterministic mode)
// and with the model's independent noise.
func TestRaceCopiesNeverWin(t *testing.T) {
	calls := 0
	same := func(cs []int, from, to int) ([][]Outcome, error) {
		out, _ := synth(7, []float64{0}, &calls)([]int{0}, from, to)
		return [][]Outcome{out[0], out[0]}, nil
	}
	res, err := Run(Config{Scale: Log, Margin: 0.05, Budget: 80}, cands("bsp", "backup:b=0"), same)
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Verdict; v.Kind != Equivalent || len(res.Rounds) != 1 || v.Recommended != "bsp" {
		t.Errorf("identical outcomes: %+v after %d rounds, want equivalent after the first, bsp recommended", v, len(res.Rounds))
	}
	kinds, _ := tally(t, []float64{0, 0}, 0.05)
	t.Logf("two copies: %v", kinds)
	if kinds["winner:a"]+kinds["winner:b"] > 0 || kinds[Equivalent] < races*95/100 {
		t.Errorf("two copies: %v, want no winner and equivalent in ≥ 95%%", kinds)
	}
}

// A true 3% gap with a 5% margin ends equivalent in at least 90% of races.
func TestRaceSmallGapWithinMarginIsEquivalent(t *testing.T) {
	kinds, _ := tally(t, []float64{0, math.Log(1.03)}, 0.05)
	t.Logf("3%% gap, 5%% margin: %v", kinds)
	if kinds[Equivalent] < races*90/100 {
		t.Errorf("3%% gap, 5%% margin: %v, want equivalent in ≥ 90%%", kinds)
	}
}

// With a 1% margin the same 3% gap ends with the true winner or
// undecided; a false winner in at most 5% of races.
func TestRaceSmallGapBeyondMarginNoFalseWinner(t *testing.T) {
	kinds, _ := tally(t, []float64{0, math.Log(1.03)}, 0.01)
	t.Logf("3%% gap, 1%% margin: %v", kinds)
	if kinds["winner:b"] > races*5/100 {
		t.Errorf("false winner in %d of %d races, want ≤ 5%%", kinds["winner:b"], races)
	}
	if kinds["winner:a"]+kinds[Undecided] < races*95/100 {
		t.Errorf("3%% gap, 1%% margin: %v, want the true winner or undecided in ≥ 95%%", kinds)
	}
}

// Holm: seven paradigms exactly at the margin behind the leader. Each
// elimination test alone is wrong 5% of the time; over the round's seven,
// Holm holds the chance that any leaves in the first round to 5%.
func TestRaceHolmHoldsTheFamilyLevel(t *testing.T) {
	truth := []float64{0}
	for range 7 {
		truth = append(truth, math.Log1p(0.05))
	}
	wrong := 0
	for base := uint64(1); base <= races; base++ {
		calls := 0
		res, err := Run(Config{Scale: Log, Margin: 0.05, Budget: 3 * len(truth)}, cands("a", "b", "c", "d", "e", "f", "g", "h"), synth(base, truth, &calls))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rounds[0].Left) > 0 {
			wrong++
		}
	}
	t.Logf("paradigms at the margin eliminated in the first round: %d of %d races", wrong, races)
	if wrong > races*6/100 {
		t.Errorf("a paradigm at the margin left in %d of %d races, want ≤ 5%% (Holm)", wrong, races)
	}
}

// Eliminated paradigms stop costing runs, the rounds follow the budget, and
// every standing says when and why it left.
func TestRaceRoundsAndStandings(t *testing.T) {
	calls := 0
	var asked [][2]int
	run := synth(3, []float64{0, math.Log(2), 0.01}, &calls)
	rec := func(cs []int, from, to int) ([][]Outcome, error) {
		asked = append(asked, [2]int{len(cs), to - from})
		return run(cs, from, to)
	}
	res, err := Run(Config{Scale: Log, Margin: 0.05, Budget: 20}, cands("bsp", "asp", "ssp:s=3"), rec)
	if err != nil {
		t.Fatal(err)
	}
	if asked[0] != [2]int{3, 3} {
		t.Fatalf("first round %v, want 3 paradigms × 3 seeds", asked[0])
	}
	st := res.Standings[1]
	if st.Left != 1 || !strings.Contains(st.Why, "behind bsp by 2") || !strings.Contains(st.Why, "Holm level") || st.Seeds != 3 {
		t.Errorf("asp's standing %+v, want left in round 1 with its test", st)
	}
	spent := 0
	for i, a := range asked {
		spent += a[0] * a[1]
		// Later rounds: the two left, 2 seeds each (MinRoundRuns), the
		// last one cut to what the budget still pays for.
		if i > 0 && (a[0] != 2 || a[1] != 2 && !(i == len(asked)-1 && res.Budget-spent < 2)) {
			t.Errorf("round %d ran %v", i+1, a)
		}
	}
	if spent != res.Runs || spent > res.Budget {
		t.Errorf("spent %d runs, the race says %d, budget %d", spent, res.Runs, res.Budget)
	}
	if res.Standings[0].Seeds != res.Standings[2].Seeds || res.Standings[0].Seeds <= 3 {
		t.Errorf("standings %+v", res.Standings)
	}
	if v := res.Verdict; v.Kind == Undecided && v.SeedsNeeded <= res.Standings[0].Seeds {
		t.Errorf("undecided, needing %d seeds after %d", v.SeedsNeeded, res.Standings[0].Seeds)
	}
}

// Undecided at the budget names what stays open and the seeds the observed
// spread would need.
func TestRaceUndecidedSaysSeedsNeeded(t *testing.T) {
	calls := 0
	// A 5% gap on the 5% margin's edge with a wide spread: 12 runs decide nothing.
	res, err := Run(Config{Scale: Log, Margin: 0.05, Budget: 12}, cands("bsp", "asp"), synth(5, []float64{0, 0.02}, &calls))
	if err != nil {
		t.Fatal(err)
	}
	v := res.Verdict
	if v.Kind != Undecided || v.SeedsNeeded <= 6 || !strings.Contains(v.Why, "budget ran out") || len(v.Set) != 2 {
		t.Errorf("verdict %+v, want undecided with the seeds it would need", v)
	}
	if res.Runs != 12 || len(res.Rounds) != 3 {
		t.Errorf("%d runs in %d rounds, want 12 in 3 (3 seeds, 2 more, then the 1 the budget pays for)", res.Runs, len(res.Rounds))
	}
}

// The recommendation among equivalent paradigms: fewest stale gradients,
// then the simplest.
func TestRaceRecommendation(t *testing.T) {
	stale := []float64{1, 0, 0}
	run := func(cs []int, from, to int) ([][]Outcome, error) {
		out := make([][]Outcome, len(cs))
		for i, c := range cs {
			for range to - from {
				out[i] = append(out[i], Outcome{Value: 100, Stale: stale[c]})
			}
		}
		return out, nil
	}
	cs := []Candidate{{"asp", 1}, {"elastic:r=15", 6}, {"backup:b=1", 3}}
	res, err := Run(Config{Scale: Log, Margin: 0.05, Budget: 9}, cs, run)
	if err != nil {
		t.Fatal(err)
	}
	v := res.Verdict
	if v.Kind != Equivalent || v.Recommended != "backup:b=1" || !strings.Contains(v.Why, "simpler") || v.Leader != "asp" {
		t.Errorf("verdict %+v, want the equivalence set with backup:b=1 recommended (no staleness, simpler than elastic)", v)
	}
}

// Same outcomes, same bytes; and the accuracy scale compares differences.
func TestRaceDeterministicAndLinear(t *testing.T) {
	enc := func() []byte {
		calls := 0
		res, err := Run(Config{Scale: Log, Margin: 0.05, Budget: 60}, cands("a", "b", "c"), synth(9, []float64{0, 0.03, 0.2}, &calls))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		return b
	}
	if a, b := enc(), enc(); !bytes.Equal(a, b) {
		t.Error("two races on the same outcomes differ")
	}
	// Error rates in points: b 2 points behind a, 0.5-point margin.
	run := func(cs []int, from, to int) ([][]Outcome, error) {
		out := make([][]Outcome, len(cs))
		for i, c := range cs {
			for s := from; s < to; s++ {
				out[i] = append(out[i], Outcome{Value: 15 + 2*float64(c) + 0.1*float64(s%3)})
			}
		}
		return out, nil
	}
	res, err := Run(Config{Scale: Linear, Margin: 0.5, Budget: 10}, cands("a", "b"), run)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict.Kind != Winner || res.Verdict.Recommended != "a" || res.Rounds[0].Tests[0].Behind != 2 {
		t.Errorf("linear: %+v, tests %+v", res.Verdict, res.Rounds[0].Tests)
	}
}

// Bad configurations and outcomes are refused by name before or as they
// arrive.
func TestRaceRefusesBadInput(t *testing.T) {
	calls := 0
	ok := synth(1, []float64{0, 0}, &calls)
	for _, c := range []struct {
		cfg  Config
		n    int
		want string
	}{
		{Config{Scale: "cubic", Margin: 0.05, Budget: 10}, 2, "scale"},
		{Config{Scale: Log, Margin: 0, Budget: 10}, 2, "margin=0"},
		{Config{Scale: Log, Margin: 1.5, Budget: 10}, 2, "margin=1.5"},
		{Config{Scale: Log, Margin: 0.05, Budget: 5}, 2, "budget=5"},
		{Config{Scale: Log, Margin: 0.05, Budget: 10}, 1, "two paradigms"},
		{Config{Scale: Log, Margin: 0.05, Budget: 10, First: 1}, 2, "first round"},
	} {
		_, err := Run(c.cfg, cands("a", "b")[:c.n], ok)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v, want one naming %q", c.cfg, err, c.want)
		}
	}
	if calls != 0 {
		t.Errorf("a refused race ran %d rounds", calls)
	}
	neg := func(cs []int, from, to int) ([][]Outcome, error) {
		return [][]Outcome{{{Value: 1}, {Value: -1}, {Value: 1}}, {{Value: 1}, {Value: 1}, {Value: 1}}}, nil
	}
	if _, err := Run(Config{Scale: Log, Margin: 0.05, Budget: 10}, cands("a", "b"), neg); err == nil || !strings.Contains(err.Error(), "a, seed index 1") {
		t.Errorf("a negative time: err %v", err)
	}
}
