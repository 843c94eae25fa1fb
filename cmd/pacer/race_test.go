package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 32: the race's flags are refused by name before anything runs.
func TestRaceFlagsRefused(t *testing.T) {
	sim := []string{"compare", "--mode", "sim", "--paradigms", "bsp;asp", "--workers", "2", "--iterations", "10"}
	for _, c := range []struct {
		want string
		args []string
	}{
		{"--seeds=many", append(sim, "--seeds", "many")},
		{"--seeds=0", append(sim, "--seeds", "0")},
		{"--margin=\"5\"", append(sim, "--margin", "5")},
		{"--margin=\"-1%\"", append(sim, "--margin", "-1%")},
		{"margin=0.5pt", append(sim, "--margin", "0.5pt")},
		{"--budget=0", append(sim, "--budget", "0")},
		{"budget=4", append(sim, "--budget", "4")},
		{"--margin and --budget apply to the race", append(sim, "--seeds", "2", "--budget", "10")},
		{"deterministic modes", []string{"compare", "--mode", "inproc", "--paradigms", "bsp;asp", "--workers", "2", "--seeds", "auto"}},
	} {
		refused(t, c.want, c.args...)
	}
}

// The default in sim mode is the race: summary.json carries it, and the
// report says "fastest iterations", never "trains fastest".
func TestRaceIsTheSimDefault(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	out, errs, code := pacer(t, "compare", "--mode", "sim", "--paradigms", "bsp;asp;backup:b=0", "--workers", "4",
		"--speeds", "1,1,1,4", "--iterations", "20", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Schema int `json:"schema"`
		Race   *struct {
			Margin float64 `json:"margin"`
			Budget int     `json:"budget_runs"`
		} `json:"race"`
		Verdict struct {
			Kind   string `json:"kind"`
			Metric string `json:"metric"`
		} `json:"verdict"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Schema != 3 || s.Race == nil || s.Race.Margin != 0.05 || s.Race.Budget != 15 || s.Verdict.Kind != "winner" || s.Verdict.Metric != "iteration_time" {
		t.Errorf("summary.json: %+v, race %+v", s, s.Race)
	}
	if !strings.Contains(out, "asp has the fastest iterations") || strings.Contains(out, "trains fastest") || !strings.Contains(out, "The race (paradigms × rounds") {
		t.Errorf("report:\n%s", out)
	}
}
