package main

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/pacer-ps/pacer/nsnet"
	"github.com/pacer-ps/pacer/runstats"
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
	var none runstats.Summary
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
