package optim

import (
	"math"
	"strings"
	"testing"
)

func TestValidateNamesTheField(t *testing.T) {
	ok := Config{LR: 0.1}
	cases := map[string]Config{
		"LR":                 {LR: 0},
		"Momentum":           {LR: 0.1, Momentum: 1},
		"WeightDecay":        {LR: 0.1, WeightDecay: -1},
		"Nesterov":           {LR: 0.1, Nesterov: true},
		"Schedule.Kind":      {LR: 0.1, Schedule: Schedule{Kind: 7}},
		"Schedule.Every":     {LR: 0.1, Schedule: Schedule{Kind: StepDecay, Gamma: 0.1}},
		"Schedule.Gamma":     {LR: 0.1, Schedule: Schedule{Kind: StepDecay, Every: 3, Gamma: 1.5}},
		"Schedule.Unit":      {LR: 0.1, Schedule: Schedule{Unit: 5}},
		"Schedule.Warmup":    {LR: 0.1, Schedule: Schedule{Warmup: -1}},
		"Schedule.WarmupDiv": {LR: 0.1, Schedule: Schedule{Warmup: 10, WarmupDiv: 0.5}},
	}
	cases["LR "] = Config{LR: math.NaN()}
	cases["Momentum "] = Config{LR: 0.1, Momentum: -0.1}
	cases["LR  "] = Config{LR: math.Inf(1)}
	for field, cfg := range cases {
		_, err := New(cfg, 3)
		if err == nil || !strings.Contains(err.Error(), "Config."+strings.TrimSpace(field)+" = ") {
			t.Errorf("%s: error %v does not name the field", field, err)
		}
	}
	if _, err := New(ok, -1); err == nil {
		t.Error("negative length accepted")
	}
	if err := ok.Validate(); err != nil {
		t.Error(err)
	}
}

func TestScheduleBoundaries(t *testing.T) {
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-12*math.Abs(want) }
	constant := Config{LR: 0.4}
	step := Config{LR: 0.4, Schedule: Schedule{Kind: StepDecay, Every: 10, Gamma: 0.5}}
	epochs := Config{LR: 0.4, Schedule: Schedule{Kind: StepDecay, Every: 2, Gamma: 0.1, Unit: Epochs}}
	warm := Config{LR: 0.4, Schedule: Schedule{Warmup: 100, WarmupDiv: 4}}
	warmStep := Config{LR: 0.4, Schedule: Schedule{Kind: StepDecay, Every: 50, Gamma: 0.5, Warmup: 100, WarmupDiv: 4}}
	cases := []struct {
		name  string
		cfg   Config
		step  int64
		epoch float64
		want  float64
	}{
		{"constant", constant, 0, 0, 0.4},
		{"constant late", constant, 1e9, 99, 0.4},
		{"negative step", constant, -5, -1, 0.4},
		{"step before first drop", step, 9, 0, 0.4},
		{"step at first drop", step, 10, 0, 0.2},
		{"step before second", step, 19, 0, 0.2},
		{"step at second", step, 20, 0, 0.1},
		{"epochs ignore steps", epochs, 1000, 1, 0.4},
		{"epochs at drop", epochs, 0, 2, 0.04},
		{"epochs at second drop", epochs, 0, 5, 0.004},
		{"epochs count whole ones", epochs, 0, 3.99, 0.04},
		{"warm-up start is lr/k", warm, 0, 0, 0.1},
		{"warm-up middle", warm, 50, 0, 0.25},
		{"warm-up last step", warm, 99, 0, 0.1 + 0.3*0.99},
		{"warm-up done", warm, 100, 0, 0.4},
		{"warm-up over a decayed rate", warmStep, 50, 0, 0.2 * (0.25 + 0.75*0.5)},
		{"after warm-up the decay holds", warmStep, 100, 0, 0.1},
	}
	for _, c := range cases {
		if err := c.cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		if got := c.cfg.Rate(c.step, c.epoch); !near(got, c.want) {
			t.Errorf("%s: Rate(%d, %g) = %v, want %v", c.name, c.step, c.epoch, got, c.want)
		}
	}
}

func TestVelocityRoundTripAndSub(t *testing.T) {
	cfg := Config{LR: 1, Momentum: 0.5}
	o, _ := New(cfg, 4)
	w := []float32{0, 0, 0, 0}
	o.Step(w, []float32{1, 2, 3, 4}, 1)
	saved := append([]float32(nil), o.Velocity()...)
	r, _ := New(cfg, 4)
	if err := r.SetState(State{Velocity: saved}); err != nil {
		t.Fatal(err)
	}
	w1, w2 := append([]float32(nil), w...), append([]float32(nil), w...)
	o.Step(w1, []float32{1, 1, 1, 1}, 1)
	r.Step(w2, []float32{1, 1, 1, 1}, 1)
	for i := range w1 {
		if w1[i] != w2[i] {
			t.Fatalf("restored optimizer diverges at %d: %v vs %v", i, w1[i], w2[i])
		}
	}
	if err := r.SetState(State{Velocity: make([]float32, 3)}); err == nil {
		t.Error("short velocity accepted")
	}
	plain, _ := New(Config{LR: 1}, 4)
	if plain.Velocity() != nil || plain.SetState(State{}) != nil || plain.SetState(State{Velocity: saved}) == nil {
		t.Error("plain SGD velocity handling")
	}
	// A Sub optimizer updates its part of the shared velocity.
	sub, err := o.Sub(1, 3)
	if err != nil {
		t.Fatal(err)
	}
	before := append([]float32(nil), o.Velocity()...)
	sub.Step(w1[1:3], []float32{2, 2}, 1)
	v := o.Velocity()
	if v[0] != before[0] || v[3] != before[3] || v[1] != 0.5*before[1]+2 || v[2] != 0.5*before[2]+2 {
		t.Fatalf("Sub velocity: before %v after %v", before, v)
	}
	for _, r := range [][2]int{{-1, 2}, {3, 2}, {0, 5}} {
		if _, err := o.Sub(r[0], r[1]); err == nil {
			t.Errorf("Sub(%d, %d) accepted", r[0], r[1])
		}
	}
}
