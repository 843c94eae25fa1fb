package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/pacer-ps/pacer/internal/filecap"
	"github.com/pacer-ps/pacer/live/proto"
	"github.com/pacer-ps/pacer/live/roles"
	"github.com/pacer-ps/pacer/profile"
	"github.com/pacer-ps/pacer/runstats"
	"github.com/pacer-ps/pacer/scenario"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

func init() {
	register(newProfileCmd)
	register(newAdviseCmd)
}

// profileSource is where a profile's iteration times come from.
type profileSource struct {
	summary, coordinator string
	tls                  tlsFlags
}

func (p *profileSource) bind(fs *pflag.FlagSet) {
	fs.StringVar(&p.summary, "summary", "", "a live job's summary.json (pacer train --mode inproc|tcp, or shard 0's --out of a hand-run job)")
	fs.StringVar(&p.coordinator, "coordinator", "", "a running job's shard 0 (host:port), read with $PACER_TOKEN and $PACER_CONTROL_TOKEN (over TLS with the --tls flags, as the job's workers dial)")
	p.tls.bind(fs)
}

// maxSummaryBytes bounds --summary. A live run's summary.json grows with
// its workers: each one's iteration histogram holds at most
// runstats.IterBuckets (512) buckets, about 9 KB at worst, so 10,000
// workers (the most any documented run has) take 90 MB; the per-shard
// figures and the curve are small beside it, and real runs write tens of
// KB. 256 MiB holds that worst case and refuses unread what cannot be one.
const maxSummaryBytes = 256 << 20

// fit reads the iteration times and fits them; shards and model are the
// job's (0 and "" when the source does not say).
func (p *profileSource) fit() (profile.Fit, int, string, error) {
	switch {
	case (p.summary == "") == (p.coordinator == ""):
		return profile.Fit{}, 0, "", usage(errors.New("give one of --summary (a finished job) and --coordinator (a running one)"))
	case p.summary != "":
		if t := p.tls; t.on || t.cert != "" || t.key != "" || t.ca != "" || t.serverNameOver != "" {
			return profile.Fit{}, 0, "", usage(errors.New("the --tls flags apply to --coordinator, which --summary does not dial"))
		}
		b, err := filecap.Read(p.summary, "run's summary.json", maxSummaryBytes)
		if err != nil {
			return profile.Fit{}, 0, "", fmt.Errorf("--summary: %w", err)
		}
		var r runstats.Run
		if err := json.Unmarshal(b, &r); err != nil {
			return profile.Fit{}, 0, "", fmt.Errorf("--summary %s: not a run's summary.json: %w", p.summary, err)
		}
		if !r.Mode.Live() {
			return profile.Fit{}, 0, "", fmt.Errorf("--summary %s: a %q run; profile reads live runs (inproc, tcp), whose iterations were measured", p.summary, r.Mode)
		}
		f, err := profile.FromRun(&r)
		return f, r.Shards, r.Model, err
	}
	env := roles.Env{}
	if env.Token() == "" || env.ControlToken() == "" {
		return profile.Fit{}, 0, "", usage(errors.New("--coordinator: set $PACER_TOKEN and $PACER_CONTROL_TOKEN to the job's secrets"))
	}
	tr, err := p.tls.transport(env, false)
	if err != nil {
		return profile.Fit{}, 0, "", usage(err)
	}
	o := proto.NewObserver(tr, p.coordinator, 0, env.Token(), env.ControlToken())
	o.GiveUp = 10 * time.Second
	defer o.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := o.Stats(ctx)
	if err != nil {
		return profile.Fit{}, 0, "", fmt.Errorf("--coordinator %s: %w", p.coordinator, err)
	}
	if st.Coord == nil {
		return profile.Fit{}, 0, "", fmt.Errorf("--coordinator %s: shard %d answered; the coordinator is shard 0", p.coordinator, st.Shard.Shard)
	}
	f, err := profile.FromStats(st.Coord.WorkerIter)
	return f, 0, "", err
}

// printFit writes the fit as a table.
func printFit(w io.Writer, f profile.Fit) {
	fmt.Fprintf(w, "%-7s %10s %12s %7s %9s\n", "worker", "iterations", "mean", "speed", "jitter CV")
	for i, s := range f.Workers {
		fmt.Fprintf(w, "%-7d %10d %12s %7g %9.3f\n", i, s.N, time.Duration(s.Mean*float64(time.Second)).Round(10*time.Microsecond),
			f.Speeds[i], math.Sqrt(math.Expm1(s.LogSD*s.LogSD)))
	}
	fmt.Fprintf(w, "fitted: base %s (the fastest worker's mean iteration), speeds %v, jitter CV %g (pooled)\n", f.Base, f.Speeds, f.Jitter)
	if s := f.Tail.Straggler(); s != "" {
		fmt.Fprintf(w, "a straggler tail: %d iterations far above their worker's median; fitted as --straggler %s\n", f.Tail.Events, s)
	}
	if len(f.Servers) > 0 {
		fmt.Fprintf(w, "%-7s %10s %12s %12s %9s\n", "shard", "replies", "const", "spike", "spike p")
		for i, d := range f.Servers {
			fmt.Fprintf(w, "%-7d %10d %12s %12s %9g\n", i, d.Replies, d.Const, d.Spike, d.SpikeP)
		}
		sd := profile.ServerSpec(f.Servers)
		if sd == "" {
			sd = fmt.Sprintf("none (every shard's replies under %g%% of the base)", 100*profile.ServerNegligible)
		}
		fmt.Fprintf(w, "fitted server delays: %s\n", sd)
	}
}

// writeScenario writes sc as YAML to path and reads it back as pacer
// compare will.
func writeScenario(path string, sc scenario.Scenario) error {
	b, err := yaml.Marshal(sc)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := writeFileAtomic(path, b); err != nil {
		return err
	}
	_, err = scenario.Load(path)
	return err
}

func newProfileCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "profile",
		Short: "fit a live job's timing (speeds, jitter, a straggler tail) and write it as a scenario pacer compare accepts",
		Long: `Read each worker's iteration times from a live job (a finished one's summary.json, or a
running one's coordinator) and fit the timing models: the fastest worker's mean iteration
is the base, each worker's speed is its mean iteration over the base, and the jitter is the
coefficient of variation of a mean-1 log-normal, pooled over the workers (each about its own
mean, so different speeds do not read as jitter). Write them as a scenario file with every
paradigm that applies, which pacer compare --scenario FILE runs unchanged.

A straggler tail beyond the log-normal (iterations far above their worker's median, more of
them than the log-normal gives) is fitted as the heavytail model, and the body's speeds and
jitter are then read from medians and quartiles.

Server delays (from --summary: each shard's times to answer a worker's pull with its block)
are fitted per shard: the median reply as a const delay, replies far above it as a spike
(its probability, and its delay the replies' median excess); delays under 1% of the base are
left out, and shards that agree within 10% are written as one term, others with shard=N.
Not fitted (yet): server delays from --coordinator, and the network; edit the file to add
them.`,
		Example: `  pacer train --mode tcp --paradigm asp --workers 3 --speeds 1,1,2.5 --jitter 0.1 --base 20ms --out out/job
  pacer profile --summary out/job/summary.json --out my-cluster.yaml
  pacer compare --scenario my-cluster.yaml`,
	}
	fs := cmd.Flags()
	var src profileSource
	src.bind(fs)
	out := fs.String("out", "profile.yaml", "the scenario file to write")
	name := fs.String("name", "profiled", "the scenario's name")
	cmd.RunE = func(*cobra.Command, []string) error {
		f, shards, model, err := src.fit()
		if err != nil {
			return err
		}
		printFit(stdout, f)
		if err := writeScenario(*out, f.Scenario(*name, shards, model)); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s: pacer compare --scenario %s\n", *out, *out)
		return nil
	}
	return cmd
}

func newAdviseCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "advise",
		Short: "profile a live job, compare every paradigm on its cluster in virtual time, and recommend one",
		Long: `pacer profile, then pacer compare on the profiled scenario (virtual time, every paradigm,
--seeds seeds), in one command: the recommendation is compare's verdict, a winner only when a
paired test over the seeds separates it from the runner-up, otherwise the paradigms tied with
the leader. The scenario is written to --out/scenario.yaml, the comparison's report beside it.
Flags other than --summary and --coordinator are pacer compare's and override the profile
(e.g. --epochs, --target, --seeds, --paradigms).`,
		Example: `  pacer advise --summary out/job/summary.json --out out/advice
  PACER_TOKEN=… PACER_CONTROL_TOKEN=… pacer advise --coordinator 10.0.0.1:7070 --seeds 5`,
	}
	fs := cmd.Flags()
	var src profileSource
	src.bind(fs)
	f := bindCompareFlags(fs)
	if o := fs.Lookup("out"); o != nil {
		o.DefValue, o.Usage = "out/advise", "directory for scenario.yaml and the comparison's report"
		*f.out = "out/advise"
	}
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		given := setFlags(fs)
		if given["scenario"] || given["mode"] {
			return usage(errors.New("--scenario and --mode: advise compares the profiled cluster in virtual time"))
		}
		fit, shards, model, err := src.fit()
		if err != nil {
			return err
		}
		printFit(stdout, fit)
		sc := fit.Scenario("profiled", shards, model)
		path := filepath.Join(*f.out, "scenario.yaml")
		if err := writeScenario(path, sc); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n\n", path)
		// The comparison runs on the fitted scenario itself; its command
		// line, as pacer compare reruns it, names the file written.
		args := []string{"--scenario", path}
		fs.Visit(func(fl *pflag.Flag) {
			if fl.Name != "summary" && fl.Name != "coordinator" && fl.Name != "scenario" {
				args = append(args, "--"+fl.Name+"="+fl.Value.String())
			}
		})
		return runCompare(fs, args, f, &sc, stdout, stderr)
	}
	return cmd
}
