package launch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/runstats"
)

// pythonModels are the models python/pacer/models.py has (MODELS), on
// Fashion-MNIST's 28×28 images, the only ones torch_worker.py reads.
var pythonModels = []string{"mlp", "cnn", "alexnet-small", "cifar-net"}

// defaultPython is Debian's interpreter, the one whose python3-torch and
// python3-numpy scripts/setup installs.
const defaultPython = "/usr/bin/python3"

// checkPythonWorkers refuses a PyTorch-worker request the job cannot run,
// before any process starts (a worker's error would otherwise be only its
// exit status), and fills in the script and interpreter.
func checkPythonWorkers(cfg job.Config, opt *Options) error {
	n := opt.PythonWorkers
	switch {
	case n == 0:
		return nil
	case n < 0:
		return fmt.Errorf("launch: python workers %d: must not be negative", n)
	case opt.Mode != runstats.TCP:
		return fmt.Errorf("launch: PyTorch workers run as processes: --python-workers needs --mode tcp, not %s", opt.Mode)
	case n > cfg.Workers:
		return fmt.Errorf("launch: %d PyTorch workers for a job of %d workers", n, cfg.Workers)
	case cfg.Spec.LocalSteps():
		return errors.New("launch: the PyTorch client does not step its own copy between barriers: elastic apply=local needs Go workers")
	case !slices.Contains(pythonModels, cfg.Model):
		return fmt.Errorf("launch: model %q has no PyTorch counterpart in python/pacer/models.py (%s)", cfg.Model, strings.Join(pythonModels, ", "))
	case cfg.Dataset != "fashion-mnist" && cfg.Dataset != "mnist":
		return fmt.Errorf("launch: python/torch_worker.py reads IDX data sets (fashion-mnist, mnist), not %s", cfg.Dataset)
	case len(cfg.Timing.Speeds) > 0 || cfg.Timing.Jitter > 0 || !cfg.Timing.Straggler.IsZero():
		// A Go worker stretches its compute to emulate a slower machine;
		// a PyTorch worker runs at its own speed, so the run would not be
		// the cluster asked for.
		return errors.New("launch: emulated worker speeds (--speeds, --jitter, --straggler) apply to Go workers only; PyTorch workers run at their real speed")
	}
	if opt.PythonBin == "" {
		opt.PythonBin = defaultPython
	}
	if opt.PythonWorker == "" {
		var tried []string
		var bases []string
		if opt.Binary != "" {
			bases = append(bases, filepath.Dir(opt.Binary))
		} else if exe, err := os.Executable(); err == nil {
			bases = append(bases, filepath.Dir(exe))
		}
		if wd, err := os.Getwd(); err == nil {
			bases = append(bases, wd)
		}
		for _, b := range bases {
			p := filepath.Join(b, "python", "torch_worker.py")
			tried = append(tried, p)
			if _, err := os.Stat(p); err == nil {
				opt.PythonWorker = p
				break
			}
		}
		if opt.PythonWorker == "" {
			return fmt.Errorf("launch: no python/torch_worker.py found (looked at %v): give its path (--python-worker)", tried)
		}
	}
	abs, err := filepath.Abs(opt.PythonWorker)
	if err != nil {
		return err
	}
	if _, err := os.Stat(abs); err != nil {
		return fmt.Errorf("launch: the PyTorch worker script: %w", err)
	}
	opt.PythonWorker = abs
	if _, err := os.Stat(opt.PythonBin); err != nil {
		return fmt.Errorf("launch: the Python interpreter for PyTorch workers: %w", err)
	}
	return nil
}
