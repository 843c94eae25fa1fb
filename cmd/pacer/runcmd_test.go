package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pacer run refuses what it cannot run before anything starts: a usage
// error (exit 2) naming the flag or the command, and no --out made.
func TestRunRefusesBadInput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	job := []string{"run", "--out", out, "--train-n", "100"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--workers", "2"}, "give the worker command after --"},
		{[]string{"--workers", "2", "/bin/true"}, "give the worker command after --"},
		{[]string{"--workers", "0", "--", "/bin/true"}, "--workers=0"},
		{[]string{"--shards", "0", "--", "/bin/true"}, "--shards=0"},
		{[]string{"--model", "mlp", "--", "/bin/true"}, "--model=mlp"},
		{[]string{"--paradigm", "nope", "--", "/bin/true"}, "--paradigm"},
		{[]string{"--lr", "-1", "--", "/bin/true"}, "--lr"},
		{[]string{"--seed", "0", "--", "/bin/true"}, "--seed=0"},
		{[]string{"--heartbeat-timeout", "0s", "--", "/bin/true"}, "--heartbeat-timeout=0s"},
		{[]string{"--train-n", "-5", "--", "/bin/true"}, "--train-n=-5"},
		{[]string{"--", "/no/such/python", "x.py"}, `the worker command "/no/such/python"`},
	} {
		_, errs, code := pacer(t, append(append([]string{}, job...), c.args...)...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("pacer run %v: exit %d, stderr %q: want 2 and %q", c.args, code, errs, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("pacer run %v: refused, but made %s", c.args, out)
		}
	}
}
