package timing

import (
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
	} {
		w, err := NewWorkers(WorkerSpec{Straggler: tc.spec}, 4, 1)
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
	w, err := NewWorkers(WorkerSpec{Base: 100 * time.Millisecond, Straggler: "heavytail:cap=30s,delay=100ms"}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if w.m.capAt != 300 || w.m.xm != 1 {
		t.Errorf("cap=30s, delay=100ms at Base 100ms: got cap %g, delay %g units of Base, want 300 and 1", w.m.capAt, w.m.xm)
	}
}

func TestStragglerSpecsInvalid(t *testing.T) {
	for _, tc := range []struct {
		spec WorkerSpec
		n    int
		want []string // every substring must appear in the error
	}{
		{WorkerSpec{Straggler: "pareto"}, 4, []string{`unknown straggler model "pareto"`, "heavytail[:q="}},
		{WorkerSpec{Straggler: "heavytail+"}, 4, []string{"empty model"}},
		{WorkerSpec{Straggler: "lognormal:cv"}, 4, []string{`"cv" is not key=value`}},
		{WorkerSpec{Straggler: "lognormal:cv=0.1,cv=0.2"}, 4, []string{`"cv" given twice`}},
		{WorkerSpec{Straggler: "lognormal:sigma=1"}, 4, []string{`no argument "sigma"`, "takes cv"}},
		{WorkerSpec{Straggler: "lognormal:cv=-1"}, 4, []string{"cv=-1"}},
		{WorkerSpec{Straggler: "lognormal:cv=abc"}, 4, []string{`cv="abc" is not a finite number`}},
		{WorkerSpec{Straggler: "lognormal:cv=NaN"}, 4, []string{"cv"}},
		{WorkerSpec{Straggler: "shiftexp:shift=0,mean=0"}, 4, []string{"shift=0, mean=0"}},
		{WorkerSpec{Straggler: "shiftexp:mean=1x"}, 4, []string{`mean="1x"`, "duration"}},
		{WorkerSpec{Straggler: "shiftexp+heavytail"}, 4, []string{"two base models"}},
		{WorkerSpec{Straggler: "heavytail:q=1.5"}, 4, []string{"q=1.5", "probability"}},
		{WorkerSpec{Straggler: "heavytail:body=1.8-1.3"}, 4, []string{"body=", "exceeds"}},
		{WorkerSpec{Straggler: "heavytail:body=a-b"}, 4, []string{`body="a-b"`}},
		{WorkerSpec{Straggler: "heavytail:delay=0"}, 4, []string{"delay=0"}},
		{WorkerSpec{Straggler: "heavytail:alpha=-2"}, 4, []string{"alpha=-2"}},
		{WorkerSpec{Straggler: "heavytail:cap=0.5"}, 4, []string{"cap=0.5", "delay=1"}},
		{WorkerSpec{Straggler: "heavytail:burst=2"}, 4, []string{"burst=2"}},
		{WorkerSpec{Straggler: "heavytail:burstdelay=-1"}, 4, []string{"burstdelay=-1"}},
		{WorkerSpec{Straggler: "heavytail:tail=9"}, 4, []string{`no argument "tail"`}},
		{WorkerSpec{Straggler: "slow:worker=4,factor=2"}, 4, []string{"worker=4", "4 workers"}},
		{WorkerSpec{Straggler: "slow:worker=-1"}, 4, []string{`worker="-1"`}},
		{WorkerSpec{Straggler: "slow:factor=0"}, 4, []string{"factor=0"}},
		{WorkerSpec{Jitter: -0.1}, 4, []string{"Jitter", "-0.1"}},
		{WorkerSpec{Speeds: []float64{1, 0}}, 4, []string{"Speeds[1]", "= 0"}},
		{WorkerSpec{Base: -time.Second}, 4, []string{"Base", "-1s"}},
		{WorkerSpec{}, 0, []string{"workers = 0"}},
	} {
		_, err := NewWorkers(tc.spec, tc.n, 1)
		if err == nil {
			t.Errorf("%+v (n=%d): no error", tc.spec, tc.n)
			continue
		}
		for _, s := range tc.want {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%+v: error %q does not mention %q", tc.spec, err, s)
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
		s, err := NewServers(tc.spec, 2, 1, 1)
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
		_, err := NewServers(tc.spec, tc.shards, 1, 1)
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
