package race

// This file: what a race returns: its rounds, each test, the standings
// and the verdict.

// Result is the race as summary.json records it.
type Result struct {
	Scale  Scale   `json:"scale"`
	Margin float64 `json:"margin"`
	Budget int     `json:"budget_runs"`
	First  int     `json:"first_round_seeds"`
	// Alpha is the elimination's level (two-sided, Holm over a round),
	// EquivalenceAlpha each one-sided test of TOST.
	Alpha            float64 `json:"alpha"`
	EquivalenceAlpha float64 `json:"equivalence_alpha"`
	Method           string  `json:"method"`
	// SimplicityOrder is the recommendation's second key, as given.
	SimplicityOrder string `json:"simplicity_order,omitempty"`
	// Runs is how many runs the race spent.
	Runs      int        `json:"runs"`
	Rounds    []Round    `json:"rounds"`
	Standings []Standing `json:"standings"` // one per candidate, in the order given
	Verdict   Verdict    `json:"verdict"`
}

// Round is what one round ran and decided.
type Round struct {
	Round int `json:"round"` // from 1
	// Seeds is how many seeds each candidate still in has run after it;
	// Ran the candidates that ran this round.
	Seeds  int      `json:"seeds"`
	Ran    []string `json:"ran"`
	Runs   int      `json:"runs"` // the race's runs so far
	Leader string   `json:"leader"`
	Tests  []Test   `json:"tests"` // every other candidate that ran, against the leader
	Left   []string `json:"left,omitempty"`
}

// Test is one candidate against the leader over the seeds both ran.
type Test struct {
	Paradigm string `json:"paradigm"`
	Pairs    int    `json:"pairs"`
	// Behind is how far the candidate is behind the leader, on the
	// metric's scale: a ratio on Log (1.3: 30% more time), a difference
	// on Linear; Lo and Hi its 95% t interval (the elimination's).
	Behind float64 `json:"behind"`
	Lo     float64 `json:"behind_lo"`
	Hi     float64 `json:"behind_hi"`
	// SD is the paired differences' standard deviation on the scale (log
	// or points).
	SD float64 `json:"paired_sd"`
	// PWorse is the one-sided p of "behind by more than the margin";
	// Holm the level it was held to (0: Holm's step-down stopped before it).
	PWorse float64 `json:"p_worse"`
	Holm   float64 `json:"holm_level"`
	// PEquivalent is TOST's p: the larger of the two one-sided tests'.
	PEquivalent float64 `json:"p_equivalent"`
	// Beats is the probability that the leader does better than this
	// candidate on a new seed, with its 95% interval (BeatsMethod).
	Beats   float64 `json:"p_leader_beats"`
	BeatsLo float64 `json:"p_leader_beats_lo"`
	BeatsHi float64 `json:"p_leader_beats_hi"`
	// Outcome is "left", "equivalent" or "open" (neither yet).
	Outcome string `json:"outcome"`
}

// BeatsMethod says how Test.Beats is computed, for reports.
const BeatsMethod = "the probability that the leader does better on a new seed, Φ(mean/sd) of the paired differences " +
	"(a normal model of them), with the interval Φ(lo/sd)–Φ(hi/sd) from the paired t-test's 95% interval of the mean"

// Standing is one candidate's race.
type Standing struct {
	Paradigm string `json:"paradigm"`
	Seeds    int    `json:"seeds"`
	// Left is the round in which it left (0: it stayed to the end); Why
	// says why, with the test.
	Left int    `json:"left_round,omitempty"`
	Why  string `json:"why,omitempty"`
	// Stale is the median over its runs of their mean staleness.
	Stale float64 `json:"staleness_median"`
}

// Verdict is how the race ended.
type Verdict struct {
	Kind   string `json:"kind"` // Winner, Equivalent or Undecided
	Leader string `json:"leader"`
	// Set is who remained, the leader first: the winner alone, the
	// equivalence set, or the undecided contenders.
	Set []string `json:"set"`
	// Recommended is the one to use: the winner, or the equivalence set's
	// member with the fewest stale gradients, then the simplest (the
	// undecided leader otherwise); Why says why.
	Recommended string `json:"recommended"`
	Why         string `json:"why"`
	// SeedsNeeded (undecided only) is the seeds each remaining candidate
	// would need for the observed spread to decide every comparison with
	// Power; −1 when the observed difference sits on the margin.
	SeedsNeeded int `json:"seeds_needed,omitempty"`
}
