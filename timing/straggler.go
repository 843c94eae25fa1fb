package timing

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// StragglerForms lists the accepted --straggler model forms; errors quote it.
const StragglerForms = `lognormal[:cv=0.1], shiftexp[:shift=0.8,mean=0.2], ` +
	`heavytail[:q=0.011,body=1.3-1.8,delay=1,alpha=1,cap=300,burst=0.1,burstdelay=0.25], ` +
	`slow[:worker=0,factor=2], or several joined with "+" (e.g. heavytail+slow:worker=3,factor=4)`

// Heavy-tail defaults, calibrated to the backup-workers paper's Figure 3 (100
// workers: the 98th gradient within 2 s in 80% of iterations, the 100th in 30%).
// With independent workers the two targets cannot both be met: if P(100th ≤ 2 s)
// = (1-r)^100 = 0.30 then P(98th ≤ 2 s) = P(Binomial(100, r) ≤ 2) ≈ 0.88. The
// burst term adds the missing correlation: in a burst iteration (shared
// contention) every worker is slowed by burstdelay, which lifts the body to
// 1.55–2.05 s, so about 10 of 100 workers miss 2 s: the 98th and 100th almost
// never make it, while the median and the 90th mostly still do. With q = 0.011
// and burst = 0.1: P(98th) = 0.9·0.901 + 0.1·0.002 = 0.811, P(100th) = 0.9·0.331 = 0.298.
const (
	defHeavyQ          = 0.011
	defHeavyBodyLo     = 1.3
	defHeavyBodyHi     = 1.8
	defHeavyDelay      = 1.0 // Pareto scale: every straggler event adds at least 1 s, past the 2 s mark
	defHeavyAlpha      = 1.0 // P(delay > x) = 1/x: a median of 2 s, 1% above 100 s
	defHeavyCap        = 300 // the paper's maximum observed time is 310 s
	defHeavyBurst      = 0.1
	defHeavyBurstDelay = 0.25
)

// bodyKind selects the per-iteration base distribution (before multipliers).
type bodyKind uint8

const (
	bodyConst bodyKind = iota // 1 (in units of Base)
	bodyShiftExp
	bodyHeavy
)

// The bounds of a straggler spec's numbers (docs/paradigms.md, Limits).
// Past them a worker's iteration time overflows the clock's nanoseconds
// or rounds to nothing, and a run's figures are garbage: lognormal:cv=1e300
// and slow:factor=1e300 ran and printed a wait share of -1e10.
const (
	// MaxCV bounds a lognormal term's coefficient of variation, as
	// --jitter is bounded (the two compose into one log-normal).
	MaxCV = 10
	// MinFactor and MaxFactor bound a worker's slow factor (all its slow
	// terms multiplied), as --speeds is bounded: it is a speed.
	MinFactor, MaxFactor = 1e-3, 1e3
	// MaxAmount bounds every shiftexp and heavytail quantity (shift, mean,
	// body, delay, cap, burstdelay) in units of Base: 10,000 iterations, 30
	// times the paper's longest observed straggler (310 s at 1 s).
	MaxAmount = 1e4
)

// amount is a straggler quantity as written: in units of Base, or, when
// seconds, an absolute duration that Base converts.
type amount struct {
	x       float64
	seconds bool
}

func (a amount) units(base time.Duration) float64 {
	if a.seconds {
		return a.x / base.Seconds()
	}
	return a.x
}

// sterm is one parsed term of a straggler spec.
type sterm struct {
	name string

	cv float64 // lognormal

	shift, mean amount // shiftexp

	q, alpha, burst         float64 // heavytail
	lo, hi, xm, capAt, bdel amount

	worker int // slow
	factor float64
}

// Straggler is a parsed straggler spec (--straggler; see StragglerForms):
// the typed value a job carries, checked once where it is parsed. Its
// text, as written, is its serialized form (MarshalText), so job
// descriptions and summary.json read as they did when it was a string.
// Quantities given as durations stay durations until NewWorkers meets the
// job's Base (WorkerSpec.Check). The zero value is no straggler model.
type Straggler struct {
	text  string
	terms []sterm
}

// ParseStraggler parses and checks spec ("" is no model): every rule that
// does not depend on the job's Base and worker count, which
// WorkerSpec.Check adds.
func ParseStraggler(spec string) (Straggler, error) {
	s := Straggler{text: spec}
	if strings.TrimSpace(spec) == "" {
		return s, nil
	}
	terms, err := splitTerms(spec, "straggler", StragglerForms)
	if err != nil {
		return Straggler{}, err
	}
	body := ""
	factors := map[int]float64{}
	for _, t := range terms {
		st, err := parseSterm(t)
		if err != nil {
			return Straggler{}, err
		}
		if t.name == "shiftexp" || t.name == "heavytail" {
			if body != "" {
				return Straggler{}, fmt.Errorf("timing: straggler spec combines two base models (%q and an earlier shiftexp/heavytail); use one of them", t.name)
			}
			body = t.name
		}
		if t.name == "slow" {
			f := st.factor
			if old, ok := factors[st.worker]; ok {
				f *= old
			}
			if !(f >= MinFactor && f <= MaxFactor) {
				return Straggler{}, fmt.Errorf("timing: straggler model \"slow\": worker=%d's factor %g must lie in [%g, %g] (docs/paradigms.md, Limits)", st.worker, f, MinFactor, MaxFactor)
			}
			factors[st.worker] = f
		}
		s.terms = append(s.terms, st)
	}
	return s, nil
}

// MustStraggler is ParseStraggler for specs known to be valid (presets,
// tests); it panics on an error.
func MustStraggler(spec string) Straggler {
	s, err := ParseStraggler(spec)
	if err != nil {
		panic(err)
	}
	return s
}

// String is the spec as written.
func (s Straggler) String() string { return s.text }

// IsZero reports whether s is no model.
func (s Straggler) IsZero() bool { return len(s.terms) == 0 }

// MarshalText writes the spec as written.
func (s Straggler) MarshalText() ([]byte, error) { return []byte(s.text), nil }

// UnmarshalText parses a spec MarshalText wrote (or any other).
func (s *Straggler) UnmarshalText(b []byte) error {
	v, err := ParseStraggler(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

func parseSterm(t term) (sterm, error) {
	const what = "straggler"
	st := sterm{name: t.name}
	var err error
	switch t.name {
	case "lognormal":
		if err := t.checkKeys(what, "cv"); err != nil {
			return st, err
		}
		if st.cv, err = t.number(what, "cv", 0.1); err != nil {
			return st, err
		}
		if st.cv < 0 || st.cv > MaxCV {
			return st, fmt.Errorf("timing: straggler model \"lognormal\": cv=%g must lie in [0, %d] (docs/paradigms.md, Limits)", st.cv, MaxCV)
		}
	case "shiftexp":
		if err := t.checkKeys(what, "shift", "mean"); err != nil {
			return st, err
		}
		if st.shift, err = t.amount("shift", 0.8); err != nil {
			return st, err
		}
		if st.mean, err = t.amount("mean", 0.2); err != nil {
			return st, err
		}
		if st.shift.x < 0 || st.mean.x < 0 || st.shift.x+st.mean.x <= 0 {
			return st, fmt.Errorf("timing: straggler model \"shiftexp\": shift=%g, mean=%g: want shift ≥ 0, mean ≥ 0, shift+mean > 0", st.shift.x, st.mean.x)
		}
		if err := boundedBare("shiftexp", "shift", st.shift, "mean", st.mean); err != nil {
			return st, err
		}
	case "heavytail":
		return parseHeavy(t)
	case "slow":
		if err := t.checkKeys(what, "worker", "factor"); err != nil {
			return st, err
		}
		if st.worker, err = t.integer(what, "worker", 0); err != nil {
			return st, err
		}
		if st.factor, err = t.number(what, "factor", 2); err != nil {
			return st, err
		}
		if st.factor <= 0 {
			return st, fmt.Errorf("timing: straggler model \"slow\": factor=%g must be > 0", st.factor)
		}
	default:
		return st, fmt.Errorf("timing: unknown straggler model %q; valid forms: %s", t.name, StragglerForms)
	}
	return st, nil
}

func parseHeavy(t term) (sterm, error) {
	st := sterm{name: t.name}
	if err := t.checkKeys("straggler", "q", "body", "delay", "alpha", "cap", "burst", "burstdelay"); err != nil {
		return st, err
	}
	var err error
	if st.q, err = t.number("straggler", "q", defHeavyQ); err != nil {
		return st, err
	}
	if st.lo, st.hi, err = t.rangeAmount("body", defHeavyBodyLo, defHeavyBodyHi); err != nil {
		return st, err
	}
	if st.xm, err = t.amount("delay", defHeavyDelay); err != nil {
		return st, err
	}
	if st.alpha, err = t.number("straggler", "alpha", defHeavyAlpha); err != nil {
		return st, err
	}
	if st.capAt, err = t.amount("cap", defHeavyCap); err != nil {
		return st, err
	}
	if st.burst, err = t.number("straggler", "burst", defHeavyBurst); err != nil {
		return st, err
	}
	if st.bdel, err = t.amount("burstdelay", defHeavyBurstDelay); err != nil {
		return st, err
	}
	bad := func(format string, a ...any) (sterm, error) {
		return st, fmt.Errorf("timing: straggler model \"heavytail\": "+format, a...)
	}
	switch {
	case st.q < 0 || st.q > 1:
		return bad("q=%g must be a probability in [0, 1]", st.q)
	case st.lo.x < 0 || st.hi.x <= 0:
		return bad("body=%g-%g must be ≥ 0 with hi > 0", st.lo.x, st.hi.x)
	case st.xm.x <= 0:
		return bad("delay=%g (the Pareto scale of a straggler's extra delay) must be > 0", st.xm.x)
	case st.alpha <= 0:
		return bad("alpha=%g (the Pareto tail index) must be > 0", st.alpha)
	case st.burst < 0 || st.burst > 1:
		return bad("burst=%g must be a probability in [0, 1]", st.burst)
	case st.bdel.x < 0:
		return bad("burstdelay=%g must be ≥ 0", st.bdel.x)
	}
	return st, boundedBare("heavytail", "body", st.hi, "delay", st.xm, "cap", st.capAt, "burstdelay", st.bdel)
}

// model is a straggler spec (plus --jitter) at a Base, ready to sample.
type model struct {
	body bodyKind

	// Log-normal multiplier exp(mu + sigma·N(0,1)), mean 1. Jitter and
	// lognormal terms compose exactly: sigma² adds, so (1+cv²) multiplies.
	sigma, mu float64

	shift, expMean float64 // shiftexp

	q, lo, hi, xm, negInvAlpha, capAt, burst, burstDelay float64 // heavytail

	slow map[int]float64 // worker -> time multiplier

	desc []string
}

// compile is s with jitter at base, for n workers: the checks that need
// them (a quantity given as a duration against the others and MaxAmount,
// a slow worker the run has).
func (s Straggler) compile(jitter float64, base time.Duration, n int) (*model, error) {
	m := &model{slow: map[int]float64{}}
	logVar := 0.0 // ln(1 + cv²) summed over log-normal sources
	if math.IsNaN(jitter) || math.IsInf(jitter, 0) || jitter < 0 {
		return nil, fmt.Errorf("timing: Jitter (--jitter) = %v: want a coefficient of variation ≥ 0", jitter)
	}
	if jitter > 0 {
		logVar += math.Log1p(jitter * jitter)
	}
	for _, t := range s.terms {
		switch t.name {
		case "lognormal":
			logVar += math.Log1p(t.cv * t.cv)
			m.desc = append(m.desc, "lognormal:cv="+fmtFloat(t.cv))
		case "shiftexp":
			shift, mean := t.shift.units(base), t.mean.units(base)
			if err := bounded("shiftexp", "shift", shift, "mean", mean); err != nil {
				return nil, err
			}
			m.body, m.shift, m.expMean = bodyShiftExp, shift, mean
			m.desc = append(m.desc, "shiftexp:shift="+fmtFloat(shift)+",mean="+fmtFloat(mean))
		case "heavytail":
			if err := m.heavy(t, base); err != nil {
				return nil, err
			}
		case "slow":
			f := t.factor
			if old, ok := m.slow[t.worker]; ok {
				f *= old
			}
			m.slow[t.worker] = f
			m.desc = append(m.desc, fmt.Sprintf("slow:worker=%d,factor=%s", t.worker, fmtFloat(f)))
		}
	}
	if logVar > 0 {
		m.sigma = math.Sqrt(logVar)
		m.mu = -logVar / 2
	}
	if err := m.checkWorkers(n); err != nil {
		return nil, err
	}
	return m, nil
}

// bounded checks name=value pairs of a model's quantities against MaxAmount.
func bounded(model string, kv ...any) error {
	for i := 0; i < len(kv); i += 2 {
		if v := kv[i+1].(float64); v > MaxAmount {
			return fmt.Errorf("timing: straggler model %q: %s=%g must be at most %g in units of Base (docs/paradigms.md, Limits)", model, kv[i], v, float64(MaxAmount))
		}
	}
	return nil
}

// boundedBare is bounded for the quantities given in units of Base: the
// ones given as durations wait for the job's Base (compile).
func boundedBare(model string, kv ...any) error {
	for i := 0; i < len(kv); i += 2 {
		if a := kv[i+1].(amount); !a.seconds {
			if err := bounded(model, kv[i], a.x); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *model) heavy(t sterm, base time.Duration) error {
	lo, hi, xm, capAt, burstDelay := t.lo.units(base), t.hi.units(base), t.xm.units(base), t.capAt.units(base), t.bdel.units(base)
	bad := func(format string, a ...any) error {
		return fmt.Errorf("timing: straggler model \"heavytail\": "+format, a...)
	}
	if err := bounded("heavytail", "body", hi, "delay", xm, "cap", capAt, "burstdelay", burstDelay); err != nil {
		return err
	}
	switch {
	case lo > hi:
		return bad("body=%g-%g: lo %g exceeds hi %g (want lo-hi, e.g. 1.3-1.8)", lo, hi, lo, hi)
	case capAt < xm:
		return bad("cap=%g must be ≥ delay=%g", capAt, xm)
	}
	m.body = bodyHeavy
	m.q, m.lo, m.hi, m.xm, m.negInvAlpha, m.capAt = t.q, lo, hi, xm, -1/t.alpha, capAt
	m.burst, m.burstDelay = t.burst, burstDelay
	m.desc = append(m.desc, fmt.Sprintf("heavytail:q=%s,body=%s-%s,delay=%s,alpha=%s,cap=%s,burst=%s,burstdelay=%s",
		fmtFloat(t.q), fmtFloat(lo), fmtFloat(hi), fmtFloat(xm), fmtFloat(t.alpha), fmtFloat(capAt), fmtFloat(t.burst), fmtFloat(burstDelay)))
	return nil
}

// checkWorkers rejects slow:worker indices that the run does not have.
func (m *model) checkWorkers(n int) error {
	ws := make([]int, 0, len(m.slow))
	for w := range m.slow {
		ws = append(ws, w)
	}
	sort.Ints(ws)
	for _, w := range ws {
		if w >= n {
			return fmt.Errorf("timing: straggler model \"slow\": worker=%d but the run has %d workers (0..%d)", w, n, n-1)
		}
	}
	return nil
}

// String is the normalized spec with every default filled in.
func (m *model) String() string {
	if len(m.desc) == 0 {
		return "none"
	}
	return strings.Join(m.desc, "+")
}
