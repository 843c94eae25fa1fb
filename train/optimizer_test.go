package train

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/pacer-ps/pacer/optim"
)

// --optimizer in virtual time: RMSProp (with momentum, centered and not),
// Adam and AdamW learn Fashion-MNIST from chance under an asynchronous
// paradigm, each run is the same bytes twice with one seed, and each rule
// gives another curve than SGD (the shards really apply it); AdamW's
// decoupled decay gives another result than Adam's L2 at the same decay.
func TestOptimizersInVirtualTime(t *testing.T) {
	ds := fashion(t, 3000, 500)
	run := func(rule string, momentum, lr, wd float64) ([]byte, [][2]float64, float64) {
		cfg := quick("ssp:s=2", 3)
		r, err := optim.ParseRule(rule)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Optimizer, cfg.Momentum, cfg.LR, cfg.WeightDecay = r, momentum, lr, wd
		res, err := Virtual(cfg, ds, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		return b, res.Curve, res.FinalAccuracy
	}
	_, sgd, _ := run("sgd", 0.9, 0.05, 0)
	results := map[string][]byte{}
	for _, c := range []struct {
		rule             string
		momentum, lr, wd float64
	}{{"rmsprop", 0.5, 1e-3, 0}, {"rmsprop:centered=true", 0.5, 1e-3, 0}, {"adam", -1, 2e-3, 0.01}, {"adamw", -1, 2e-3, 0.01}} {
		b1, curve, final := run(c.rule, c.momentum, c.lr, c.wd)
		b2, _, _ := run(c.rule, c.momentum, c.lr, c.wd)
		results[c.rule] = b1
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
	for _, pair := range [][2]string{{"rmsprop", "rmsprop:centered=true"}, {"adam", "adamw"}} {
		if bytes.Equal(results[pair[0]], results[pair[1]]) {
			t.Errorf("%s and %s give the same run", pair[0], pair[1])
		}
	}
}
