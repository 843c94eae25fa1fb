package launch

import (
	"context"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/timing"
)

// A job of one Go and one PyTorch worker (python/torch_worker.py) on the
// same shards trains, and both workers push: the PyTorch worker speaks the
// protocol and holds pacer's MLP layout, or the Go worker's gradients and
// its own would not add up to a trained model.
func TestTCPPythonWorkers(t *testing.T) {
	skipUnderRace(t)
	if err := exec.Command(defaultPython, "-c", "import torch, numpy").Run(); err != nil {
		t.Skip("PyTorch is not installed for /usr/bin/python3 (scripts/setup installs python3-torch as root)")
	}
	// bsp and ssp: the gate holds the Go worker until the PyTorch one,
	// slower to start (it imports torch), has joined and pushed; under asp
	// the Go worker may finish the job alone first.
	// bsp+recipes: the papers' recipes, which the PyTorch worker carries
	// out as the Go worker does (python/torch_worker.py), in one job.
	for _, spec := range []string{"bsp", "ssp:s=2", "bsp+recipes"} {
		t.Run(spec, func(t *testing.T) {
			o := tcpOpts(t)
			o.PythonWorkers, o.PythonWorker = 1, filepath.Join("..", "python", "torch_worker.py")
			cfg := fmnistJob(t, strings.TrimSuffix(spec, "+recipes"), 2, 2, 6000, 1)
			if strings.HasSuffix(spec, "+recipes") {
				cfg.Sampling, cfg.Normalize, cfg.ClipNorm = job.SamplingGlobal, job.NormalizeMean, 2
			}
			// No faults here, so no removal is wanted: a timeout (and with
			// it the startup grace) longer than any interpreter's start
			// on a busy machine. At 5 s (a 20 s grace) the PyTorch worker,
			// importing torch at load 24, was removed before it connected
			// and the Go worker ran the ssp job alone.
			cfg.HeartbeatTimeout = 2 * time.Minute
			cfg.Momentum = 0.9
			res, err := TrainResult(context.Background(), cfg, o, nil)
			if err != nil {
				t.Fatal(err)
			}
			r := res.Run
			t.Logf("%s: acc %.3f pushes %d worker pushes %v seconds %.2f", spec, r.FinalAccuracy, r.Pushes, r.WorkerPushes, r.Seconds)
			if res.Coord.Removed != 0 {
				t.Errorf("%d workers removed in a run without faults", res.Coord.Removed)
			}
			if len(r.WorkerPushes) != 2 || r.WorkerPushes[0] == 0 || r.WorkerPushes[1] == 0 {
				t.Errorf("worker pushes %v: want both workers pushing", r.WorkerPushes)
			}
			if cfg.Normalize != "" && len(r.ChannelMean) != 1 {
				t.Errorf("normalize %q: the summary's mean %v", r.Normalize, r.ChannelMean)
			}
			// Both kinds of worker send each batch's loss with its push.
			if res.Coord.BatchLosses != r.Pushes || len(r.BatchLoss) != len(r.Curve) {
				t.Errorf("%d losses reported for %d pushes, %d batch losses for %d evaluations", res.Coord.BatchLosses, r.Pushes, len(r.BatchLoss), len(r.Curve))
			}
			if r.FinalAccuracy < 0.65 { // Go workers alone: 0.727 on this job
				t.Errorf("final accuracy %.3f: want ≥ 0.65 after one epoch of 6000 samples", r.FinalAccuracy)
			}
		})
	}
}

// What the PyTorch workers cannot run is refused before any process
// starts, naming why.
func TestPythonWorkersRefused(t *testing.T) {
	base := fmnistJob(t, "bsp", 2, 1, 600, 1)
	cases := []struct {
		name string
		mod  func(o *Options)
		want string
	}{
		{"inproc", func(o *Options) { o.Mode = "inproc" }, "needs --mode tcp"},
		{"too many", func(o *Options) { o.PythonWorkers = 3 }, "3 PyTorch workers for a job of 2"},
		{"negative", func(o *Options) { o.PythonWorkers = -1 }, "must not be negative"},
		{"no script", func(o *Options) { o.PythonWorker = "/nonexistent/torch_worker.py" }, "the PyTorch worker script"},
		{"no interpreter", func(o *Options) { o.PythonBin = "/nonexistent/python3" }, "the Python interpreter"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := Options{Mode: "tcp", Binary: pacerBin, PythonWorkers: 1, PythonWorker: filepath.Join("..", "python", "torch_worker.py")}
			c.mod(&o)
			_, err := TrainResult(context.Background(), base, o, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v: want %q", err, c.want)
			}
		})
	}
	cfg := base
	cfg.Model = "cnn"
	cfg.Dataset = "cifar10"
	if err := checkPythonWorkers(cfg, &Options{Mode: "tcp", PythonWorkers: 1}); err == nil || !strings.Contains(err.Error(), "IDX") {
		t.Errorf("cifar10: err %v", err)
	}
	cfg = base
	cfg.Timing = timing.WorkerSpec{Speeds: []float64{1, 2}}
	if err := checkPythonWorkers(cfg, &Options{Mode: "tcp", PythonWorkers: 1}); err == nil || !strings.Contains(err.Error(), "Go workers only") {
		t.Errorf("speeds: err %v", err)
	}
	if err := checkPythonWorkers(fmnistJob(t, "elastic:r=4,apply=local", 2, 1, 600, 1), &Options{Mode: "tcp", PythonWorkers: 1}); err == nil ||
		!strings.Contains(err.Error(), "apply=local needs Go workers") {
		t.Errorf("elastic apply=local: err %v", err)
	}
}

// A PyTorch worker computes on one BLAS thread unless the user sized the
// pool, and gets the worker token but never the control token.
func TestPythonWorkerEnv(t *testing.T) {
	got := pythonEnv([]string{"HOME=/h", "PACER_CONTROL_TOKEN=c", "OMP_NUM_THREADS=4"}, "w", "/py")
	want := map[string]string{"HOME": "/h", "PACER_TOKEN": "w", "PYTHONPATH": "/py",
		"OMP_NUM_THREADS": "4", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
	seen := map[string]string{}
	for _, kv := range got {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := seen[k]; dup {
			t.Fatalf("%s set twice in %q", k, got)
		}
		seen[k] = v
	}
	if !reflect.DeepEqual(seen, want) {
		t.Fatalf("env %v, want %v", seen, want)
	}
}
