package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/scenario"
)

// Issue 5 and 9: a small compare end to end, on a Fashion-MNIST subset
// (synthetic data when the real files are absent); the files exist, say
// what they should, and the same flags give the same summary.json byte for
// byte with GOMAXPROCS=1 and 2 (runs spread over the cores must not change
// a byte).
func TestCompareEndToEnd(t *testing.T) {
	dataset := []string{"--train-limit", "4000", "--test-limit", "800"}
	if _, err := os.Stat("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"); err != nil {
		dataset = []string{"--dataset", "synthetic"}
	}
	var sums [2][]byte
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for i := range sums {
		runtime.GOMAXPROCS(i + 1)
		dir := t.TempDir()
		args := append([]string{"compare", "--paradigms", "bsp;asp;ssp:s=2;backup:b=1", "--workers", "3", "--seeds", "2",
			"--speeds", "1,2", "--epochs", "1", "--eval-every", "0.5", "--target", "0.6", "--out", dir}, dataset...)
		out, errs, code := pacer(t, args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		for _, f := range []string{"report.html", "accuracy_vs_time.png", "wait_per_worker.png", "staleness.png",
			"throughput.png", "summary.md", "summary.json", "curves.csv"} {
			if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
				t.Errorf("%s missing or empty: %v", f, err)
			}
		}
		sums[i], _ = os.ReadFile(filepath.Join(dir, "summary.json"))
		var sum compare.Summary
		if err := json.Unmarshal(sums[i], &sum); err != nil || len(sum.Runs) != 8 || len(sum.Paradigms) != 4 {
			t.Fatalf("summary.json: %v, %d runs", err, len(sum.Runs))
		}
		runs := sum.Runs
		for k, r := range runs {
			if r.Mode != "virtual" || len(r.Curve) < 2 || r.Pushes == 0 || r.Target != 0.6 || r.Seed != uint64(1+k%2) ||
				r.VirtualSeconds != sum.HorizonSeconds {
				t.Errorf("run %s: %+v", r.Paradigm, r)
			}
		}
		if sum.Commit == "" || sum.Version == "" || len(sum.Seeds) != 2 || sum.Flags["seeds"] != "2" || sum.Scenario.Workers != 3 ||
			sum.Verdict.Metric == "" || sum.Verdict.Tied == nil || sum.Verdict.Target != 0.6 {
			t.Errorf("summary fields: version %q commit %q seeds %v flags %v scenario %+v verdict %+v",
				sum.Version, sum.Commit, sum.Seeds, sum.Flags, sum.Scenario, sum.Verdict)
		}
		// flags: what the command line gave, not every default (the
		// scenario holds those) and not where the files went.
		for _, f := range []string{"lr", "batch", "mode", "scenario", "out"} {
			if v, ok := sum.Flags[f]; ok {
				t.Errorf("flags records --%s=%s, which was not given (or is --out)", f, v)
			}
		}
		if sum.Flags["speeds"] != "1,2" || sum.Flags["target"] != "0.6" || len(sum.Flags) != len(args)/2-1 {
			t.Errorf("flags %v, want the %d given besides --out", sum.Flags, len(args)/2-1)
		}
		if runs[0].WaitFraction <= runs[2].WaitFraction {
			t.Errorf("bsp waited %.3f, asp %.3f: a 1:2 cluster should make BSP wait", runs[0].WaitFraction, runs[2].WaitFraction)
		}
		csv, _ := os.ReadFile(filepath.Join(dir, "curves.csv"))
		if !strings.HasPrefix(string(csv), "paradigm,seed,seconds,test_accuracy,epoch,train_loss,batch_loss\n") || !strings.Contains(string(csv), "\nasp,2,") {
			t.Errorf("curves.csv:\n%.300s", csv)
		}
		html, _ := os.ReadFile(filepath.Join(dir, "report.html"))
		md, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
		for _, s := range []string{"bsp", "asp", "ssp:s=2", "backup:b=1"} {
			if !bytes.Contains(html, []byte(s)) || !bytes.Contains(md, []byte(s)) {
				t.Errorf("%s missing from the report or summary.md", s)
			}
		}
		// Every run trains to the horizon, not for the epochs.
		if want := "every run trains for "; !bytes.Contains(md, []byte(want)) || !bytes.Contains(md, []byte("of virtual time, what the slowest paradigm needs for 1 epoch.")) {
			t.Errorf("summary.md does not describe the horizon:\n%.600s", md)
		}
		if !bytes.Contains(html, []byte("data:image/png;base64,")) || !strings.Contains(out, "wrote") {
			t.Error("report without embedded plots, or no closing message")
		}
		if !strings.Contains(out, "over 2 seeds") {
			t.Errorf("no verdict with its uncertainty in the output:\n%s", out)
		}
	}
	if !bytes.Equal(sums[0], sums[1]) {
		t.Error("GOMAXPROCS=1 and 2 gave two different summary.json files")
	}
}

func TestCompareSimModeWithPreset(t *testing.T) {
	dir := t.TempDir()
	out, errs, code := pacer(t, "compare", "--mode", "sim", "--scenario", "mixed32", "--iterations", "30", "--seeds", "2", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	var sum compare.Summary
	if err := json.Unmarshal(b, &sum); err != nil || len(sum.Runs) < 10 || sum.Runs[0].Workers != 32 || sum.Runs[0].Scenario != "mixed32" {
		t.Fatalf("summary: %v %d runs\n%s", err, len(sum.Runs), out)
	}
	// Issue 9: sim mode names no winner by throughput alone.
	if sum.Verdict.Winner != nil || sum.Verdict.Metric != "none" || !strings.Contains(out, "--mode virtual") ||
		!strings.Contains(out, "staleness") || !strings.Contains(out, "waiting") {
		t.Errorf("sim verdict %+v\n%s", sum.Verdict, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "accuracy_vs_time.png")); err == nil {
		t.Error("a sim-only report has no accuracy curve to plot")
	}
}

// compare --help says what the pair preset runs, read from the preset (it
// said five paradigms when the preset had eight: issue 32).
func TestCompareHelpCountsThePairPreset(t *testing.T) {
	sc, err := scenario.Get("pair")
	if err != nil {
		t.Fatal(err)
	}
	out, _, code := pacer(t, "compare", "--help")
	m := regexp.MustCompile(`(\w+) paradigms racing over seeds\n\s+pacer compare --scenario pair`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("pacer compare --help: exit %d, no pair example counting paradigms:\n%s", code, out)
	}
	if want := fmt.Sprint(len(sc.Paradigms)); m[1] != want {
		t.Errorf("compare --help: %s paradigms in the pair example, the preset has %s", m[1], want)
	}
}

func TestShellJoinQuotes(t *testing.T) {
	got := shellJoin([]string{"--paradigms", "bsp;ssp:s=3", "--speeds", "1,2", "--out", "it's here", ""})
	want := `--paradigms 'bsp;ssp:s=3' --speeds 1,2 --out 'it'\''s here' ''`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// compare runs the live server too: every paradigm for real (in process),
// one report; flags that only shape virtual time are refused.
func TestCompareLiveInproc(t *testing.T) {
	dir := t.TempDir()
	out, errs, code := pacer(t, "compare", "--mode", "inproc", "--paradigms", "bsp;asp", "--workers", "2",
		"--dataset", "synthetic", "--epochs", "1", "--batch", "32", "--target", "0.5", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum compare.Summary
	if err := json.Unmarshal(b, &sum); err != nil || len(sum.Runs) != 2 {
		t.Fatalf("summary.json: %v, %d runs", err, len(sum.Runs))
	}
	for _, r := range sum.Runs {
		if r.Mode != "inproc" || r.Pushes == 0 || len(r.Curve) == 0 {
			t.Errorf("run %s: mode %s, %d pushes, curve %v", r.Paradigm, r.Mode, r.Pushes, r.Curve)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	if !strings.Contains(string(md), "live server in inproc mode") || !strings.Contains(out, "wrote") {
		t.Errorf("summary.md does not describe the live run:\n%s", md)
	}
	for _, c := range [][]string{
		{"--link", "rate=1Gbit"},
		{"--fail", "1@1s"},
		{"--iterations", "10"},
		{"--paradigms", "backup:b=1,set=shared"},
		{"--horizon", "1m"},
	} {
		args := append([]string{"compare", "--mode", "inproc", "--dataset", "synthetic", "--out", filepath.Join(dir, "no")}, c...)
		_, errs, code := pacer(t, args...)
		if code == 0 || !strings.Contains(errs, strings.TrimPrefix(c[0], "--")) && !strings.Contains(errs, "set=shared") {
			t.Errorf("%v: exit %d, %q: want a refusal", c, code, errs)
		}
		if _, err := os.Stat(filepath.Join(dir, "no")); err == nil {
			t.Errorf("%v: the refused run created its output directory", c)
		}
	}
}
