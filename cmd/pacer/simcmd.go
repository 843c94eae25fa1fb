package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pacer-ps/pacer/auto"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/report"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/sim"
	"github.com/pacer-ps/pacer/timing"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func init() { register(newSimCmd) }

func newSimCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "simulate a paradigm on a cluster you describe (no gradient math)",
		Long: `Simulate one synchronization paradigm on a cluster you describe, in virtual time and
without gradient math, and print its throughput, waiting, staleness and gaps.

The run ends after --iterations per worker or at --duration of virtual time.

With a network (--network on, or any of --link, --worker-link, --shard-link, --apply-rate),
every push and pull moves its block's bytes through the worker's and the shard's links
(shared max-min fairly; the model and its known error: docs/paradigms.md, "The network"), every
clock report, release and pull request costs one latency, and a shard applies an update
at --apply-rate floats per second. The model's size comes from --model or --params.
` + networkHelp() + `

The same seed gives the same result. --arrival-cdf instead prints the distribution of the
k-th gradient's arrival per iteration (the straggler figure of the backup-workers paper).`,
		Example: `  # SSP with staleness 3 on a 1:2 pair of workers, 500 iterations each
  pacer sim --paradigm ssp:s=3 --workers 2 --speeds 1,2 --iterations 500

  # backup workers on 100 heavy-tailed workers for ten virtual minutes, as JSON
  pacer sim --paradigm backup:b=4 --workers 100 --straggler heavytail --duration 10m --json

  # worker 2 dies after 30 virtual seconds
  pacer sim --paradigm bsp --workers 4 --fail 2@30s --duration 2m

  # the k-th gradient arrival CDF on 100 workers
  pacer sim --workers 100 --straggler heavytail --arrival-cdf

  # BSP on 16 workers whose pushes and pulls of the CNN cross 1 Gbit/s links,
  # shard 0 on a 10 Gbit/s one
  pacer sim --paradigm bsp --workers 16 --model cnn --link rate=1Gbit,latency=100us --shard-link 0:rate=10Gbit`,
	}
	fs := cmd.Flags()
	var cl clusterFlags
	cl.bind(fs, 0)
	spec := fs.String("paradigm", "", "paradigm spec (required), e.g. ssp:s=3 (every form: pacer --help)")
	iters := fs.Int("iterations", 0, "end after N × workers pushes in total (default 100; not with --duration)")
	dur := fs.Duration("duration", 0, "end at this virtual time, e.g. 10m (not with --iterations)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	cdf := fs.Bool("arrival-cdf", false, "print the CDF of the k-th gradient arrival per iteration (the backup-workers paper's straggler figure) and exit")
	cdfIters := fs.Int("cdf-iterations", 2000, "iterations sampled by --arrival-cdf")
	var nf netFlags
	nf.bindLinks(fs)
	nf.bindSize(fs)
	cmd.RunE = func(*cobra.Command, []string) error {
		return runSim(fs, &cl, simFlags{spec, iters, dur, asJSON, cdf, cdfIters, &nf}, stdout, stderr)
	}
	return cmd
}

// simFlags are sim's own flags, bound by newSimCmd.
type simFlags struct {
	spec        *string
	iters       *int
	dur         *time.Duration
	asJSON, cdf *bool
	cdfIters    *int
	net         *netFlags
}

func runSim(fs *pflag.FlagSet, cl *clusterFlags, f simFlags, stdout, stderr io.Writer) error {
	spec, iters, dur, asJSON, cdf, cdfIters := f.spec, f.iters, f.dur, f.asJSON, f.cdf, f.cdfIters
	if cl.workers == 0 {
		return usage(fmt.Errorf("--workers is required"))
	}
	if err := cl.validate(); err != nil {
		return usage(err)
	}
	if err := refuseDeviceRate(setFlags(fs), cl.base.auto); err != nil {
		return usage(err)
	}
	// resolveAuto times the step of base: auto once the other flags
	// are known good; the limits that depend on the base are checked after.
	resolveAuto := func() error {
		if !cl.base.auto {
			return nil
		}
		// sim has no batch: the step is the training default's.
		d, err := resolveBase(f.net.model, job.DefaultDataset, job.DefaultBatch, cl.deviceRate, stderr)
		if err != nil {
			return err
		}
		cl.base.d = d
		return cl.validate()
	}
	if *cdf {
		if err := resolveAuto(); err != nil {
			return usage(err)
		}
		if err := cl.size(*cdfIters, 0).Check("--"); err != nil || *cdfIters < 1 {
			return usage(fmt.Errorf("--cdf-iterations=%d: need 1 to %d, and %d × --workers at most %d pushes (docs/paradigms.md, Limits)",
				*cdfIters, job.MaxIterations, *cdfIters, job.MaxPushes))
		}
		return printArrivalCDF(stdout, *cl, *cdfIters)
	}
	if *spec == "" {
		return usage(fmt.Errorf("--paradigm is required; valid forms: %s", paradigm.Forms))
	}
	sp, err := paradigm.Parse(*spec)
	if err != nil {
		return usage(err)
	}
	if *iters < 0 || *dur < 0 {
		return usage(fmt.Errorf("--iterations=%d and --duration=%s must not be negative", *iters, *dur))
	}
	if given := setFlags(fs); given["iterations"] && given["duration"] {
		return usage(fmt.Errorf("--iterations and --duration are alternatives: give one"))
	}
	fails, err := sim.ParseFailures(cl.failures, cl.workers)
	if err != nil {
		return usage(fmt.Errorf("--fail: %w", err))
	}
	netSpec, params, err := f.net.simSpec(cl.workers, cl.shards, cl.base.auto)
	if err != nil {
		return usage(err)
	}
	if err := resolveAuto(); err != nil {
		return usage(err)
	}
	if err := cl.size(*iters, *dur, sp).Check("--"); err != nil {
		return usage(err)
	}
	pr := newProgress(stderr)
	cfg := sim.Config{Network: netSpec, Params: params, Spec: sp, Workers: cl.workers, Shards: cl.shards, Timing: cl.timing(),
		ServerDelay: cl.serverDelay, Iterations: *iters, Duration: *dur, Seed: cl.seed, Failures: fails, SearchCost: cl.searchCost,
		Clock: time.Now, // measures the controller; the run does not depend on it
		Progress: func(pushes, target int64, now time.Duration) {
			if target > 0 {
				pr.printf("sim %s: %d/%d pushes (%.0f%%), virtual %s", sp, pushes, target, 100*float64(pushes)/float64(target), now.Round(time.Second))
			} else {
				pr.printf("sim %s: %d pushes, virtual %s", sp, pushes, now.Round(time.Second))
			}
		}}
	auto.Configure(&cfg)
	r, err := sim.Run(cfg)
	pr.done()
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		return enc.Encode(r)
	}
	printRun(stdout, r, cl.base.d > 0)
	return nil
}

// printRun prints r; baseGiven is whether --base set the iteration time
// (the links' busy shares rest on it).
func printRun(w io.Writer, r *runstats.Run, baseGiven bool) {
	fmt.Fprintf(w, "paradigm        %s (%d workers, %d shards, seed %d)\n", r.Paradigm, r.Workers, r.Shards, r.Seed)
	fmt.Fprintf(w, "pushes          %d in %.1f virtual s → throughput %.3f pushes/s\n", r.Pushes, r.VirtualSeconds, r.Throughput)
	if r.Withheld > 0 {
		fmt.Fprintf(w, "updates         %d (dropped %d; %d blocks not sent, the shard known to drop them)\n", r.Updates, r.Dropped, r.Withheld)
	} else {
		fmt.Fprintf(w, "updates         %d (dropped %d)\n", r.Updates, r.Dropped)
	}
	fmt.Fprintf(w, "wait_fraction   %.3f (share of worker time spent not computing)\n", r.WaitFraction)
	fmt.Fprintf(w, "max_gap         %d clocks between fastest and slowest at a release\n", r.MaxGap)
	fmt.Fprintf(w, "staleness       mean %.2f, max %d\n", r.StalenessMean, r.StalenessMax)
	if r.Network != "" {
		fmt.Fprintf(w, "network         %s\n", r.Network)
		if ts := r.TimeSplit; ts != nil {
			fmt.Fprintf(w, "worker time     compute %.1f%%, push %.1f%%, gate %.1f%%, pull %.1f%%, held at a shard %.1f%%\n",
				100*ts.Compute, 100*ts.Push, 100*ts.Gate, 100*ts.Pull, 100*ts.Server)
		}
		if len(r.ShardLinkIn) <= 16 {
			parts := make([]string, len(r.ShardLinkIn))
			for i := range r.ShardLinkIn {
				parts[i] = fmt.Sprintf("%.2f/%.2f", r.ShardLinkIn[i], r.ShardLinkOut[i])
			}
			fmt.Fprintf(w, "shard links     %s (share of the run busy in/out)\n", strings.Join(parts, " "))
		}
		if i, busy, ok := report.LinkBusy(r); ok {
			note := ""
			if !baseGiven {
				note = "; " + report.AssumedBase
			}
			fmt.Fprintf(w, "links busy      %.1f%% (shard %d's, in + out): the network %s (under %.0f%%: does not matter; over %.0f%%: dominates%s)\n",
				100*busy, i, report.NetworkRole(r), 100*report.NetworkIdle, 100*report.NetworkDominant, note)
		}
	}
	if r.ControllerCalls > 0 {
		fmt.Fprintf(w, "controller      %d calls, %.3f ms wall (%.2f µs per call)\n", r.ControllerCalls,
			r.ControllerSeconds*1e3, r.ControllerSeconds*1e6/float64(r.ControllerCalls))
	}
	if len(r.WorkerWait) <= 16 {
		parts := make([]string, len(r.WorkerWait))
		for i, v := range r.WorkerWait {
			parts[i] = fmt.Sprintf("%.2f", v)
		}
		fmt.Fprintf(w, "per-worker wait %s\n", strings.Join(parts, " "))
	}
}

func printArrivalCDF(w io.Writer, cl clusterFlags, iters int) error {
	tw, err := timing.NewWorkers(cl.timing(), cl.workers, cl.seed)
	if err != nil {
		return err
	}
	var ranks []int
	for k := max(1, cl.workers-10); k <= cl.workers; k++ {
		ranks = append(ranks, k)
	}
	a, err := timing.SimulateArrivals(tw, iters, ranks)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "k-th gradient arrival time, %d workers (%s), %d iterations: share of iterations within each time\n", cl.workers, tw, iters)
	return a.WriteTable(w, []time.Duration{1500 * time.Millisecond, 2 * time.Second, 3 * time.Second, 5 * time.Second, 10 * time.Second})
}
