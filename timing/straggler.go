package timing

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// StragglerForms lists the accepted --straggler model forms; errors quote it.
const StragglerForms = `lognormal[:cv=0.1], shiftexp[:shift=0.8,mean=0.2], ` +
	`heavytail[:q=0.011,body=1.3-1.8,delay=1,alpha=1,cap=300,burst=0.1,burstdelay=0.25], ` +
	`slow[:worker=0,factor=2,from=0,to=∞], roam[:factor=2,every=100], ` +
	`or several joined with "+" (e.g. heavytail+slow:worker=3,factor=4)`

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
	// MaxTime bounds the moments a cluster changes (slow's from and to,
	// roam's every) in units of Base: ten million iterations, past any
	// job's horizon, and far from the clock's overflow at any Base.
	MaxTime = 1e7
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
	// slow from/to: a worker slowed only from a moment of the job's model
	// time to another (a co-tenant that comes and goes); windowed is set
	// when either is given, hasTo when to is.
	from, to        amount
	windowed, hasTo bool

	every amount // roam: how often the slowed worker changes
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
	body, roams := "", 0
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
		if t.name == "roam" {
			if roams++; roams > 1 {
				return Straggler{}, fmt.Errorf("timing: straggler spec has two roam terms; one moving straggler per job")
			}
		}
		if t.name == "slow" && !st.windowed {
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

// model is a straggler spec (plus --jitter) at a Base, ready to sample.
type model struct {
	body bodyKind

	// Log-normal multiplier exp(mu + sigma·N(0,1)), mean 1. Jitter and
	// lognormal terms compose exactly: sigma² adds, so (1+cv²) multiplies.
	sigma, mu float64

	shift, expMean float64 // shiftexp

	q, lo, hi, xm, negInvAlpha, capAt, burst, burstDelay float64 // heavytail

	slow map[int]float64 // worker -> time multiplier

	// windows are the slow terms with a from or a to: a worker's
	// multiplier while the job's model time lies in [from, to).
	windows []window
	// roam: in each period of roamEvery, one worker drawn from the seed and
	// the period's index is roamFactor times slower (0: no roaming).
	roamEvery  time.Duration
	roamFactor float64

	desc []string
}

// window is a slow term bounded in time; to is the end of time when the
// term gives none.
type window struct {
	worker   int
	factor   float64
	from, to time.Duration
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
			if t.windowed {
				if err := m.window(t, base); err != nil {
					return nil, err
				}
				continue
			}
			f := t.factor
			if old, ok := m.slow[t.worker]; ok {
				f *= old
			}
			m.slow[t.worker] = f
			m.desc = append(m.desc, fmt.Sprintf("slow:worker=%d,factor=%s", t.worker, fmtFloat(f)))
		case "roam":
			every := t.every.units(base)
			if err := boundedUnits("roam", "every", every); err != nil {
				return nil, err
			}
			m.roamEvery, m.roamFactor = toDuration(every*float64(base)), t.factor
			if m.roamEvery <= 0 {
				return nil, fmt.Errorf("timing: straggler model \"roam\": every=%v rounds to nothing at Base %v", t.every.x, base)
			}
			m.desc = append(m.desc, "roam:factor="+fmtFloat(t.factor)+",every="+fmtFloat(every))
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

// window adds slow term t, bounded in time, at base.
func (m *model) window(t sterm, base time.Duration) error {
	from, to := t.from.units(base), math.Inf(1)
	if t.hasTo {
		to = t.to.units(base)
	}
	if err := boundedUnits("slow", "from", from); err != nil {
		return err
	}
	w := window{worker: t.worker, factor: t.factor, from: toDuration(from * float64(base)), to: math.MaxInt64}
	desc := fmt.Sprintf("slow:worker=%d,factor=%s,from=%s", t.worker, fmtFloat(t.factor), fmtFloat(from))
	if t.hasTo {
		if err := boundedUnits("slow", "to", to); err != nil {
			return err
		}
		w.to = toDuration(to * float64(base))
		desc += ",to=" + fmtFloat(to)
	}
	if w.from >= w.to {
		return fmt.Errorf("timing: straggler model \"slow\": from=%g must come before to=%g (in units of Base %v)", from, to, base)
	}
	m.windows = append(m.windows, w)
	m.desc = append(m.desc, desc)
	return nil
}

// checkWorkers rejects slow:worker indices that the run does not have, and
// a worker whose factors, persistent and windowed (all overlapping at
// worst) and a roaming straggler's, could leave [MinFactor, MaxFactor].
func (m *model) checkWorkers(n int) error {
	ws := make([]int, 0, len(m.slow))
	for w := range m.slow {
		ws = append(ws, w)
	}
	for _, w := range m.windows {
		if !slices.Contains(ws, w.worker) {
			ws = append(ws, w.worker)
		}
	}
	sort.Ints(ws)
	for _, w := range ws {
		if w >= n {
			return fmt.Errorf("timing: straggler model \"slow\": worker=%d but the run has %d workers (0..%d)", w, n, n-1)
		}
		lo, hi := 1.0, 1.0
		if f, ok := m.slow[w]; ok {
			lo, hi = f, f
		}
		for _, x := range m.windows {
			if x.worker == w {
				lo, hi = lo*min(x.factor, 1), hi*max(x.factor, 1)
			}
		}
		if m.roamFactor > 0 {
			lo, hi = lo*min(m.roamFactor, 1), hi*max(m.roamFactor, 1)
		}
		if lo < MinFactor || hi > MaxFactor {
			return fmt.Errorf("timing: straggler model: worker=%d's factors, slow and roam terms together, reach %g–%g, outside [%g, %g] (docs/paradigms.md, Limits)", w, lo, hi, MinFactor, MaxFactor)
		}
	}
	return nil
}

// boundedTime checks the moments given in units of Base against MaxTime:
// the ones given as durations wait for the job's Base (compile).
func boundedTime(model string, kv ...any) error {
	for i := 0; i < len(kv); i += 2 {
		if a := kv[i+1].(amount); !a.seconds {
			if err := boundedUnits(model, kv[i].(string), a.x); err != nil {
				return err
			}
		}
	}
	return nil
}

// boundedUnits checks one moment, in units of Base, against MaxTime.
func boundedUnits(model, key string, v float64) error {
	if v > MaxTime {
		return fmt.Errorf("timing: straggler model %q: %s=%g must be at most %g in units of Base (docs/paradigms.md, Limits)", model, key, v, float64(MaxTime))
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
