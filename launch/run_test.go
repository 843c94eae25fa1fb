package launch

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/modelfile"
	"github.com/pacer-ps/pacer/paradigm"
)

// runJob is a short flat job of pacer run's test worker
// (testdata/run_worker.py: numpy only, its gradient its weights).
func runJob(t *testing.T, spec string, workers, shards int) RunConfig {
	t.Helper()
	if err := exec.Command(defaultPython, "-c", "import numpy").Run(); err != nil {
		t.Skip("NumPy is not installed for /usr/bin/python3 (scripts/setup installs python3-numpy)")
	}
	py, err := filepath.Abs(filepath.Join("..", "python"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PYTHONPATH", py)
	t.Setenv("PYTHONSAFEPATH", "1")
	sp, err := paradigm.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "run_worker.py"))
	if err != nil {
		t.Fatal(err)
	}
	return RunConfig{
		Job:     job.Config{Spec: sp, Workers: workers, Shards: shards, Epochs: 1, Batch: 10, LR: 0.1, Momentum: -1, HeartbeatTimeout: 2 * time.Minute},
		TrainN:  200, // 20 pushes, all workers together
		Command: []string{defaultPython, script},
		Out:     t.TempDir(),
		Binary:  pacerBin,
	}
}

// guard bounds a run that should end by itself: a hang fails the test.
func guard(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func jsonLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// Every copy of the script is told its rank, the job's size and the
// coordinator, worker 0 alone where to write the initial weights; none
// gets the control token. The shards start from worker 0's file, the job
// ends at its length with a summary, and the export is the final weights:
// w⁰ = 1…10 shrunk by (1 − lr) at each of the 20 BSP rounds' 2 pushes
// (the gradient is the weights; under bsp each is applied with lr).
func TestRunHandsEachWorkerItsRank(t *testing.T) {
	skipUnderRace(t)
	rc := runJob(t, "bsp", 2, 2)
	res, err := Run(guard(t), rc)
	if err != nil {
		t.Fatal(err)
	}
	if res.Params != 10 || res.Run.Model != "flat:n=10" || res.Run.NoAccuracy == "" {
		t.Errorf("params %d, summary model %q, no_accuracy %q: want flat:n=10, the summary saying why it has no accuracy", res.Params, res.Run.Model, res.Run.NoAccuracy)
	}
	if res.Run.Pushes != 20 || len(res.Run.WorkerPushes) != 2 || res.Run.WorkerPushes[0] == 0 || res.Run.WorkerPushes[1] == 0 {
		t.Errorf("pushes %d %v: want the job's 20, both workers pushing", res.Run.Pushes, res.Run.WorkerPushes)
	}
	for p := range 2 {
		var env map[string]any
		for _, l := range jsonLines(t, filepath.Join(rc.Out, "worker-"+strconv.Itoa(p)+".log")) {
			if l["event"] == "env" {
				env, _ = l["env"].(map[string]any)
			}
		}
		id := strconv.Itoa(p)
		want := map[string]any{"PACER_WORKER_ID": id, "RANK": id, "LOCAL_RANK": id, "PACER_WORKERS": "2", "WORLD_SIZE": "2",
			"LOCAL_WORLD_SIZE": "2", "PACER_CONTROL_TOKEN": nil, "token_set": true, "PACER_INIT_FILE": nil}
		if p == 0 {
			want["PACER_INIT_FILE"] = res.Init
		}
		for k, v := range want {
			if env[k] != v {
				t.Errorf("worker %d: %s = %v, want %v", p, k, env[k], v)
			}
		}
		if c, _ := env["PACER_COORDINATOR"].(string); !strings.HasPrefix(c, "127.0.0.1:") {
			t.Errorf("worker %d: PACER_COORDINATOR %q", p, c)
		}
	}
	w, err := modelfile.ReadFlat(res.Model, 10)
	if err != nil {
		t.Fatal(err)
	}
	// Each round applies the mean of two equal gradients (both workers
	// pulled the same weights): w ← w − 0.1·w, 10 rounds... the job's 20
	// pushes are 10 rounds of 2.
	f := float32(1)
	for range 10 {
		f -= 0.1 * f
	}
	for i, v := range w {
		if want := float32(i+1) * f; v < want*0.999 || v > want*1.001 {
			t.Errorf("exported w[%d] = %v, want %v (w⁰ %d after 10 rounds of w ← 0.9·w)", i, v, want, i+1)
		}
	}
}

// A copy of the script that fails ends the run with its exit status and
// its last line, every other process stopped (under bsp the other worker
// would otherwise wait at the gate for ever).
func TestRunEndsWithAFailingWorker(t *testing.T) {
	skipUnderRace(t)
	rc := runJob(t, "bsp", 2, 1)
	t.Setenv("RUN_WORKER_FAIL", "exit:1")
	_, err := Run(guard(t), rc)
	if err == nil || !strings.Contains(err.Error(), "worker-1 exited: exit status 4: worker 1 fails on purpose") {
		t.Fatalf("err %v: want worker-1's exit status and last line", err)
	}
}

// Worker 0 failing before it wrote the initial weights ends the run
// before any shard starts; exiting without writing them says what was
// missing.
func TestRunWithoutInitialWeights(t *testing.T) {
	skipUnderRace(t)
	rc := runJob(t, "bsp", 2, 1)
	t.Setenv("RUN_WORKER_FAIL", "exit:0")
	if _, err := Run(guard(t), rc); err == nil || !strings.Contains(err.Error(), "worker-0 exited: exit status 4") {
		t.Errorf("err %v: want worker-0's exit status", err)
	}
	if _, err := os.Stat(filepath.Join(rc.Out, "shard-0.log")); err == nil {
		t.Error("a shard was started without the initial weights")
	}
	rc.Command = []string{"/bin/true"}
	if _, err := Run(guard(t), rc); err == nil || !strings.Contains(err.Error(), "without writing the model's initial weights to $PACER_INIT_FILE") {
		t.Errorf("err %v: want the missing initial weights named", err)
	}
}

// Workers that all exit 0 before the job's end would leave the shards
// waiting for pushes for ever: the run says so.
func TestRunWorkersLeaveEarly(t *testing.T) {
	skipUnderRace(t)
	rc := runJob(t, "asp", 2, 1)
	t.Setenv("RUN_WORKER_FAIL", "early")
	if _, err := Run(guard(t), rc); err == nil || !strings.Contains(err.Error(), "every worker exited with status 0 after 0 of the job's 20 pushes") {
		t.Errorf("err %v: want the early exit named with the job's pushes", err)
	}
}

// A run that cannot start is refused before anything starts, naming the
// field.
func TestRunRefusesBadConfig(t *testing.T) {
	base := func() RunConfig {
		return RunConfig{Job: job.Config{Spec: paradigm.Spec{Kind: paradigm.BSP}, Workers: 2, Shards: 1}, TrainN: 100,
			Command: []string{"/bin/true"}, Out: filepath.Join(t.TempDir(), "out"), Binary: pacerBin}
	}
	for _, c := range []struct {
		name string
		edit func(*RunConfig)
		want string
	}{
		{"no command", func(rc *RunConfig) { rc.Command = nil }, "no worker command"},
		{"missing command", func(rc *RunConfig) { rc.Command = []string{"/no/such/python"} }, `the worker command "/no/such/python"`},
		{"model", func(rc *RunConfig) { rc.Job.Model = "mlp" }, `model "mlp"`},
		{"train-n", func(rc *RunConfig) { rc.TrainN = -1 }, "--train-n=-1"},
		{"out", func(rc *RunConfig) { rc.Out = "" }, "--out"},
		{"batch", func(rc *RunConfig) { rc.Job.Batch = -3 }, "batch"},
		{"speeds", func(rc *RunConfig) { rc.Job.Timing.Speeds = []float64{1, 2} }, "real speed"},
	} {
		rc := base()
		c.edit(&rc)
		_, err := Run(context.Background(), rc)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
		if rc.Out != "" {
			if _, err := os.Stat(rc.Out); err == nil {
				t.Errorf("%s: refused, but %s was made", c.name, rc.Out)
			}
		}
	}
}
