package optim

import (
	"strings"
	"testing"
)

func TestParseSchedule(t *testing.T) {
	for in, want := range map[string]Schedule{
		"":                        {},
		" + ":                     {},
		"step:every=8,gamma=0.1":  {Kind: StepDecay, Unit: Epochs, Every: 8, Gamma: 0.1},
		"warmup:steps=500,div=10": {Warmup: 500, WarmupDiv: 10},
		"step:every=2,gamma=0.5+warmup:steps=10,div=4":   {Kind: StepDecay, Unit: Epochs, Every: 2, Gamma: 0.5, Warmup: 10, WarmupDiv: 4},
		" warmup:div=2,steps=3 + step:gamma=0.9,every=1": {Kind: StepDecay, Unit: Epochs, Every: 1, Gamma: 0.9, Warmup: 3, WarmupDiv: 2},
	} {
		got, err := ParseSchedule(in)
		if err != nil || got != want {
			t.Errorf("ParseSchedule(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if err == nil && (Config{LR: 0.1, Schedule: got}).Validate() != nil && in != "" {
			t.Errorf("ParseSchedule(%q) = %+v does not validate", in, got)
		}
	}
	for _, in := range []string{"cosine", "step", "step:every=0,gamma=0.1", "step:every=2", "step:every=2,gamma=0",
		"step:every=2,gamma=x", "warmup:steps=0,div=2", "warmup:steps=5,div=0.5", "warmup:steps=5,div=2,extra=1", "step:every=2,gamma=0.5+bogus"} {
		if got, err := ParseSchedule(in); err == nil || !strings.Contains(err.Error(), "is not step:every") {
			t.Errorf("ParseSchedule(%q) = %+v, %v; want an error", in, got, err)
		}
	}
}
