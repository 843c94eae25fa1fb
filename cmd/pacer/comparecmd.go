package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/pacer-ps/pacer/live"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/report"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/scenario"
	"github.com/pacer-ps/pacer/sim"
	"github.com/pacer-ps/pacer/train"
)

func init() {
	register(command{name: "compare", short: "run several paradigms on one scenario and write a report", run: runCompare})
}

func runCompare(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("compare", stderr)
	var tf trainFlags
	tf.bind(fs)
	list := fs.String("paradigms", "", "paradigm specs separated by ';' (default: the scenario's)")
	scen := fs.String("scenario", "", "a preset ("+strings.Join(scenario.Names(), ", ")+") or a YAML/JSON scenario file; flags given explicitly override it")
	mode := fs.String("mode", "virtual", "virtual (train real models in simulated cluster time) | sim (timing only, no model) | inproc | tcp (the live server on this machine, real time)")
	iters := fs.Int("iterations", 0, "sim mode: iterations per worker (default 100; not with --duration)")
	dur := fs.Duration("duration", 0, "sim mode: virtual time to simulate (not with --iterations)")
	out := fs.String("out", "out/compare", "directory for report.html, plots, summary.md and summary.json")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	given := setFlags(fs) // before the scenario sets its own
	if err := checkCompareModeFlags(*mode, given); err != nil {
		return err
	}
	sc := &scenario.Scenario{Name: "custom"}
	if *scen != "" {
		var err error
		if sc, err = scenario.Get(*scen); err != nil {
			return err
		}
		if err := applyScenario(fs, sc, iters); err != nil {
			return err
		}
	}
	what := "--paradigms"
	if *list != "" {
		sc.Paradigms = []string{*list}
	} else if *scen != "" {
		what = "scenario " + sc.Name + ": paradigms"
	}
	specs, err := parseParadigms(strings.Join(sc.Paradigms, ";"), what)
	if err != nil {
		return err
	}
	if *iters < 0 || *dur < 0 {
		return fmt.Errorf("--iterations=%d and --duration=%s must not be negative", *iters, *dur)
	}
	// Validate every run's job before spending minutes on the first one.
	for _, sp := range specs {
		if _, err := tf.job(sp); err != nil {
			return fmt.Errorf("%s: %w", sp, err)
		}
		if err := liveSpec(*mode, sp); err != nil {
			return fmt.Errorf("%s: %w", sp, err)
		}
	}
	if *scen != "" && (*mode == "inproc" || *mode == "tcp") {
		fmt.Fprintf(stderr, "compare: the live %s mode runs at this machine's real speed; the scenario's simulated speeds and delays do not apply\n", *mode)
	}
	fails, err := parseFailures(tf.cl.failures, tf.cl.workers)
	if err != nil {
		return err
	}
	desc := sc.Description
	if desc == "" {
		desc = describe(tf, *mode, *iters, *dur)
	}
	rs := report.Scenario{Title: "pacer compare: " + sc.Name, Description: desc,
		Command: "pacer compare " + shellJoin(args), Target: tf.target}
	undo, err := prepareOut(*out)
	if err != nil {
		return err
	}
	runs, err := compareRuns(*mode, tf, specs, fails, *iters, *dur, sc.Name, stderr)
	if err != nil {
		undo()
		return err
	}
	paths, err := report.Write(*out, rs, runs)
	if err != nil {
		undo()
		return err
	}
	fmt.Fprint(stdout, report.Markdown(rs, runs))
	_, sentence := report.Winner(rs, runs)
	fmt.Fprintf(stdout, "\n%s\n\nwrote %s\nopen %s in a browser\n", sentence, strings.Join(paths, ", "), paths[0])
	return nil
}

// checkCompareModeFlags refuses a valid --mode's inapplicable flags given
// on the command line: the simulator's run length and failures in virtual
// mode, which trains for --epochs; the learning flags in sim mode, which
// trains nothing.
func checkCompareModeFlags(mode string, given map[string]bool) error {
	switch mode {
	case "virtual":
		if given["fail"] {
			return fmt.Errorf("--fail applies to compare --mode sim only; virtual training simulates no worker failures")
		}
		return refuseGiven(given, []string{"iterations", "duration"}, "applies to compare --mode sim only; virtual mode trains for --epochs")
	case "sim":
		if given["iterations"] && given["duration"] {
			return fmt.Errorf("--iterations and --duration are alternatives: give one")
		}
		return refuseGiven(given, learningFlags(), "applies to training; compare --mode sim simulates timing only (use --mode virtual)")
	case "inproc", "tcp":
		if given["fail"] {
			return fmt.Errorf("--fail applies to compare --mode sim only; the live modes run real workers")
		}
		if err := refuseGiven(given, []string{"iterations", "duration"}, "applies to compare --mode sim only; the live modes train for --epochs"); err != nil {
			return err
		}
		return refuseGiven(given, virtualTimeFlags, "shapes virtual time; the live modes run at this machine's real speed (use --mode virtual)")
	}
	return fmt.Errorf("--mode=%q: valid modes are virtual, sim, inproc and tcp", mode)
}

// liveSpec refuses, before any run, a paradigm option the live modes
// cannot carry out.
func liveSpec(mode string, sp paradigm.Spec) error {
	if mode != "inproc" && mode != "tcp" {
		return nil
	}
	return live.CheckSpec(sp)
}

// learningFlags are the names of the flags that only training reads.
func learningFlags() []string {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	var l job.LearnFlags
	l.Bind(fs)
	names := []string{"lr-schedule", "eval-every", "target"}
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}

// compareRuns runs every paradigm of a comparison in turn.
func compareRuns(mode string, tf trainFlags, specs []paradigm.Spec, fails []sim.Failure, iters int, dur time.Duration,
	name string, stderr io.Writer) ([]runstats.Run, error) {
	var runs []runstats.Run
	pr := newProgress(stderr)
	defer pr.done()
	start := time.Now()
	switch mode {
	case "sim":
		for i, sp := range specs {
			pr.printf("compare: [%d/%d] simulating %s", i+1, len(specs), sp)
			r, err := sim.Run(sim.Config{Spec: sp, Workers: tf.cl.workers, Shards: tf.cl.shards, Timing: tf.cl.timing(),
				ServerDelay: tf.cl.serverDelay, Iterations: iters, Duration: dur, Seed: tf.cl.seed, Failures: fails,
				Clock: time.Now})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", sp, err)
			}
			pr.printf("compare: [%d/%d] %-22s %.3f pushes/virtual s  waiting %.0f%%  wall %s", i+1, len(specs), sp,
				r.Throughput, 100*r.WaitFraction, time.Since(start).Round(time.Second))
			r.Scenario = name
			runs = append(runs, *r)
		}
	case "virtual":
		cfg0, _ := tf.job(specs[0])
		ds, err := train.Data(cfg0)
		if err != nil {
			return nil, err
		}
		pr.printf("compare: %s, %d training and %d test samples from %s", ds.Train.Name, ds.Train.N, ds.Test.N, ds.Source)
		for i, sp := range specs {
			cfg, _ := tf.job(sp)
			r, err := train.Virtual(cfg, ds, func(p train.Progress) {
				pr.printf("compare: [%d/%d] %-22s epoch %.2f/%g  test accuracy %.4f  %s  virtual %-8s  wall %s",
					i+1, len(specs), sp, p.Epoch, cfg.Epochs, p.Accuracy, sampleRate(p, ds.Train.N),
					p.Virtual.Round(time.Second), time.Since(start).Round(time.Second))
			})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", sp, err)
			}
			r.Scenario = name
			runs = append(runs, *r)
		}
	case "inproc", "tcp":
		// SIGINT/SIGTERM stop the run in progress cleanly.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		for i, sp := range specs {
			cfg, _ := tf.job(sp)
			r, err := live.Train(ctx, cfg, live.Options{Mode: mode}, func(p live.Progress) {
				pr.printf("compare: [%d/%d] %-22s (%s) epoch %.2f/%g  test accuracy %.4f  %.1f pushes/s  waiting %.0f%%  wall %s",
					i+1, len(specs), sp, mode, p.Epoch, cfg.Epochs, p.Accuracy, p.Throughput, 100*p.WaitFraction,
					time.Since(start).Round(time.Second))
			})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", sp, err)
			}
			r.Scenario = name
			runs = append(runs, *r)
		}
	}
	return runs, nil
}

// applyScenario sets every flag the user did not give from the scenario.
func applyScenario(fs *flag.FlagSet, sc *scenario.Scenario, iters *int) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	set := func(name, v string, nonzero bool) error {
		if !nonzero || given[name] {
			return nil
		}
		return fs.Set(name, v)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	speeds := make([]string, len(sc.Speeds))
	for i, v := range sc.Speeds {
		speeds[i] = f(v)
	}
	for _, e := range []error{
		set("workers", strconv.Itoa(sc.Workers), sc.Workers > 0),
		set("shards", strconv.Itoa(sc.Shards), sc.Shards > 0),
		set("speeds", strings.Join(speeds, ","), len(speeds) > 0),
		set("jitter", f(sc.Jitter), sc.Jitter > 0),
		set("straggler", sc.Straggler, sc.Straggler != ""),
		set("server-delay", sc.ServerDelay, sc.ServerDelay != ""),
		set("base", sc.Base, sc.Base != ""),
		set("model", sc.Model, sc.Model != ""),
		set("dataset", sc.Dataset, sc.Dataset != ""),
		set("epochs", f(sc.Epochs), sc.Epochs > 0),
		set("batch", strconv.Itoa(sc.Batch), sc.Batch > 0),
		set("lr", f(sc.LR), sc.LR > 0),
		set("momentum", f(deref(sc.Momentum)), sc.Momentum != nil),
		set("eval-every", f(sc.EvalEvery), sc.EvalEvery > 0),
		set("full-async-lr", "true", sc.FullAsyncLR),
		set("target", f(sc.Target), sc.Target > 0),
		set("train-limit", strconv.Itoa(sc.TrainLimit), sc.TrainLimit > 0),
		set("test-limit", strconv.Itoa(sc.TestLimit), sc.TestLimit > 0),
		set("iterations", strconv.Itoa(sc.Iterations), sc.Iterations > 0 && !given["duration"]),
		set("seed", strconv.FormatUint(sc.Seed, 10), sc.Seed > 0),
	} {
		if e != nil {
			return fmt.Errorf("scenario %s: %w", sc.Name, e)
		}
	}
	return nil
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// describe is the report's description of a comparison without one of its
// own: the cluster, then the training job (virtual mode) or the simulated
// run's length (sim mode, which trains nothing).
func describe(tf trainFlags, mode string, iters int, dur time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d workers, %d shard(s)", tf.cl.workers, tf.cl.shards)
	if mode == "inproc" || mode == "tcp" {
		fmt.Fprintf(&b, ", the live server in %s mode on this machine (real wall time; no simulated speeds); %s on %s, %g epochs, batch %d per worker, lr %g.",
			mode, tf.learn.Model, tf.learn.Dataset, tf.learn.Epochs, tf.learn.Batch, tf.learn.LR)
		return b.String()
	}
	if len(tf.cl.speeds) > 0 {
		fmt.Fprintf(&b, ", speeds %s", tf.cl.speeds.String())
	}
	if tf.cl.base > 0 {
		fmt.Fprintf(&b, ", base iteration %s", tf.cl.base)
	}
	if tf.cl.jitter > 0 {
		fmt.Fprintf(&b, ", jitter CV %g", tf.cl.jitter)
	}
	if tf.cl.straggler != "" {
		fmt.Fprintf(&b, ", stragglers %s", tf.cl.straggler)
	}
	if tf.cl.serverDelay != "" {
		fmt.Fprintf(&b, ", server delays %s", tf.cl.serverDelay)
	}
	if mode == "sim" {
		switch {
		case dur > 0:
			fmt.Fprintf(&b, "; timing only (no model), %s of virtual time", dur)
		case iters > 0:
			fmt.Fprintf(&b, "; timing only (no model), %d iterations per worker", iters)
		default:
			b.WriteString("; timing only (no model), 100 iterations per worker")
		}
		if tf.cl.failures != "" {
			fmt.Fprintf(&b, ", workers failing at %s", tf.cl.failures)
		}
		fmt.Fprintf(&b, ", seed %d.", tf.cl.seed)
		return b.String()
	}
	fmt.Fprintf(&b, "; %s on %s, %g epochs, batch %d per worker, lr %g.", tf.learn.Model, tf.learn.Dataset, tf.learn.Epochs, tf.learn.Batch, tf.learn.LR)
	return b.String()
}

// shellJoin quotes each argument that a POSIX shell would split or expand, so
// the report's rerun command can be pasted as it is.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,:/+@%") == "" {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
