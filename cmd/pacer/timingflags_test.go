package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/job"
)

// Issue 30: `pacer train --mode tcp --server-delay bogus` never returned
// (each shard parsed the spec only once it had started, shard 0 exited, and
// the driver waited for it); inproc refused it only after 0.9 s. The
// straggler and server-delay specs are parsed with their flags and checked
// against the other flags before anything starts, in every mode, exit 2,
// naming the flag; a description handed to a shard (--job) with a bad spec
// is refused by the shard the same way.
func TestBadTimingSpecsRefusedBeforeAnythingStarts(t *testing.T) {
	type bad struct {
		want string
		args []string
	}
	var cases []bad
	for _, mode := range []string{"virtual", "inproc", "tcp"} {
		cases = append(cases,
			bad{"--server-delay", []string{"train", "--mode", mode, "--server-delay", "bogus"}},
			bad{"--straggler", []string{"train", "--mode", mode, "--straggler", "bogus"}},
			bad{"--straggler", []string{"train", "--mode", mode, "--workers", "2", "--straggler", "slow:worker=2"}},
			bad{"--server-delay", []string{"train", "--mode", mode, "--server-delay", "spike:shard=1"}},
			bad{"--straggler", []string{"train", "--mode", mode, "--straggler", "lognormal:cv=1e300"}},
			bad{"--straggler", []string{"train", "--mode", mode, "--straggler", "slow:factor=1e300"}},
			bad{"--straggler", []string{"train", "--mode", mode, "--straggler", "heavytail:delay=1e300"}},
			bad{"--server-delay", []string{"train", "--mode", mode, "--server-delay", "const:delay=1000h"}},
		)
	}
	for _, mode := range []string{"virtual", "sim", "inproc", "tcp"} {
		cases = append(cases,
			bad{"--server-delay", []string{"compare", "--mode", mode, "--paradigms", "bsp", "--server-delay", "bogus"}},
			bad{"--straggler", []string{"compare", "--mode", mode, "--paradigms", "bsp", "--straggler", "heavytail:cap=3h"}},
		)
	}
	cases = append(cases,
		bad{"--server-delay", []string{"sim", "--paradigm", "bsp", "--workers", "2", "--server-delay", "bogus"}},
		bad{"--straggler", []string{"sim", "--paradigm", "bsp", "--workers", "2", "--straggler", "heavytail:cap=3h", "--base", "500ms"}},
		// A scenario's field, named as the scenario spells it.
		bad{"server_delay=\"bogus\"", []string{"compare", "--mode", "sim", "--scenario", scenarioFile(t, `{"name": "s", "workers": 2, "paradigms": ["bsp"], "server_delay": "bogus"}`)}},
		bad{"straggler=\"lognormal:cv=1e300\"", []string{"compare", "--mode", "sim", "--scenario", scenarioFile(t, `{"name": "s", "workers": 2, "paradigms": ["bsp"], "straggler": "lognormal:cv=1e300"}`)}},
	)
	for _, c := range cases {
		args := c.args
		if !strings.Contains(strings.Join(args, " "), "sim") {
			args = append(append([]string{}, c.args...), quick...)
		}
		t0 := time.Now()
		refused(t, c.want, args...)
		_, _, code := pacer(t, args...)
		if code != exitUsage {
			t.Errorf("pacer %v: exit %d, want %d", args, code, exitUsage)
		}
		t.Logf("%-60s refused in %s", strings.Join(c.args, " "), time.Since(t0).Round(time.Millisecond))
	}

	// A shard started with a description (as tcp mode starts them) whose
	// spec does not parse or does not fit the job.
	d, err := job.Describe(job.Config{Workers: 2, Dataset: "synthetic"}, 100)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, want string }{
		{`"ServerDelay":""`, `"ServerDelay":"bogus"`, `server delay model "bogus"`},
		{`"Straggler":""`, `"Straggler":"slow:worker=5"`, "straggler="},
	} {
		desc := strings.Replace(string(b), c.from, c.to, 1)
		_, errs, code := pacer(t, "server", "--index", "0", "--token", "a-test-token-of-some-length", "--listen", "127.0.0.1:0", "--job", desc)
		if code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("pacer server --job with %s: exit %d, %q; want exit %d naming %q", c.to, code, errs, exitUsage, c.want)
		}
	}
}

// scenarioFile writes a scenario file of text for one test.
func scenarioFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "scenario.json")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
