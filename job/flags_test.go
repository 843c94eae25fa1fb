package job

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/optim"
	"github.com/spf13/pflag"
)

func parseLearn(args ...string) (LearnFlags, error) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f LearnFlags
	f.Bind(fs)
	return f, fs.Parse(args)
}

// A value Config would replace by its default (zero) or read differently
// (negative momentum: none) is refused when parsed, naming the flag.
func TestLearnFlagsRefuseBadValues(t *testing.T) {
	for _, args := range [][]string{
		{"--epochs", "0"}, {"--epochs", "-1"}, {"--epochs", "NaN"}, {"--epochs", "+Inf"},
		{"--batch", "0"}, {"--batch", "-3"},
		{"--lr", "0"}, {"--lr", "-0.1"},
		{"--momentum", "-0.5"}, {"--momentum", "1"}, {"--momentum", "1.5"}, {"--momentum", "NaN"},
		{"--weight-decay", "-1e-4"},
		{"--train-limit", "-1"}, {"--test-limit", "-1"},
		{"--optimizer", "adagrad"}, {"--optimizer", "adam:b1=1"}, {"--optimizer", "rmsprop:alpha=-1"},
		{"--optimizer", "adam:eps=0"}, {"--optimizer", "sgd:lr=1"}, {"--optimizer", "rmsprop:b2=0.9"},
		{"--optimizer", "rmsprop:centered=yes"}, {"--optimizer", "adam:centered=true"},
		{"--optimizer", "adamw:alpha=0.9"}, {"--optimizer", "adamw:b1=-0.1"},
		{"--normalize", "std"}, {"--normalize", "MEAN"},
	} {
		_, err := parseLearn(args...)
		if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(args[0], "--")) {
			t.Errorf("%v: error %v, want one naming the flag", args, err)
		}
	}
	for _, args := range [][]string{
		{"--epochs", "0.2"}, {"--batch", "1"}, {"--lr", "1e-3"}, {"--momentum", "0"}, {"--momentum", "0.99"},
		{"--weight-decay", "0"}, {"--train-limit", "0"}, {"--test-limit", "500"},
		{"--normalize", "none"}, {"--normalize", "mean"},
	} {
		if _, err := parseLearn(args...); err != nil {
			t.Errorf("%v refused: %v", args, err)
		}
	}
}

// --momentum 0 is plain SGD all the way to the optimizer, also after the
// round trip through the description that tcp mode hands each `pacer
// server` (JSON); the
// default stays 0.9 and any other value is kept.
func TestMomentumFlagReachesTheOptimizer(t *testing.T) {
	for _, c := range []struct {
		args []string
		want float64
	}{
		{nil, 0.9},
		{[]string{"--momentum", "0"}, 0},
		{[]string{"--momentum", "0.5"}, 0.5},
	} {
		f, err := parseLearn(c.args...)
		if err != nil {
			t.Fatal(err)
		}
		var cfg Config
		f.ApplyTo(&cfg)
		if err := cfg.Fill(); err != nil {
			t.Fatal(err)
		}
		if got := cfg.Optim().Momentum; got != c.want {
			t.Errorf("%v: optimizer momentum %g, want %g", c.args, got, c.want)
		}
		d, err := Describe(cfg, 100)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseDescription(b)
		if err != nil {
			t.Fatalf("%v: the description does not parse back: %v", c.args, err)
		}
		if got := again.Job.Optim().Momentum; got != c.want {
			t.Errorf("%v: after the description, optimizer momentum %g, want %g", c.args, got, c.want)
		}
	}
}

func TestLearnFlagsDefaults(t *testing.T) {
	f, err := parseLearn()
	if err != nil {
		t.Fatal(err)
	}
	if f.Epochs != 1 || f.Batch != 64 || f.LR != 0.05 || f.Momentum != 0.9 || f.WeightDecay != 0 || f.Model != "mlp" {
		t.Errorf("defaults %+v", f)
	}
}

// --optimizer reaches the optimizer, also through the description's JSON,
// every parameter of the rule (centered included): rmsprop keeps
// --momentum (default 0.9), adam and adamw take none by default and
// refuse one given; sgd leaves no trace in the description, so one
// written before the flag existed reads as sgd.
func TestOptimizerFlag(t *testing.T) {
	for _, c := range []struct {
		args     []string
		kind     optim.RuleKind
		momentum float64
		fillErr  string
	}{
		{nil, optim.SGD, 0.9, ""},
		{[]string{"--optimizer", "sgd"}, optim.SGD, 0.9, ""},
		{[]string{"--optimizer", "rmsprop:alpha=0.9"}, optim.RMSProp, 0.9, ""},
		{[]string{"--optimizer", "rmsprop", "--momentum", "0"}, optim.RMSProp, 0, ""},
		{[]string{"--optimizer", "adam"}, optim.Adam, 0, ""},
		{[]string{"--optimizer", "adam", "--momentum", "0"}, optim.Adam, 0, ""},
		{[]string{"--momentum", "0.9", "--optimizer", "adam"}, 0, 0, "adam takes no momentum"},
		{[]string{"--optimizer", "rmsprop:centered=true,alpha=0.9"}, optim.RMSProp, 0.9, ""},
		{[]string{"--optimizer", "adamw:b2=0.99", "--weight-decay", "0.01"}, optim.AdamW, 0, ""},
		{[]string{"--momentum", "0.5", "--optimizer", "adamw"}, 0, 0, "adamw takes no momentum"},
	} {
		f, err := parseLearn(c.args...)
		if err != nil {
			t.Fatal(err)
		}
		var cfg Config
		f.ApplyTo(&cfg)
		d, err := Describe(cfg, 100)
		if c.fillErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.fillErr) {
				t.Errorf("%v: error %v, want %q", c.args, err, c.fillErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "Optimizer") != (c.kind != optim.SGD) {
			t.Errorf("%v: description %s", c.args, b)
		}
		again, err := ParseDescription(b)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		for _, o := range []optim.Config{cfg.Optim(), again.Job.Optim()} {
			if o.Rule.Kind != c.kind || o.Rule != f.Optimizer || o.Momentum != c.momentum || o.WeightDecay != f.WeightDecay {
				t.Errorf("%v: optimizer %s with momentum %g, decay %g; want %s with %g", c.args, o.Rule, o.Momentum, o.WeightDecay, f.Optimizer, c.momentum)
			}
		}
		if again.Fingerprint() != d.Fingerprint() {
			t.Errorf("%v: the fingerprint changed through JSON", c.args)
		}
	}
}
