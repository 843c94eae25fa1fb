package optim

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// RuleKind is the family of the update rule.
type RuleKind int

const (
	// SGD is stochastic gradient descent with Config.Momentum (heavy-ball
	// or Nesterov): the zero value, and every job's rule before Rule existed.
	SGD RuleKind = iota
	// RMSProp is PyTorch's torch.optim.RMSprop, with Config.Momentum as
	// its momentum; Rule.Centered is its centered=True.
	RMSProp
	// Adam is PyTorch's torch.optim.Adam (bias-corrected, weight decay
	// as L2 added to the gradient, not AdamW's decoupled decay).
	Adam
	// AdamW is PyTorch's torch.optim.AdamW: Adam with Config.WeightDecay
	// as decoupled decay, w ← (1 − lr·wd)·w before the step, instead of
	// L2 on the gradient.
	AdamW
)

var ruleNames = [...]string{SGD: "sgd", RMSProp: "rmsprop", Adam: "adam", AdamW: "adamw"}

// TakesMomentum reports whether Config.Momentum means anything to the
// rule: Adam's and AdamW's β1 averages the gradient in its place.
func (k RuleKind) TakesMomentum() bool { return k == SGD || k == RMSProp }

// counts reports whether the rule keeps a step count (its bias
// corrections need one).
func (k RuleKind) counts() bool { return k == Adam || k == AdamW }

func (k RuleKind) String() string {
	if k >= 0 && int(k) < len(ruleNames) {
		return ruleNames[k]
	}
	return "RuleKind(" + strconv.Itoa(int(k)) + ")"
}

// MarshalText writes the kind by name, so a job description reads
// "adam", not a number whose meaning depends on this file's order.
func (k RuleKind) MarshalText() ([]byte, error) {
	if k < 0 || int(k) >= len(ruleNames) {
		return nil, fmt.Errorf("optim: no rule %d", int(k))
	}
	return []byte(ruleNames[k]), nil
}

// UnmarshalText reads a name MarshalText wrote.
func (k *RuleKind) UnmarshalText(b []byte) error {
	for i, n := range ruleNames {
		if string(b) == n {
			*k = RuleKind(i)
			return nil
		}
	}
	return fmt.Errorf("optim: no rule %q (want sgd, rmsprop, adam or adamw)", b)
}

// PyTorch's defaults for the rules' own parameters.
const (
	DefaultAlpha = 0.99  // RMSprop's alpha
	DefaultBeta1 = 0.9   // Adam's and AdamW's betas[0]
	DefaultBeta2 = 0.999 // Adam's and AdamW's betas[1]
	DefaultEps   = 1e-8  // every adaptive rule's eps
)

// Rule is the update rule with its own parameters; the zero value is SGD.
// The learning rate, momentum and weight decay are Config's, shared by
// every rule. The fields a rule does not use must be zero.
type Rule struct {
	Kind  RuleKind
	Alpha float64 `json:",omitempty"` // RMSProp: v ← α·v + (1−α)·g², in [0, 1)
	Beta1 float64 `json:",omitempty"` // Adam, AdamW: m ← β1·m + (1−β1)·g, in [0, 1)
	Beta2 float64 `json:",omitempty"` // Adam, AdamW: v ← β2·v + (1−β2)·g², in [0, 1)
	Eps   float64 `json:",omitempty"` // RMSProp, Adam, AdamW: added to the root, > 0
	// Centered is RMSProp's centered form: it also averages the gradient,
	// ḡ ← α·ḡ + (1−α)·g, and divides by √(v − ḡ²), an estimate of the
	// gradient's variance rather than its second moment. Omitted when
	// false, so descriptions and fingerprints of uncentered jobs read as
	// before it existed.
	Centered bool `json:",omitempty"`
}

// String writes r as ParseRule reads it, every parameter spelled out.
func (r Rule) String() string {
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	switch r.Kind {
	case RMSProp:
		s := "rmsprop:alpha=" + num(r.Alpha) + ",eps=" + num(r.Eps)
		if r.Centered {
			s += ",centered=true"
		}
		return s
	case Adam, AdamW:
		return r.Kind.String() + ":b1=" + num(r.Beta1) + ",b2=" + num(r.Beta2) + ",eps=" + num(r.Eps)
	}
	return r.Kind.String()
}

// validate checks the rule's parameters and how it combines with the
// shared ones. PyTorch accepts eps = 0; pacer does not, since a parameter
// whose gradient and state are 0 would then step by 0/0.
func (c Config) validateRule() error {
	r := c.Rule
	bad := func(field string, v any, want string) error {
		return fmt.Errorf("optim: Config.Rule.%s = %v, must be %s", field, v, want)
	}
	unit := func(x float64) bool { return x >= 0 && x < 1 }
	epsOK := r.Eps > 0 && !math.IsInf(r.Eps, 0)
	switch r.Kind {
	case SGD:
		if r.Alpha != 0 || r.Beta1 != 0 || r.Beta2 != 0 || r.Eps != 0 || r.Centered {
			return bad("Kind", r.Kind, "rmsprop, adam or adamw when alpha, betas, eps or centered are set")
		}
	case RMSProp:
		switch {
		case !unit(r.Alpha):
			return bad("Alpha", r.Alpha, "in [0, 1)")
		case !epsOK:
			return bad("Eps", r.Eps, "> 0 and finite")
		case r.Beta1 != 0 || r.Beta2 != 0:
			return bad("Kind", r.Kind, "adam or adamw when betas are set")
		case c.Nesterov:
			return fmt.Errorf("optim: Config.Nesterov = true, must be false for rmsprop (PyTorch's RMSprop has no Nesterov form)")
		}
	case Adam, AdamW:
		switch {
		case !unit(r.Beta1):
			return bad("Beta1", r.Beta1, "in [0, 1)")
		case !unit(r.Beta2):
			return bad("Beta2", r.Beta2, "in [0, 1)")
		case !epsOK:
			return bad("Eps", r.Eps, "> 0 and finite")
		case r.Alpha != 0 || r.Centered:
			return bad("Kind", r.Kind, "rmsprop when alpha or centered is set")
		case c.Momentum != 0 || c.Nesterov:
			return fmt.Errorf("optim: Config.Momentum = %v, must be 0 for %s (β1 averages the gradient in its place)", c.Momentum, r.Kind)
		}
	default:
		return bad("Kind", int(r.Kind), "SGD, RMSProp, Adam or AdamW")
	}
	return nil
}

// ParseRule reads an update rule as the command line writes it: "sgd",
// "rmsprop" or "rmsprop:alpha=A,eps=E,centered=true", "adam" or
// "adam:b1=B1,b2=B2,eps=E", "adamw" with adam's parameters; the
// parameters left out take PyTorch's defaults (DefaultAlpha, …,
// centered=false), "" is SGD. The errors quote the text at fault, not a
// flag: the caller names its source.
func ParseRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	name, opts, hasOpts := strings.Cut(s, ":")
	var r Rule
	var allowed []string
	switch name {
	case "", "sgd":
		if hasOpts {
			return Rule{}, fmt.Errorf("%q: sgd takes no parameters (its momentum is --momentum)", s)
		}
		return Rule{}, nil
	case "rmsprop":
		r = Rule{Kind: RMSProp, Alpha: DefaultAlpha, Eps: DefaultEps}
		allowed = []string{"alpha", "eps", "centered"}
	case "adam", "adamw":
		r = Rule{Kind: Adam, Beta1: DefaultBeta1, Beta2: DefaultBeta2, Eps: DefaultEps}
		if name == "adamw" {
			r.Kind = AdamW
		}
		allowed = []string{"b1", "b2", "eps"}
	default:
		return Rule{}, fmt.Errorf("%q is not sgd, rmsprop[:alpha=A,eps=E,centered=true], adam[:b1=B1,b2=B2,eps=E] or adamw[:b1=B1,b2=B2,eps=E]", s)
	}
	seen := map[string]bool{}
	for _, o := range strings.Split(opts, ",") {
		if !hasOpts {
			break
		}
		k, v, ok := strings.Cut(strings.TrimSpace(o), "=")
		if ok && k == "centered" {
			// The one switch among numbers: spelled as Go and JSON spell
			// booleans, so "centered=1" is refused rather than guessed.
			if v != "true" && v != "false" {
				return Rule{}, fmt.Errorf("%q: centered=%s, want true or false", s, v)
			}
		} else if _, err := strconv.ParseFloat(v, 64); !ok || err != nil {
			return Rule{}, fmt.Errorf("%q: %q is not NAME=NUMBER", s, o)
		}
		if seen[k] {
			return Rule{}, fmt.Errorf("%q: %s given twice", s, k)
		}
		seen[k] = true
		if !slices.Contains(allowed, k) {
			return Rule{}, fmt.Errorf("%q: %s takes %s, not %s", s, name, strings.Join(allowed, ", "), k)
		}
		f, _ := strconv.ParseFloat(v, 64)
		switch k {
		case "alpha":
			r.Alpha = f
		case "b1":
			r.Beta1 = f
		case "b2":
			r.Beta2 = f
		case "eps":
			r.Eps = f
		case "centered":
			r.Centered = v == "true"
		}
	}
	if err := (Config{LR: 1, Rule: r}).validateRule(); err != nil {
		return Rule{}, fmt.Errorf("%q: %v", s, err)
	}
	return r, nil
}
