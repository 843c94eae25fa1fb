package job

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/optim"
	"github.com/pacer-ps/pacer/paradigm"
)

// The description survives its JSON round trip field for field, the
// paradigm included as the typed spec (nothing is parsed from a string).
func TestDescriptionRoundTrip(t *testing.T) {
	sp, err := paradigm.Parse("psp:c=3,b=0.5,t1=5ms,t2=7ms")
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Spec: sp, Workers: 4, Shards: 2, Dataset: "synthetic", TrainLimit: 500, Epochs: 0.3, LR: 0.01,
		Momentum: -1, WeightDecay: 1e-4, Seed: 9, HeartbeatTimeout: 750 * time.Millisecond, FullAsyncLR: true,
		Schedule: optim.Schedule{Kind: optim.StepDecay, Every: 2, Gamma: 0.5, Unit: optim.Epochs, Warmup: 10, WarmupDiv: 4}}
	d, err := Describe(c, 500)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseDescription(b)
	if err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if !reflect.DeepEqual(back, d) {
		t.Errorf("round trip changed the description:\n%+v\n%+v", back, d)
	}
	if back.Pushes() != d.Pushes() || d.Pushes() != 3 {
		t.Errorf("pushes %d and %d", back.Pushes(), d.Pushes())
	}
	file := filepath.Join(t.TempDir(), "job.json")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if fromFile, err := ReadDescription(file); err != nil || !reflect.DeepEqual(fromFile, d) {
		t.Errorf("from a file: %v", err)
	}
}

// A description of another version, or a malformed or invalid one, is
// refused with an error that names the problem.
func TestDescriptionRefused(t *testing.T) {
	d, err := Describe(Config{Workers: 2}, 100)
	if err != nil {
		t.Fatal(err)
	}
	good, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, c := range []struct{ in, want string }{
		{edit(func(m map[string]any) { m["version"] = 2 }), "job description version 2: this pacer reads version 1"},
		{edit(func(m map[string]any) { m["version"] = 0; delete(m, "job") }), "job description version 0"},
		{edit(func(m map[string]any) { delete(m, "version") }), "no version field"},
		{edit(func(m map[string]any) { m["color"] = "red" }), `unknown field "color"`},
		{edit(func(m map[string]any) { m["job"].(map[string]any)["LR"] = -0.5 }), "lr=-0.5: must be a positive finite number"},
		{edit(func(m map[string]any) { m["job"].(map[string]any)["Workers"] = -1 }), "workers=-1"},
		{edit(func(m map[string]any) { m["train_n"] = -3 }), "train_n=-3"},
		{`{"version": 1, "job": `, "job description:"},
		{"", "job description:"},
	} {
		_, err := ParseDescription([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.in, err, c.want)
		}
	}
	if _, err := ReadDescription(filepath.Join(t.TempDir(), "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("a missing file: %v", err)
	}
}

// StepSize is the schedule's rate times StepScale: the one formula of
// every driver.
func TestStepSize(t *testing.T) {
	c := Config{Spec: paradigm.Spec{Kind: paradigm.ASP}, Workers: 4, LR: 0.2,
		Schedule: optim.Schedule{Kind: optim.StepDecay, Every: 1, Gamma: 0.5, Unit: optim.Epochs}}
	if err := c.Fill(); err != nil {
		t.Fatal(err)
	}
	a := paradigm.Apply{Version: 1, LRScale: 1}
	if got := c.StepSize(a, 0); got != 0.2/4 {
		t.Errorf("epoch 0: %g, want %g", got, 0.2/4)
	}
	if got := c.StepSize(a, 2); got != 0.2*0.25/4 {
		t.Errorf("epoch 2: %g, want %g", got, 0.2*0.25/4)
	}
}
