package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/runstats"
)

func pacer(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return out.String(), errb.String(), code
}

func simJSON(t *testing.T, args ...string) runstats.Run {
	t.Helper()
	out, errs, code := pacer(t, append([]string{"sim", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("pacer sim %v: exit %d: %s", args, code, errs)
	}
	var r runstats.Run
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	return r
}

// Issue 2: on a 1:2 pair, the DSSP paper's ordering of throughput
// ASP ≥ DSSP ≥ SSP(3) ≥ BSP, and the reverse for the waiting share.
func TestSimOrderingOnAHeterogeneousPair(t *testing.T) {
	var runs []runstats.Run
	for _, p := range []string{"asp", "dssp:sl=3,su=15", "ssp:s=3", "bsp"} {
		runs = append(runs, simJSON(t, "--paradigm", p, "--workers", "2", "--speeds", "1,2", "--jitter", "0.05", "--iterations", "500"))
	}
	for i := 1; i < len(runs); i++ {
		a, b := runs[i-1], runs[i]
		if a.Throughput < b.Throughput || a.WaitFraction > b.WaitFraction {
			t.Errorf("%s (throughput %.3f, wait %.3f) should be ≥ %s (%.3f, %.3f) in throughput and ≤ in wait",
				a.Paradigm, a.Throughput, a.WaitFraction, b.Paradigm, b.Throughput, b.WaitFraction)
		}
	}
	if runs[3].Throughput >= runs[0].Throughput {
		t.Error("BSP as fast as ASP on a heterogeneous pair")
	}
}

func TestSimJSONHasTheContractFields(t *testing.T) {
	out, _, code := pacer(t, "sim", "--json", "--paradigm", "backup:b=1", "--workers", "4", "--iterations", "10")
	if code != 0 {
		t.Fatal(out)
	}
	var m map[string]any
	json.Unmarshal([]byte(out), &m)
	for _, k := range []string{"paradigm", "workers", "pushes", "updates", "virtual_seconds", "throughput",
		"wait_fraction", "max_gap", "staleness_mean", "staleness_max", "dropped"} {
		if _, ok := m[k]; !ok {
			t.Errorf("--json lacks %q", k)
		}
	}
}

func TestSimPrintsTheStragglerCDF(t *testing.T) {
	out, errs, code := pacer(t, "sim", "--workers", "100", "--straggler", "heavytail", "--arrival-cdf", "--cdf-iterations", "500")
	if code != 0 || !strings.Contains(out, "100/100") || !strings.Contains(out, "98/100") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
}

func TestBadInputIsAClearError(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"nope"}, "unknown command"},
		{[]string{"sim", "--workers", "2"}, "--paradigm is required"},
		{[]string{"sim", "--paradigm", "ssp", "--workers", "2"}, "valid forms"},
		{[]string{"sim", "--paradigm", "bsp"}, "--workers is required"},
		{[]string{"sim", "--paradigm", "bsp", "--workers", "2", "--speeds", "1,-1"}, "positive"},
		{[]string{"sim", "--paradigm", "bsp", "--workers", "2", "--straggler", "bogus"}, "bogus"},
		{[]string{"sim", "--paradigm", "bsp", "--workers", "2", "--fail", "7@1s"}, "--fail"},
		{[]string{"sim", "--paradigm", "backup:b=2", "--workers", "2"}, "below workers"},
		{[]string{"sim", "--paradigm", "bsp", "--workers", "2", "extra"}, "unexpected argument"},
		{[]string{"train", "--model", "resnet"}, "resnet"},
		{[]string{"train", "--mode", "warp"}, "valid modes"},
		{[]string{"train", "--lr-schedule", "cosine"}, "--lr-schedule"},
		{[]string{"compare", "--paradigms", "bsp;zzz"}, "valid forms"},
		{[]string{"compare", "--scenario", "mars"}, "pair"},
	} {
		_, errs, code := pacer(t, tc.args...)
		if code == 0 || !strings.Contains(errs, tc.want) {
			t.Errorf("pacer %v: exit %d, stderr %q; want an error mentioning %q", tc.args, code, errs, tc.want)
		}
	}
}

// virtualSummary runs pacer train in virtual mode on a Fashion-MNIST subset
// with args and returns its summary.json, its stdout and its stderr.
func virtualSummary(t *testing.T, args ...string) (runstats.Run, string, string) {
	t.Helper()
	if _, err := os.Stat("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"); err != nil {
		t.Skip("Fashion-MNIST not installed (scripts/setup installs it)")
	}
	dir := t.TempDir()
	out, errs, code := pacer(t, append(append([]string{"train"}, args...), "--train-limit", "6000", "--test-limit", "500",
		"--epochs", "1", "--out", dir)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r runstats.Run
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("summary.json: %v\n%s", err, b)
	}
	return r, out, errs
}

func TestTrainVirtualWritesSummary(t *testing.T) {
	r, out, errs := virtualSummary(t, "--paradigm", "ssp:s=2", "--workers", "3", "--target", "0.35")
	if r.Paradigm != "ssp:s=2" || r.Mode != "virtual" || len(r.Curve) < 2 || r.TimeToTarget == nil || r.Seconds <= 0 {
		t.Fatalf("summary %+v\n%s", r, out)
	}
	if !strings.Contains(errs, "test accuracy") {
		t.Errorf("no progress on stderr: %q", errs)
	}
}

// --paradigm auto trains in virtual time: pacer train hands train the
// planner (train.Options.Plan), which decides during the run.
func TestTrainVirtualAuto(t *testing.T) {
	r, _, _ := virtualSummary(t, "--paradigm", "auto:every=5", "--workers", "2", "--speeds", "1,3")
	if !strings.HasPrefix(r.Paradigm, "auto") || len(r.Decisions) == 0 {
		t.Fatalf("paradigm %q, %d decisions", r.Paradigm, len(r.Decisions))
	}
}

// PARADIGMS.md: every run records the controller's time; pacer sim prints
// it (summary.json, being deterministic, has only the call count).
func TestSimPrintsControllerTime(t *testing.T) {
	out, errs, code := pacer(t, "sim", "--paradigm", "elastic:r=4", "--workers", "4", "--speeds", "1,2", "--iterations", "50")
	if code != 0 || !strings.Contains(out, "controller") || !strings.Contains(out, "µs per call") {
		t.Fatalf("exit %d, %s %s: want the controller's calls and time", code, out, errs)
	}
	r := simJSON(t, "--paradigm", "elastic:r=4", "--workers", "4", "--speeds", "1,2", "--iterations", "50")
	if r.ControllerCalls == 0 {
		t.Fatal("summary has no controller calls")
	}
}
