package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/scenario"
)

// Issue 12, item 3: pacer profile on a live job with injected speeds 1, 1,
// 2.5 and jitter 0.1 recovers the speeds within 10% and the jitter within
// 0.05; pacer advise runs end to end on it.
func TestProfileAndAdviseLiveJob(t *testing.T) {
	dir := t.TempDir()
	job := filepath.Join(dir, "job")
	// 40 ms iterations: room for a loaded machine's real step (an MLP
	// batch, a few ms) below every drawn iteration time.
	args := []string{"train", "--mode", "inproc", "--paradigm", "asp", "--workers", "3", "--speeds", "1,1,2.5", "--jitter", "0.1",
		"--base", "40ms", "--dataset", "synthetic", "--epochs", "2", "--out", job}
	if _, errs, code := pacer(t, args...); code != 0 {
		t.Fatalf("pacer %v: exit %d: %s", args, code, errs)
	}
	sum := filepath.Join(job, "summary.json")
	yml := filepath.Join(dir, "cluster.yaml")
	out, errs, code := pacer(t, "profile", "--summary", sum, "--out", yml)
	if code != 0 {
		t.Fatalf("profile: exit %d: %s", code, errs)
	}
	t.Log(out)
	sc, err := scenario.Load(yml)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 1, 2.5}
	if sc.Workers != 3 || len(sc.Speeds) != 3 {
		t.Fatalf("profiled scenario %+v: want 3 workers with speeds", sc)
	}
	for i, w := range want {
		if math.Abs(sc.Speeds[i]/w-1) > 0.1 {
			t.Errorf("speeds %v, want %v within 10%%", sc.Speeds, want)
			break
		}
	}
	if math.Abs(sc.Jitter-0.1) > 0.05 {
		t.Errorf("jitter %g, want 0.1 within 0.05", sc.Jitter)
	}
	if len(sc.Paradigms) < 5 || sc.Model != "mlp" {
		t.Errorf("paradigms %v, model %q", sc.Paradigms, sc.Model)
	}

	adv := filepath.Join(dir, "advice")
	out, errs, code = pacer(t, "advise", "--summary", sum, "--out", adv, "--seeds", "2", "--epochs", "1", "--dataset", "synthetic")
	if code != 0 {
		t.Fatalf("advise: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "fitted: base") || !(strings.Contains(out, "No clear winner") || strings.Contains(out, " wins")) {
		t.Errorf("advise printed no fit or no verdict:\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(adv, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s runstats.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Paradigms) != len(sc.Paradigms) || s.Mode != "virtual" || len(s.Seeds) != 2 || s.Scenario.Workers != 3 {
		t.Errorf("advise's comparison: %d paradigms, mode %s, seeds %v, workers %d", len(s.Paradigms), s.Mode, s.Seeds, s.Scenario.Workers)
	}
	if _, err := os.Stat(filepath.Join(adv, "scenario.yaml")); err != nil {
		t.Errorf("advise wrote no scenario.yaml: %v", err)
	}
}

// profile reads live runs only, from one source.
func TestProfileRefuses(t *testing.T) {
	dir := t.TempDir()
	virt := filepath.Join(dir, "virt")
	if _, errs, code := pacer(t, "train", "--paradigm", "bsp", "--workers", "2", "--dataset", "synthetic", "--epochs", "1", "--out", virt); code != 0 {
		t.Fatal(errs)
	}
	for _, c := range []struct {
		want string
		args []string
	}{
		{"live runs", []string{"profile", "--summary", filepath.Join(virt, "summary.json")}},
		{"--summary", []string{"profile"}},
		{"--summary", []string{"profile", "--summary", "x.json", "--coordinator", "127.0.0.1:1"}},
		{"--summary", []string{"profile", "--summary", filepath.Join(dir, "none.json")}},
		{"--mode", []string{"advise", "--summary", "x.json", "--mode", "sim"}},
	} {
		_, errs, code := pacer(t, c.args...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("pacer %v: exit %d, %q; want an error naming %q", c.args, code, errs, c.want)
		}
	}
}
