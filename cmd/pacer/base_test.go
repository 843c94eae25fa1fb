package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/runstats"
)

// fakeStepClock makes base: auto read a clock that advances d at every
// reading, so the step it times lasts d whatever the machine; it restores
// the real clock when the test ends.
func fakeStepClock(t *testing.T, d time.Duration) {
	t.Helper()
	real := stepClock
	stepClock = func() func() time.Duration {
		var now time.Duration
		return func() time.Duration { now += d; return now }
	}
	t.Cleanup(func() { stepClock = real })
}

// Issue 31, point 5 (DECISIONS, Turn 3): base: auto measures the step once,
// rounds it to two significant digits, prints it and writes it into
// summary.json's scenario, so that rerunning that scenario gives the same
// bytes without measuring again.
func TestBaseAutoWrittenIntoTheScenario(t *testing.T) {
	fakeStepClock(t, 4234*time.Microsecond)
	dir := t.TempDir()
	file := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(file, []byte("name: mine\nparadigms: [bsp, asp]\nworkers: 3\nspeeds: [1, 1, 2]\nbase: auto\nbatch: 32\nseeds: 2\nnetwork:\n  none: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"compare", "--mode", "sim", "--scenario", file, "--iterations", "30"}
	run := func(out string) ([]byte, string) {
		t.Helper()
		_, errs, code := pacer(t, append(args, "--out", out)...)
		if code != 0 {
			t.Fatalf("pacer %v: exit %d: %s", args, code, errs)
		}
		b, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		return b, errs
	}
	first, errs := run(filepath.Join(dir, "a"))
	if want := "base: auto → 4.2ms (measured: the mlp's step at batch 32 on this machine)\n"; !strings.Contains(errs, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errs)
	}
	var s compare.Summary
	if err := json.Unmarshal(first, &s); err != nil {
		t.Fatal(err)
	}
	if s.Scenario.Base != "4.2ms" {
		t.Errorf("summary.json's scenario has base %q, want 4.2ms", s.Scenario.Base)
	}
	// 30 iterations of BSP at the slowest worker's 2 × 4.2 ms, and no
	// more: the runs used the rounded base.
	if v := s.Runs[0].VirtualSeconds; v < 30*2*0.0042 || v > 30*2*0.0042*1.1 {
		t.Errorf("bsp ran %g virtual s; want about %g", v, 30*2*0.0042)
	}
	// The summary's scenario as the file: the same bytes, with no clock.
	sc, err := json.Marshal(s.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, sc, 0o644); err != nil {
		t.Fatal(err)
	}
	stepClock = nil // a rerun that measured would panic
	again, errs := run(filepath.Join(dir, "b"))
	if strings.Contains(errs, "base: auto") || !bytes.Equal(first, again) {
		t.Errorf("the rerun of summary.json's scenario differs (or measured again: %q)", errs)
	}
}

// --base auto on the command line, and --device-rate: a device's FLOP/s
// instead of the clock (the MLP's step at batch 64 is 64,924,948 FLOP, 6.5
// ms at 10 GFLOP/s).
func TestBaseAutoFlag(t *testing.T) {
	fakeStepClock(t, 770*time.Microsecond)
	out, errs, code := pacer(t, "sim", "--json", "--paradigm", "bsp", "--workers", "2", "--network", "none", "--iterations", "10", "--base", "auto")
	var r runstats.Run
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || !strings.Contains(errs, "base: auto → 770µs (measured: the mlp's step at batch 64") ||
		r.VirtualSeconds < 10*0.00077 || r.VirtualSeconds > 10*0.00077*1.01 {
		t.Errorf("sim --base auto: exit %d, %g virtual s, stderr %q", code, r.VirtualSeconds, errs)
	}
	out, errs, code = pacer(t, "sim", "--json", "--paradigm", "bsp", "--workers", "2", "--iterations", "10", "--base", "auto", "--device-rate", "1e10")
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || !strings.Contains(errs, "base: auto → 6.5ms (the mlp's step at batch 64, 6.49e+07 FLOP, at 1e+10 FLOP/s)") ||
		r.VirtualSeconds < 10*0.0065 {
		t.Errorf("sim --base auto --device-rate 1e10: exit %d, %g virtual s, stderr %q", code, r.VirtualSeconds, errs)
	}
}

// Bad values of base and device-rate are refused before anything runs,
// naming the field.
func TestBaseAutoRefused(t *testing.T) {
	fakeStepClock(t, time.Millisecond)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: bad\nparadigms: [bsp]\nworkers: 2\nbase: fast\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	auto := filepath.Join(dir, "auto.yaml")
	if err := os.WriteFile(auto, []byte("name: auto\nparadigms: [bsp]\nworkers: 2\nbase: auto\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sim := []string{"sim", "--paradigm", "bsp", "--workers", "2", "--iterations", "5"}
	for _, c := range []struct {
		want string
		args []string
	}{
		{"--base", append(append([]string{}, sim...), "--base", "fast")},
		{"--base=-1s", append(append([]string{}, sim...), "--base", "-1s")},
		{"--device-rate", append(append([]string{}, sim...), "--device-rate", "1e10")},
		{"--device-rate", append(append([]string{}, sim...), "--base", "auto", "--device-rate", "-1")},
		{"--device-rate", append(append([]string{}, sim...), "--base", "auto", "--device-rate", "NaN")},
		{`base="fast"`, []string{"compare", "--mode", "sim", "--scenario", bad}},
		{"--device-rate", []string{"compare", "--mode", "sim", "--paradigms", "bsp", "--device-rate", "1e12"}},
		{"--base auto", []string{"train", "--mode", "inproc", "--base", "auto"}},
		{"--base auto", []string{"compare", "--mode", "tcp", "--paradigms", "bsp", "--base", "auto"}},
		{"--device-rate", []string{"train", "--device-rate", "1e12"}},
		{"--device-rate", []string{"compare", "--mode", "inproc", "--scenario", auto, "--device-rate", "1e12"}},
	} {
		refused(t, c.want, c.args...)
	}
	// The other flags are checked before the step is timed.
	stepClock = func() func() time.Duration {
		t.Errorf("a refused command timed the step")
		var now time.Duration
		return func() time.Duration { now += time.Second; return now }
	}
	refused(t, "--paradigm", "sim", "--workers", "2", "--base", "auto")
	refused(t, "--fail", "sim", "--paradigm", "bsp", "--workers", "2", "--base", "auto", "--fail", "9@1s")
}
