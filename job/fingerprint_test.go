package job

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/optim"
	"github.com/pacer-ps/pacer/paradigm"
)

func describeT(t *testing.T, c Config, n int) Description {
	t.Helper()
	d, err := Describe(c, n)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestFingerprintCoversTheShapingFields(t *testing.T) {
	base := Config{Spec: paradigm.Spec{Kind: paradigm.BSP}, Workers: 4, Shards: 2, Dataset: "synthetic", LR: 0.1}
	a := describeT(t, base, 1000)
	for _, tc := range []struct {
		field  string
		change func(*Config)
		show   string
	}{
		{"paradigm", func(c *Config) { c.Spec = paradigm.Spec{Kind: paradigm.SSP, S: 3} }, "bsp ≠ ssp:s=3"},
		{"workers", func(c *Config) { c.Workers = 3 }, "4 ≠ 3"},
		{"lr", func(c *Config) { c.LR = 0.05 }, "0.1 ≠ 0.05"},
		{"momentum", func(c *Config) { c.Momentum = -1 }, "0.9 ≠ -1"},
		{"seed", func(c *Config) { c.Seed = 7 }, "1 ≠ 7"},
		{"epochs", func(c *Config) { c.Epochs = 2 }, "1 ≠ 2"},
		{"batch", func(c *Config) { c.Batch = 32 }, "64 ≠ 32"},
		{"model", func(c *Config) { c.Model = "cnn" }, "mlp ≠ cnn"},
		{"init", func(c *Config) { c.InitSHA256 = strings.Repeat("ab", 32) }, "none ≠ sha256:abababababab"},
		{"full-async-lr", func(c *Config) { c.FullAsyncLR = true }, "false ≠ true"},
		{"sampling", func(c *Config) { c.Sampling = SamplingGlobal }, "shard ≠ global"},
		{"normalize", func(c *Config) { c.Normalize = NormalizeMean }, "none ≠ mean"},
		{"clip-norm", func(c *Config) { c.ClipNorm = 5 }, "0 ≠ 5"},
		{"ema", func(c *Config) { c.EMA = 0.99 }, "0 ≠ 0.99"},
		{"ema-time", func(c *Config) { c.EMATime = 30 * time.Second }, "0s ≠ 30s"},
		{"optimizer", func(c *Config) { c.Optimizer = optim.Rule{Kind: optim.RMSProp, Alpha: 0.99, Eps: 1e-8} }, "sgd ≠ rmsprop:alpha=0.99,eps=1e-08"},
		{"optimizer", func(c *Config) { c.Optimizer = optim.Rule{Kind: optim.RMSProp, Alpha: 0.99, Eps: 1e-8, Centered: true} }, "sgd ≠ rmsprop:alpha=0.99,eps=1e-08,centered=true"},
		{"heartbeat-timeout", func(c *Config) { c.HeartbeatTimeout = time.Second }, "15s ≠ 1s"},
	} {
		c := base
		tc.change(&c)
		b := describeT(t, c, 1000)
		if a.Fingerprint() == b.Fingerprint() {
			t.Errorf("%s: same fingerprint", tc.field)
		}
		err := a.Mismatch("shard 0", &b, "shard 1")
		want := "shard 0's job differs from shard 1's: " + tc.field + " " + tc.show
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", tc.field, err, want)
		}
	}
	// The training set's size is the job's length.
	if b := describeT(t, base, 999); a.Mismatch("a", &b, "b") == nil {
		t.Error("train_n differs: no mismatch")
	}
}

func TestFingerprintIgnoresPerProcessFields(t *testing.T) {
	base := Config{Workers: 2, Dataset: "synthetic"}
	a := describeT(t, base, 100)
	c := base
	c.DataDir, c.EvalEvery, c.TestLimit, c.Target = "/elsewhere", 0.5, 10, 0.8
	b := describeT(t, c, 100)
	if a.Fingerprint() != b.Fingerprint() {
		t.Error("per-process and reporting fields change the fingerprint")
	}
	if err := a.Mismatch("a", &b, "b"); err != nil {
		t.Error(err)
	}
	// The fingerprint survives the JSON a description travels as.
	back, err := ParseDescription([]byte(mustJSON(t, a)))
	if err != nil || back.Fingerprint() != a.Fingerprint() {
		t.Errorf("after JSON: %v, %s vs %s", err, back.Fingerprint(), a.Fingerprint())
	}
}

func mustJSON(t *testing.T, d Description) string {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
