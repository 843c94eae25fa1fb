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
	// RMSProp is PyTorch's torch.optim.RMSprop, uncentered, with
	// Config.Momentum as its momentum.
	RMSProp
	// Adam is PyTorch's torch.optim.Adam (bias-corrected, weight decay
	// as L2 added to the gradient, not AdamW's decoupled decay).
	Adam
)

var ruleNames = [...]string{SGD: "sgd", RMSProp: "rmsprop", Adam: "adam"}

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
	return fmt.Errorf("optim: no rule %q (want sgd, rmsprop or adam)", b)
}

// PyTorch's defaults for the rules' own parameters.
const (
	DefaultAlpha = 0.99  // RMSprop's alpha
	DefaultBeta1 = 0.9   // Adam's betas[0]
	DefaultBeta2 = 0.999 // Adam's betas[1]
	DefaultEps   = 1e-8  // both rules' eps
)

// Rule is the update rule with its own parameters; the zero value is SGD.
// The learning rate, momentum and weight decay are Config's, shared by
// every rule. The fields a rule does not use must be zero.
type Rule struct {
	Kind  RuleKind
	Alpha float64 `json:",omitempty"` // RMSProp: v ← α·v + (1−α)·g², in [0, 1)
	Beta1 float64 `json:",omitempty"` // Adam: m ← β1·m + (1−β1)·g, in [0, 1)
	Beta2 float64 `json:",omitempty"` // Adam: v ← β2·v + (1−β2)·g², in [0, 1)
	Eps   float64 `json:",omitempty"` // RMSProp, Adam: added to √v, > 0
}

// String writes r as ParseRule reads it, every parameter spelled out.
func (r Rule) String() string {
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	switch r.Kind {
	case RMSProp:
		return "rmsprop:alpha=" + num(r.Alpha) + ",eps=" + num(r.Eps)
	case Adam:
		return "adam:b1=" + num(r.Beta1) + ",b2=" + num(r.Beta2) + ",eps=" + num(r.Eps)
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
		if r.Alpha != 0 || r.Beta1 != 0 || r.Beta2 != 0 || r.Eps != 0 {
			return bad("Kind", r.Kind, "rmsprop or adam when alpha, betas or eps are set")
		}
	case RMSProp:
		switch {
		case !unit(r.Alpha):
			return bad("Alpha", r.Alpha, "in [0, 1)")
		case !epsOK:
			return bad("Eps", r.Eps, "> 0 and finite")
		case r.Beta1 != 0 || r.Beta2 != 0:
			return bad("Kind", r.Kind, "adam when betas are set")
		case c.Nesterov:
			return fmt.Errorf("optim: Config.Nesterov = true, must be false for rmsprop (PyTorch's RMSprop has no Nesterov form)")
		}
	case Adam:
		switch {
		case !unit(r.Beta1):
			return bad("Beta1", r.Beta1, "in [0, 1)")
		case !unit(r.Beta2):
			return bad("Beta2", r.Beta2, "in [0, 1)")
		case !epsOK:
			return bad("Eps", r.Eps, "> 0 and finite")
		case r.Alpha != 0:
			return bad("Kind", r.Kind, "rmsprop when alpha is set")
		case c.Momentum != 0 || c.Nesterov:
			return fmt.Errorf("optim: Config.Momentum = %v, must be 0 for adam (β1 averages the gradient in its place)", c.Momentum)
		}
	default:
		return bad("Kind", int(r.Kind), "SGD, RMSProp or Adam")
	}
	return nil
}

// ParseRule reads an update rule as the command line writes it: "sgd",
// "rmsprop" or "rmsprop:alpha=A,eps=E", "adam" or "adam:b1=B1,b2=B2,eps=E";
// the parameters left out take PyTorch's defaults (DefaultAlpha, …), ""
// is SGD. The errors quote the text at fault, not a flag: the caller
// names its source.
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
		allowed = []string{"alpha", "eps"}
	case "adam":
		r = Rule{Kind: Adam, Beta1: DefaultBeta1, Beta2: DefaultBeta2, Eps: DefaultEps}
		allowed = []string{"b1", "b2", "eps"}
	default:
		return Rule{}, fmt.Errorf("%q is not sgd, rmsprop[:alpha=A,eps=E] or adam[:b1=B1,b2=B2,eps=E]", s)
	}
	seen := map[string]bool{}
	for _, o := range strings.Split(opts, ",") {
		if !hasOpts {
			break
		}
		k, v, ok := strings.Cut(strings.TrimSpace(o), "=")
		f, err := strconv.ParseFloat(v, 64)
		switch {
		case !ok || err != nil:
			return Rule{}, fmt.Errorf("%q: %q is not NAME=NUMBER", s, o)
		case seen[k]:
			return Rule{}, fmt.Errorf("%q: %s given twice", s, k)
		}
		seen[k] = true
		switch k {
		case "alpha":
			r.Alpha = f
		case "b1":
			r.Beta1 = f
		case "b2":
			r.Beta2 = f
		case "eps":
			r.Eps = f
		}
		if !slices.Contains(allowed, k) {
			return Rule{}, fmt.Errorf("%q: %s takes %s, not %s", s, name, strings.Join(allowed, ", "), k)
		}
	}
	if err := (Config{LR: 1, Rule: r}).validateRule(); err != nil {
		return Rule{}, fmt.Errorf("%q: %v", s, err)
	}
	return r, nil
}
