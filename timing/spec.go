package timing

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// term is one "name:key=value,..." element of a "+"-joined model spec.
type term struct {
	name string
	args map[string]string
	keys []string // in the order written, so errors and checks are deterministic
}

// splitTerms parses a "+"-joined spec into terms. what names the flag in errors
// ("straggler", "server delay"); valid lists the accepted forms for the error text.
func splitTerms(spec, what, valid string) ([]term, error) {
	var out []term
	for _, raw := range strings.Split(spec, "+") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			return nil, fmt.Errorf("timing: %s spec %q has an empty model; valid forms: %s", what, spec, valid)
		}
		name, rest, hasArgs := strings.Cut(raw, ":")
		t := term{name: strings.ToLower(strings.TrimSpace(name)), args: map[string]string{}}
		if hasArgs {
			for _, kv := range strings.Split(rest, ",") {
				k, v, ok := strings.Cut(kv, "=")
				k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
				if !ok || k == "" || v == "" {
					return nil, fmt.Errorf("timing: %s model %q: argument %q is not key=value; valid forms: %s", what, t.name, kv, valid)
				}
				if _, dup := t.args[k]; dup {
					return nil, fmt.Errorf("timing: %s model %q: argument %q given twice", what, t.name, k)
				}
				t.args[k] = v
				t.keys = append(t.keys, k)
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// checkKeys rejects arguments the model does not know, naming the ones it does.
func (t term) checkKeys(what string, allowed ...string) error {
	for _, k := range t.keys {
		found := false
		for _, a := range allowed {
			if k == a {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("timing: %s model %q has no argument %q (it takes %s)", what, t.name, k, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// amount parses a straggler-model quantity. A bare number is in units of
// WorkerSpec.Base; a Go duration ("300s") is absolute and kept in seconds
// until Base converts it, so "cap=300" and "cap=300s" mean the same thing
// at the default Base of 1 s.
func (t term) amount(key string, def float64) (amount, error) {
	v, ok := t.args[key]
	if !ok {
		return amount{x: def}, nil
	}
	x, err := parseAmount(v)
	if err != nil {
		return amount{}, fmt.Errorf("timing: straggler model %q: %s=%q: %v", t.name, key, v, err)
	}
	return x, nil
}

func parseAmount(v string) (amount, error) {
	if x, err := strconv.ParseFloat(v, 64); err == nil {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return amount{}, fmt.Errorf("not a finite number")
		}
		return amount{x: x}, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return amount{}, fmt.Errorf("want a number (in units of Base) or a duration such as 1.5s")
	}
	return amount{x: d.Seconds(), seconds: true}, nil
}

// number parses a dimensionless argument (a probability, a factor, a CV).
func (t term) number(what, key string, def float64) (float64, error) {
	v, ok := t.args[key]
	if !ok {
		return def, nil
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("timing: %s model %q: %s=%q is not a finite number", what, t.name, key, v)
	}
	return x, nil
}

// duration parses an absolute duration argument (server delays are not
// scaled by Base), at most MaxServerDelay.
func (t term) duration(what, key string, def time.Duration) (time.Duration, error) {
	v, ok := t.args[key]
	if !ok {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("timing: %s model %q: %s=%q is not a duration such as 4s or 10ms", what, t.name, key, v)
	}
	if d < 0 {
		return 0, fmt.Errorf("timing: %s model %q: %s=%v must not be negative", what, t.name, key, d)
	}
	if d > MaxServerDelay {
		return 0, fmt.Errorf("timing: %s model %q: %s=%v must be at most %v (docs/paradigms.md, Limits)", what, t.name, key, d, MaxServerDelay)
	}
	return d, nil
}

// rangeAmount parses "lo-hi" (each an amount as in parseAmount), or a single
// value meaning lo == hi. The separator is the first '-' that is not an exponent
// sign, so "1e-3-2e-3" works. lo above hi is refused here when both are in
// the same unit, else where Base converts them.
func (t term) rangeAmount(key string, lo, hi float64) (amount, amount, error) {
	v, ok := t.args[key]
	if !ok {
		return amount{x: lo}, amount{x: hi}, nil
	}
	cut := -1
	for i := 1; i < len(v); i++ {
		if v[i] == '-' && v[i-1] != 'e' && v[i-1] != 'E' {
			cut = i
			break
		}
	}
	bad := func(err error) error {
		return fmt.Errorf("timing: straggler model %q: %s=%q: %v (want lo-hi, e.g. 1.3-1.8)", t.name, key, v, err)
	}
	if cut < 0 {
		x, err := parseAmount(v)
		if err != nil {
			return amount{}, amount{}, bad(err)
		}
		return x, x, nil
	}
	a, err := parseAmount(v[:cut])
	if err != nil {
		return amount{}, amount{}, bad(err)
	}
	b, err := parseAmount(v[cut+1:])
	if err != nil {
		return amount{}, amount{}, bad(err)
	}
	if a.seconds == b.seconds && a.x > b.x {
		return amount{}, amount{}, bad(fmt.Errorf("lo %g exceeds hi %g", a.x, b.x))
	}
	return a, b, nil
}

// integer parses a non-negative integer argument.
func (t term) integer(what, key string, def int) (int, error) {
	v, ok := t.args[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("timing: %s model %q: %s=%q is not a non-negative integer", what, t.name, key, v)
	}
	return n, nil
}

// fmtFloat prints a parameter compactly for String methods.
func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
