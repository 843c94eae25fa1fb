package job

import (
	"fmt"
	"testing"

	"github.com/pacer-ps/pacer/paradigm"
)

func TestFillDefaultsAndIdempotence(t *testing.T) {
	for _, mom := range []float64{0, -1, 0.5} {
		c := Config{Momentum: mom}
		if err := c.Fill(); err != nil {
			t.Fatal(err)
		}
		first := c
		if err := c.Fill(); err != nil || fmt.Sprint(c) != fmt.Sprint(first) {
			t.Fatalf("momentum %g: second Fill changed %+v into %+v", mom, first, c)
		}
		want := map[float64]float64{0: 0.9, -1: 0, 0.5: 0.5}[mom]
		if got := c.Optim().Momentum; got != want {
			t.Errorf("momentum %g: optimizer gets %g, want %g", mom, got, want)
		}
	}
	c := Config{}
	c.Fill()
	if c.Workers != 1 || c.Shards != 1 || c.Batch != 64 || c.Model != "mlp" || c.Spec.Kind != paradigm.BSP || c.LR != 0.05 {
		t.Errorf("defaults %+v", c)
	}
}

func TestFillRejectsBadJobs(t *testing.T) {
	for _, c := range []Config{
		{Workers: -1}, {Shards: -2}, {Batch: -1}, {Epochs: -1}, {LR: -0.1}, {Momentum: 1}, {WeightDecay: -1},
		{EvalEvery: -1}, {Target: 2}, {TrainLimit: -5},
		{Spec: paradigm.Spec{Kind: paradigm.PSP, C: 9}, Workers: 4},
	} {
		if err := c.Fill(); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

func TestStepScale(t *testing.T) {
	c := Config{Spec: paradigm.Spec{Kind: paradigm.ASP}, Workers: 4}
	a := paradigm.Apply{LRScale: 1}
	if s := c.StepScale(a); s != 0.25 {
		t.Errorf("asp with 4 workers: %g, want 1/4", s)
	}
	c.FullAsyncLR = true
	if s := c.StepScale(a); s != 1 {
		t.Errorf("asp, full async lr: %g", s)
	}
	c = Config{Spec: paradigm.Spec{Kind: paradigm.PSP}, Workers: 4}
	if s := c.StepScale(paradigm.Apply{LRScale: 0.75}); s != 0.75 {
		t.Errorf("psp keeps its own d/K: %g", s)
	}
}

func TestRanges(t *testing.T) {
	r := Ranges(10, 3)
	if r[0] != [2]int{0, 3} || r[1] != [2]int{3, 6} || r[2] != [2]int{6, 10} {
		t.Errorf("%v", r)
	}
}
