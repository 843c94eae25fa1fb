// Package race runs candidates (paradigms) against each other over seeds,
// in rounds, as F-Race does (Birattari et al. 2002): every candidate still
// in the race runs the round's seeds, a candidate a test shows worse than
// the leader leaves at once, so the budget goes to the close contenders,
// and the race ends with one of three verdicts: a winner, a set equivalent
// within the margin (two one-sided tests, TOST), or undecided at the
// budget.
//
// It is generic over the outcome: one number per run, lower is better, on
// a log scale (a time: compared as ratios) or a linear one (points:
// compared as differences). It is pure: the rounds, the seeds and every
// decision depend only on the outcomes it is given; it reads no clock,
// starts no goroutine and iterates no map.
package race

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
)

// Scale says how two outcomes compare.
type Scale string

const (
	// Log compares positive outcomes (times) as ratios: the margin is a
	// ratio's excess (0.05: within 5%).
	Log Scale = "log"
	// Linear compares outcomes as differences: the margin is in the
	// outcome's own units (accuracy points).
	Linear Scale = "linear"
)

// Alpha is the elimination's level: a paradigm leaves when the 95% t
// interval of its gap to the leader lies beyond the margin, a one-sided
// test at Alpha/2, Holm-corrected over the round's comparisons.
const Alpha = 0.05

// EquivalenceAlpha is each one-sided test of TOST: equivalent when the 80%
// t interval lies inside ±margin. At 5% (the 90% interval) a true 3% gap
// would take 58 seeds to show equivalent within 5% at a paired log SD of
// 0.05 with 90% power; at 10% the race reaches it within its 40 seeds in
// over 90% of races (race_test.go), at the price of a laxer claim for
// gaps near the margin (docs/compare.md).
const EquivalenceAlpha = 0.10

// Power is what SeedsNeeded plans for: the chance that a race of that many
// seeds decides, if the observed mean and spread are the truth.
const Power = 0.8

// DefaultFirst is the first round's seeds: the fewest with which a paired
// t-test has a spread to go by (two degrees of freedom), so a clearly worse
// paradigm leaves after three runs.
const DefaultFirst = 3

// MinRoundRuns is the fewest runs a later round has: a round of one seed of
// two paradigms would leave a core idle; rounds depend only on how many
// remain, never on the machine.
const MinRoundRuns = 4

// Method says in words how the race decides, for reports.
const Method = "a race over seeds (F-Race): every paradigm still in runs each round's seeds; after each round the leader " +
	"is the best mean on the metric's scale, and each other paradigm is compared with it by the paired differences over " +
	"the seeds both ran. It leaves the race when a one-sided paired t-test shows it behind the leader by more than the " +
	"margin: the 95% t interval of the gap lies beyond the margin (a one-sided test at 2.5%), Holm-corrected over the " +
	"round's comparisons; it is equivalent to the leader when two one-sided tests (TOST, each at 10%) show the gap " +
	"within ±margin, i.e. its 80% t interval lies inside it. " +
	"The race ends with a winner when one remains, with an equivalence set when every one left is equivalent to the " +
	"leader (an intersection-union test: no correction needed), or undecided when the budget cannot pay for another round"

// Config is one race.
type Config struct {
	Scale Scale
	// Margin: on Log a ratio's excess (0.05: 5%), on Linear the outcome's
	// units.
	Margin float64
	// Budget is the runs the race may spend in all.
	Budget int
	// First is the first round's seeds (0: DefaultFirst).
	First int
	// MaxSeeds caps the seeds a candidate runs (0: only the budget does).
	MaxSeeds int
	// SimplicityOrder names the order behind Candidate.Simplicity, for
	// the record (e.g. "bsp, asp, ssp").
	SimplicityOrder string
}

// Candidate is one paradigm in the race.
type Candidate struct {
	Name string
	// Simplicity is its rank in the simplicity order (lower is simpler):
	// the recommendation's second key.
	Simplicity int
}

// Outcome is one run's result.
type Outcome struct {
	Value float64 // lower is better; > 0 on the Log scale
	Stale float64 // the run's mean staleness of applied gradients: the recommendation's first key
}

// Runner runs seed indices [from, to) of each candidate in cands (indices
// into the race's candidates) and returns out[i][s−from], the outcome of
// cands[i] on seed index s.
type Runner func(cands []int, from, to int) ([][]Outcome, error)

// Verdict kinds.
const (
	Winner     = "winner"
	Equivalent = "equivalent"
	Undecided  = "undecided"
)

// Validate checks a race's configuration before any run.
func (c *Config) Validate(candidates int) error {
	switch c.Scale {
	case Log, Linear:
	default:
		return fmt.Errorf("race scale %q: want log or linear", c.Scale)
	}
	if !(c.Margin > 0) || math.IsInf(c.Margin, 0) || c.Scale == Log && c.Margin >= 1 {
		return fmt.Errorf("margin=%g: want a positive margin (below 1 as a ratio's excess)", c.Margin)
	}
	if candidates < 2 {
		return fmt.Errorf("a race needs two paradigms or more, got %d", candidates)
	}
	first := c.first()
	if first < 2 {
		return fmt.Errorf("first round of %d seeds: a paired test needs 2 or more", first)
	}
	if c.MaxSeeds < 0 || c.MaxSeeds > 0 && c.MaxSeeds < first {
		return fmt.Errorf("max seeds %d: want 0 (no cap) or at least the first round's %d", c.MaxSeeds, first)
	}
	if c.Budget < first*candidates {
		return fmt.Errorf("budget=%d runs: the first round alone needs %d (%d seeds of each of the %d paradigms)",
			c.Budget, first*candidates, first, candidates)
	}
	return nil
}

func (c *Config) first() int {
	if c.First == 0 {
		return DefaultFirst
	}
	return c.First
}

// margin is the margin on the scale the tests use.
func (c *Config) margin() float64 {
	if c.Scale == Log {
		return math.Log1p(c.Margin)
	}
	return c.Margin
}

// Run races cands, calling run once per round, and returns the race.
func Run(cfg Config, cands []Candidate, run Runner) (*Result, error) {
	if err := cfg.Validate(len(cands)); err != nil {
		return nil, err
	}
	r := &racer{cfg: cfg, cands: cands, vals: make([][]float64, len(cands)), stale: make([][]float64, len(cands)),
		left: make([]int, len(cands)), why: make([]string, len(cands))}
	res := &Result{Scale: cfg.Scale, Margin: cfg.Margin, Budget: cfg.Budget, First: cfg.first(), Alpha: Alpha, EquivalenceAlpha: EquivalenceAlpha, Method: Method,
		SimplicityOrder: cfg.SimplicityOrder}
	seeds := 0
	var last *Round
	for round := 1; ; round++ {
		in := r.in()
		step := cfg.first()
		if round > 1 {
			step = max(1, (MinRoundRuns+len(in)-1)/len(in))
			// The budget pays for whole seeds of every candidate still in;
			// a round it cannot pay for in full is cut to what it can.
			step = min(step, (cfg.Budget-res.Runs)/len(in))
			if cfg.MaxSeeds > 0 {
				step = min(step, cfg.MaxSeeds-seeds)
			}
			if step < 1 {
				break
			}
		}
		out, err := run(in, seeds, seeds+step)
		if err != nil {
			return nil, err
		}
		if len(out) != len(in) {
			return nil, fmt.Errorf("race: round %d: %d candidates' outcomes for %d candidates", round, len(out), len(in))
		}
		for i, c := range in {
			if len(out[i]) != step {
				return nil, fmt.Errorf("race: round %d: %s: %d outcomes for %d seeds", round, cands[c].Name, len(out[i]), step)
			}
			for k, o := range out[i] {
				if err := r.check(o, cfg.Scale); err != nil {
					return nil, fmt.Errorf("race: %s, seed index %d: %w", cands[c].Name, seeds+k, err)
				}
				r.vals[c] = append(r.vals[c], r.scaled(o.Value))
				r.stale[c] = append(r.stale[c], o.Stale)
			}
		}
		seeds += step
		res.Runs += step * len(in)
		rd := r.judge(round, in, seeds)
		rd.Runs = res.Runs
		res.Rounds = append(res.Rounds, rd)
		last = &res.Rounds[len(res.Rounds)-1]
		if len(r.in()) == 1 || allEquivalent(last) {
			break
		}
	}
	for c := range cands {
		res.Standings = append(res.Standings, Standing{Paradigm: cands[c].Name, Seeds: len(r.vals[c]), Left: r.left[c],
			Why: r.why[c], Stale: round6(median(r.stale[c]))})
	}
	res.Verdict = r.verdict(last, res.Standings)
	return res, nil
}

type racer struct {
	cfg   Config
	cands []Candidate
	vals  [][]float64 // per candidate, per seed index: the outcome on the tests' scale
	stale [][]float64
	left  []int // round it left in, 0: still in
	why   []string
}

func (r *racer) in() []int {
	var in []int
	for c := range r.cands {
		if r.left[c] == 0 {
			in = append(in, c)
		}
	}
	return in
}

func (r *racer) check(o Outcome, s Scale) error {
	switch {
	case math.IsNaN(o.Value) || math.IsInf(o.Value, 0):
		return fmt.Errorf("outcome %v is not finite", o.Value)
	case s == Log && o.Value <= 0:
		return fmt.Errorf("outcome %v: a log-scale outcome (a time) must be positive", o.Value)
	case math.IsNaN(o.Stale) || math.IsInf(o.Stale, 0) || o.Stale < 0:
		return fmt.Errorf("staleness %v: want a finite value ≥ 0", o.Stale)
	}
	return nil
}

func (r *racer) scaled(v float64) float64 {
	if r.cfg.Scale == Log {
		return math.Log(v)
	}
	return v
}

// judge tests every candidate in against the round's leader, removes the
// ones Holm's step-down shows behind by more than the margin, and records
// the round.
func (r *racer) judge(round int, in []int, seeds int) Round {
	lead := in[0]
	for _, c := range in[1:] {
		if mean(r.vals[c]) < mean(r.vals[lead]) { // ties: the one listed first
			lead = c
		}
	}
	rd := Round{Round: round, Seeds: seeds, Leader: r.cands[lead].Name, Tests: []Test{}}
	for _, c := range in {
		rd.Ran = append(rd.Ran, r.cands[c].Name)
	}
	M := r.cfg.margin()
	type cmp struct {
		c int
		t Test
	}
	var cs []cmp
	for _, c := range in {
		if c == lead {
			continue
		}
		d := make([]float64, len(r.vals[c]))
		for k := range d {
			d[k] = r.vals[c][k] - r.vals[lead][k] // > 0: behind the leader
		}
		cs = append(cs, cmp{c, r.test(d, M)})
	}
	// Holm's step-down over the round's elimination tests: the smallest
	// p against α/m, the next against α/(m−1), … until one is not below.
	order := make([]int, len(cs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch pa, pb := cs[a].t.PWorse, cs[b].t.PWorse; {
		case pa < pb:
			return -1
		case pa > pb:
			return 1
		}
		return 0
	})
	for i, k := range order {
		level := round6(Alpha / 2 / float64(len(cs)-i))
		cs[k].t.Holm = level
		if !(cs[k].t.PWorse < level) {
			break
		}
		cs[k].t.Outcome = "left"
	}
	for _, x := range cs {
		t := x.t
		t.Paradigm = r.cands[x.c].Name
		if t.Outcome == "left" {
			r.left[x.c] = round
			r.why[x.c] = fmt.Sprintf("behind %s by %s (p %s for more than the %s margin, Holm level %s), after %d seeds",
				rd.Leader, r.effect(t.Behind, t.Lo, t.Hi), pText(t.PWorse), r.marginText(), trimG(t.Holm), seeds)
			rd.Left = append(rd.Left, t.Paradigm)
		} else if t.PEquivalent < EquivalenceAlpha {
			t.Outcome = "equivalent"
		} else {
			t.Outcome = "open"
		}
		rd.Tests = append(rd.Tests, t)
	}
	return rd
}

// test compares paired differences d (candidate − leader on the tests'
// scale) with the margin M on that scale.
func (r *racer) test(d []float64, M float64) Test {
	n := len(d)
	m, sd := mean(d), stddev(d)
	se := sd / math.Sqrt(float64(n))
	df := float64(n - 1)
	st := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	// above is P(T ≥ (m − x)/se) under δ = x: the one-sided p of "δ > x".
	above := func(x float64) float64 {
		if se == 0 || se < 1e-12*math.Abs(m-x) {
			if m > x {
				return 0
			}
			return 1
		}
		return 1 - st.CDF((m-x)/se)
	}
	below := func(x float64) float64 { // one-sided p of "δ < x"
		if se == 0 || se < 1e-12*math.Abs(m-x) {
			if m < x {
				return 0
			}
			return 1
		}
		return st.CDF((m - x) / se)
	}
	q95 := st.Quantile(1 - Alpha/2)
	t := Test{Pairs: n, SD: round6(sd), PWorse: round6(above(M)), PEquivalent: round6(max(above(-M), below(M)))}
	lo, hi := m-q95*se, m+q95*se
	if r.cfg.Scale == Log {
		t.Behind, t.Lo, t.Hi = round6(math.Exp(m)), round6(math.Exp(lo)), round6(math.Exp(hi))
	} else {
		t.Behind, t.Lo, t.Hi = round6(m), round6(lo), round6(hi)
	}
	phi := func(x float64) float64 { return distuv.UnitNormal.CDF(x) }
	switch {
	case sd == 0 && m > 0:
		t.Beats, t.BeatsLo, t.BeatsHi = 1, 1, 1
	case sd == 0 && m < 0:
		t.Beats, t.BeatsLo, t.BeatsHi = 0, 0, 0
	case sd == 0:
		t.Beats, t.BeatsLo, t.BeatsHi = 0.5, 0.5, 0.5
	default:
		t.Beats = round6(phi(m / sd))
		t.BeatsLo, t.BeatsHi = round6(phi((m-q95*se)/sd)), round6(phi((m+q95*se)/sd))
	}
	return t
}

func allEquivalent(rd *Round) bool {
	for _, t := range rd.Tests {
		if t.Outcome != "equivalent" && t.Outcome != "left" {
			return false
		}
	}
	return true
}

func (r *racer) verdict(last *Round, st []Standing) Verdict {
	v := Verdict{Leader: last.Leader}
	in := r.in()
	lead := slices.IndexFunc(r.cands, func(c Candidate) bool { return c.Name == last.Leader })
	v.Set = []string{last.Leader}
	for _, c := range in {
		if c != lead {
			v.Set = append(v.Set, r.cands[c].Name)
		}
	}
	switch {
	case len(in) == 1:
		v.Kind, v.Recommended = Winner, last.Leader
		v.Why = fmt.Sprintf("every other paradigm left the race, shown behind the leader by more than the %s margin", r.marginText())
	case allEquivalent(last):
		v.Kind = Equivalent
		v.Recommended, v.Why = r.recommend(in, st)
	default:
		v.Kind, v.Recommended = Undecided, last.Leader
		v.SeedsNeeded = r.seedsNeeded(last)
		var open []string
		for _, t := range last.Tests {
			if t.Outcome == "open" {
				open = append(open, t.Paradigm)
			}
		}
		v.Why = fmt.Sprintf("the budget ran out with %s neither shown behind %s by more than the %s margin nor within it",
			andList(open), last.Leader, r.marginText())
	}
	return v
}

// recommend picks among an equivalence set: the fewest stale gradients
// (the median of each run's mean staleness, to the two decimals the
// report shows), then the simplest, then the order given.
func (r *racer) recommend(in []int, st []Standing) (string, string) {
	key := func(c int) float64 { return math.Round(st[c].Stale*100) / 100 }
	best := slices.Clone(in)
	slices.SortStableFunc(best, func(a, b int) int {
		switch ka, kb := key(a), key(b); {
		case ka < kb:
			return -1
		case ka > kb:
			return 1
		}
		return r.cands[a].Simplicity - r.cands[b].Simplicity
	})
	pick := best[0]
	var same []string
	for _, c := range best[1:] {
		if key(c) == key(pick) {
			same = append(same, r.cands[c].Name)
		}
	}
	why := fmt.Sprintf("%s has the fewest stale gradients of the set (median staleness %.2f)", r.cands[pick].Name, key(pick))
	if len(same) > 0 {
		why = fmt.Sprintf("%s, %s and %s share the fewest stale gradients of the set (median staleness %.2f); %s is the simplest rule of them",
			r.cands[pick].Name, strings.Join(same[:len(same)-1], ", "), same[len(same)-1], key(pick), r.cands[pick].Name)
		if len(same) == 1 {
			why = fmt.Sprintf("%s and %s share the fewest stale gradients of the set (median staleness %.2f); %s is the simpler rule",
				r.cands[pick].Name, same[0], key(pick), r.cands[pick].Name)
		}
	}
	return r.cands[pick].Name, why
}

// seedsNeeded is the seeds per candidate that would decide every open
// comparison of the last round with Power, taking its mean and spread as
// the truth: ((z₁₋ₐ + z_power)·sd / gap)², the gap being the distance
// from the margin the test must clear.
func (r *racer) seedsNeeded(last *Round) int {
	M := r.cfg.margin()
	zb := distuv.UnitNormal.Quantile(Power)
	need := 0
	open := 0
	for _, t := range last.Tests {
		if t.Outcome == "open" {
			open++
		}
	}
	for _, t := range last.Tests {
		if t.Outcome != "open" {
			continue
		}
		m := t.Behind
		if r.cfg.Scale == Log {
			m = math.Log(t.Behind)
		}
		gap, za := M-math.Abs(m), distuv.UnitNormal.Quantile(1-EquivalenceAlpha)
		if m > M {
			// Shown behind, at Holm's strictest level among the open ones.
			gap, za = m-M, distuv.UnitNormal.Quantile(1-Alpha/2/float64(open))
		}
		if gap < 1e-9 {
			return -1
		}
		n := math.Ceil(math.Pow((za+zb)*t.SD/gap, 2))
		if n > 1e6 {
			return -1
		}
		need = max(need, int(n), t.Pairs+1)
	}
	return need
}
