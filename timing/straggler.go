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

// model is a parsed straggler spec (plus --jitter), ready to sample.
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

// parseModel compiles a straggler spec and a jitter CV. base converts duration
// arguments into units of Base.
func parseModel(spec string, jitter float64, base time.Duration) (*model, error) {
	m := &model{slow: map[int]float64{}}
	logVar := 0.0 // ln(1 + cv²) summed over log-normal sources
	if math.IsNaN(jitter) || math.IsInf(jitter, 0) || jitter < 0 {
		return nil, fmt.Errorf("timing: Jitter (--jitter) = %v: want a coefficient of variation ≥ 0", jitter)
	}
	if jitter > 0 {
		logVar += math.Log1p(jitter * jitter)
	}
	if strings.TrimSpace(spec) != "" {
		terms, err := splitTerms(spec, "straggler", StragglerForms)
		if err != nil {
			return nil, err
		}
		for _, t := range terms {
			if err := m.addTerm(t, base, &logVar); err != nil {
				return nil, err
			}
		}
	}
	if logVar > 0 {
		m.sigma = math.Sqrt(logVar)
		m.mu = -logVar / 2
	}
	return m, nil
}

func (m *model) setBody(t term, k bodyKind) error {
	if m.body != bodyConst {
		return fmt.Errorf("timing: straggler spec combines two base models (%q and an earlier shiftexp/heavytail); use one of them", t.name)
	}
	m.body = k
	return nil
}

func (m *model) addTerm(t term, base time.Duration, logVar *float64) error {
	const what = "straggler"
	switch t.name {
	case "lognormal":
		if err := t.checkKeys(what, "cv"); err != nil {
			return err
		}
		cv, err := t.number(what, "cv", 0.1)
		if err != nil {
			return err
		}
		if cv < 0 {
			return fmt.Errorf("timing: straggler model \"lognormal\": cv=%g must be ≥ 0", cv)
		}
		*logVar += math.Log1p(cv * cv)
		m.desc = append(m.desc, "lognormal:cv="+fmtFloat(cv))
	case "shiftexp":
		if err := t.checkKeys(what, "shift", "mean"); err != nil {
			return err
		}
		shift, err := t.amount("shift", 0.8, base)
		if err != nil {
			return err
		}
		mean, err := t.amount("mean", 0.2, base)
		if err != nil {
			return err
		}
		if shift < 0 || mean < 0 || shift+mean <= 0 {
			return fmt.Errorf("timing: straggler model \"shiftexp\": shift=%g, mean=%g: want shift ≥ 0, mean ≥ 0, shift+mean > 0", shift, mean)
		}
		if err := m.setBody(t, bodyShiftExp); err != nil {
			return err
		}
		m.shift, m.expMean = shift, mean
		m.desc = append(m.desc, "shiftexp:shift="+fmtFloat(shift)+",mean="+fmtFloat(mean))
	case "heavytail":
		return m.addHeavy(t, base)
	case "slow":
		if err := t.checkKeys(what, "worker", "factor"); err != nil {
			return err
		}
		w, err := t.integer(what, "worker", 0)
		if err != nil {
			return err
		}
		f, err := t.number(what, "factor", 2)
		if err != nil {
			return err
		}
		if f <= 0 {
			return fmt.Errorf("timing: straggler model \"slow\": factor=%g must be > 0", f)
		}
		if old, ok := m.slow[w]; ok {
			f *= old
		}
		m.slow[w] = f
		m.desc = append(m.desc, fmt.Sprintf("slow:worker=%d,factor=%s", w, fmtFloat(f)))
	default:
		return fmt.Errorf("timing: unknown straggler model %q; valid forms: %s", t.name, StragglerForms)
	}
	return nil
}

func (m *model) addHeavy(t term, base time.Duration) error {
	if err := t.checkKeys("straggler", "q", "body", "delay", "alpha", "cap", "burst", "burstdelay"); err != nil {
		return err
	}
	q, err := t.number("straggler", "q", defHeavyQ)
	if err != nil {
		return err
	}
	lo, hi, err := t.rangeAmount("body", defHeavyBodyLo, defHeavyBodyHi, base)
	if err != nil {
		return err
	}
	xm, err := t.amount("delay", defHeavyDelay, base)
	if err != nil {
		return err
	}
	alpha, err := t.number("straggler", "alpha", defHeavyAlpha)
	if err != nil {
		return err
	}
	capAt, err := t.amount("cap", defHeavyCap, base)
	if err != nil {
		return err
	}
	burst, err := t.number("straggler", "burst", defHeavyBurst)
	if err != nil {
		return err
	}
	burstDelay, err := t.amount("burstdelay", defHeavyBurstDelay, base)
	if err != nil {
		return err
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("timing: straggler model \"heavytail\": "+format, a...)
	}
	switch {
	case q < 0 || q > 1:
		return bad("q=%g must be a probability in [0, 1]", q)
	case lo < 0 || hi <= 0:
		return bad("body=%g-%g must be ≥ 0 with hi > 0", lo, hi)
	case xm <= 0:
		return bad("delay=%g (the Pareto scale of a straggler's extra delay) must be > 0", xm)
	case alpha <= 0:
		return bad("alpha=%g (the Pareto tail index) must be > 0", alpha)
	case capAt < xm:
		return bad("cap=%g must be ≥ delay=%g", capAt, xm)
	case burst < 0 || burst > 1:
		return bad("burst=%g must be a probability in [0, 1]", burst)
	case burstDelay < 0:
		return bad("burstdelay=%g must be ≥ 0", burstDelay)
	}
	if err := m.setBody(t, bodyHeavy); err != nil {
		return err
	}
	m.q, m.lo, m.hi, m.xm, m.negInvAlpha, m.capAt = q, lo, hi, xm, -1/alpha, capAt
	m.burst, m.burstDelay = burst, burstDelay
	m.desc = append(m.desc, fmt.Sprintf("heavytail:q=%s,body=%s-%s,delay=%s,alpha=%s,cap=%s,burst=%s,burstdelay=%s",
		fmtFloat(q), fmtFloat(lo), fmtFloat(hi), fmtFloat(xm), fmtFloat(alpha), fmtFloat(capAt), fmtFloat(burst), fmtFloat(burstDelay)))
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
