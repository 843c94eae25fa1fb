package timing

import (
	"fmt"
)

// This file: a straggler spec's text, term by term, into its terms.

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
		if err := t.checkKeys(what, "worker", "factor", "from", "to"); err != nil {
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
		_, hasFrom := t.args["from"]
		_, st.hasTo = t.args["to"]
		if st.windowed = hasFrom || st.hasTo; !st.windowed {
			break
		}
		if !(st.factor >= MinFactor && st.factor <= MaxFactor) {
			return st, fmt.Errorf("timing: straggler model \"slow\": worker=%d's factor %g must lie in [%g, %g] (docs/paradigms.md, Limits)", st.worker, st.factor, MinFactor, MaxFactor)
		}
		if st.from, err = t.amount("from", 0); err != nil {
			return st, err
		}
		if st.to, err = t.amount("to", 0); err != nil {
			return st, err
		}
		if st.from.x < 0 || st.hasTo && st.to.x <= 0 {
			return st, fmt.Errorf("timing: straggler model \"slow\": from=%g, to=%g: want from ≥ 0 and to > 0", st.from.x, st.to.x)
		}
		if st.hasTo && st.from.seconds == st.to.seconds && st.from.x >= st.to.x {
			return st, fmt.Errorf("timing: straggler model \"slow\": from=%g must come before to=%g", st.from.x, st.to.x)
		}
		if err := boundedTime("slow", "from", st.from, "to", st.to); err != nil {
			return st, err
		}
	case "roam":
		if err := t.checkKeys(what, "factor", "every"); err != nil {
			return st, err
		}
		if st.factor, err = t.number(what, "factor", 2); err != nil {
			return st, err
		}
		if !(st.factor >= MinFactor && st.factor <= MaxFactor) {
			return st, fmt.Errorf("timing: straggler model \"roam\": factor=%g must lie in [%g, %g] (docs/paradigms.md, Limits)", st.factor, MinFactor, MaxFactor)
		}
		if st.every, err = t.amount("every", 100); err != nil {
			return st, err
		}
		if st.every.x <= 0 {
			return st, fmt.Errorf("timing: straggler model \"roam\": every=%g must be > 0", st.every.x)
		}
		if err := boundedTime("roam", "every", st.every); err != nil {
			return st, err
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
