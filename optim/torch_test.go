package optim

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// torchReference is testdata/torch_reference.json, written by
// testdata/torch_reference.py from PyTorch's own optimizers
// (python/test_pacer.py's TorchReferenceTest reruns the script and holds
// the file to its output, so the two cannot drift apart).
type torchReference struct {
	Torch string      `json:"torch"`
	Start []float32   `json:"start"`
	Grads [][]float32 `json:"grads"`
	Cases []struct {
		Name        string      `json:"name"`
		Optimizer   string      `json:"optimizer"`
		Momentum    float64     `json:"momentum"`
		Nesterov    bool        `json:"nesterov"`
		WeightDecay float64     `json:"weight_decay"`
		Rates       []float64   `json:"rates"`
		After       [][]float32 `json:"after"`
		State       struct {
			Velocity []float32 `json:"velocity"`
			Square   []float32 `json:"square"`
			Mean     []float32 `json:"mean"`
			Step     int64     `json:"step"`
		} `json:"state"`
	} `json:"cases"`
}

// near is the float32 tolerance: 10⁻⁶ relative (8 ulps), since PyTorch's
// vector kernels fuse multiply-adds that Go rounds twice, and five steps
// add up such differences; values below 10⁻³ are held to 10⁻⁹ absolute.
func near(got, want float32) bool {
	return math.Abs(float64(got)-float64(want)) <= 1e-6*math.Max(1e-3, math.Max(math.Abs(float64(got)), math.Abs(float64(want))))
}

// TestTorchReference: SGD with momentum and Nesterov, RMSProp with and
// without momentum, centered and not, Adam and AdamW, each run for five
// steps with weight decay and a changing rate, match PyTorch's
// torch.optim.SGD, RMSprop, Adam and AdamW within float32 tolerance after
// every step, and so do the final state buffers and the step count. Both entry points are held to it: Step,
// and ApplyWeighted with the gradient given as two weighted halves (exact
// in float32, so the aggregation changes nothing).
func TestTorchReference(t *testing.T) {
	b, err := os.ReadFile("testdata/torch_reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref torchReference
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) < 10 {
		t.Fatalf("%d cases in the reference", len(ref.Cases))
	}
	n := len(ref.Start)
	worst := 0.0
	for _, c := range ref.Cases {
		rule, err := ParseRule(c.Optimizer)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		cfg := Config{LR: c.Rates[0], Momentum: c.Momentum, Nesterov: c.Nesterov, WeightDecay: c.WeightDecay, Rule: rule}
		for _, path := range []string{"Step", "ApplyWeighted"} {
			o, err := New(cfg, n)
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			w := append([]float32(nil), ref.Start...)
			for s, g := range ref.Grads {
				lr := float32(c.Rates[s])
				if path == "Step" {
					o.Step(w, g, lr)
				} else {
					half := make([]float32, n)
					for i := range g {
						half[i] = g[i] / 2
					}
					o.ApplyWeighted(w, [][]float32{half, half}, []float32{1, 1}, lr)
				}
				for i := range w {
					want := c.After[s][i]
					worst = math.Max(worst, math.Abs(float64(w[i]-want))/math.Max(1e-3, math.Abs(float64(want))))
					if !near(w[i], want) {
						t.Fatalf("%s/%s step %d: w[%d] = %v, PyTorch %s %v", c.Name, path, s+1, i, w[i], ref.Torch, want)
					}
				}
			}
			st := o.State()
			for _, b := range []struct {
				name      string
				got, want []float32
			}{{"velocity", st.Velocity, c.State.Velocity}, {"square", st.Square, c.State.Square}, {"mean", st.Mean, c.State.Mean}} {
				if len(b.got) != len(b.want) {
					t.Fatalf("%s/%s: %d %s values, PyTorch keeps %d", c.Name, path, len(b.got), b.name, len(b.want))
				}
				for i := range b.got {
					if !near(b.got[i], b.want[i]) {
						t.Fatalf("%s/%s: %s[%d] = %v, PyTorch %v", c.Name, path, b.name, i, b.got[i], b.want[i])
					}
				}
			}
			if st.Step != c.State.Step {
				t.Errorf("%s/%s: step count %d, PyTorch %d", c.Name, path, st.Step, c.State.Step)
			}
		}
	}
	t.Logf("largest relative difference from PyTorch %s: %.3g", ref.Torch, worst)
}
