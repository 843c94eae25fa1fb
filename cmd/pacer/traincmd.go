package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/pacer-ps/pacer/auto"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/launch"
	"github.com/pacer-ps/pacer/live"
	"github.com/pacer-ps/pacer/optim"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/train"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func init() { register(newTrainCmd) }

// trainFlags are the job flags shared by train and compare.
type trainFlags struct {
	cl        clusterFlags
	learn     job.LearnFlags
	schedule  string
	evalEvery float64
	target    float64
	targets   []float64
	net       netFlags
}

func (t *trainFlags) bind(fs *pflag.FlagSet) {
	t.cl.bind(fs, 1)
	t.net.bindLinks(fs)
	t.learn.Bind(fs)
	fs.StringVar(&t.schedule, "lr-schedule", "", scheduleUsage)
	fs.Float64Var(&t.evalEvery, "eval-every", job.DefaultEvalEvery, "test accuracy every this many epochs (> 0)")
	fs.Float64Var(&t.target, "target", 0, "report the time to reach this test accuracy (e.g. 0.85)")
	fs.Float64SliceVar(&t.targets, "targets", nil, "also report the time and epochs to reach each of these test accuracies (e.g. 0.67,0.68)")
}

func (t *trainFlags) job(spec paradigm.Spec) (job.Config, error) {
	if err := t.cl.validate(); err != nil {
		return job.Config{}, err
	}
	if err := job.CheckEval(t.evalEvery, t.target); err != nil {
		return job.Config{}, err
	}
	sched, err := optim.ParseSchedule(t.schedule)
	if err != nil {
		return job.Config{}, fmt.Errorf("--lr-schedule: %w", err)
	}
	c := job.Config{Schedule: sched, Spec: spec, Workers: t.cl.workers, Shards: t.cl.shards, Seed: t.cl.seed,
		EvalEvery: t.evalEvery, Target: t.target, Targets: t.targets, Timing: t.cl.timing(), ServerDelay: t.cl.serverDelay,
		SearchCost: t.cl.searchCost}
	if c.SearchCost == 0 {
		c.SearchCost = -1 // job.Config: zero is the default, negative free
	}
	t.learn.ApplyTo(&c)
	if _, err := job.NewModel(c); err != nil {
		return c, err
	}
	if c.Network, err = t.net.links(t.cl.workers, t.cl.shards); err != nil {
		return c, err
	}
	return c, c.Fill()
}

func newTrainCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "train",
		Short: "train a model with a paradigm (virtual time, in process, or over TCP)",
		Long: `Train a model with one synchronization paradigm and write summary.json to --out.

--mode virtual (the default) trains real models in simulated cluster time: the cluster's
speeds, jitter and stragglers are flags, and the same seed gives the same bytes.
--mode inproc runs the live server with workers as goroutines; --mode tcp runs the live
server and workers as processes on loopback. The live modes run at this machine's real
speed, so the flags that shape virtual time are refused there.

Progress goes to stderr: a bar with an ETA on a terminal, plain lines otherwise.`,
		Example: `  # SSP with staleness 2 on 3 workers, one of them 2.2 times slower
  pacer train --paradigm ssp:s=2 --workers 3 --speeds 1,1,2.2 --epochs 2 --out out/ssp

  # report when test accuracy first reaches 85%, with a step-decay learning rate
  pacer train --paradigm bsp --workers 4 --target 0.85 --lr-schedule step:every=2,gamma=0.5

  # the live server over TCP on loopback, with checkpoints
  pacer train --mode tcp --paradigm asp --workers 4 --checkpoint-dir ckpt
  pacer train --mode tcp --paradigm ssp:s=3 --workers 3 --python-workers 2   # one Go and two PyTorch workers`,
	}
	fs := cmd.Flags()
	var tf trainFlags
	tf.bind(fs)
	spec := fs.String("paradigm", "bsp", "paradigm spec, e.g. ssp:s=3 (every form: pacer --help)")
	mode := modeFlag(fs, "mode", runstats.Virtual, "virtual (simulated cluster time, deterministic) | inproc (live server, goroutines) | tcp (live server, processes on loopback)",
		runstats.Virtual, runstats.Inproc, runstats.TCP)
	out := fs.String("out", "out/train", "directory for summary.json")
	var lo launch.Options
	fs.StringVar(&lo.Host, "host", "127.0.0.1", "tcp mode: address the shard servers bind")
	fs.StringVar(&lo.Token, "token", "", "live modes: shared secret every connection presents (default: random per job)")
	fs.StringVar(&lo.CheckpointDir, "checkpoint-dir", "", "live modes: checkpoint the shards here (atomically) every --checkpoint-interval and at shutdown")
	fs.DurationVar(&lo.CheckpointInterval, "checkpoint-interval", live.DefaultCheckpointInterval, "live modes: time between shard checkpoints")
	fs.BoolVar(&lo.Restore, "restore", false, "live modes: start the shards from the checkpoints in --checkpoint-dir")
	fs.StringVar(&lo.Durability, "durability", live.DurabilityCheckpoint, "live modes: what an acknowledged push survives: checkpoint (a killed shard loses the updates since its last checkpoint) | log (acknowledged once in a write-ahead log in --checkpoint-dir; nothing acknowledged is lost)")
	fs.StringVar(&lo.MetricsAddr, "metrics-addr", "", "live modes: serve Prometheus metrics at host:port (shard i at port+i)")
	verbose := fs.BoolP("v", "v", false, "live modes: print the servers' and workers' logs to stderr")
	fs.IntVar(&lo.PythonWorkers, "python-workers", 0, "tcp mode: run the last N of the --workers as PyTorch workers (python/torch_worker.py; docs/python.md)")
	fs.StringVar(&lo.PythonWorker, "python-worker", "", "tcp mode: the PyTorch worker script (default: python/torch_worker.py beside the pacer binary, else under the working directory)")
	cmd.RunE = func(*cobra.Command, []string) error {
		if err := checkTrainModeFlags(*mode, setFlags(fs)); err != nil {
			return usage(err)
		}
		if *mode != runstats.Virtual && lo.CheckpointInterval <= 0 {
			return usage(fmt.Errorf("--checkpoint-interval=%s must be positive", lo.CheckpointInterval))
		}
		if err := live.CheckDurability(lo.Durability, lo.CheckpointDir); *mode != runstats.Virtual && err != nil {
			return usage(err)
		}
		sp, err := paradigm.Parse(*spec)
		if err != nil {
			return usage(fmt.Errorf("--paradigm: %w", err))
		}
		if err := live.CheckAutoDurability(sp, lo.Durability); *mode != runstats.Virtual && err != nil {
			return usage(err)
		}
		if *mode != runstats.Virtual {
			tf.net.live = *mode
		}
		cfg, err := tf.job(sp)
		if err != nil {
			return usage(err)
		}
		if err := refuseDeviceRate(setFlags(fs), tf.cl.base.auto); err != nil {
			return usage(err)
		}
		if tf.cl.base.auto {
			if *mode != runstats.Virtual {
				return usage(errLiveAuto)
			}
			if cfg.Timing.Base, err = resolveBase(cfg.Model, cfg.Dataset, cfg.Batch, tf.cl.deviceRate, stderr); err != nil {
				return usage(err)
			}
		}
		undo, err := prepareOut(*out)
		if err != nil {
			return usage(err)
		}
		var r *runstats.Run
		if *mode == runstats.Virtual {
			r, err = trainVirtual(cfg, stderr)
		} else {
			lo.Mode = *mode
			if *verbose {
				lo.Log = stderr
			}
			r, err = trainLive(cfg, lo, stderr)
		}
		if errors.Is(err, launch.ErrInterrupted) && r != nil {
			// Ctrl-C keeps what was measured: the summary so far, marked.
			path, werr := writeJSON(*out, "summary.json", r)
			if werr != nil {
				return errors.Join(err, werr)
			}
			fmt.Fprintf(stdout, "%s: interrupted after %d pushes (%.1f wall seconds); test accuracy %.4f when stopped\nwrote %s (\"interrupted\": true)\n",
				r.Paradigm, r.Pushes, r.Seconds, r.FinalAccuracy, path)
			return err
		}
		if err != nil {
			undo()
			return err
		}
		fmt.Fprintf(stdout, "%s: final test accuracy %.4f (best %.4f) after %.1f %s seconds\n",
			r.Paradigm, r.FinalAccuracy, r.BestAccuracy, r.Seconds, map[bool]string{true: "virtual", false: "wall"}[r.Mode == runstats.Virtual])
		if r.TimeToTarget != nil {
			fmt.Fprintf(stdout, "reached %.3f at %.1f s\n", r.Target, *r.TimeToTarget)
		} else if r.Target > 0 {
			fmt.Fprintf(stdout, "never reached %.3f\n", r.Target)
		}
		for i, a := range r.Targets {
			switch {
			case r.TimesToTargets[i] == nil:
				fmt.Fprintf(stdout, "target %.3f: never reached\n", a)
			case i < len(r.EpochsToTargets) && r.EpochsToTargets[i] != nil:
				fmt.Fprintf(stdout, "target %.3f: reached at %.1f s, epoch %.2f\n", a, *r.TimesToTargets[i], *r.EpochsToTargets[i])
			default:
				fmt.Fprintf(stdout, "target %.3f: reached at %.1f s\n", a, *r.TimesToTargets[i])
			}
		}
		path, err := writeJSON(*out, "summary.json", r)
		if err != nil {
			undo()
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", path)
		return nil
	}
	return cmd
}

// liveOnlyFlags configure the live servers, which virtual mode does not run.
var liveOnlyFlags = []string{"host", "token", "checkpoint-dir", "checkpoint-interval", "restore", "durability", "metrics-addr", "v", "python-workers", "python-worker"}

// checkTrainModeFlags refuses a valid --mode's inapplicable flags given on
// the command line (given): virtual time's cluster model in the live modes,
// the live servers' settings in virtual mode. A flag that would be ignored
// is an error, not a surprise in the results.
func checkTrainModeFlags(mode runstats.Mode, given map[string]bool) error {
	if given["fail"] {
		return fmt.Errorf("--fail applies to pacer sim and pacer compare --mode sim only; pacer train simulates no worker failures (in the live modes, stop a worker process)")
	}
	switch mode {
	case runstats.Virtual:
		return refuseGiven(given, liveOnlyFlags, "configures the live servers; virtual mode runs none (use --mode inproc or tcp)")
	case runstats.Inproc, runstats.TCP:
		if err := refuseGiven(given, virtualOnlyFlags, "is the simulated shards' apply speed; the live shards apply at their own (use --mode virtual)"); err != nil {
			return err
		}
		if mode == runstats.Inproc {
			if err := refuseGiven(given, []string{"python-workers", "python-worker"}, "runs PyTorch workers as processes; inproc mode runs goroutines (use --mode tcp)"); err != nil {
				return err
			}
			return refuseGiven(given, []string{"host"}, "is the address tcp mode binds; inproc mode binds none (use --mode tcp)")
		}
		return nil
	}
	return fmt.Errorf("--mode=%q: valid modes are virtual, inproc, tcp", mode)
}

func trainVirtual(cfg job.Config, stderr io.Writer) (*runstats.Run, error) {
	ds, err := job.Data(cfg)
	if err != nil {
		return nil, err
	}
	pr := newProgress(stderr)
	pr.every = 0 // every evaluation is worth a line
	if pr.tty {
		pr.every = 100 * time.Millisecond
	}
	pr.start(permille, false)
	r, err := train.Virtual(cfg, ds, &train.Options{Plan: auto.Configure, Progress: func(p train.Progress) {
		pr.set(epochPermille(p.Epoch, cfg.Epochs))
		pr.printf("train %s: epoch %.2f/%g  test accuracy %.4f  %s  virtual %s  wall %s", cfg.Spec, p.Epoch, cfg.Epochs,
			p.Accuracy, sampleRate(p, ds.Train.N), p.Virtual.Round(time.Second), p.Wall.Round(time.Second))
	}})
	pr.done()
	return r, err
}

func trainLive(cfg job.Config, lo launch.Options, stderr io.Writer) (*runstats.Run, error) {
	// SIGINT/SIGTERM cancel the job: the summary so far is kept (marked
	// interrupted), the shards checkpoint (with --checkpoint-dir) and the
	// processes shut down cleanly.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// After the first signal a second one ends the process at once (the
	// children die with it), should keeping the summary take too long.
	context.AfterFunc(ctx, stop)
	pr := newProgress(stderr)
	pr.every = 0
	if pr.tty {
		pr.every = 100 * time.Millisecond
	}
	pr.start(permille, false)
	r, err := launch.Train(ctx, cfg, lo, func(p runstats.Progress) {
		pr.set(epochPermille(p.Epoch, cfg.Epochs))
		pr.printf("train %s (%s): epoch %.2f/%g  test accuracy %.4f  %.1f pushes/s  waiting %.0f%%  live workers %d  %s",
			cfg.Spec, lo.Mode, p.Epoch, cfg.Epochs, p.Accuracy, p.Throughput, 100*p.WaitFraction, p.Live,
			(time.Duration(p.Seconds * float64(time.Second))).Round(time.Second))
	})
	pr.done()
	return r, err
}

// A training bar counts thousandths of the run's epochs.
const permille = 1000

func epochPermille(epoch, epochs float64) int64 {
	if !(epochs > 0) {
		return 0
	}
	return int64(min(1, epoch/epochs) * permille)
}

// writeJSON writes v as indented JSON to dir/name atomically.
func writeJSON(dir, name string, v any) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	return path, writeFileAtomic(path, append(b, '\n'))
}

// writeFileAtomic writes b to path through a temporary file beside it, so
// a reader never sees half a file.
func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// scheduleUsage is --lr-schedule's usage: one syntax for every command
// that trains (pacer train, compare, run and server).
const scheduleUsage = "learning-rate schedule: step:every=E,gamma=G (every E epochs), step:at=E1/E2/…,gamma=G (at those epochs, fractions allowed) or exp:gamma=G (every epoch), and/or warmup:steps=N,div=K, joined by +"
