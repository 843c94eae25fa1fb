package main

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/nsnet"
)

// pacer check with a slow shard link (issue 12): the live run emulates the
// link (tcp mode, package nsnet) and the prediction charges it, so the
// prediction lands nearer the measurement than the same prediction
// without the link, for every paradigm. (How near is a measured figure,
// docs/check.md, not a test: the live side also pays this machine's load.)
func TestCheckWithLinks(t *testing.T) {
	if err := nsnet.Check(); err != nil {
		t.Skipf("%v (run the tests as root with iproute2 to include this)", err)
	}
	bin := pacerBin(t)
	dir := t.TempDir()
	job := []string{"--paradigms", "bsp;asp", "--workers", "2", "--shards", "1", "--dataset", "synthetic", "--train-limit", "640",
		"--test-limit", "200", "--epochs", "1", "--seeds", "1"}
	cmd := exec.Command(bin, append(append([]string{"check"}, job...), "--shard-link", "0:rate=160Mbit", "--out", filepath.Join(dir, "check"))...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pacer check: %v\n%s", err, out)
	}
	var r struct {
		Paradigms []struct {
			Paradigm            string
			Predicted, Measured struct{ Throughput float64 }
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "check", "check.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &r); err != nil || len(r.Paradigms) != 2 {
		t.Fatalf("check.json: %v: %s", err, b)
	}
	cmd = exec.Command(bin, append(append([]string{"compare", "--mode", "virtual", "--network", "none"}, job...), "--base", "20ms",
		"--out", filepath.Join(dir, "none"))...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pacer compare: %v\n%s", err, out)
	}
	var none compare.Summary
	if b, err = os.ReadFile(filepath.Join(dir, "none", "summary.json")); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &none); err != nil {
		t.Fatal(err)
	}
	for i, p := range r.Paradigms {
		free := *none.Paradigms[i].Throughput.Median
		off := func(pred float64) float64 { return math.Abs(math.Log(p.Measured.Throughput / pred)) }
		t.Logf("%s: measured %.2f pushes/s; predicted %.2f with the link, %.2f without", p.Paradigm, p.Measured.Throughput, p.Predicted.Throughput, free)
		if none.Paradigms[i].Paradigm != p.Paradigm || !(p.Predicted.Throughput < free) || !(off(p.Predicted.Throughput) < off(free)) {
			t.Errorf("%s: measured %.2f pushes/s, predicted %.2f with the link and %.2f without: want the link to cost, and its prediction nearer",
				p.Paradigm, p.Measured.Throughput, p.Predicted.Throughput, free)
		}
	}
}

// A scenario file's network, not only the link flags, runs pacer check's
// live side on shaped links (issue 31, point 6): the live BSP rounds are
// held to the links' rate, which the prediction charges, and the output
// says what became of a latency the veth alone does not give.
func TestCheckScenarioNetworkShaped(t *testing.T) {
	if err := nsnet.Check(); err != nil {
		t.Skipf("%v (run the tests as root with iproute2 to include this)", err)
	}
	bin := pacerBin(t)
	dir := t.TempDir()
	const workers, base = 2, 0.02
	scen := filepath.Join(dir, "links.json")
	if err := os.WriteFile(scen, []byte(`{"name": "links", "paradigms": ["bsp"], "workers": 2, "shards": 1, "base": "20ms",
		"network": {"link": "rate=80Mbit,latency=1ms"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "check", "--scenario", scen, "--dataset", "synthetic", "--train-limit", "640", "--test-limit", "200",
		"--epochs", "1", "--seeds", "1", "--out", filepath.Join(dir, "check"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pacer check: %v\n%s", err, out)
	}
	var r struct {
		Links     string
		LinkNotes []string `json:"link_notes"`
		Paradigms []struct {
			Predicted, Measured struct{ Throughput float64 }
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "check", "check.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &r); err != nil || len(r.Paradigms) != 1 {
		t.Fatalf("check.json: %v: %s", err, b)
	}
	pred, meas := r.Paradigms[0].Predicted.Throughput, r.Paradigms[0].Measured.Throughput
	t.Logf("links %s: predicted %.2f pushes/s, measured %.2f; without links %.0f", r.Links, pred, meas, workers/base)
	if !strings.Contains(r.Links, "rate=80Mbit") {
		t.Errorf("check.json's links %q: want the scenario's rate=80Mbit", r.Links)
	}
	if !(pred < workers/base/2) {
		t.Fatalf("predicted %.2f pushes/s: the links should cost most of the %.0f pushes/s the compute allows", pred, workers/base)
	}
	// A busy machine only slows the live side: faster than the links'
	// prediction means the bytes did not go through the links, or not at
	// their rate, or the live rate was misread (the check read 1.23× here
	// while its live workers ran unheld, its summary left out each
	// worker's last push and the links were one queue each).
	if !(meas > 0 && meas < 1.15*pred) {
		t.Errorf("measured %.2f pushes/s against %.2f predicted for the scenario's links: want the live run held to them", meas, pred)
	}
	want := "cannot be shaped live: this kernel has no netem"
	if nsnet.Netem() == nil {
		want = "added live by the kernel's netem"
	}
	if !strings.Contains(strings.Join(r.LinkNotes, " "), want) || !strings.Contains(string(out), want) {
		t.Errorf("the notes do not say %q: %q\n%s", want, r.LinkNotes, out)
	}
}
