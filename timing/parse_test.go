package timing

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestStragglerSpecsValid(t *testing.T) {
	for _, tc := range []struct {
		spec, want string
	}{
		{"", "none"},
		{"lognormal", "lognormal:cv=0.1"},
		{"lognormal:cv=0.25", "lognormal:cv=0.25"},
		{"shiftexp", "shiftexp:shift=0.8,mean=0.2"},
		{"shiftexp:shift=0.5,mean=0.5", "shiftexp:shift=0.5,mean=0.5"},
		{"heavytail", "heavytail:q=0.011,body=1.3-1.8,delay=1,alpha=1,cap=300,burst=0.1,burstdelay=0.25"},
		{"heavytail:q=0.013,body=1.3-1.8,cap=300,burst=0", "heavytail:q=0.013,body=1.3-1.8,delay=1,alpha=1,cap=300,burst=0,burstdelay=0.25"},
		// Durations are absolute and converted to units of Base (1 s here).
		{"heavytail:body=1300ms-1.8s,cap=5m,delay=2s", "heavytail:q=0.011,body=1.3-1.8,delay=2,alpha=1,cap=300,burst=0.1,burstdelay=0.25"},
		{"heavytail:body=1e-3-2e-3", "heavytail:q=0.011,body=0.001-0.002,delay=1,alpha=1,cap=300,burst=0.1,burstdelay=0.25"},
		{"heavytail:body=1.5", "heavytail:q=0.011,body=1.5-1.5,delay=1,alpha=1,cap=300,burst=0.1,burstdelay=0.25"},
		{"slow:worker=3,factor=4", "slow:worker=3,factor=4"},
		{" HeavyTail + slow:worker=0,factor=2 ", "heavytail:q=0.011,body=1.3-1.8,delay=1,alpha=1,cap=300,burst=0.1,burstdelay=0.25+slow:worker=0,factor=2"},
		{"lognormal:cv=0.1+shiftexp+slow:worker=1", "lognormal:cv=0.1+shiftexp:shift=0.8,mean=0.2+slow:worker=1,factor=2"},
		// A cluster that changes: a window (to omitted: to the end), durations in units of Base.
		{"slow:worker=3,factor=4,from=30,to=60", "slow:worker=3,factor=4,from=30,to=60"},
		{"slow:worker=3,factor=2.5,from=1m", "slow:worker=3,factor=2.5,from=60"},
		{"slow:worker=1,to=10", "slow:worker=1,factor=2,from=0,to=10"},
		{"roam", "roam:factor=2,every=100"},
		{"roam:factor=3,every=2m+slow:worker=0,factor=2", "roam:factor=3,every=120+slow:worker=0,factor=2"},
	} {
		w, err := parseWorkers(tc.spec, WorkerSpec{}, 4)
		if err != nil {
			t.Errorf("spec %q: %v", tc.spec, err)
			continue
		}
		if got := w.m.String(); got != tc.want {
			t.Errorf("spec %q: normalized to %q, want %q", tc.spec, got, tc.want)
		}
	}
}

func TestBaseScalesDurationArguments(t *testing.T) {
	w, err := NewWorkers(WorkerSpec{Base: 100 * time.Millisecond, Straggler: MustStraggler("heavytail:cap=30s,delay=100ms")}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if w.m.capAt != 300 || w.m.xm != 1 {
		t.Errorf("cap=30s, delay=100ms at Base 100ms: got cap %g, delay %g units of Base, want 300 and 1", w.m.capAt, w.m.xm)
	}
}

func TestStragglerSpecsInvalid(t *testing.T) {
	for _, tc := range []struct {
		text string // the straggler spec
		spec WorkerSpec
		n    int
		want []string // every substring must appear in the error
	}{
		{"pareto", WorkerSpec{}, 4, []string{`unknown straggler model "pareto"`, "heavytail[:q="}},
		{"heavytail+", WorkerSpec{}, 4, []string{"empty model"}},
		{"lognormal:cv", WorkerSpec{}, 4, []string{`"cv" is not key=value`}},
		{"lognormal:cv=0.1,cv=0.2", WorkerSpec{}, 4, []string{`"cv" given twice`}},
		{"lognormal:sigma=1", WorkerSpec{}, 4, []string{`no argument "sigma"`, "takes cv"}},
		{"lognormal:cv=-1", WorkerSpec{}, 4, []string{"cv=-1"}},
		{"lognormal:cv=abc", WorkerSpec{}, 4, []string{`cv="abc" is not a finite number`}},
		{"lognormal:cv=NaN", WorkerSpec{}, 4, []string{"cv"}},
		{"shiftexp:shift=0,mean=0", WorkerSpec{}, 4, []string{"shift=0, mean=0"}},
		{"shiftexp:mean=1x", WorkerSpec{}, 4, []string{`mean="1x"`, "duration"}},
		{"shiftexp+heavytail", WorkerSpec{}, 4, []string{"two base models"}},
		{"heavytail:q=1.5", WorkerSpec{}, 4, []string{"q=1.5", "probability"}},
		{"heavytail:body=1.8-1.3", WorkerSpec{}, 4, []string{"body=", "exceeds"}},
		{"heavytail:body=a-b", WorkerSpec{}, 4, []string{`body="a-b"`}},
		{"heavytail:delay=0", WorkerSpec{}, 4, []string{"delay=0"}},
		{"heavytail:alpha=-2", WorkerSpec{}, 4, []string{"alpha=-2"}},
		{"heavytail:cap=0.5", WorkerSpec{}, 4, []string{"cap=0.5", "delay=1"}},
		{"heavytail:burst=2", WorkerSpec{}, 4, []string{"burst=2"}},
		{"heavytail:burstdelay=-1", WorkerSpec{}, 4, []string{"burstdelay=-1"}},
		{"heavytail:tail=9", WorkerSpec{}, 4, []string{`no argument "tail"`}},
		{"slow:worker=4,factor=2", WorkerSpec{}, 4, []string{"worker=4", "4 workers"}},
		{"slow:worker=-1", WorkerSpec{}, 4, []string{`worker="-1"`}},
		{"slow:factor=0", WorkerSpec{}, 4, []string{"factor=0"}},
		{"slow:worker=1,from=60,to=30", WorkerSpec{}, 4, []string{"from=60", "before to=30"}},
		{"slow:worker=1,from=1m,to=30", WorkerSpec{}, 4, []string{"from=60", "before to=30"}},
		{"slow:worker=1,from=-1", WorkerSpec{}, 4, []string{"from=-1"}},
		{"slow:worker=1,to=0", WorkerSpec{}, 4, []string{"to > 0"}},
		{"slow:worker=1,from=1e8", WorkerSpec{}, 4, []string{"from=1e+08", "at most"}},
		{"slow:worker=4,from=1", WorkerSpec{}, 4, []string{"worker=4", "4 workers"}},
		{"slow:worker=1,factor=2000,from=1", WorkerSpec{}, 4, []string{"factor 2000"}},
		{"slow:worker=1,factor=40+slow:worker=1,factor=40,from=1", WorkerSpec{}, 4, []string{"worker=1", "reach", "1600"}},
		{"slow:worker=1,at=5", WorkerSpec{}, 4, []string{`no argument "at"`}},
		{"roam+roam", WorkerSpec{}, 4, []string{"two roam terms"}},
		{"roam:every=0", WorkerSpec{}, 4, []string{"every=0"}},
		{"roam:factor=0", WorkerSpec{}, 4, []string{"factor=0"}},
		{"roam:every=1e-10", WorkerSpec{}, 4, []string{"every=1e-10", "rounds to nothing"}},
		{"", WorkerSpec{Jitter: -0.1}, 4, []string{"Jitter", "-0.1"}},
		{"", WorkerSpec{Speeds: []float64{1, 0}}, 4, []string{"Speeds[1]", "= 0"}},
		{"", WorkerSpec{Base: -time.Second}, 4, []string{"Base", "-1s"}},
		{"", WorkerSpec{}, 0, []string{"workers = 0"}},
	} {
		_, err := parseWorkers(tc.text, tc.spec, tc.n)
		if err == nil {
			t.Errorf("%q %+v (n=%d): no error", tc.text, tc.spec, tc.n)
			continue
		}
		for _, s := range tc.want {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%q %+v: error %q does not mention %q", tc.text, tc.spec, err, s)
			}
		}
	}
}

func TestServerSpecs(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"", "none"},
		{"spike", "spike:p=0.0016,delay=4s"},
		{"spike:p=0.01,delay=250ms", "spike:p=0.01,delay=250ms"},
		{"const:delay=10ms", "const:delay=10ms"},
		{"const:delay=1ms+spike", "const:delay=1ms+spike:p=0.0016,delay=4s"},
		{"const:delay=3ms,shard=1+spike:shard=0", "const:delay=3ms,shard=1+spike:p=0.0016,delay=4s,shard=0"},
	} {
		s, err := parseServers(tc.spec, 2)
		if err != nil {
			t.Errorf("spec %q: %v", tc.spec, err)
			continue
		}
		if s.String() != tc.want {
			t.Errorf("spec %q: normalized to %q, want %q", tc.spec, s, tc.want)
		}
	}
	for _, tc := range []struct {
		spec   string
		shards int
		want   []string
	}{
		{"burst", 1, []string{`unknown server delay model "burst"`, "spike[:p=0.0016,delay=4s]"}},
		{"spike:p=2", 1, []string{"p=2", "probability"}},
		{"spike:delay=4", 1, []string{`delay="4"`, "duration"}},
		{"spike:delay=-4s", 1, []string{"delay=-4s", "negative"}},
		{"spike:q=0.1", 1, []string{`no argument "q"`, "p, delay"}},
		{"const", 1, []string{"needs delay="}},
		{"const:delay=1ms+", 1, []string{"empty model"}},
		{"", 0, []string{"shards = 0"}},
		{"const:delay=1ms,shard=2", 2, []string{"shard=2", "shards 0 to 1"}},
		{"spike:shard=-1", 2, []string{`shard="-1"`, "non-negative integer"}},
	} {
		_, err := parseServers(tc.spec, tc.shards)
		if err == nil {
			t.Errorf("spec %q shards %d: no error", tc.spec, tc.shards)
			continue
		}
		for _, s := range tc.want {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("spec %q: error %q does not mention %q", tc.spec, err, s)
			}
		}
	}
}

// parseWorkers is text parsed as spec's straggler model, then spec's
// workers: the errors of both steps.
func parseWorkers(text string, spec WorkerSpec, n int) (*Workers, error) {
	var err error
	if spec.Straggler, err = ParseStraggler(text); err != nil {
		return nil, err
	}
	return NewWorkers(spec, n, 1)
}

// parseServers is text parsed, then its servers for shards.
func parseServers(text string, shards int) (*Servers, error) {
	d, err := ParseServerDelay(text)
	if err != nil {
		return nil, err
	}
	return NewServers(d, shards, 1, 1)
}

// Issue 37: absurd numbers ran and printed a negative wait share
// (lognormal:cv=1e300, slow:factor=1e300) or failed after running
// (heavytail:delay=1e300). Each is refused where it is parsed, naming the
// argument and its bound; one given as a duration is refused once the
// job's Base converts it.
func TestAbsurdNumbersRefused(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want []string
	}{
		{"lognormal:cv=1e300", []string{"cv=1e+300", "[0, 10]"}},
		{"lognormal:cv=10.5", []string{"cv=10.5", "[0, 10]"}},
		{"slow:factor=1e300", []string{"factor 1e+300", "[0.001, 1000]"}},
		{"slow:factor=1e-300", []string{"factor 1e-300", "[0.001, 1000]"}},
		{"slow:worker=1,factor=100+slow:worker=1,factor=100", []string{"worker=1's factor 10000", "[0.001, 1000]"}},
		{"heavytail:delay=1e300", []string{"delay=1e+300", "at most 10000"}},
		{"heavytail:delay=20000,cap=30000", []string{"delay=20000", "at most 10000"}},
		{"heavytail:body=1-1e5", []string{"body=100000", "at most 10000"}},
		{"heavytail:burstdelay=1e9", []string{"burstdelay=1e+09", "at most 10000"}},
		{"shiftexp:shift=1e300", []string{"shift=1e+300", "at most 10000"}},
	} {
		_, err := ParseStraggler(tc.spec)
		if err == nil {
			t.Errorf("%q: parsed", tc.spec)
			continue
		}
		for _, s := range tc.want {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%q: error %q does not mention %q", tc.spec, err, s)
			}
		}
	}
	// At the bounds: accepted.
	for _, spec := range []string{"lognormal:cv=10", "slow:factor=1000", "slow:factor=0.001", "heavytail:delay=10000,cap=10000", "shiftexp:shift=10000,mean=10000"} {
		if _, err := parseWorkers(spec, WorkerSpec{}, 1); err != nil {
			t.Errorf("%q: %v", spec, err)
		}
	}
	// A duration past the bound at the job's Base.
	s := MustStraggler("heavytail:cap=3h")
	if err := (WorkerSpec{Straggler: s}).Check(1); err == nil || !strings.Contains(err.Error(), "cap=10800") {
		t.Errorf("cap=3h at Base 1s: %v, want cap=10800 refused", err)
	}
	if err := (WorkerSpec{Straggler: s, Base: 2 * time.Second}).Check(1); err != nil {
		t.Errorf("cap=3h at Base 2s (5400 units): %v", err)
	}
	for _, spec := range []string{"const:delay=2h", "spike:delay=1000000h"} {
		if _, err := ParseServerDelay(spec); err == nil || !strings.Contains(err.Error(), "at most 1h0m0s") {
			t.Errorf("%q: %v, want refused at most 1h", spec, err)
		}
	}
}

// The typed specs travel as their text: a job description written with
// the specs as strings reads back the same, and writes the same bytes.
func TestSpecsTravelAsText(t *testing.T) {
	type job struct {
		Timing      WorkerSpec
		ServerDelay ServerDelay
	}
	old := `{"Timing":{"Base":0,"Speeds":null,"Jitter":0,"Straggler":" HeavyTail + slow:worker=1"},"ServerDelay":"spike:p=0.01"}`
	var j job
	if err := json.Unmarshal([]byte(old), &j); err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(j); string(b) != old {
		t.Errorf("round trip:\n got %s\nwant %s", b, old)
	}
	if j.Timing.Straggler.IsZero() || j.ServerDelay.IsZero() {
		t.Errorf("parsed to nothing: %+v", j)
	}
	var empty job
	if b, _ := json.Marshal(empty); string(b) != `{"Timing":{"Base":0,"Speeds":null,"Jitter":0,"Straggler":""},"ServerDelay":""}` {
		t.Errorf("zero job: %s", b)
	}
	for _, bad := range []string{`{"Timing":{"Straggler":"bogus"}}`, `{"ServerDelay":"bogus"}`} {
		if err := json.Unmarshal([]byte(bad), &j); err == nil || !strings.Contains(err.Error(), `"bogus"`) {
			t.Errorf("%s: %v, want the model named", bad, err)
		}
	}
}
