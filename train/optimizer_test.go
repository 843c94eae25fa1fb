package train

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/pacer-ps/pacer/optim"
)

// --optimizer in virtual time: RMSProp (with momentum) and Adam learn
// Fashion-MNIST from chance under an asynchronous paradigm, each run is
// the same bytes twice with one seed, and each rule gives another curve
// than SGD (the shards really apply it).
func TestOptimizersInVirtualTime(t *testing.T) {
	ds := fashion(t, 3000, 500)
	run := func(rule string, momentum, lr float64) ([]byte, [][2]float64, float64) {
		cfg := quick("ssp:s=2", 3)
		r, err := optim.ParseRule(rule)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Optimizer, cfg.Momentum, cfg.LR = r, momentum, lr
		res, err := Virtual(cfg, ds, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		return b, res.Curve, res.FinalAccuracy
	}
	_, sgd, _ := run("sgd", 0.9, 0.05)
	for _, c := range []struct {
		rule         string
		momentum, lr float64
	}{{"rmsprop", 0.5, 1e-3}, {"adam", -1, 2e-3}} {
		b1, curve, final := run(c.rule, c.momentum, c.lr)
		b2, _, _ := run(c.rule, c.momentum, c.lr)
		t.Logf("%s: curve %v (one run, seed 5)", c.rule, curve)
		if !bytes.Equal(b1, b2) {
			t.Errorf("%s: two runs with one seed differ", c.rule)
		}
		if final < 0.5 || curve[0][1] > 0.2 {
			t.Errorf("%s did not learn: %v", c.rule, curve)
		}
		if slices.Equal(curve, sgd) {
			t.Errorf("%s gives SGD's curve", c.rule)
		}
	}
}
