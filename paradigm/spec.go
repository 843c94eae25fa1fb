package paradigm

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Kind names one of the eight paradigms of PARADIGMS.md, or delay (the
// backup-workers paper's fixed-staleness experiment).
type Kind uint8

const (
	BSP Kind = iota + 1
	ASP
	SSP
	DSSP
	Elastic
	Backup
	PSP
	Softsync
	Delay
	// Auto is `--paradigm auto` (package auto): no policy of its own; its
	// driver runs one of Among and re-plans from what it measures.
	Auto
)

var kindNames = map[Kind]string{
	BSP: "bsp", ASP: "asp", SSP: "ssp", DSSP: "dssp", Elastic: "elastic",
	Backup: "backup", PSP: "psp", Softsync: "softsync", Delay: "delay", Auto: "auto",
}

func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// DSSPMode selects between the paper's algorithm and the variants of PARADIGMS.md §4.
type DSSPMode uint8

const (
	DSSPLiteral     DSSPMode = iota // the paper's Algorithm 1 and 2 (default)
	DSSPBounded                     // never release while the gap exceeds s_U (Theorem 2)
	DSSPExactFigure                 // r_p ← r*−1, so p stops exactly at Sim_p[r*] (Figure 2)
)

var dsspModeNames = []string{"literal", "bounded", "exact-figure"}

// DSSPWait selects when a held DSSP worker is released (PARADIGMS.md §4 step 6).
type DSSPWait uint8

const (
	DSSPWaitNext DSSPWait = iota // at the slowest worker's next push, then decide again (default; Figure 2's cost model)
	DSSPWaitSL                   // once t_p − min t ≤ s_L (Algorithm 1 line 17 as printed)
)

var dsspWaitNames = []string{"next", "sl"}

// DSSPInterval selects how DSSP measures a worker's iteration interval.
type DSSPInterval uint8

const (
	DSSPIntervalRelease DSSPInterval = iota // from the release to the push (the paper's steps ① to ④; default)
	DSSPIntervalPush                        // between consecutive push arrivals, time held included
)

var dsspIntervalNames = []string{"release", "push"}

// Search selects the ElasticBSP barrier search.
type Search uint8

const (
	SearchZipLine Search = iota
	SearchGridScan
	SearchFullGridScan
	SearchBrute
)

var searchNames = []string{"zipline", "gridscan", "fullgridscan", "brute"}

// Spec is a parsed paradigm spec string (DESIGN.md, "The command-line contract").
// The zero value of every option is its documented default.
type Spec struct {
	Kind Kind

	Sum bool // bsp: apply the sum instead of the mean (MXNet convention)

	S int // ssp: staleness bound s

	SL, SU   int          // dssp: s_L and s_U
	Mode     DSSPMode     // dssp
	Wait     DSSPWait     // dssp
	Interval DSSPInterval // dssp

	R         int    // elastic: predictions per worker
	Search    Search // elastic
	LocalOnly bool   // elastic: inside a superstep workers step their own copies; shards apply at the barrier
	MeanOf    int    // elastic: predict from the mean of the last k intervals (0: the latest alone, interval=last)

	B         int  // backup: backup workers b (N = K − b)
	SharedSet bool // backup: one set of N workers chosen for all shards

	C      int           // psp: minimum gradients per update (0 = all workers)
	BFrac  float64       // psp: minimum fraction of fresh blocks per pull (0 = 1)
	T1, T2 time.Duration // psp: grace times after each minimum is met

	N       int  // softsync: n
	ConstLR bool // softsync: constant α₀ instead of α₀/τ

	D int // delay: every gradient is applied d updates after its turn (fixed staleness)

	// auto: decide every Every rounds (pushes of every live worker); switch
	// when the predicted gain clears Threshold; Lambda prices staleness
	// (package auto). Parse fills in AutoEvery, AutoThreshold, AutoLambda.
	Every     int
	Threshold float64
	Lambda    float64
	// Candidates is auto's among=: the candidates' canonical specs joined
	// by '|' ("": AutoAmong). A string, so that a Spec stays comparable.
	Candidates string
}

// auto's defaults (docs/auto.md).
const (
	AutoEvery     = 20
	AutoThreshold = 0.15
	AutoLambda    = 2
)

// AutoAmong is auto's candidates, the hindsight set of issue 36: every
// paradigm at its presets' parameters but PSP, which needs its shard count.
var AutoAmong = []string{"bsp", "asp", "ssp:s=3", "dssp:sl=3,su=15", "elastic:r=15", "backup:b=1", "softsync:n=2"}

// MaxAutoAmong bounds auto's candidates: each decision simulates every one.
const MaxAutoAmong = 16

// Among is auto's candidates, parsed (among=, else AutoAmong); the first
// runs until the first decision.
func (s Spec) Among() []Spec {
	list := AutoAmong
	if s.Candidates != "" {
		list = strings.Split(s.Candidates, "|")
	}
	out := make([]Spec, len(list))
	for i, a := range list {
		sp, err := Parse(a)
		if err != nil {
			panic(err) // AutoAmong, or a list Parse checked and wrote canonically
		}
		out[i] = sp
	}
	return out
}

// HasCandidate reports whether c is one of auto spec s's candidates (a
// switch to any other rule is refused); false for any other spec.
func (s Spec) HasCandidate(c Spec) bool {
	return s.Kind == Auto && slices.ContainsFunc(s.Among(), func(x Spec) bool { return x.String() == c.String() })
}

// FirstDecision is the rounds before auto's first decision: a quarter of
// Every (at least one), so that a job started under a poor first
// candidate leaves it early; the decisions after it come every Every.
func (s Spec) FirstDecision() int { return max(1, s.Every/4) }

// Start is the rule a job of s runs first: auto's first candidate (it
// runs until the first decision), any other spec itself.
func (s Spec) Start() Spec {
	if s.Kind == Auto {
		return s.Among()[0]
	}
	return s
}

// parseAmong reads auto's among= list: two or more distinct specs, none
// of them auto, joined by '|'; it returns them canonically joined.
func parseAmong(spec, list string) (string, error) {
	parts := strings.Split(list, "|")
	if len(parts) < 2 || len(parts) > MaxAutoAmong {
		return "", specErr(spec, "among=%q: want 2 to %d paradigms separated by '|', e.g. among=bsp|ssp:s=3|backup:b=1", list, MaxAutoAmong)
	}
	seen := map[string]bool{}
	out := make([]string, len(parts))
	for i, c := range parts {
		sp, err := Parse(c)
		switch {
		case err != nil:
			return "", specErr(spec, "among=: candidate %d (%q): %v", i+1, c, err)
		case sp.Kind == Auto:
			return "", specErr(spec, "among=: auto cannot be its own candidate")
		case seen[sp.String()]:
			return "", specErr(spec, "among=: %s given twice", sp)
		}
		seen[sp.String()] = true
		out[i] = sp.String()
	}
	return strings.Join(out, "|"), nil
}

// Forms lists every valid spec form; errors quote it so a user sees the fix.
const Forms = "bsp[:agg=mean|sum], asp, ssp:s=3, dssp:sl=3,su=15[,mode=literal|bounded|exact-figure][,wait=next|sl][,interval=release|push], " +
	"elastic:r=15[,search=zipline|gridscan|fullgridscan|brute][,apply=arrival|local][,interval=last|mean:k], backup:b=4[,set=shard|shared], " +
	"psp:c=28,b=0.9,t1=0,t2=0 (c=0: all workers; t1,t2 durations such as 50ms), softsync:n=15[,lr=staleness|const], delay:d=20, " +
	"auto[:every=20,threshold=0.15,lambda=2][,among=bsp|ssp:s=3|…] (among last)"

// ErrSpec is wrapped by every parse error.
var ErrSpec = errors.New("bad paradigm spec")

func specErr(spec, format string, a ...any) error {
	return fmt.Errorf("%w %q: %s; valid forms: %s", ErrSpec, spec, fmt.Sprintf(format, a...), Forms)
}

// Parse reads a paradigm spec string such as "dssp:sl=3,su=15,mode=bounded".
func Parse(spec string) (Spec, error) {
	name, rest, _ := strings.Cut(strings.TrimSpace(spec), ":")
	var sp Spec
	for k, n := range kindNames {
		if strings.EqualFold(n, name) {
			sp.Kind = k
		}
	}
	if sp.Kind == 0 {
		return Spec{}, specErr(spec, "unknown paradigm %q", name)
	}
	kv := map[string]string{}
	// auto's among= takes the rest of the spec: its candidates carry
	// commas of their own (among=bsp|dssp:sl=3,su=15), so it comes last.
	among, hasAmong := "", false
	if sp.Kind == Auto {
		if i := strings.Index(strings.ToLower(rest), "among="); i >= 0 && (i == 0 || rest[i-1] == ',') {
			among, hasAmong, rest = rest[i+len("among="):], true, strings.TrimSuffix(rest[:i], ",")
		}
	}
	if rest != "" {
		for _, f := range strings.Split(rest, ",") {
			k, v, ok := strings.Cut(f, "=")
			k = strings.ToLower(strings.TrimSpace(k))
			if !ok || k == "" {
				return Spec{}, specErr(spec, "option %q is not key=value", f)
			}
			if _, dup := kv[k]; dup {
				return Spec{}, specErr(spec, "option %q given twice", k)
			}
			kv[k] = strings.TrimSpace(v)
		}
	}
	for k := range kv {
		if !strings.Contains(","+specKeys[sp.Kind]+",", ","+k+",") {
			return Spec{}, specErr(spec, "unknown option %q for %s (it takes: %s)", k, sp.Kind, orNone(specKeys[sp.Kind]))
		}
	}
	p := optParser{spec: spec, kv: kv}
	switch sp.Kind {
	case BSP:
		sp.Sum = p.choice("agg", []string{"mean", "sum"}, 0) == 1
	case ASP:
	case SSP:
		sp.S = p.intv("s", -1, 0, MaxStaleness)
	case DSSP:
		sp.SL = p.intv("sl", -1, 0, MaxStaleness)
		sp.SU = p.intv("su", -1, 0, MaxStaleness)
		sp.Mode = DSSPMode(p.choice("mode", dsspModeNames, 0))
		sp.Wait = DSSPWait(p.choice("wait", dsspWaitNames, 0))
		sp.Interval = DSSPInterval(p.choice("interval", dsspIntervalNames, 0))
		if p.err == nil && sp.SU < sp.SL {
			p.err = specErr(spec, "su=%d must be at least sl=%d", sp.SU, sp.SL)
		}
	case Elastic:
		sp.R = p.intv("r", -1, 1, MaxElasticR)
		sp.Search = Search(p.choice("search", searchNames, 0))
		sp.LocalOnly = p.choice("apply", []string{"arrival", "local"}, 0) == 1
		sp.MeanOf = p.meanOf("interval")
	case Backup:
		sp.B = p.intv("b", -1, 0, maxWorkerCount)
		sp.SharedSet = p.choice("set", []string{"shard", "shared"}, 0) == 1
	case PSP:
		sp.C = p.intv("c", 0, 0, maxWorkerCount)
		sp.BFrac = p.frac("b", 1)
		sp.T1 = p.dur("t1")
		sp.T2 = p.dur("t2")
	case Softsync:
		sp.N = p.intv("n", -1, 1, maxWorkerCount)
		sp.ConstLR = p.choice("lr", []string{"staleness", "const"}, 0) == 1
	case Delay:
		sp.D = p.intv("d", -1, 0, MaxDelay)
	case Auto:
		sp.Every = p.intv("every", AutoEvery, 1, MaxAutoEvery)
		sp.Threshold = p.num("threshold", AutoThreshold, 0, 10)
		sp.Lambda = p.num("lambda", AutoLambda, 0, 1000)
		if hasAmong && p.err == nil {
			sp.Candidates, p.err = parseAmong(spec, among)
		}
	}
	if p.err != nil {
		return Spec{}, p.err
	}
	return sp, nil
}

// specKeys lists each paradigm's options.
var specKeys = map[Kind]string{
	BSP: "agg", ASP: "", SSP: "s", DSSP: "sl,su,mode,wait,interval", Elastic: "r,search,apply,interval",
	Backup: "b,set", PSP: "c,b,t1,t2", Softsync: "n,lr", Delay: "d", Auto: "every,threshold,lambda,among",
}

func orNone(s string) string {
	if s == "" {
		return "no options"
	}
	return s
}

// AppliesOnArrival reports whether the paradigm applies each gradient alone
// as it arrives (asp, ssp, dssp, elastic inside a superstep unless local-only).
func (s Spec) AppliesOnArrival() bool {
	switch s.Kind {
	case ASP, SSP, DSSP:
		return true
	case Elastic:
		return !s.LocalOnly
	}
	return false
}

// OneGradientPerApply reports whether every apply holds a single gradient
// with weight 1 (the paradigms that apply on arrival, and delay, whose line
// only defers each one): the paradigms a BSP round's step is split K ways
// among (job.Config.StepScale).
func (s Spec) OneGradientPerApply() bool { return s.AppliesOnArrival() || s.Kind == Delay }

// LocalSteps reports whether workers apply their own gradients to their own
// copies between pulls (ElasticBSP local-only: the worker's copy is only
// replaced by the shards' averaged model at a barrier).
func (s Spec) LocalSteps() bool { return s.Kind == Elastic && s.LocalOnly }

// String renders the spec in canonical form; Parse(s.String()) == s.
func (s Spec) String() string {
	switch s.Kind {
	case BSP:
		if s.Sum {
			return "bsp:agg=sum"
		}
		return "bsp"
	case ASP:
		return "asp"
	case SSP:
		return fmt.Sprintf("ssp:s=%d", s.S)
	case DSSP:
		out := fmt.Sprintf("dssp:sl=%d,su=%d", s.SL, s.SU)
		if s.Mode != DSSPLiteral {
			out += ",mode=" + dsspModeNames[s.Mode]
		}
		if s.Wait != DSSPWaitNext {
			out += ",wait=" + dsspWaitNames[s.Wait]
		}
		if s.Interval != DSSPIntervalRelease {
			out += ",interval=" + dsspIntervalNames[s.Interval]
		}
		return out
	case Elastic:
		out := fmt.Sprintf("elastic:r=%d", s.R)
		if s.Search != SearchZipLine {
			out += ",search=" + searchNames[s.Search]
		}
		if s.LocalOnly {
			out += ",apply=local"
		}
		if s.MeanOf > 0 {
			out += fmt.Sprintf(",interval=mean:%d", s.MeanOf)
		}
		return out
	case Backup:
		out := fmt.Sprintf("backup:b=%d", s.B)
		if s.SharedSet {
			out += ",set=shared"
		}
		return out
	case PSP:
		return fmt.Sprintf("psp:c=%d,b=%s,t1=%s,t2=%s", s.C,
			strconv.FormatFloat(s.BFrac, 'g', -1, 64), durStr(s.T1), durStr(s.T2))
	case Softsync:
		out := fmt.Sprintf("softsync:n=%d", s.N)
		if s.ConstLR {
			out += ",lr=const"
		}
		return out
	case Delay:
		return fmt.Sprintf("delay:d=%d", s.D)
	case Auto:
		var opts []string // the options away from their defaults
		if s.Every != AutoEvery {
			opts = append(opts, fmt.Sprintf("every=%d", s.Every))
		}
		if s.Threshold != AutoThreshold {
			opts = append(opts, "threshold="+strconv.FormatFloat(s.Threshold, 'g', -1, 64))
		}
		if s.Lambda != AutoLambda {
			opts = append(opts, "lambda="+strconv.FormatFloat(s.Lambda, 'g', -1, 64))
		}
		if s.Candidates != "" {
			opts = append(opts, "among="+s.Candidates) // last: it takes the rest
		}
		if len(opts) == 0 {
			return "auto"
		}
		return "auto:" + strings.Join(opts, ",")
	}
	return s.Kind.String()
}

func durStr(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return d.String()
}

// ParseList splits "bsp;asp;ssp:s=3" (compare's --paradigms) and parses each.
func ParseList(list string) ([]Spec, error) {
	var out []Spec
	for _, f := range strings.Split(list, ";") {
		if strings.TrimSpace(f) == "" {
			continue
		}
		s, err := Parse(f)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, specErr(list, "no paradigm given")
	}
	return out, nil
}
