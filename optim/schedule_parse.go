package optim

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseSchedule reads a schedule written as the command line writes it:
// "step:every=E,gamma=G" (a drop every E epochs) and/or
// "warmup:steps=N,div=K", joined by "+"; "" is the constant schedule.
// The errors quote the term at fault, not a flag: the caller names its source.
func ParseSchedule(s string) (Schedule, error) {
	var sc Schedule
	bad := func(f string) error {
		return fmt.Errorf("%q is not step:every=EPOCHS,gamma=G or warmup:steps=N,div=K", f)
	}
	for _, term := range strings.Split(s, "+") {
		if strings.TrimSpace(term) == "" {
			continue
		}
		name, opts, _ := strings.Cut(strings.TrimSpace(term), ":")
		kv := map[string]float64{}
		for _, o := range strings.Split(opts, ",") {
			k, v, ok := strings.Cut(o, "=")
			f, err := strconv.ParseFloat(v, 64)
			if !ok || err != nil {
				return sc, bad(term)
			}
			kv[k] = f
		}
		switch {
		case name == "step" && len(kv) == 2 && kv["every"] >= 1 && kv["gamma"] > 0:
			sc.Kind, sc.Unit, sc.Every, sc.Gamma = StepDecay, Epochs, int64(kv["every"]), kv["gamma"]
		case name == "warmup" && len(kv) == 2 && kv["steps"] >= 1 && kv["div"] >= 1:
			sc.Warmup, sc.WarmupDiv = int64(kv["steps"]), kv["div"]
		default:
			return sc, bad(term)
		}
	}
	return sc, nil
}
