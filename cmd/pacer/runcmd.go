package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/launch"
	"github.com/pacer-ps/pacer/optim"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/spf13/cobra"
)

func init() { register(newRunCmd) }

func newRunCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run [flags] -- COMMAND [ARGS...]",
		Short: "train a PyTorch model of your own: shards here, N copies of your script as workers",
		Long: `Run a job of your own PyTorch model on this machine in one command, as torchrun runs
a DDP script: pacer run starts the shards (pacer server processes on loopback), creates
the job's secrets, and starts --workers copies of COMMAND as its workers, each told its
rank and the coordinator's address in its environment:

  PACER_COORDINATOR   shard 0's address (host:port)
  PACER_WORKER_ID     the worker's id, 0 … K−1 (also RANK and LOCAL_RANK, as torchrun)
  PACER_WORKERS       K (also WORLD_SIZE and LOCAL_WORLD_SIZE)
  PACER_TOKEN         the job token (the control token stays with the shards)
  PACER_INIT_FILE     worker 0 only: where to write the model's initial weights

pacer.Client and pacer.torch.Worker read the first three when not given them, and
pacer.torch.Worker writes the model's initial weights to PACER_INIT_FILE before it joins:
worker 0 starts first, alone, and the model's size and initial weights are that file's
(the job is --model flat:n=N with --init FILE). Then the shards and the other workers
start. The job ends after --epochs passes over --train-n samples (default: the --dataset's
training set) in batches of --batch, all workers together; the shards then write
--out/summary.json and their checkpoints, and pacer run exports the final model to
--out/model.npz (pacer.torch.load_flat reads it into the model). A worker that exits with
an error ends the job with it. Every process's output is in --out/NAME.log; the workers'
lines are also printed here, prefixed with their names (-v: the shards' too).`,
		Example: `  pacer run --workers 2 --paradigm ssp:s=2 -- python my_train.py
  pacer run --workers 4 --shards 2 --epochs 3 --batch 64 --lr 0.05 --train-n 50000 --out out/mine -- python train.py --width 32`,
		Args: cobra.ArbitraryArgs,
	}
	fs := cmd.Flags()
	var learn job.LearnFlags
	learn.Bind(fs)
	spec := fs.String("paradigm", "bsp", "paradigm spec, e.g. ssp:s=3 (every form: pacer --help)")
	workers := fs.Int("workers", 2, "copies of the worker command: the job's workers K (≥ 1)")
	shards := fs.Int("shards", 1, "shard servers S (≥ 1)")
	seed := fs.Uint64("seed", job.DefaultSeed, "seed of the workers' batch order (pacer.data.batches); the model's initial weights are worker 0's")
	trainN := fs.Int("train-n", 0, "training samples an epoch counts: the job ends after epochs·N/batch pushes (0: --dataset's training set, after --train-limit)")
	schedule := fs.String("lr-schedule", "", "learning-rate schedule (as pacer train's)")
	heartbeat := fs.Duration("heartbeat-timeout", time.Minute, "remove a worker silent for this long (> 0)")
	out := fs.String("out", "out/run", "directory for init.npz, summary.json, model.npz, ckpt/ and the processes' logs")
	timeout := fs.Duration("timeout", 0, "stop everything if the job has not ended by then (0: no limit)")
	host := fs.String("host", "127.0.0.1", "address the shard servers bind")
	verbose := fs.BoolP("v", "v", false, "print the shards' logs here too")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 || cmd.ArgsLenAtDash() != 0 {
			return usage(errors.New("give the worker command after --, e.g. pacer run --workers 2 -- python my_train.py (the flags before -- are pacer's, those after it the script's)"))
		}
		set := setFlags(fs)
		switch {
		case *workers < 1:
			return usage(fmt.Errorf("--workers=%d: need at least 1", *workers))
		case *shards < 1:
			return usage(fmt.Errorf("--shards=%d: need at least 1", *shards))
		case set["seed"] && *seed == 0:
			return usage(errors.New("--seed=0: seeds start at 1"))
		case *heartbeat <= 0:
			return usage(fmt.Errorf("--heartbeat-timeout=%s must be positive", *heartbeat))
		case *timeout < 0:
			return usage(fmt.Errorf("--timeout=%s must not be negative", *timeout))
		case set["model"]:
			return usage(fmt.Errorf("--model=%s: a run's model is its workers' own (flat:n=N, its size and initial weights from worker 0); leave --model out", learn.Model))
		}
		sp, err := paradigm.Parse(*spec)
		if err != nil {
			return usage(fmt.Errorf("--paradigm: %w", err))
		}
		sched, err := optim.ParseSchedule(*schedule)
		if err != nil {
			return usage(fmt.Errorf("--lr-schedule: %w", err))
		}
		c := job.Config{Spec: sp, Workers: *workers, Shards: *shards, Seed: *seed, HeartbeatTimeout: *heartbeat, Schedule: sched}
		learn.ApplyTo(&c)
		c.Model = ""
		rc := launch.RunConfig{Job: c, TrainN: *trainN, Command: args, Out: *out, Host: *host, Output: stderr, Verbose: *verbose}
		if err := launch.CheckRun(&rc); err != nil {
			return usage(err)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if *timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeoutCause(ctx, *timeout, fmt.Errorf("--timeout %s", *timeout))
			defer cancel()
		}
		res, err := launch.Run(ctx, rc)
		if err != nil {
			return err
		}
		r := res.Run
		fmt.Fprintf(stdout, "%s: %d workers, %d shard(s), model flat:n=%d: %d pushes, %d updates in %.1f s\nwrote %s\nwrote %s (pacer.torch.load_flat reads it into the model)\n",
			r.Paradigm, *workers, *shards, res.Params, r.Pushes, r.Updates, r.Seconds, res.Summary, res.Model)
		return nil
	}
	return cmd
}
