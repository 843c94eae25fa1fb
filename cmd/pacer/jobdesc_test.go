package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/job"
)

// pacer server --job takes the whole job as its description (what pacer
// train --mode tcp hands its shards) and refuses, with an error naming the
// problem, a description of another version, a bad one, and job flags
// given beside it (they would be ignored).
func TestServerJobDescriptionRefused(t *testing.T) {
	clearRoleEnv(t)
	t.Setenv("PACER_TOKEN", "x")
	d, err := job.Describe(job.Config{Dataset: "synthetic", Workers: 2}, 100)
	if err != nil {
		t.Fatal(err)
	}
	good, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	v2 := strings.Replace(string(good), `"version":1`, `"version":2`, 1)
	if v2 == string(good) {
		t.Fatalf("no version field in %s", good)
	}
	base := []string{"server", "--index", "0", "--peers", "a:1"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--job", v2}, "job description version 2: this pacer reads version 1"},
		{[]string{"--job", `{"version":1,"job":{"LR":-1}}`}, "lr=-1: must be a positive finite number"},
		{[]string{"--job", `{"version":1,"job":{},"extra":1}`}, `unknown field "extra"`},
		{[]string{"--job", t.TempDir() + "/none.json"}, "none.json"},
		{[]string{"--job", string(good), "--workers", "3"}, "--workers: --job gives the whole job"},
		{[]string{"--job", string(good), "--lr", "0.1"}, "--lr: --job gives the whole job"},
	} {
		_, errs, code := pacer(t, append(base, c.args...)...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("pacer server %v: exit %d, stderr %q; want an error naming %q", c.args, code, errs, c.want)
		}
	}
	// The good description gets past the job: the next refusal is the
	// missing control token.
	if _, errs, code := pacer(t, append(base, "--job", string(good))...); code == 0 || !strings.Contains(errs, "PACER_CONTROL_TOKEN") {
		t.Errorf("pacer server --job GOOD: exit %d, stderr %q; want the control token asked for", code, errs)
	}
}
