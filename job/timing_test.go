package job

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/timing"
)

// Issue 30: the straggler and server-delay models are parsed values that
// Fill checks against the rest of the job, before anything starts, naming
// the field; a description carries them as their text and reads them back
// as the same values, and one with a bad spec is refused where it is read
// (a shard's or a worker's --job), naming the model.
func TestTimingModelsCheckedOnce(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want []string
	}{
		{Config{Workers: 2, Timing: timing.WorkerSpec{Straggler: timing.MustStraggler("slow:worker=2")}}, []string{"straggler=\"slow:worker=2\"", "2 workers"}},
		{Config{Workers: 2, Timing: timing.WorkerSpec{Straggler: timing.MustStraggler("heavytail:cap=5h")}}, []string{"straggler=", "cap=18000", "at most 10000"}},
		{Config{Shards: 2, ServerDelay: timing.MustServerDelay("spike:shard=2")}, []string{"server-delay=\"spike:shard=2\"", "shards 0 to 1"}},
	} {
		err := c.cfg.Fill()
		if err == nil {
			t.Errorf("%+v: filled", c.cfg)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not name %q", err, w)
			}
		}
	}
	ok := Config{Workers: 3, Shards: 2, Dataset: "synthetic", Timing: timing.WorkerSpec{Base: 10 * time.Millisecond,
		Straggler: timing.MustStraggler("heavytail:cap=3s+slow:worker=2,factor=3")}, ServerDelay: timing.MustServerDelay("const:delay=1ms,shard=1")}
	d, err := Describe(ok, 100)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"Straggler":"heavytail:cap=3s+slow:worker=2,factor=3"`) || !strings.Contains(string(b), `"ServerDelay":"const:delay=1ms,shard=1"`) {
		t.Errorf("the specs are not written as their text: %s", b)
	}
	back, err := ParseDescription(b)
	if err != nil || !reflect.DeepEqual(back, d) {
		t.Errorf("round trip: %v\n%+v\n%+v", err, back, d)
	}
	for _, c := range []struct{ from, to, want string }{
		{`"ServerDelay":"const:delay=1ms,shard=1"`, `"ServerDelay":"bogus"`, `unknown server delay model "bogus"`},
		{`"Straggler":"heavytail:cap=3s+slow:worker=2,factor=3"`, `"Straggler":"lognormal:cv=1e300"`, "cv=1e+300"},
		{`"Straggler":"heavytail:cap=3s+slow:worker=2,factor=3"`, `"Straggler":"slow:worker=7"`, "worker=7"},
	} {
		bad := strings.Replace(string(b), c.from, c.to, 1)
		if _, err := ParseDescription([]byte(bad)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", c.to, err, c.want)
		}
	}
}
