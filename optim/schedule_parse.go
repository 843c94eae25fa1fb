package optim

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseSchedule reads a schedule written as the command line writes it:
// "step:every=E,gamma=G" (a drop every E epochs), "step:at=E1/E2/…,gamma=G"
// (drops at the given epochs, fractions allowed; '/' because ',' separates the options and ':'
// and ';' the specs), or "exp:gamma=G" (a drop by G every epoch), and/or
// "warmup:steps=N,div=K", joined by "+"; "" is the constant schedule. The
// errors quote the term at fault, not a flag: the caller names its source.
func ParseSchedule(s string) (Schedule, error) {
	var sc Schedule
	bad := func(f string) error {
		return fmt.Errorf("%q is not step:every=EPOCHS,gamma=G, step:at=E1/E2/…,gamma=G, exp:gamma=G or warmup:steps=N,div=K", f)
	}
	decay := false
	for _, term := range strings.Split(s, "+") {
		if strings.TrimSpace(term) == "" {
			continue
		}
		name, opts, _ := strings.Cut(strings.TrimSpace(term), ":")
		kv := map[string]float64{}
		var at []float64
		for _, o := range strings.Split(opts, ",") {
			k, v, ok := strings.Cut(o, "=")
			if !ok {
				return sc, bad(term)
			}
			if k == "at" {
				for _, e := range strings.Split(v, "/") {
					n, err := strconv.ParseFloat(e, 64)
					if err != nil {
						return sc, bad(term)
					}
					at = append(at, n)
				}
				kv[k] = 1
				continue
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return sc, bad(term)
			}
			kv[k] = f
		}
		gammaOK := kv["gamma"] > 0 && kv["gamma"] <= 1
		switch {
		case name == "step" && len(kv) == 2 && at != nil && gammaOK && !decay:
			if !milestonesValid(at) || len(at) > MaxMilestones {
				return sc, fmt.Errorf("%q: the epochs of at= must be finite, above 0 and increasing (at most %d)", term, MaxMilestones)
			}
			sc.Kind, sc.Unit, sc.At, sc.Gamma, decay = MultiStep, Epochs, at, kv["gamma"], true
		case name == "step" && len(kv) == 2 && kv["every"] >= 1 && kv["gamma"] > 0 && !decay:
			sc.Kind, sc.Unit, sc.Every, sc.Gamma, decay = StepDecay, Epochs, int64(kv["every"]), kv["gamma"], true
		case name == "exp" && len(kv) == 1 && gammaOK && !decay:
			sc.Kind, sc.Unit, sc.Gamma, decay = Exponential, Epochs, kv["gamma"], true
		case name == "warmup" && len(kv) == 2 && kv["steps"] >= 1 && kv["div"] >= 1:
			sc.Warmup, sc.WarmupDiv = int64(kv["steps"]), kv["div"]
		default:
			return sc, bad(term)
		}
	}
	return sc, nil
}
