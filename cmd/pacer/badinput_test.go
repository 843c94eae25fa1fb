package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/train"
)

// quick is a training job small enough for a test, on data every machine has.
var quick = []string{"--dataset", "synthetic", "--train-limit", "500", "--test-limit", "200", "--epochs", "0.5"}

// started matches the progress lines a run prints once it has begun.
var started = regexp.MustCompile(`test accuracy [0-9]|compare: \[|[0-9]+ training and [0-9]+ test samples|pushes/s`)

// refused runs pacer with --out set to a directory that does not exist yet
// and checks the project's rule for bad input: a non-zero exit, an error
// naming want (the flag), no run started and nothing written.
func refused(t *testing.T, want string, args ...string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	if args[0] == "train" || args[0] == "compare" {
		args = append(args, "--out", out)
	}
	stdout, errs, code := pacer(t, args...)
	if code == 0 || !strings.Contains(errs, want) {
		t.Errorf("pacer %v: exit %d, stderr %.300q; want an error naming %q", args, code, errs, want)
	}
	if started.MatchString(errs) {
		t.Errorf("pacer %v: refused only after it started running: %q", args, errs)
	}
	if strings.Contains(stdout, "wrote") {
		t.Errorf("pacer %v wrote output: %q", args, stdout)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("pacer %v created --out %s", args, out)
	}
}

// Issue 1: a flag that shapes only the simulated cluster (the shards'
// apply rate; the workers' speeds, server delays and, in tcp mode, links
// are emulated live since issue 12) means nothing in a live mode,
// and a live server's setting means nothing in virtual mode: both are
// refused, naming the flag, rather than silently ignored.
func TestTrainRefusesFlagsItsModeIgnores(t *testing.T) {
	for _, c := range []struct {
		want string
		args []string
	}{
		{"--apply-rate", []string{"--mode", "tcp", "--apply-rate", "1e9"}},
		{"--link", []string{"--mode", "inproc", "--link", "rate=1Gbit"}},
		{"--restore", []string{"--restore"}},
		{"--checkpoint-dir", []string{"--checkpoint-dir", "ckpt"}},
		{"--checkpoint-interval", []string{"--checkpoint-interval", "1m"}},
		{"--metrics-addr", []string{"--mode", "virtual", "--metrics-addr", "127.0.0.1:9100"}},
		{"--token", []string{"--token", "s3cret"}},
		{"--host", []string{"--host", "127.0.0.1"}},
		{"--host", []string{"--mode", "inproc", "--host", "127.0.0.1"}},
		{"--v", []string{"-v"}},
		{"--fail", []string{"--fail", "0@1s"}},
		{"--fail", []string{"--mode", "inproc", "--fail", "0@1s"}},
		{"--checkpoint-interval", []string{"--mode", "inproc", "--checkpoint-interval", "0s"}},
		{"--checkpoint-interval", []string{"--mode", "tcp", "--checkpoint-interval", "-1s"}},
	} {
		refused(t, c.want, append(append([]string{"train"}, quick...), c.args...)...)
	}
	_, errs, _ := pacer(t, "train", "--mode", "inproc", "--link", "rate=1Gbit")
	if !strings.Contains(errs, "--link") || !strings.Contains(errs, "tcp mode only") {
		t.Errorf("the refusal should say why and what to use instead: %q", errs)
	}
}

// The same for compare: the simulator's run length and failures in virtual
// mode, the learning flags in sim mode.
func TestCompareRefusesFlagsItsModeIgnores(t *testing.T) {
	for _, c := range []struct {
		want string
		args []string
	}{
		{"--fail", []string{"--workers", "2", "--fail", "1@10s"}},
		{"--iterations", []string{"--iterations", "50"}},
		{"--duration", []string{"--mode", "virtual", "--duration", "1m"}},
		{"--epochs", []string{"--mode", "sim", "--epochs", "3"}},
		{"--momentum", []string{"--mode", "sim", "--momentum", "0"}},
		{"--target", []string{"--mode", "sim", "--target", "0.8"}},
		{"--lr-schedule", []string{"--mode", "sim", "--lr-schedule", "step:every=1,gamma=0.5"}},
		{"--iterations", []string{"--mode", "sim", "--iterations", "5", "--duration", "1m"}},
		{"--mode", []string{"--mode", "live"}},
	} {
		refused(t, c.want, append([]string{"compare", "--paradigms", "bsp;asp"}, c.args...)...)
	}
}

// Issue 4: values that job.Config would replace by its defaults, or read
// differently, are refused when given, naming the flag.
func TestExplicitInvalidValuesAreRefused(t *testing.T) {
	for _, c := range []struct {
		want string
		args []string
	}{
		{"epochs", []string{"train", "--epochs", "0"}},
		{"epochs", []string{"train", "--epochs", "-1"}},
		{"batch", []string{"train", "--batch", "0"}},
		{"lr", []string{"train", "--lr", "0"}},
		{"lr", []string{"compare", "--paradigms", "bsp", "--lr", "-0.1"}},
		{"momentum", []string{"train", "--momentum", "-0.5"}},
		{"momentum", []string{"train", "--momentum", "1"}},
		{"optimizer", []string{"train", "--optimizer", "adagrad"}},
		{"optimizer", []string{"compare", "--paradigms", "bsp", "--optimizer", "adam:b1=1"}},
		{"adam takes no momentum", []string{"train", "--optimizer", "adam", "--momentum", "0.9"}},
		{"adamw takes no momentum", []string{"train", "--optimizer", "adamw", "--momentum", "0.9"}},
		{"centered=yes, want true or false", []string{"train", "--optimizer", "rmsprop:centered=yes"}},
		{"weight-decay", []string{"train", "--weight-decay", "-0.001"}},
		{"train-limit", []string{"train", "--train-limit", "-5"}},
		{"--eval-every", []string{"train", "--eval-every", "0"}},
		{"--eval-every", []string{"compare", "--paradigms", "bsp", "--eval-every", "-0.5"}},
		{"--target", []string{"train", "--target", "NaN"}},
		{"--jitter", []string{"train", "--jitter", "NaN"}},
		{"--seed", []string{"train", "--seed", "0"}},
		{"--seed", []string{"compare", "--mode", "sim", "--paradigms", "bsp", "--seed", "0"}},
		{"--paradigms: bad paradigm spec \"avg(ssp:s=3)\": a group needs at least two members", []string{"compare", "--mode", "sim", "--paradigms", "bsp;avg(ssp:s=3)"}},
		{"avg(ssp:s=3..4) is given twice", []string{"compare", "--mode", "sim", "--paradigms", "avg(ssp:s=3..4);avg(ssp:s=3..4)"}},
		{"batch=8 and batch-total=128 on 8 workers", []string{"compare", "--mode", "sim", "--paradigms", "bsp", "--base", "auto", "--device-rate", "1e10", "--model", "cifar-net", "--workers", "8", "--batch-total", "128", "--batch", "8"}},
		{"a group (avg(…)) runs in the deterministic modes", []string{"compare", "--mode", "inproc", "--paradigms", "bsp;avg(ssp:s=3|asp)"}},
		{"--seed", []string{"sim", "--paradigm", "bsp", "--workers", "2", "--seed", "0"}},
		{"--iterations", []string{"sim", "--paradigm", "bsp", "--workers", "2", "--iterations", "5", "--duration", "1m"}},
	} {
		refused(t, c.want, c.args...)
	}
}

// Issue 20, item 9: the numbers that size a run are bounded by documented
// limits, on the command line as in a scenario file, and the refusal names
// the flag or key before anything is allocated. Each of these ran before
// (the larger figures, workers 1e8 or r=1e9, passed 3.5 GB in
// seconds; these are just past the limits, so today's code runs them
// quickly instead of refusing).
func TestNumbersBeyondTheLimitsAreRefused(t *testing.T) {
	dir := t.TempDir()
	scen := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	negShards := scen("shards.yaml", "paradigms: [bsp]\nworkers: 2\nshards: -1\n")
	negIters := scen("iters.yaml", "paradigms: [bsp]\nworkers: 2\niterations: -3\n")
	negLimit := scen("limit.yaml", "paradigms: [bsp]\nworkers: 2\ntrain_limit: -10\n")
	bigR := scen("elastic.yaml", "paradigms: [\"elastic:r=10001\"]\nworkers: 2\n")
	tiny := []string{"--dataset", "synthetic", "--train-limit", "64", "--test-limit", "10"}
	for _, c := range []struct {
		want string
		args []string
	}{
		{"--workers=100001", []string{"sim", "--paradigm", "bsp", "--workers", "100001", "--iterations", "1"}},
		{"--shards=1001", []string{"sim", "--paradigm", "bsp", "--workers", "1", "--shards", "1001", "--iterations", "1"}},
		{"--iterations=1000001", []string{"sim", "--paradigm", "bsp", "--workers", "1", "--iterations", "1000001"}},
		{"--cdf-iterations=1000001", []string{"sim", "--arrival-cdf", "--workers", "1", "--cdf-iterations", "1000001"}},
		{"r=\"10001\"", []string{"sim", "--paradigm", "elastic:r=10001", "--workers", "2", "--iterations", "1"}},
		{"r=10000 for --workers=1001", []string{"sim", "--paradigm", "elastic:r=10000", "--workers", "1001", "--iterations", "1"}},
		{"--workers=100001", []string{"compare", "--mode", "sim", "--paradigms", "bsp", "--workers", "100001", "--iterations", "1"}},
		{"--iterations=1000001", []string{"compare", "--mode", "sim", "--paradigms", "bsp", "--workers", "1", "--iterations", "1000001"}},
		{"shards=-1", []string{"compare", "--mode", "sim", "--scenario", negShards}},
		{"iterations=-3", []string{"compare", "--mode", "sim", "--scenario", negIters}},
		{"train_limit=-10", []string{"compare", "--mode", "sim", "--scenario", negLimit}},
		{"r=\"10001\"", []string{"compare", "--mode", "sim", "--scenario", bigR}},
		{"epochs", append([]string{"train", "--epochs", "1001"}, tiny...)},
		{"batch", append([]string{"train", "--batch", "65537"}, tiny...)},
		{"workers=100001", append([]string{"train", "--workers", "100001"}, tiny...)},
	} {
		refused(t, c.want, c.args...)
	}
}

// Issue 3: a bad --out and a bad paradigm list are found before any run
// starts, and leave nothing behind.
func TestBadOutputAndParadigmListsFailBeforeRunning(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "afile")
	if err := os.WriteFile(file, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(file, "y")
	for _, args := range [][]string{
		append([]string{"train", "--out", bad}, quick...),
		append([]string{"compare", "--paradigms", "bsp;asp", "--out", bad}, quick...),
		{"compare", "--mode", "sim", "--paradigms", "bsp;asp", "--workers", "2", "--out", bad},
		{"train", "--out", ""},
	} {
		stdout, errs, code := pacer(t, args...)
		if code == 0 || !strings.Contains(errs, "--out") {
			t.Errorf("pacer %v: exit %d, stderr %q; want an error naming --out", args, code, errs)
		}
		if started.MatchString(errs) || strings.Contains(stdout, "wrote") {
			t.Errorf("pacer %v ran before refusing --out:\n%s%s", args, stdout, errs)
		}
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "keep" {
		t.Errorf("the file in the way was changed: %q, %v", b, err)
	}
	for _, list := range []string{"bsp;bsp", "ssp:s=3;asp;ssp:s=3", "bsp;;asp", "bsp;", ";"} {
		refused(t, "--paradigms", "compare", "--mode", "sim", "--workers", "2", "--paradigms", list)
		refused(t, "--paradigms", append([]string{"compare", "--paradigms", list}, quick...)...)
	}
}

// A run that fails after --out was created removes the directory again
// when it is still empty.
func TestPrepareOutUndo(t *testing.T) {
	base := t.TempDir()
	out := filepath.Join(base, "a", "b")
	undo, err := prepareOut(out)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(out); err != nil || !st.IsDir() {
		t.Fatalf("--out not created: %v", err)
	}
	if left, _ := os.ReadDir(out); len(left) != 0 {
		t.Errorf("the write test left %v", left)
	}
	undo()
	if _, err := os.Stat(filepath.Join(base, "a")); !os.IsNotExist(err) {
		t.Errorf("undo left the directories it created: %v", err)
	}
	// A directory that existed before, or that holds files, stays.
	undo, err = prepareOut(base)
	if err != nil {
		t.Fatal(err)
	}
	undo()
	if _, err := os.Stat(base); err != nil {
		t.Errorf("undo removed a directory it did not create: %v", err)
	}
}

// Issue 2: --fail works with compare --mode sim: the failed worker stops
// pushing, and the report describes the simulated cluster, not a training
// job that never ran (issue 6).
func TestCompareSimModeRunsFailures(t *testing.T) {
	pushes := func(extra ...string) ([]runstats.Run, string) {
		dir := t.TempDir()
		args := append([]string{"compare", "--mode", "sim", "--paradigms", "asp;bsp", "--workers", "3",
			"--duration", "2m", "--seeds", "1", "--out", dir}, extra...)
		_, errs, code := pacer(t, args...)
		if code != 0 {
			t.Fatalf("pacer %v: exit %d: %s", args, code, errs)
		}
		b, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
		var sum compare.Summary
		if err := json.Unmarshal(b, &sum); err != nil || len(sum.Runs) != 2 {
			t.Fatalf("summary.json: %v, %d runs", err, len(sum.Runs))
		}
		html, _ := os.ReadFile(filepath.Join(dir, "report.html"))
		return sum.Runs, string(html)
	}
	healthy, _ := pushes()
	failed, html := pushes("--fail", "1@10s")
	for i, r := range failed {
		h := healthy[i]
		if len(r.WorkerPushes) != 3 || r.WorkerPushes[1] >= h.WorkerPushes[1]/2 || r.WorkerPushes[0] == 0 {
			t.Errorf("%s: worker pushes %v with worker 1 failing at 10 s of 120, %v without", r.Paradigm, r.WorkerPushes, h.WorkerPushes)
		}
	}
	if !strings.Contains(html, "timing only") || !strings.Contains(html, "1@10s") || strings.Contains(html, "epochs") {
		t.Errorf("the sim report's description should describe the simulated cluster, not a training job")
	}
}

// A scenario's iteration count gives way to an explicit --duration rather
// than making the two alternatives collide.
func TestCompareSimDurationOverridesScenarioIterations(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.json")
	os.WriteFile(file, []byte(`{"name":"it","paradigms":["asp"],"workers":2,"iterations":1000}`), 0o644)
	_, errs, code := pacer(t, "compare", "--mode", "sim", "--scenario", file, "--duration", "10s", "--out", filepath.Join(dir, "out"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "out", "summary.json"))
	var sum compare.Summary
	if err := json.Unmarshal(b, &sum); err != nil || len(sum.Runs) != 5 || sum.Runs[0].VirtualSeconds > 11 || sum.HorizonSeconds != 10 {
		t.Errorf("summary %s: %v", b, err)
	}
}

// Issue 5: progress lines show throughput (training samples per virtual
// second) besides epoch and accuracy.
func TestTrainProgressShowsThroughput(t *testing.T) {
	dir := t.TempDir()
	_, errs, code := pacer(t, append([]string{"train", "--workers", "2", "--speeds", "1,2", "--eval-every", "0.25", "--out", dir}, quick...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	m := regexp.MustCompile(`epoch [0-9.]+/0.5  test accuracy [0-9.]+  ([0-9.]+) samples/virtual s`).FindAllStringSubmatch(errs, -1)
	if len(m) == 0 {
		t.Fatalf("no progress line with throughput:\n%s", errs)
	}
	for _, s := range m {
		if v, _ := strconv.ParseFloat(s[1], 64); !(v > 0) {
			t.Errorf("throughput %s in %q", s[1], s[0])
		}
	}
}

func TestSampleRate(t *testing.T) {
	if got := sampleRate(train.Progress{Epoch: 0.5, Virtual: 2 * time.Second}, 1000); got != "250.0 samples/virtual s" {
		t.Errorf("0.5 epochs of 1000 samples in 2 virtual s: %q", got)
	}
	if got := sampleRate(train.Progress{}, 1000); strings.ContainsAny(got, "0123456789") {
		t.Errorf("no rate at virtual time 0: %q", got)
	}
}

// Issue 13: a model of your own (flat:n=N) lives on pacer server shards
// with PyTorch workers; the commands that would have to run it in Go
// refuse it, saying where it trains, before anything starts.
func TestFlatModelRefusedOutsideServer(t *testing.T) {
	want := `its workers are your own PyTorch scripts (docs/python.md, "A model of your own")`
	refused(t, want, append([]string{"train", "--model", "flat:n=10"}, quick...)...)
	refused(t, want, append([]string{"train", "--mode", "tcp", "--python-workers", "1", "--model", "flat:n=10"}, quick...)...)
	refused(t, want, append([]string{"compare", "--paradigms", "bsp;asp", "--model", "flat:n=10"}, quick...)...)
	refused(t, "want flat:n=N", append([]string{"train", "--model", "flat:n=0"}, quick...)...)
}
