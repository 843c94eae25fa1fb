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

// Issue 5: a small compare end to end, on a Fashion-MNIST subset (synthetic
// data when the real files are absent); the files exist, say what they
// should, and the same seed gives the same summary.json byte for byte.
func TestCompareEndToEnd(t *testing.T) {
	dataset := []string{"--train-limit", "4000", "--test-limit", "800"}
	if _, err := os.Stat("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"); err != nil {
		dataset = []string{"--dataset", "synthetic"}
	}
	var sums [2][]byte
	for i := range sums {
		dir := t.TempDir()
		args := append([]string{"compare", "--paradigms", "bsp;asp;ssp:s=2;backup:b=1", "--workers", "3",
			"--speeds", "1,2", "--epochs", "1", "--eval-every", "0.5", "--target", "0.6", "--out", dir}, dataset...)
		out, errs, code := pacer(t, args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		for _, f := range []string{"report.html", "accuracy_vs_time.png", "wait_per_worker.png", "staleness.png",
			"throughput.png", "summary.md", "summary.json"} {
			if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
				t.Errorf("%s missing or empty: %v", f, err)
			}
		}
		sums[i], _ = os.ReadFile(filepath.Join(dir, "summary.json"))
		var runs []runstats.Run
		if err := json.Unmarshal(sums[i], &runs); err != nil || len(runs) != 4 {
			t.Fatalf("summary.json: %v, %d runs", err, len(runs))
		}
		for _, r := range runs {
			if r.Mode != "virtual" || len(r.Curve) < 2 || r.Pushes == 0 || r.Target != 0.6 {
				t.Errorf("run %s: %+v", r.Paradigm, r)
			}
		}
		if runs[0].WaitFraction <= runs[1].WaitFraction {
			t.Errorf("bsp waited %.3f, asp %.3f: a 1:2 cluster should make BSP wait", runs[0].WaitFraction, runs[1].WaitFraction)
		}
		html, _ := os.ReadFile(filepath.Join(dir, "report.html"))
		md, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
		for _, s := range []string{"bsp", "asp", "ssp:s=2", "backup:b=1"} {
			if !bytes.Contains(html, []byte(s)) || !bytes.Contains(md, []byte(s)) {
				t.Errorf("%s missing from the report or summary.md", s)
			}
		}
		if !bytes.Contains(html, []byte("data:image/png;base64,")) || !strings.Contains(out, "wrote") {
			t.Error("report without embedded plots, or no closing message")
		}
		if !strings.Contains(out, "reached") && !strings.Contains(out, "No paradigm") {
			t.Errorf("no winner sentence in the output:\n%s", out)
		}
	}
	if !bytes.Equal(sums[0], sums[1]) {
		t.Error("the same seed gave two different summary.json files")
	}
}

func TestCompareSimModeWithPreset(t *testing.T) {
	dir := t.TempDir()
	out, errs, code := pacer(t, "compare", "--mode", "sim", "--scenario", "mixed32", "--iterations", "30", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	var runs []runstats.Run
	if err := json.Unmarshal(b, &runs); err != nil || len(runs) < 5 || runs[0].Workers != 32 || runs[0].Scenario != "mixed32" {
		t.Fatalf("summary: %v %d runs\n%s", err, len(runs), out)
	}
	if _, err := os.Stat(filepath.Join(dir, "accuracy_vs_time.png")); err == nil {
		t.Error("a sim-only report has no accuracy curve to plot")
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
	var runs []runstats.Run
	if err := json.Unmarshal(b, &runs); err != nil || len(runs) != 2 {
		t.Fatalf("summary.json: %v, %d runs", err, len(runs))
	}
	for _, r := range runs {
		if r.Mode != "inproc" || r.Pushes == 0 || len(r.Curve) == 0 {
			t.Errorf("run %s: mode %s, %d pushes, curve %v", r.Paradigm, r.Mode, r.Pushes, r.Curve)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	if !strings.Contains(string(md), "live server in inproc mode") || !strings.Contains(out, "wrote") {
		t.Errorf("summary.md does not describe the live run:\n%s", md)
	}
	for _, c := range [][]string{
		{"--speeds", "1,2"},
		{"--fail", "1@1s"},
		{"--iterations", "10"},
		{"--paradigms", "elastic:r=4,apply=local"},
	} {
		args := append([]string{"compare", "--mode", "inproc", "--dataset", "synthetic", "--out", filepath.Join(dir, "no")}, c...)
		_, errs, code := pacer(t, args...)
		if code == 0 || !strings.Contains(errs, strings.TrimPrefix(c[0], "--")) && !strings.Contains(errs, "apply=local") {
			t.Errorf("%v: exit %d, %q: want a refusal", c, code, errs)
		}
		if _, err := os.Stat(filepath.Join(dir, "no")); err == nil {
			t.Errorf("%v: the refused run created its output directory", c)
		}
	}
}
