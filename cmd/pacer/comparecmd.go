package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pacer-ps/pacer/check"
	"github.com/pacer-ps/pacer/compare"
	"github.com/pacer-ps/pacer/job"
	"github.com/pacer-ps/pacer/launch"
	"github.com/pacer-ps/pacer/paradigm"
	"github.com/pacer-ps/pacer/report"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/scenario"
	"github.com/pacer-ps/pacer/sim"
)

func init() { register(newCompareCmd) }

func newCompareCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "compare",
		Short: "run several paradigms on one scenario and write a report",
		Long: `Run several paradigms on one scenario, several seeds each, and write report.html, plots,
summary.md, summary.json and curves.csv to --out.

In the virtual and sim modes the paradigms race over seeds (--seeds auto, docs/compare.md):
every paradigm runs 3 seeds, then the ones not shown worse than the leader run more, round by
round, until one is left (a winner), the rest are equivalent to the leader within --margin
(an equivalence set, with a recommendation), or --budget runs are spent (undecided). --seeds N
runs N seeds of every paradigm instead.

A scenario is a preset or a YAML/JSON file; flags given explicitly override it.
--mode virtual (the default) trains real models in simulated cluster time; --mode sim
simulates timing only (no model); --mode inproc and tcp run the live server on this
machine in real time.

The summary goes to stdout: an aligned table on a terminal, Markdown when stdout is a
file or a pipe. Progress over all runs goes to stderr: a bar with an ETA on a terminal,
plain lines otherwise.`,
		Example: pairExample() + `

  # the same as a fixed design: 5 seeds of every paradigm
  pacer compare --scenario pair --seeds 5 --out out/pair5

  # timing only, on 32 mixed workers, two seeds
  pacer compare --mode sim --scenario mixed32 --iterations 300 --seeds 2

  # your own list of paradigms on your own cluster
  pacer compare --paradigms 'bsp;ssp:s=3;asp' --workers 4 --speeds 1,1,1,3 --epochs 2`,
	}
	fs := cmd.Flags()
	f := bindCompareFlags(fs)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return runCompare(fs, commandArgs(cmd), f, nil, stdout, stderr)
	}
	return cmd
}

// pairExample is compare's first example, the README's first command; what
// it says of the pair preset is read from the preset, so it cannot drift.
func pairExample() string {
	sc, err := scenario.Get("pair")
	if err != nil {
		panic(err) // a preset: only a broken build lacks it
	}
	return fmt.Sprintf("  # the README's first command: a fast and a slow worker, %d paradigms racing over seeds\n"+
		"  pacer compare --scenario pair --out out/pair", len(sc.Paradigms))
}

// compareFlags are compare's flags (and check's, which adds live).
type compareFlags struct {
	tf                    *trainFlags
	list, scen, out       *string
	mode                  *runstats.Mode
	iters, params, budget *int
	seeds, margin         *string
	dur, horizon          *time.Duration
	live                  *runstats.Mode // pacer check: the live mode it measures in; nil for compare
}

// bindCompareFlags binds compare's flags on fs.
func bindCompareFlags(fs *pflag.FlagSet) compareFlags {
	var tf trainFlags
	tf.bind(fs)
	return compareFlags{tf: &tf,
		list:    fs.String("paradigms", "", "paradigm specs separated by ';', and groups reported as one, avg(ssp:s=3..15) or avg(spec|spec) (default: the scenario's)"),
		scen:    fs.String("scenario", "", "a preset ("+strings.Join(scenario.Names(), ", ")+") or a YAML/JSON scenario file; flags given explicitly override it"),
		mode:    modeFlag(fs, "mode", runstats.Virtual, "virtual (train real models in simulated cluster time) | sim (timing only, no model) | inproc | tcp (the live server on this machine, real time)", compare.Modes...),
		iters:   fs.Int("iterations", 0, "sim mode: iterations per worker (default 100; not with --duration)"),
		dur:     fs.Duration("duration", 0, "sim mode: virtual time to simulate (not with --iterations)"),
		out:     fs.String("out", "out/compare", "directory for report.html, plots, summary.md, summary.json and curves.csv"),
		seeds:   fs.String("seeds", "", "auto: race the paradigms over seeds --seed, --seed+1, … in rounds, a paradigm shown worse than the leader stopping (the default in the virtual and sim modes; docs/compare.md); or N: N runs per paradigm, seeds --seed … --seed+N−1 (the scenario's N if it gives one; 1 in the live modes)"),
		margin:  fs.String("margin", "", "the race's margin: paradigms within it of the leader are equivalent; 5% (a ratio of times: the default with a target and in sim mode) or 0.5pt (accuracy points: the default without a target)"),
		budget:  fs.Int("budget", 0, "the race's budget in runs (default: 5 per paradigm, what --seeds 5 costs)"),
		horizon: fs.Duration("horizon", 0, "virtual mode: the virtual time every run trains for (default: what the slowest paradigm needs for --epochs)"),
		params:  fs.Int("params", 0, "sim mode with a network: the model's size in values that the transfers move (default: --model's)"),
	}
}

// comparison builds the comparison the flags and the scenario describe,
// as values: sc is the scenario (nil: --scenario's, if given). It returns
// the configuration, checked before any run, and how many runs it takes
// at most; an error is a usage error.
func comparison(fs *pflag.FlagSet, f compareFlags, sc *scenario.Scenario, stderr io.Writer) (compare.Config, int, error) {
	tf, list, scen, mode, iters, dur, seeds, horizon := f.tf, f.list, f.scen, f.mode, f.iters, f.dur, f.seeds, f.horizon
	var none compare.Config
	given := setFlags(fs) // before the scenario sets its own
	if f.live != nil {
		// pacer check: its job is checked as virtual mode's (the
		// prediction); the live side runs the same.
		if given["mode"] {
			return none, 0, usage(fmt.Errorf("--mode: pacer check runs both virtual time and --live %s", *f.live))
		}
		*mode = runstats.Virtual
	}
	if err := checkCompareModeFlags(*mode, given, tf.net.mode, tf.cl.base.auto); err != nil {
		return none, 0, usage(err)
	}
	if *iters < 0 || *dur < 0 {
		return none, 0, usage(fmt.Errorf("--iterations=%d and --duration=%s must not be negative", *iters, *dur))
	}
	seedsN, raceAuto, err := parseSeeds(*seeds, given["seeds"])
	if err != nil {
		return none, 0, usage(err)
	}
	rc, err := parseRace(*f.margin, *f.budget, given)
	if err != nil {
		return none, 0, usage(err)
	}
	if f.live != nil && (raceAuto || rc != nil) {
		return none, 0, usage(fmt.Errorf("--seeds auto, --margin and --budget: pacer check predicts and measures the same seeds (give --seeds N)"))
	}
	if given["horizon"] && *horizon <= 0 {
		return none, 0, usage(fmt.Errorf("--horizon=%s must be a positive virtual time such as 45m", *horizon))
	}
	// The flags as typed configuration; the scenario then fills what the
	// command line left unset.
	switch {
	case f.live != nil:
		tf.net.live = *f.live // a check predicts the links its live run emulates, and no others
	case mode.Live():
		tf.net.live = *mode
	}
	base, err := tf.job(paradigm.Spec{Kind: paradigm.BSP})
	if err != nil {
		return none, 0, usage(err)
	}
	cc := compare.Config{Mode: *mode, Job: base, Seeds: seedsN, Horizon: *horizon, Iterations: *iters, Duration: *dur,
		Scenario: scenario.Scenario{Name: "custom"}, Params: *f.params, Launch: launch.TrainMode}
	what := "--paradigms"
	if *list != "" {
		if cc.Specs, cc.Groups, err = parseParadigms(*list, what); err != nil {
			return none, 0, usage(err)
		}
	}
	if sc == nil && *scen != "" {
		if sc, err = scenario.Get(*scen); err != nil {
			return none, 0, usage(err)
		}
	}
	if sc != nil {
		if *list == "" {
			// Parsed here, once, with the same messages as --paradigms.
			if cc.Specs, cc.Groups, err = paradigmList(sc.Paradigms, "scenario "+sc.Name+": paradigms"); err != nil {
				return none, 0, usage(err)
			}
		}
		if err := compare.ApplyScenario(&cc, sc, func(f string) bool { return given[f] }); err != nil {
			return none, 0, usage(err)
		}
		if *mode == runstats.Sim && sc.Target > 0 {
			fmt.Fprintf(stderr, "compare: sim mode trains no model; the scenario's target (%g) does not apply\n", sc.Target)
		}
		if mode.Live() && sc.Horizon != "" {
			fmt.Fprintf(stderr, "compare: the live modes train for the job's epochs in real time; the scenario's horizon (%s) does not apply\n", sc.Horizon)
		}
	} else if *list == "" {
		if _, _, err := parseParadigms("", what); err != nil {
			return none, 0, usage(err)
		}
	}
	// The race is the default where runs are deterministic and there is
	// something to race; a count of seeds (the flag's or the scenario's)
	// keeps the fixed design.
	if raceAuto || cc.Seeds == 0 && f.live == nil && (*mode == runstats.Virtual || *mode == runstats.Sim) && len(cc.Names()) > 1 {
		if rc == nil {
			rc = &compare.RaceConfig{}
		}
		cc.Race, cc.Seeds = rc, 0
	} else if rc != nil {
		return none, 0, usage(fmt.Errorf("--margin and --budget apply to the race (--seeds auto); this comparison runs a fixed number of seeds"))
	}
	if cc.Seeds == 0 && cc.Race == nil {
		cc.Seeds = compare.DefaultSeeds(*mode)
		if f.live != nil {
			cc.Seeds = compare.DefaultSeeds(*f.live) // every seed also runs live, in real time
		}
	}
	runs := cc.Seeds * len(cc.Names())
	if cc.Race != nil {
		runs = cc.Race.Budget
		if runs == 0 {
			runs = compare.DefaultBudget(len(cc.Names()))
		}
	}
	for _, g := range cc.Groups {
		// Each of a group's runs trains every member.
		runs += runs / max(1, len(cc.Names())) * (len(g.Members) - 1)
	}
	if err := cc.Job.Fill(); err != nil {
		return none, 0, usage(err)
	}
	auto := tf.cl.base.auto || cc.BaseAuto
	if err := refuseDeviceRate(given, auto); err != nil {
		return none, 0, usage(err)
	}
	if (tf.cl.base.auto || given["device-rate"]) && mode.Live() {
		return none, 0, usage(errLiveAuto)
	}
	if auto && (*mode == runstats.Virtual || *mode == runstats.Sim) {
		// Measured once, here, and written into summary.json's scenario:
		// a rerun of that scenario gives the same bytes on any machine.
		j := &cc.Job
		if j.Timing.Base, err = resolveBase(j.Model, j.Dataset, j.Batch, tf.cl.deviceRate, stderr); err != nil {
			return none, 0, usage(err)
		}
	}
	if *mode == runstats.Sim {
		j := &cc.Job
		s := simSize(j.Workers, j.Shards, j.Timing, cc.Iterations, cc.Duration, cc.AllSpecs()...)
		s.Runs = runs
		if err := s.Check("--"); err != nil {
			return none, 0, usage(err)
		}
	}
	if cc.Horizon > 0 {
		// Every run trains until the horizon: its pushes, like a sim
		// run's --duration, are bounded before the first one starts.
		j := &cc.Job
		s := simSize(j.Workers, j.Shards, j.Timing, 0, 0)
		s.Horizon, s.Runs = cc.Horizon, runs
		if err := s.Check("--"); err != nil {
			return none, 0, usage(err)
		}
	}
	if cc.Failures, err = sim.ParseFailures(tf.cl.failures, cc.Job.Workers); err != nil {
		return none, 0, usage(fmt.Errorf("--fail: %w", err))
	}
	// Validate every run's job before spending minutes on the first one.
	if err := cc.Validate(); err != nil {
		return none, 0, usage(err)
	}
	if sc != nil && mode.Live() {
		fmt.Fprintf(stderr, "compare: the live %s mode stretches the workers' real iterations to the scenario's speeds, jitter and stragglers (in units of their own real step time unless --base is given) and holds pull replies for its server delays (as written: real durations); its network does not apply\n", *mode)
		cc.Job.Network = nil // the live runs move real bytes over loopback
		if !given["base"] {
			cc.Job.Timing.Base = 0 // the scenario's base is a simulated time unit
		}
	}
	// The flags given on the command line, as given: summary.json's
	// scenario holds every value the runs used, defaults included, so
	// listing unset flags' defaults here would only blur what the user chose.
	cc.Flags = map[string]string{}
	fs.Visit(func(f *pflag.Flag) {
		if f.Name != "out" { // where the files go does not shape them
			cc.Flags[f.Name] = f.Value.String()
		}
	})
	if f.live != nil {
		if err := check.Validate(cc, *f.live); err != nil {
			return none, 0, usage(err)
		}
	}
	return cc, runs, nil
}

func runCompare(fs *pflag.FlagSet, args []string, f compareFlags, sc *scenario.Scenario, stdout, stderr io.Writer) error {
	cc, runs, err := comparison(fs, f, sc, stderr)
	if err != nil {
		return err
	}
	tf, out := f.tf, f.out
	undo, err := prepareOut(*out)
	if err != nil {
		return usage(err)
	}
	if f.live != nil {
		return runCheck(cc, *f.live, *out, args, undo, stdout, stderr)
	}
	pr := newProgress(stderr)
	pr.start(int64(runs), true)
	cc.Progress = func(line string) { pr.printf("%s", line) }
	cc.RunDone = func(done, _ int) { pr.set(int64(done)) }
	// SIGINT/SIGTERM stop every run in progress at once (compare.Run).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sum, err := compare.Run(ctx, cc)
	pr.done()
	if err != nil {
		undo()
		if ctx.Err() != nil {
			// A comparison missing runs has no verdict: write none.
			return fmt.Errorf("compare stopped by a signal: %w; nothing was written to %s", err, *out)
		}
		return err
	}
	desc := cc.Scenario.Description
	if desc == "" {
		desc = cc.Describe(tf.cl.failures, sum.HorizonSeconds)
	} else {
		desc = cc.WithNetwork(desc)
	}
	rs := report.Scenario{Title: "pacer compare: " + cc.Scenario.Name, Description: desc,
		Command: "pacer compare " + shellJoin(args)}
	paths, err := report.Write(*out, rs, sum)
	if err != nil {
		undo()
		return err
	}
	// Markdown goes to files and pipes; a person at a terminal reads
	// aligned text.
	if _, tty := terminal(stdout); tty {
		fmt.Fprint(stdout, report.Text(rs, sum))
	} else {
		fmt.Fprint(stdout, report.Markdown(rs, sum))
	}
	sentence, _ := report.Headline(sum)
	fmt.Fprintf(stdout, "\n%s\n\nwrote %s\nopen %s in a browser\n", sentence, strings.Join(paths, ", "), paths[0])
	return nil
}

// parseSeeds reads --seeds: "auto" (the race) or a count of seeds.
func parseSeeds(v string, given bool) (n int, auto bool, err error) {
	if !given {
		return 0, false, nil
	}
	if v == "auto" {
		return 0, true, nil
	}
	n, err = strconv.Atoi(v)
	if err != nil || n < 1 || n > job.MaxSeeds {
		return 0, false, fmt.Errorf("--seeds=%s: want auto (the race) or a count from 1 to %d (docs/paradigms.md, Limits)", v, job.MaxSeeds)
	}
	return n, false, nil
}

// parseRace reads --margin ("5%" or "0.5pt") and --budget; nil when
// neither was given.
func parseRace(margin string, budget int, given map[string]bool) (*compare.RaceConfig, error) {
	if !given["margin"] && !given["budget"] {
		return nil, nil
	}
	rc := &compare.RaceConfig{Budget: budget}
	if given["budget"] && budget < 1 {
		return nil, fmt.Errorf("--budget=%d: want a number of runs, at least 3 per paradigm", budget)
	}
	if given["margin"] {
		num, unit := margin, ""
		for _, u := range []string{compare.UnitPercent, compare.UnitPoints} {
			if strings.HasSuffix(margin, u) {
				num, unit = strings.TrimSpace(strings.TrimSuffix(margin, u)), u
			}
		}
		v, err := strconv.ParseFloat(num, 64)
		if unit == "" || err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("--margin=%q: want a positive percentage such as 5%% (times) or accuracy points such as 0.5pt", margin)
		}
		rc.Margin, rc.Unit = v, unit
	}
	return rc, nil
}

// checkCompareModeFlags refuses a valid --mode's inapplicable flags given
// on the command line: the simulator's run length and failures in virtual
// mode, which trains for --epochs; the learning flags in sim mode, which
// trains nothing.
// network is --network's value; autoBase is --base auto, which times the
// model's step at its batch, so sim mode takes the three flags that say
// which step that is.
func checkCompareModeFlags(mode runstats.Mode, given map[string]bool, network string, autoBase bool) error {
	if given["params"] && mode != runstats.Sim {
		return fmt.Errorf("--params applies to compare --mode sim with a network; training moves its own model's size")
	}
	switch mode {
	case runstats.Virtual:
		if given["fail"] {
			return fmt.Errorf("--fail applies to compare --mode sim only; virtual training simulates no worker failures")
		}
		return refuseGiven(given, []string{"iterations", "duration"}, "applies to compare --mode sim only; virtual mode trains for --epochs (or --horizon)")
	case runstats.Sim:
		if given["iterations"] && given["duration"] {
			return fmt.Errorf("--iterations and --duration are alternatives: give one")
		}
		if given["horizon"] {
			return fmt.Errorf("--horizon applies to compare --mode virtual; sim mode's equal budget is --duration")
		}
		learning := learningFlags()
		if autoBase {
			learning = slices.DeleteFunc(learning, func(f string) bool { return f == "model" || f == "batch" || f == "batch-total" || f == "dataset" })
		}
		if network != "none" || slices.ContainsFunc(networkFlagNames[1:], func(f string) bool { return given[f] }) {
			// With a network the model's size is what its transfers move.
			learning = slices.DeleteFunc(learning, func(f string) bool { return f == "model" })
		} else if given["params"] || given["model"] && !autoBase {
			return fmt.Errorf("--params and --model size a network's transfers in sim mode, which --network none leaves out")
		}
		return refuseGiven(given, learning, "applies to training; compare --mode sim simulates timing only (use --mode virtual)")
	case runstats.Inproc, runstats.TCP:
		if given["fail"] {
			return fmt.Errorf("--fail applies to compare --mode sim only; the live modes run real workers")
		}
		if err := refuseGiven(given, []string{"iterations", "duration", "horizon"}, "applies to the simulated modes only; the live modes train for --epochs in real time"); err != nil {
			return err
		}
		return refuseGiven(given, virtualOnlyFlags, "is the simulated shards' apply speed; the live shards apply at their own (use --mode virtual)")
	}
	return fmt.Errorf("--mode=%q: valid modes are virtual, sim, inproc and tcp", mode)
}

// learningFlags are the names of the flags that only training reads.
func learningFlags() []string {
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	var l job.LearnFlags
	l.Bind(fs)
	names := []string{"lr-schedule", "eval-every", "target"}
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	return names
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
