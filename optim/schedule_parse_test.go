package optim

import (
	"fmt"
	"math"
	"reflect"
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
		"step:at=200/250,gamma=0.1":                      {Kind: MultiStep, Unit: Epochs, At: []float64{200, 250}, Gamma: 0.1},
		"step:gamma=0.5,at=3":                            {Kind: MultiStep, Unit: Epochs, At: []float64{3}, Gamma: 0.5},
		"step:at=1.33/1.67,gamma=0.1":                    {Kind: MultiStep, Unit: Epochs, At: []float64{1.33, 1.67}, Gamma: 0.1},
		"exp:gamma=0.95+warmup:steps=10,div=4":           {Kind: Exponential, Unit: Epochs, Gamma: 0.95, Warmup: 10, WarmupDiv: 4},
	} {
		got, err := ParseSchedule(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseSchedule(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if err == nil && (Config{LR: 0.1, Schedule: got}).Validate() != nil && in != "" {
			t.Errorf("ParseSchedule(%q) = %+v does not validate", in, got)
		}
	}
	for _, in := range []string{"cosine", "step", "step:every=0,gamma=0.1", "step:every=2", "step:every=2,gamma=0",
		"step:every=2,gamma=x", "warmup:steps=0,div=2", "warmup:steps=5,div=0.5", "warmup:steps=5,div=2,extra=1", "step:every=2,gamma=0.5+bogus",
		"step:at=2/x,gamma=0.1", "step:at=,gamma=0.1", "step:at=3,gamma=1.5", "exp:gamma=0", "exp:gamma=0.9,every=2",
		"step:every=2,gamma=0.5+exp:gamma=0.9", "step:at=3,every=2,gamma=0.5"} {
		if got, err := ParseSchedule(in); err == nil || !strings.Contains(err.Error(), "is not step:every") {
			t.Errorf("ParseSchedule(%q) = %+v, %v; want an error", in, got, err)
		}
	}
}

// Milestones and exponential decay against PyTorch's MultiStepLR and
// ExponentialLR stepped once an epoch, their rates written out by hand:
// MultiStepLR(milestones=[2, 4], gamma=0.1) from 0.5 gives 0.5, 0.5, 0.05,
// 0.05, 0.005, 0.005 in epochs 0–5; ExponentialLR(gamma=0.9) from 0.5
// gives 0.5, 0.45, 0.405, 0.3645.
func TestMilestonesAndExponential(t *testing.T) {
	bad := []string{}
	for _, c := range []struct {
		spec string
		want []float64
	}{
		{"step:at=2/4,gamma=0.1", []float64{0.5, 0.5, 0.05, 0.05, 0.005, 0.005}},
		{"exp:gamma=0.9", []float64{0.5, 0.45, 0.405, 0.3645}},
		{"step:at=1,gamma=0.5+warmup:steps=4,div=4", []float64{0.5, 0.25}}, // warm-up is by step: done by epoch 1's step 100
	} {
		sc, err := ParseSchedule(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{LR: 0.5, Schedule: sc}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		for e, w := range c.want {
			if got := cfg.Rate(100, float64(e)); math.Abs(got-w) > 1e-12 {
				bad = append(bad, fmt.Sprintf("%s epoch %d: %g, want %g", c.spec, e, got, w))
			}
		}
	}
	for _, b := range bad {
		t.Error(b)
	}
	// A milestone inside an epoch (a recipe's drops kept at their share of a
	// scaled-down run) drops the rate from that point of the epoch on.
	frac := Config{LR: 0.5, Schedule: Schedule{Kind: MultiStep, Unit: Epochs, At: []float64{1.5, 1.75}, Gamma: 0.1}}
	for _, c := range []struct{ epoch, want float64 }{{0, 0.5}, {1.4999, 0.5}, {1.5, 0.05}, {1.7499, 0.05}, {1.75, 0.005}, {3, 0.005}} {
		if got := frac.Rate(7, c.epoch); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("at=1.5/1.75: Rate at epoch %g = %g, want %g", c.epoch, got, c.want)
		}
	}
	for _, in := range []string{"step:at=0.5/0.5,gamma=0.1", "step:at=-1,gamma=0.1", "step:at=0,gamma=0.1", "step:at=inf,gamma=0.1", "step:at=NaN,gamma=0.1", "step:at=2/1.5,gamma=0.1"} {
		if got, err := ParseSchedule(in); err == nil || !strings.Contains(err.Error(), "at=") {
			t.Errorf("ParseSchedule(%q) = %+v, %v; want an error naming at=", in, got, err)
		}
	}
	for _, sc := range []Schedule{
		{Kind: MultiStep, Gamma: 0.1},
		{Kind: MultiStep, Gamma: 0.1, At: []float64{3, 3}},
		{Kind: MultiStep, Gamma: 0.1, At: []float64{0}},
		{Kind: MultiStep, Gamma: 0.1, At: []float64{math.NaN()}},
		{Kind: MultiStep, Gamma: 0.1, At: []float64{1, math.Inf(1)}},
		{Kind: Exponential, Gamma: 1.5},
		{Kind: StepDecay, Every: 2, Gamma: 0.5, At: []float64{3}},
	} {
		if err := (Config{LR: 0.1, Schedule: sc}).Validate(); err == nil {
			t.Errorf("%+v validated", sc)
		}
	}
}
